#!/usr/bin/env python3
"""The MinHash-LSH baseline of the accuracy bench: datasketch with its usual settings.

Reads JSONL `{"id", "text"}`, builds a datasketch MinHash (NUM_PERM permutations) of each
document's word 3-shingles (lower-cased `\\w+` words; for CJK-heavy text, character
3-grams, as the dev set's tiers are measured), indexes them in a MinHashLSH at the given
Jaccard threshold and writes every candidate pair as TSV `id_a<TAB>id_b`. Optionally keeps
only the pairs whose estimated Jaccard (from the signatures) reaches the threshold.

Run by scripts/bench/bench_accuracy.py inside a virtual environment that has datasketch; never
needed by the project's build or tests.
"""
import argparse
import json
import re
import sys
import time


WORD_RE = re.compile(r"\w+", re.UNICODE)
CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
PUNCT_SPACE_RE = re.compile(r"[\s\W_]+", re.UNICODE)


def shingles(text, k=3):
    head = text[:2000]
    if head and len(CJK_RE.findall(head)) / len(head) > 0.2:
        s = PUNCT_SPACE_RE.sub("", text.lower())
        return {s[i:i + k] for i in range(max(1, len(s) - k + 1))}
    w = WORD_RE.findall(text.lower())
    return {" ".join(w[i:i + k]) for i in range(max(1, len(w) - k + 1))}


def main():
    # Imported here, so that other scripts can import shingles() without datasketch.
    from datasketch import MinHash, MinHashLSH

    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("--output", required=True)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--verify", action="store_true",
                    help="keep only pairs whose estimated Jaccard reaches the threshold")
    a = ap.parse_args()

    start = time.perf_counter()
    ids, sigs = [], []
    with open(a.input, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            m = MinHash(num_perm=a.num_perm)
            m.update_batch([s.encode("utf-8") for s in shingles(r["text"])])
            ids.append(str(r["id"]))
            sigs.append(m)
    lsh = MinHashLSH(threshold=a.threshold, num_perm=a.num_perm)
    pairs = set()
    for i, m in enumerate(sigs):
        for j in lsh.query(m):
            if a.verify and m.jaccard(sigs[j]) < a.threshold:
                continue
            pairs.add((j, i))
        lsh.insert(i, m)
    with open(a.output, "w", encoding="utf-8") as out:
        out.write("id_a\tid_b\n")
        for j, i in sorted(pairs):
            out.write(f"{ids[j]}\t{ids[i]}\n")
    print(json.dumps({"docs": len(ids), "pairs": len(pairs),
                      "seconds": round(time.perf_counter() - start, 3)}), file=sys.stderr)


if __name__ == "__main__":
    main()
