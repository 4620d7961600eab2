#!/usr/bin/env python3
"""Builds a corpus of Debian package descriptions in eight languages (the kind of text the
issue's 490 MB corpus holds most of), from the DDTP translation files apt downloads:

    mkdir -p /tmp/aptlists/partial
    apt-get -o Acquire::Languages="en,de,fr,es,it,ja,ru,pt_BR" \\
        -o Dir::State::Lists=/tmp/aptlists update
    python3 benches/judged/build_debian.py /tmp/aptlists OUT.jsonl

One JSON line {"id", "text", "source"} a description: id `deb:<lang>:<package>` (a description
listed again under the same md5 is left out; a package listed with a second description, of
another version, is `deb:<lang>:<package>@<md5 prefix>`), text the short
description, a line break, and the long description with its ` .` paragraph marks as blank
lines. Files are read in sorted order (`*_i18n_Translation-*.lz4`, through `lz4cat`), so the
same lists give the same corpus. Standard library only.
"""
import glob
import json
import os
import re
import subprocess
import sys

FILE = re.compile(r"_i18n_Translation-([A-Za-z_%0-9]+)\.lz4$")


def entries(path):
    data = subprocess.run(["lz4cat", path], check=True, capture_output=True).stdout
    for block in data.decode("utf-8", errors="replace").split("\n\n"):
        package, md5, desc = None, None, []
        field = None
        for line in block.split("\n"):
            if line.startswith(" ") and field == "desc":
                desc.append(line)
            elif ":" in line and not line.startswith(" "):
                key, _, value = line.partition(":")
                field = None
                if key == "Package":
                    package = value.strip()
                elif key == "Description-md5":
                    md5 = value.strip()
                elif key.startswith("Description-"):
                    field = "desc"
                    desc = [value.strip()]
        if package and desc:
            yield package, md5, desc


def text_of(desc):
    lines = [desc[0]]
    for line in desc[1:]:
        body = line[1:]
        lines.append("" if body.strip() == "." else body)
    return "\n".join(lines).strip()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lists, out = sys.argv[1], sys.argv[2]
    paths = sorted(p for p in glob.glob(os.path.join(lists, "*_main_i18n_Translation-*.lz4"))
                   if "security" not in p and "updates" not in p)
    if not paths:
        sys.exit(f"no *_main_i18n_Translation-*.lz4 under {lists}: run the apt-get line of --help")
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for path in paths:
            lang = FILE.search(path).group(1).replace("%5f", "_")
            seen, names = set(), set()
            for package, md5, desc in entries(path):
                key = (package, md5)
                if key in seen:
                    continue
                seen.add(key)
                name = f"deb:{lang}:{package}"
                if name in names:
                    name += f"@{(md5 or '')[:8]}"
                names.add(name)
                text = text_of(desc)
                if len(text) < 40:
                    continue
                f.write(json.dumps({"id": name, "text": text, "source": lang},
                                   ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} descriptions from {len(paths)} languages -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
