#!/usr/bin/env bash
# How `simhash dedup` scales with threads, for both methods: for -j 1, 2, 4, 8 and 16 (or
# THREADS), the median total and matching-phase wall seconds (`--stats`: `seconds_total`,
# `seconds.matching`) and CPU seconds (user + system) over RUNS runs (default 3), and the
# speed-ups against -j 1. The thread counts alternate within each round, so that a change
# in the machine's load falls on all of them alike.
#
#   cargo build --release -p simhash-cli
#   bash benches/scripts/threads.sh target/release CORPUS.jsonl
#   RUNS=5 THREADS="1 2" METHODS=simhash bash benches/scripts/threads.sh BIN_DIR CORPUS.jsonl
#
# BIN_DIR holds the `simhash` binary; CORPUS is JSONL with `id` and `text` (the issue's
# figures: bench_cli's 1 GB corpus, 395k documents; or
# `python3 ../shared/data/gen_boilerplate_corpus.py 400000 1 CORPUS.jsonl`). The kept records
# go to /dev/null; the `--stats` counts of every run of a method must be the same, and the
# script stops if they are not (the output must not depend on the thread count).
set -euo pipefail
usage="usage: threads.sh BIN_DIR CORPUS.jsonl"
bin=${1:?$usage}/simhash
corpus=${2:?$usage}
[ -x "$bin" ] || { echo "no simhash binary in $1" >&2; exit 2; }
[ -r "$corpus" ] || { echo "cannot read $corpus" >&2; exit 2; }
runs=${RUNS:-3}
read -r -a threads <<<"${THREADS:-1 2 4 8 16}"
read -r -a methods <<<"${METHODS:-simhash minhash}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "# $bin on $corpus ($(nproc) CPUs, $runs runs each, medians)"
for method in "${methods[@]}"; do
    for ((r = 0; r < runs; r++)); do
        for j in "${threads[@]}"; do
            st="$work/$method-$j-$r.json"
            /usr/bin/time -f "%U %S" -o "$work/$method-$j-$r.time" \
                "$bin" dedup --method "$method" -j "$j" -q --stats "$st" -o /dev/null "$corpus"
        done
    done
done

python3 - "$work" "$runs" "${#threads[@]}" "${threads[@]}" "${methods[@]}" <<'EOF'
import json, statistics, sys
work, runs, nt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
threads, methods = sys.argv[4:4 + nt], sys.argv[4 + nt:]
print(f"{'method':8} {'-j':>3} {'total s':>8} {'match s':>8} {'cpu s':>7} {'total x':>8} {'match x':>8}")
for m in methods:
    base = None
    counts = None
    for j in threads:
        tot, mat, cpu = [], [], []
        for r in range(runs):
            st = json.load(open(f"{work}/{m}-{j}-{r}.json"))
            c = {k: v for k, v in st.items() if k not in ("seconds", "seconds_total", "peak_memory_bytes")}
            if counts is None:
                counts = c
            elif c != counts:
                sys.exit(f"{m} -j {j}: the --stats counts differ from the first run's")
            tot.append(st["seconds_total"])
            mat.append(st["seconds"].get("matching", 0.0))
            u, s = open(f"{work}/{m}-{j}-{r}.time").read().split()[-2:]
            cpu.append(float(u) + float(s))
        t, mm, c = statistics.median(tot), statistics.median(mat), statistics.median(cpu)
        if base is None:
            base = (t, mm)
        print(f"{m:8} {j:>3} {t:8.2f} {mm:8.3f} {c:7.2f} {base[0] / t:8.2f} {base[1] / mm:8.2f}")
EOF
