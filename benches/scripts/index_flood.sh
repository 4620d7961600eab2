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
#
# SHAPE=own writes another flood: documents that share a 60-word boilerplate, each with 20
# words of its own (N default 20,000, M 2,000): every pair verifies and is `overlap`, so
# nothing is removed. `index query` is left out there (it lists every match: N x M lines).
#
#   cargo build --release -p simhash-cli
#   bash benches/scripts/index_flood.sh target/release
#   N=100000 M=20000 RUNS=5 bash benches/scripts/index_flood.sh BIN_DIR
#   SHAPE=own bash benches/scripts/index_flood.sh BIN_DIR
set -euo pipefail
bin=${1:?usage: index_flood.sh BIN_DIR}/simhash
[ -x "$bin" ] || { echo "no simhash binary in $1" >&2; exit 2; }
shape=${SHAPE:-phrase}
case "$shape" in
phrase) n=${N:-200000} m=${M:-40000} ;;
own) n=${N:-20000} m=${M:-2000} ;;
*) echo "SHAPE is phrase or own, not $shape" >&2; exit 2 ;;
esac
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$n" "$m" "$shape" <<'PY'
import json, random, sys
work, n, m, shape = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(5)
letters = "abcdefghijklmnopqrstuvwxyz"
words = ["".join(rng.choice(letters) for _ in range(rng.randint(5, 9))) for _ in range(400000)]
boilerplate = " ".join(rng.choice(words) for _ in range(60))
def write(path, prefix, count):
    with open(path, "w") as f:
        for i in range(count):
            if shape == "own":
                text = boilerplate + ". " + " ".join(rng.choice(words) for _ in range(20)) + "."
            else:
                text = "terms apply here " + " ".join(rng.choice(words) for _ in range(2))
            f.write(json.dumps({"id": f"{prefix}{i}", "text": text}) + "\n")
write(f"{work}/base.jsonl", "b", n)
write(f"{work}/new.jsonl", "n", m)
PY
cat "$work/base.jsonl" "$work/new.jsonl" >"$work/all.jsonl"
"$bin" index add "$work/ix" "$work/base.jsonl" -q

what="short documents sharing a phrase"
[ "$shape" = own ] && what="documents sharing a boilerplate, each with a sentence of its own"
echo "# $bin: $n indexed, $m new $what ($(nproc) CPUs, $runs runs, medians)"
for ((r = 0; r < runs; r++)); do
    /usr/bin/time -f "%e" -o "$work/memory-$r.time" \
        "$bin" dedup "$work/all.jsonl" -q -o "$work/memory-$r.jsonl"
    /usr/bin/time -f "%e" -o "$work/against-$r.time" \
        "$bin" dedup "$work/new.jsonl" --against "$work/ix" -q -o "$work/against-$r.jsonl"
    outputs="memory-$r.jsonl against-$r.jsonl"
    if [ "$shape" = phrase ]; then
        /usr/bin/time -f "%e" -o "$work/query-$r.time" \
            "$bin" index query "$work/ix" "$work/new.jsonl" -q -o "$work/query-$r.tsv"
        outputs="$outputs query-$r.tsv"
    fi
    for what in $outputs; do
        cmp -s "$work/$what" "$work/${what/-$r./-0.}" || { echo "$what differs from round 0" >&2; exit 1; }
    done
done
python3 - "$work" "$runs" <<'PY'
import statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
import os
med = {w: statistics.median(float(open(f"{work}/{w}-{r}.time").read().split()[-1]) for r in range(runs))
       for w in ("memory", "against", "query") if os.path.exists(f"{work}/{w}-0.time")}
print(f"in-memory dedup of all      {med['memory']:7.2f} s")
print(f"dedup --against the index   {med['against']:7.2f} s  ({med['against'] / med['memory']:.2f}x)")
if "query" in med:
    print(f"index query                 {med['query']:7.2f} s  ({med['query'] / med['memory']:.2f}x)")
PY
