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
import json
import os
import re
import sys

# The corpus generator's file walk and text reading (this script sits beside it).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_real_corpus import as_text, python_lib, read_bytes  # noqa: E402
from make_real_corpus import walk as corpus_files  # noqa: E402


def walk(root, keep):
    return corpus_files(root, keep, skip_dirs=("__pycache__",))


def text_of(path):
    return as_text(read_bytes(path))


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
