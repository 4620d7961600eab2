#!/usr/bin/env bash
# The persistent index from the command line, against re-running dedup over old + new, in
# one run: `simhash index add` of the old records, then the new records queried against the
# index (`index query`) and deduplicated against it (`dedup --against`), beside `pairs` and
# `dedup` of old + new (what each replaces). One thread each (-j 1), so the rates are per core.
#
#   cargo build --release -p simhash-cli
#   bash scripts/bench/bench_index.sh CORPUS.jsonl [NEW_RECORDS] [WORK_DIR]
#
# CORPUS is JSONL with `id` and `text`; its last NEW_RECORDS lines (default: a tenth) are the
# new data. Prints wall seconds, documents per second, peak memory, bytes on disk per
# document, and the ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
corpus=${1:?usage: bench_index.sh CORPUS.jsonl [NEW_RECORDS] [WORK_DIR]}
bin=${SIMHASH:-target/release/simhash}
[ -x "$bin" ] || { echo "build it first: cargo build --release -p simhash-cli" >&2; exit 2; }
total=$(wc -l <"$corpus")
new=${2:-$((total / 10))}
old=$((total - new))
work=${3:-$(mktemp -d)}
mkdir -p "$work"
rm -rf "$work/ix" "$work"/*.out "$work"/*.json
head -n "$old" "$corpus" >"$work/old.jsonl"
tail -n "$new" "$corpus" >"$work/new.jsonl"

# Runs `simhash ARGS` and prints "<wall seconds> <peak bytes>" (from its --stats).
run() {
  local name=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$bin" "$@" -q -j 1 --stats "$work/$name.json" || [ $? -eq 1 ]
  end=$(date +%s.%N)
  python3 -c "import json,sys; s=json.load(open('$work/$name.json')); \
print(f'{$end-$start:.3f}', s.get('peak_memory_bytes', 0))"
}

read -r add_s add_mem < <(run add index add "$work/ix" "$work/old.jsonl")
read -r query_s query_mem < <(run query index query "$work/ix" "$work/new.jsonl" -o "$work/query.out")
read -r against_s against_mem < <(run against dedup "$work/new.jsonl" --against "$work/ix" -o "$work/against.out")
read -r whole_s whole_mem < <(run whole dedup "$work/old.jsonl" "$work/new.jsonl" -o "$work/whole.out")
read -r pairs_s pairs_mem < <(run pairs pairs "$work/old.jsonl" "$work/new.jsonl" -o "$work/pairs.out")
start=$(date +%s.%N)
"$bin" index stats "$work/ix" >"$work/stats.out"
open_s=$(python3 -c "print(f'{$(date +%s.%N)-$start:.3f}')")
bytes=$(awk -F'\t' '$1 == "bytes" { print $2 }' "$work/stats.out")
docs=$(awk -F'\t' '$1 == "documents" { print $2 }' "$work/stats.out")

python3 - "$old" "$new" "$add_s" "$add_mem" "$query_s" "$query_mem" "$against_s" "$against_mem" \
  "$whole_s" "$whole_mem" "$open_s" "$bytes" "$docs" "$pairs_s" "$pairs_mem" <<'EOF'
import sys
old, new = int(sys.argv[1]), int(sys.argv[2])
add_s, add_mem, q_s, q_mem, a_s, a_mem, w_s, w_mem, open_s = map(float, sys.argv[3:12])
bytes_, docs = int(sys.argv[12]), int(sys.argv[13])
p_s, p_mem = float(sys.argv[14]), float(sys.argv[15])
mib = lambda b: f"{b / 2**20:.0f} MiB"
print(f"old {old} records, new {new} records, one thread each")
print(f"index add (old)           {add_s:8.2f} s  {old / add_s:9.0f} docs/s  peak {mib(add_mem)}")
print(f"index: {docs} documents, {bytes_} bytes, {bytes_ / max(docs, 1):.0f} bytes/document")
print(f"index stats (open + read) {open_s:8.3f} s")
print(f"index query (new)         {q_s:8.2f} s  {new / q_s:9.0f} docs/s  peak {mib(q_mem)}")
print(f"dedup new --against       {a_s:8.2f} s  {new / a_s:9.0f} docs/s  peak {mib(a_mem)}")
print(f"dedup old + new           {w_s:8.2f} s  {new / w_s:9.0f} new docs/s  peak {mib(w_mem)}")
print(f"pairs old + new           {p_s:8.2f} s  {new / p_s:9.0f} new docs/s  peak {mib(p_mem)}")
print(f"ratios: pairs old+new / index query = {p_s / q_s:.1f}x; dedup old+new / dedup --against = {w_s / a_s:.1f}x")
EOF
