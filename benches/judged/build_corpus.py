#!/usr/bin/env python3
"""Builds the real-text corpus the judged set is sampled from, from natural templated text
already on a Debian machine with a Rust toolchain (standard library only, deterministic for
the same files on disk):

    python3 benches/judged/build_corpus.py OUT.jsonl

Sources, each in sorted order, one JSON line {"id", "text", "source"} a document:

- `rust:<toolchain>:<type>::<method>`: each method's section of the Rust core library's
  primitive-type pages (`core/primitive.*.html`) of every installed toolchain: one method's
  docs repeat for every integer type (template siblings), and two toolchains give two
  releases of the same docs (same documents);
- `copyright:<package>`: `/usr/share/doc/*/copyright` (licence texts: shared boilerplate,
  clauses that differ);
- `appstream:<id>`: the English name, summary and description of each AppStream component
  of Debian's `main` (`/var/lib/apt/lists/*dep11_Components-amd64.yml.gz`);
- `man:<section>/<page>`: English man pages (sections 1, 5, 7, 8), troff requests stripped
  (a sixth of the gcloud commands);
- `py:<module>.<name>`: docstrings of the Python standard library's functions and classes
  (80 characters or more).

Documents are cut at 20,000 characters.
"""
import ast
import glob
import gzip
import html
import json
import os
import re
import sys
import zlib

CUT = 20000
TAG = re.compile(r"<[^>]+>")
SCRIPT = re.compile(r"<(script|style|svg)\b.*?</\1\s*>", re.S | re.I)
BLOCK = re.compile(r"</?(p|div|br|li|h[1-6]|pre|tr|section|details|summary)\b[^>]*>", re.I)
SPACES = re.compile(r"[ \t]+")


def strip_html(fragment):
    text = SCRIPT.sub(" ", fragment)
    text = BLOCK.sub("\n", text)
    text = html.unescape(TAG.sub("", text))
    lines = [SPACES.sub(" ", line).strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


METHOD = re.compile(r'<section id="method\.([A-Za-z0-9_]+)"')


def rust_docs():
    for toolchain in sorted(glob.glob(os.path.expanduser("~/.rustup/toolchains/*/share/doc/rust/html"))):
        name = toolchain.split("/toolchains/")[1].split("/")[0].split("-")[0]
        for page in sorted(glob.glob(toolchain + "/core/primitive.*.html")):
            ty = page.rsplit("primitive.", 1)[1][: -len(".html")]
            data = open(page, encoding="utf-8", errors="replace").read()
            starts = [(m.start(), m.group(1)) for m in METHOD.finditer(data)]
            seen = set()
            for k, (start, method) in enumerate(starts):
                if method in seen:
                    continue
                seen.add(method)
                end = starts[k + 1][0] if k + 1 < len(starts) else start + 50000
                text = strip_html(data[start:end])
                if len(text) >= 80:
                    yield f"rust:{name}:{ty}::{method}", text, "rust"


def copyrights():
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        if os.path.islink(path):
            continue
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        if text.strip():
            yield "copyright:" + path.split("/")[4], text, "copyright"


def appstream():
    for path in sorted(glob.glob("/var/lib/apt/lists/*dep11_Components-amd64.yml.gz")):
        doc, key, sub = {}, None, None
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        docs = []
        for line in lines + ["---"]:
            if line == "---":
                if doc.get("ID"):
                    docs.append(doc)
                doc, key, sub = {}, None, None
                continue
            m = re.match(r"^([A-Za-z]+):\s*(.*)$", line)
            if m:
                key, sub = m.group(1), None
                if m.group(2) and m.group(2) not in ("|", ">-", ">"):
                    doc[key] = m.group(2)
                continue
            m = re.match(r"^  ([A-Za-z_@]+):\s*(.*)$", line)
            if m:
                sub = m.group(1)
                if sub == "C" and key in ("Name", "Summary"):
                    doc[key] = m.group(2)
                continue
            if key == "Description" and sub == "C" and line.startswith("    "):
                doc["Description"] = doc.get("Description", "") + line[4:] + "\n"
        for d in docs:
            text = "\n".join(x for x in (d.get("Name", ""), d.get("Summary", ""),
                                        strip_html(d.get("Description", ""))) if x)
            if len(text) >= 80:
                yield "appstream:" + d["ID"], text, "appstream"


ROFF = re.compile(r"\\f[BIRP]|\\\(..|\\[-&e|^ ]|\\s[+-]?\d")


def manpages():
    for section in ("1", "5", "7", "8"):
        for path in sorted(glob.glob(f"/usr/share/man/man{section}/*")):
            if os.path.islink(path):
                continue
            try:
                raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
            except (OSError, EOFError):
                continue
            out = []
            for line in raw.decode("utf-8", errors="replace").splitlines():
                if line.startswith(('.\\"', "'\\\"")):
                    continue
                if line.startswith("."):
                    parts = line.split(None, 1)
                    line = parts[1] if len(parts) > 1 and parts[0] in (".SH", ".SS", ".B", ".I", ".BR", ".IR", ".IP", ".TP", ".BI", ".RB") else ""
                line = ROFF.sub("", line).replace('"', "")
                if line.strip():
                    out.append(line.strip())
            text = "\n".join(out)
            name = os.path.basename(path).removesuffix(".gz")
            if name.startswith("gcloud"):
                # 16,631 gcloud pages would be half the corpus: keep the commands (with their
                # alpha, beta and GA pages together) whose name hashes to 0 mod 6.
                command = re.sub(r"^gcloud_(alpha|beta)_", "gcloud_", name)
                if zlib.crc32(command.encode()) % 6:
                    continue
            if len(text) >= 80:
                yield f"man:{section}/{name}", text, "man"


def docstrings():
    roots = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.11*/lib/python3.11"))) or ["/usr/lib/python3.11"]
    root = roots[0]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "test", "tests", "__pycache__", "idlelib"))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            module = os.path.relpath(path, root)[:-3].replace("/", ".")
            try:
                tree = ast.parse(open(path, encoding="utf-8").read())
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            stack = [(tree, "")]
            while stack:
                node, prefix = stack.pop(0)
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        qual = prefix + child.name
                        doc = ast.get_docstring(child)
                        if doc and len(doc) >= 80:
                            yield f"py:{module}.{qual}", doc, "python"
                        if isinstance(child, ast.ClassDef):
                            stack.append((child, qual + "."))


def main():
    out = sys.argv[1]
    seen = set()
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for source in (rust_docs, copyrights, appstream, manpages, docstrings):
            for id_, text, kind in source():
                if id_ in seen:
                    continue
                seen.add(id_)
                f.write(json.dumps({"id": id_, "text": text[:CUT], "source": kind}, ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} documents in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
