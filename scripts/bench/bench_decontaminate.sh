#!/usr/bin/env bash
# The decontamination benchmark: `simhash decontaminate` of a corpus against eval sets,
# beside default `simhash dedup` of the same corpus in the same run (the baseline),
# alternating the two commands, RUNS runs each; then the median ratio of their CPU
# seconds (user + system: the cost per core) and of their wall times, each command's peak
# RSS, and the eval sets' memory per eval n-gram (the peak RSS over that of the same run
# with one tiny eval set, divided by the distinct eval n-grams).
#
#   python3 scripts/bench/make_real_corpus.py /tmp/decon-bench/real.jsonl --max-mb 500
#   python3 scripts/bench/make_eval_sets.py /tmp/decon-bench/evals
#   cargo build --release -p simhash-cli
#   scripts/bench/bench_decontaminate.sh /tmp/decon-bench/real.jsonl /tmp/decon-bench/evals
#
# Arguments: CORPUS EVAL_DIR [RUNS=3] [THREADS=all]. The binary is $SIMHASH, else
# $CARGO_TARGET_DIR/release/simhash, else target/release/simhash. Outputs go to a
# temporary directory, removed at the end; dedup writes its kept records (-o), as a
# user's run does; decontaminate writes its hits (--hits).
set -euo pipefail

corpus=${1:?usage: bench_decontaminate.sh CORPUS EVAL_DIR [RUNS] [THREADS]}
evals=${2:?usage: bench_decontaminate.sh CORPUS EVAL_DIR [RUNS] [THREADS]}
runs=${3:-3}
threads=${4:-$(nproc)}
bin=${SIMHASH:-${CARGO_TARGET_DIR:-target}/release/simhash}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --release -p simhash-cli)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
eval_args=()
for f in "$evals"/*.jsonl; do eval_args+=(--eval "$f"); done
printf '{"id":"t","text":"a tiny eval set of one item with a dozen words in it"}\n' > "$work/tiny.jsonl"

# One timed run: NAME then the command; appends "NAME wall user sys maxrss_kb" to times.
timed() {
    local name=$1
    shift
    /usr/bin/time -f "$name %e %U %S %M" -a -o "$work/times" "$@"
}

decon() {
    timed decontaminate "$bin" decontaminate "$corpus" "${eval_args[@]}" -j "$threads" -q \
        --hits "$work/hits.jsonl" --stats "$work/stats.json"
}
dedup() {
    timed dedup "$bin" dedup "$corpus" -j "$threads" -q -o "$work/kept.jsonl"
}

echo "corpus $(du -h "$corpus" | cut -f1), $(ls "$evals"/*.jsonl | wc -l) eval sets, $runs runs, -j $threads, $bin" >&2
for run in $(seq "$runs"); do
    # Alternate which goes first, so that neither always has the warmer page cache.
    if [ $((run % 2)) -eq 1 ]; then dedup; decon; else decon; dedup; fi
    echo "run $run done" >&2
done
timed tiny "$bin" decontaminate "$corpus" --eval "$work/tiny.jsonl" -j "$threads" -q \
    --hits "$work/tiny-hits.jsonl"

python3 - "$work/times" "$work/stats.json" <<'EOF'
import json
import statistics
import sys

rows = [line.split() for line in open(sys.argv[1])]
stats = json.load(open(sys.argv[2]))
by = {}
for name, wall, user, system, rss in rows:
    by.setdefault(name, []).append((float(wall), float(user) + float(system), int(rss) * 1024))
d = stats["decontamination"]
print(f"eval sets: {len(d['evals'])}, {sum(e['items'] for e in d['evals'])} items, "
      f"{d['ngrams']} distinct {d['ngram']}-word n-grams ({d['ngrams_dropped']} dropped); "
      f"{d['hits']} hits in {d['documents_hit']} documents")
for name in ("dedup", "decontaminate", "tiny"):
    for i, (wall, cpu, rss) in enumerate(by[name]):
        print(f"{name:14} run {i + 1}: wall {wall:7.2f} s  cpu {cpu:7.2f} s  peak RSS {rss / 1e6:8.1f} MB")
pairs = list(zip(by["dedup"], by["decontaminate"]))
cpu = statistics.median(a[1] / b[1] for a, b in pairs)
wall = statistics.median(a[0] / b[0] for a, b in pairs)
print(f"median ratio dedup / decontaminate: cpu {cpu:.2f}x, wall {wall:.2f}x "
      "(above 1: decontaminate is faster)")
rss = statistics.median(r[2] for r in by["decontaminate"])
tiny = by["tiny"][0][2]
print(f"decontaminate peak RSS {rss / 1e6:.1f} MB, with one tiny eval set {tiny / 1e6:.1f} MB: "
      f"{(rss - tiny) / d['ngrams']:.1f} bytes per distinct eval n-gram")
EOF
