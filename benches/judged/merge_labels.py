#!/usr/bin/env python3
"""Merges judges' labels with the sampled pairs into a judged set (the `.jsonl` files here):

    python3 benches/judged/merge_labels.py CORPUS.jsonl PACKETS_DIR OUT.jsonl

PACKETS_DIR is what `../shared/data/judge_sample.py` wrote (`key.tsv`: pair, bucket, removed
id, kept id, similarity; `packetK.md`) with each judge's labels beside it as `labelsK.jsonl`
(one `{"pair", "label", "note"}` a pair of packet K). Every pair of the key must have exactly
one label, one of DUP, TEMPLATE, DISTINCT, UNSURE; the texts are read from the corpus by id.
Each line written: pair, bucket, similarity, label, note, removed_id, kept_id, removed, kept,
in the key's order.
"""
import glob
import json
import os
import sys

LABELS = {"DUP", "TEMPLATE", "DISTINCT", "UNSURE"}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    corpus, packets, out = sys.argv[1:]
    key = []
    with open(os.path.join(packets, "key.tsv"), encoding="utf-8") as f:
        for line in f:
            pair, bucket, removed, kept, sim = line.rstrip("\n").split("\t")
            key.append((int(pair), int(bucket), removed, kept, float(sim)))
    labels = {}
    for path in sorted(glob.glob(os.path.join(packets, "labels*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                v = json.loads(line)
                pair, label = int(v["pair"]), v["label"]
                if label not in LABELS:
                    sys.exit(f"{path}:{n}: unknown label {label!r}")
                if pair in labels:
                    sys.exit(f"{path}:{n}: pair {pair} labelled twice")
                labels[pair] = (label, v.get("note", ""))
    missing = [p[0] for p in key if p[0] not in labels]
    if missing:
        sys.exit(f"pairs without a label: {missing[:20]} ({len(missing)})")
    need = {i for p in key for i in p[2:4]}
    texts = {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["id"] in need:
                texts[d["id"]] = d["text"]
    with open(out, "w", encoding="utf-8") as f:
        for pair, bucket, removed, kept, sim in key:
            label, note = labels[pair]
            f.write(json.dumps({
                "pair": pair, "bucket": bucket, "similarity": sim, "label": label, "note": note,
                "removed_id": removed, "kept_id": kept,
                "removed": texts[removed], "kept": texts[kept],
            }, ensure_ascii=False) + "\n")
    print(f"{len(key)} judged pairs -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
