#!/usr/bin/env python3
"""Builds the "real corpus" of docs/performance.md from text already on the machine.

    python3 scripts/bench/make_real_corpus.py /tmp/real/real.jsonl            # ~600 MB
    python3 scripts/bench/make_real_corpus.py OUT.jsonl --max-mb 100          # a smaller one

Sources, in this order (each in sorted path order, so the output is deterministic for the
same files on disk):

1. the Python 3.11 standard library's .py sources (pyenv's 3.11 if there is one, else
   /usr/lib/python3.11; site-packages left out);
2. /usr/share/doc: copyright files, changelogs, READMEs and other text files (.gz
   decompressed; binary files skipped);
3. the man pages under /usr/share/man (decompressed, raw troff);
4. the Rust toolchains' HTML docs (~/.rustup/toolchains/*/share/doc/rust/html, toolchains
   in sorted order) with scripts, styles and tags stripped and entities unescaped; these fill
   the corpus up to the cap.

Each file is cut at line ends into records of at most --max-bytes bytes of UTF-8 text (a
single longer line is cut at a character boundary), written as {"id": "<source>:<path>#<n>",
"text": ...} lines. Empty or whitespace-only records are left out. Writing stops before the
record that would take the output past --max-mb megabytes (10^6 bytes). Standard library
only.
"""

import argparse
import glob
import gzip
import html
import json
import os
import re
import sys

MB = 1_000_000


def python_lib():
    home = os.path.expanduser("~")
    for pattern in (home + "/.pyenv/versions/3.11*/lib/python3.11", "/usr/lib/python3.11"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def walk(root, keep=lambda path: True, skip_dirs=()):
    """Files under root, sorted, symbolic links not followed."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs)
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path) and keep(path):
                yield path


def read_bytes(path):
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except (OSError, EOFError, gzip.BadGzipFile):
        return None


def as_text(data):
    """UTF-8 (or Latin-1) text, or None for binary data."""
    if data is None or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


SCRIPT = re.compile(r"<(script|style|svg)\b.*?</\1\s*>", re.S | re.I)
COMMENT = re.compile(r"<!--.*?-->", re.S)
BLOCK = re.compile(r"</?(p|div|br|li|h[1-6]|pre|tr|section|details|summary)\b[^>]*>", re.I)
TAG = re.compile(r"<[^>]*>")
SPACES = re.compile(r"[ \t\r\f\v]+")
BLANKS = re.compile(r"\n\s*\n+")


def strip_html(text):
    text = COMMENT.sub(" ", SCRIPT.sub(" ", text))
    text = TAG.sub(" ", BLOCK.sub("\n", text))
    text = html.unescape(text)
    text = SPACES.sub(" ", text)
    return BLANKS.sub("\n\n", text).strip()


def records(text, max_bytes):
    """Cuts text at line ends into pieces of at most max_bytes UTF-8 bytes."""
    piece, size = [], 0
    for line in text.splitlines(keepends=True):
        data = line.encode("utf-8")
        while len(data) > max_bytes:  # a line longer than a record: cut at a character start
            if piece:
                yield "".join(piece)
                piece, size = [], 0
            cut = max_bytes
            while cut > 0 and (data[cut] & 0xC0) == 0x80:
                cut -= 1
            yield data[:cut].decode("utf-8")
            data = data[cut:]
        if size + len(data) > max_bytes:
            yield "".join(piece)
            piece, size = [], 0
        piece.append(data.decode("utf-8"))
        size += len(data)
    if piece:
        yield "".join(piece)


def sources():
    """(source name, root, files, to_text) in corpus order."""
    lib = python_lib()
    if lib:
        yield "python", lib, walk(lib, lambda p: p.endswith(".py"), ("site-packages",)), as_text
    yield "doc", "/usr/share/doc", walk("/usr/share/doc"), as_text
    yield "man", "/usr/share/man", walk("/usr/share/man"), as_text
    home = os.path.expanduser("~")
    for html_root in sorted(glob.glob(home + "/.rustup/toolchains/*/share/doc/rust/html")):
        toolchain = html_root.split("/toolchains/")[1].split("/")[0]

        def to_text(data):
            text = as_text(data)
            return strip_html(text) if text is not None else None

        yield (
            "rust-" + toolchain,
            html_root,
            walk(html_root, lambda p: p.endswith(".html")),
            to_text,
        )


def lines(max_bytes):
    """The corpus's JSONL lines with their source's name, in order."""
    for name, root, files, to_text in sources():
        for path in files:
            text = to_text(read_bytes(path))
            if not text:
                continue
            rel = os.path.relpath(path, root)
            for n, piece in enumerate(records(text, max_bytes)):
                if piece.strip():
                    yield json.dumps({"id": f"{name}:{rel}#{n}", "text": piece}) + "\n", name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output")
    ap.add_argument("--max-mb", type=float, default=600.0, help="cap in MB (default 600)")
    ap.add_argument("--max-bytes", type=int, default=4096, help="record text cap (4096)")
    args = ap.parse_args()
    cap = int(args.max_mb * MB)
    written = count = 0
    per_source = {}
    with open(args.output, "w", encoding="utf-8", newline="\n") as out:
        for line, name in lines(args.max_bytes):
            size = len(line.encode("utf-8"))
            if written + size > cap:
                break
            out.write(line)
            written += size
            count += 1
            per_source[name] = per_source.get(name, 0) + 1
    for name, n in per_source.items():
        print(f"{name}: {n} records", file=sys.stderr)
    print(f"{count} records, {written / MB:.1f} MB -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
