#!/usr/bin/env bash
# Short documents sharing a phrase, against the on-disk index: N indexed (default 200,000)
# and M new (default 40,000), each "terms apply here" and two words of a 400,000-word
# vocabulary (three shingles, one of them shared by all: a flood of band candidates, none
# of which verifies). Times, over RUNS rounds (default 3; the commands alternate within a
# round, so that a change in the machine's load falls on all of them alike), the median
# wall seconds of: the in-memory dedup of all N + M records (the baseline), `dedup NEW
# --against INDEX` and `index query INDEX NEW`, with their ratios to the baseline. The
# outputs of every round must be the same (the script stops if not).
#
#   cargo build --release -p simhash-cli
#   bash benches/scripts/index_flood.sh target/release
#   N=100000 M=20000 RUNS=5 bash benches/scripts/index_flood.sh BIN_DIR
set -euo pipefail
bin=${1:?usage: index_flood.sh BIN_DIR}/simhash
[ -x "$bin" ] || { echo "no simhash binary in $1" >&2; exit 2; }
n=${N:-200000}
m=${M:-40000}
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$n" "$m" <<'PY'
import json, random, sys
work, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(5)
letters = "abcdefghijklmnopqrstuvwxyz"
words = ["".join(rng.choice(letters) for _ in range(rng.randint(5, 9))) for _ in range(400000)]
def write(path, prefix, count):
    with open(path, "w") as f:
        for i in range(count):
            text = "terms apply here " + " ".join(rng.choice(words) for _ in range(2))
            f.write(json.dumps({"id": f"{prefix}{i}", "text": text}) + "\n")
write(f"{work}/base.jsonl", "b", n)
write(f"{work}/new.jsonl", "n", m)
PY
cat "$work/base.jsonl" "$work/new.jsonl" >"$work/all.jsonl"
"$bin" index add "$work/ix" "$work/base.jsonl" -q

echo "# $bin: $n indexed, $m new short documents sharing a phrase ($(nproc) CPUs, $runs runs, medians)"
for ((r = 0; r < runs; r++)); do
    /usr/bin/time -f "%e" -o "$work/memory-$r.time" \
        "$bin" dedup "$work/all.jsonl" -q -o "$work/memory-$r.jsonl"
    /usr/bin/time -f "%e" -o "$work/against-$r.time" \
        "$bin" dedup "$work/new.jsonl" --against "$work/ix" -q -o "$work/against-$r.jsonl"
    /usr/bin/time -f "%e" -o "$work/query-$r.time" \
        "$bin" index query "$work/ix" "$work/new.jsonl" -q -o "$work/query-$r.tsv"
    for what in memory-$r.jsonl against-$r.jsonl query-$r.tsv; do
        cmp -s "$work/$what" "$work/${what/-$r./-0.}" || { echo "$what differs from round 0" >&2; exit 1; }
    done
done
python3 - "$work" "$runs" <<'PY'
import statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
med = {w: statistics.median(float(open(f"{work}/{w}-{r}.time").read().split()[-1]) for r in range(runs))
       for w in ("memory", "against", "query")}
print(f"in-memory dedup of all      {med['memory']:7.2f} s")
print(f"dedup --against the index   {med['against']:7.2f} s  ({med['against'] / med['memory']:.2f}x)")
print(f"index query                 {med['query']:7.2f} s  ({med['query'] / med['memory']:.2f}x)")
PY
