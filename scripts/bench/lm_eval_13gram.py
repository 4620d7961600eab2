#!/usr/bin/env python3
"""The lm-eval / GPT-3 13-gram overlap procedure, as its documentation describes it, beside
`simhash decontaminate`'s hits on the same files: what each finds that the other misses.

    simhash decontaminate CORPUS --eval EVAL... --hits hits.jsonl
    python3 scripts/bench/lm_eval_13gram.py CORPUS EVAL... --hits hits.jsonl [--examples 5]

The procedure (written here from its description, not from its code): a text is
lower-cased, ASCII punctuation is deleted, and it is split on white space; an eval item is
contaminated by a training document when one of the item's 13-grams of those words is
among the document's. Items of fewer than 13 words have no 13-gram and are never
contaminated; there is no threshold on how much of the item is found, and no limit on
common n-grams. The training side is streamed against a set of the eval items' 13-grams,
which finds the same pairs as building the training set's 13-grams first.

Prints the (document, item) pairs and the items each method finds, those found by both,
and up to --examples pairs found by one only, with the shared text, for reading. Standard
library only.
"""

import argparse
import json
import string
import sys
from collections import defaultdict

N = 13
DELETE = str.maketrans("", "", string.punctuation)


def words(text):
    return text.lower().translate(DELETE).split()


def read(path, field="text", id_field="id"):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            text = rec.get(field)
            if isinstance(text, str):
                yield str(rec.get(id_field, n)), text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("evals", nargs="+", help="eval sets, named by their file stems")
    ap.add_argument("--hits", required=True, help="simhash decontaminate --hits of the same files")
    ap.add_argument("--examples", type=int, default=3)
    args = ap.parse_args()

    grams = defaultdict(list)  # 13-gram -> [(set, item)]
    short = 0
    items = {}
    for path in args.evals:
        name = path.rsplit("/", 1)[-1].split(".")[0]
        for item, text in read(path):
            items[(name, item)] = text
            w = words(text)
            if len(w) < N:
                short += 1
            for i in range(len(w) - N + 1):
                grams[tuple(w[i:i + N])].append((name, item))
    lm = defaultdict(set)  # (doc, set, item) -> shared 13-grams
    docs = {}
    for doc, text in read(args.corpus):
        w = words(text)
        for i in range(len(w) - N + 1):
            for key in grams.get(tuple(w[i:i + N]), ()):
                lm[(doc,) + key].add(" ".join(w[i:i + N]))
                docs[doc] = text
    ours = {}
    with open(args.hits, encoding="utf-8") as f:
        for line in f:
            h = json.loads(line)
            ours[(str(h["id"]), h["eval"], h["item"])] = h
    both = set(lm) & set(ours)
    only_lm = sorted(set(lm) - set(ours))
    only_ours = sorted(set(ours) - set(lm))
    print(f"eval items: {len(items)} ({short} of fewer than {N} words, which the 13-gram "
          f"procedure cannot find)")
    print(f"(document, item) pairs: 13-gram {len(lm)}, decontaminate {len(ours)}, both "
          f"{len(both)}, 13-gram only {len(only_lm)}, decontaminate only {len(only_ours)}")
    items_lm = {k[1:] for k in lm}
    items_ours = {k[1:] for k in ours}
    print(f"contaminated items: 13-gram {len(items_lm)}, decontaminate {len(items_ours)}, "
          f"both {len(items_lm & items_ours)}")
    for title, keys in (("13-gram only", only_lm), ("decontaminate only", only_ours)):
        print(f"\n== {title}: {len(keys)} pairs; examples")
        for key in keys[: args.examples]:
            print(f"- document {key[0]}, {key[1]}/{key[2]}")
            if key in lm:
                print(f"  13-grams shared: {len(lm[key])}, e.g. {sorted(lm[key])[0]!r}")
            if key in ours:
                h = ours[key]
                print(f"  decontaminate: overlap {h['overlap']:.3f} ({h['matched']} of "
                      f"{h['ngrams']} n-grams), longest {h['longest']} words")
            print(f"  item: {items[key[1:]][:300]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
