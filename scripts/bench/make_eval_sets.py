#!/usr/bin/env python3
"""Builds eval sets for the decontamination benchmark from text already on the machine.

    python3 scripts/bench/make_eval_sets.py /tmp/decon-bench/evals              # 10 x 5,000
    python3 scripts/bench/make_eval_sets.py DIR --sets 3 --items 1000            # smaller

Each item is a paragraph (text between blank lines) of 12 to 150 words, its white space
collapsed, written as {"id": "<set>-<n>", "text": ...} into DIR/set-NN.jsonl. Paragraphs
come from two kinds of source, each read in sorted path order, so the output is
deterministic for the same files on disk:

- text the real corpus (scripts/bench/make_real_corpus.py) is made of: the Python 3.11
  standard library and the man pages. Sets 00 and 01 are drawn from it, so they are
  contaminated: their items are in the corpus, whole or in part.
- text the real corpus leaves out: Python's site-packages (/usr/lib/python3/dist-packages),
  the C headers under /usr/include and Perl's modules (/usr/share/perl*). The other sets
  are drawn from it: mostly clean, with what they really share with the corpus (license
  headers, common phrases).

Paragraphs are taken round-robin from the files, each distinct paragraph once, until every
set is full. Standard library only.
"""

import argparse
import glob
import gzip
import json
import os
import re
import sys


def walk(root, keep):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path) and keep(path):
                yield path


def text_of(path):
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


BLANK = re.compile(r"\n\s*\n")
SPACE = re.compile(r"\s+")


def paragraphs(paths, seen):
    """Paragraphs of 12 to 150 words of each file, in order, each distinct one once."""
    for path in paths:
        text = text_of(path)
        if not text:
            continue
        for para in BLANK.split(text):
            words = para.split()
            if not 12 <= len(words) <= 150:
                continue
            flat = SPACE.sub(" ", para).strip()
            if flat in seen:
                continue
            seen.add(flat)
            yield flat


def python_lib():
    home = os.path.expanduser("~")
    for pattern in (home + "/.pyenv/versions/3.11*/lib/python3.11", "/usr/lib/python3.11"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def in_corpus():
    lib = python_lib()
    if lib:
        yield from walk(lib, lambda p: p.endswith(".py") and "site-packages" not in p)
    yield from walk("/usr/share/man", lambda p: True)


def held_out():
    yield from walk("/usr/lib/python3/dist-packages", lambda p: p.endswith(".py"))
    yield from walk("/usr/include", lambda p: p.endswith(".h"))
    for root in sorted(glob.glob("/usr/share/perl*")):
        yield from walk(root, lambda p: p.endswith((".pm", ".pod")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="output directory")
    ap.add_argument("--sets", type=int, default=10)
    ap.add_argument("--items", type=int, default=5000, help="items per set")
    ap.add_argument("--contaminated", type=int, default=2,
                    help="sets drawn from the corpus's own sources")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    seen = set()
    sources = [paragraphs(in_corpus(), seen), paragraphs(held_out(), seen)]
    for s in range(args.sets):
        source = sources[0] if s < args.contaminated else sources[1]
        path = os.path.join(args.out, f"set-{s:02d}.jsonl")
        n = 0
        with open(path, "w", encoding="utf-8") as out:
            for para in source:
                out.write(json.dumps({"id": f"{s:02d}-{n}", "text": para}) + "\n")
                n += 1
                if n == args.items:
                    break
        print(f"{path}: {n} items", file=sys.stderr)
        if n < args.items:
            print(f"warning: {path} has {n} items, not {args.items}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
