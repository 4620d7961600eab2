#!/usr/bin/env bash
# Prints a SHA-256 of every command's output on a JSONL corpus, one line per command, to
# compare two builds byte for byte on corpora too large for a test (the dev set, the bench
# corpus):
#   scripts/output_digests.sh target/release devset.jsonl > new.txt
#   scripts/output_digests.sh /path/to/old/release devset.jsonl > old.txt && diff old.txt new.txt
# stderr is included without the closing summary's elapsed time.
set -euo pipefail
shopt -s nullglob
bin=${1:?usage: output_digests.sh BIN_DIR CORPUS.jsonl}
corpus=${2:?usage: output_digests.sh BIN_DIR CORPUS.jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
  local name=$1
  shift
  rm -f "$tmp"/out.* "$tmp"/rm.*
  local code=0
  "$@" >"$tmp/stdout" 2>"$tmp/stderr" || code=$?
  sed -E 's/ in [0-9]+\.[0-9]+s$//' "$tmp/stderr" >"$tmp/stderr.n"
  local sum
  sum=$(cat "$tmp/stdout" "$tmp/stderr.n" "$tmp"/out.* "$tmp"/rm.* | sha256sum | cut -c1-16)
  printf '%s\texit %s\t%s\n' "$sum" "$code" "$name"
}

s="$bin/simhash"
run fingerprint "$s" fingerprint "$corpus"
run fingerprint-fork "$s" fingerprint --preset fork "$corpus"
run pairs "$s" pairs "$corpus"
run pairs-simhash-k3 "$s" pairs --method simhash "$corpus"
run pairs-simhash-k8 "$s" pairs -k 8 "$corpus"
run dedup "$s" dedup "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
run dedup-components "$s" dedup --mode components "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
run dedup-simhash "$s" dedup --method simhash "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
run cluster "$s" cluster "$corpus"
run cluster-minhash "$s" cluster --method minhash "$corpus"
run fork "$s" --format json --text_column=text --id_column=id --window=5 --blocks 5 --distance 3 --input "$corpus"
"$s" fingerprint "$corpus" 2>/dev/null | tail -n +2 | cut -f2 | grep . >"$tmp/decimal.txt" || true
run find-all "$bin/simhash-find-all" -i "$tmp/decimal.txt" -d 3 -b 6
run find-clusters "$bin/simhash-find-clusters" -i "$tmp/decimal.txt" -d 3 -b 6
if [ -x "$bin/simhash-dist" ]; then
  run dist-pairs "$bin/simhash-dist" pairs --method simhash "$corpus"
  run dist-cluster "$bin/simhash-dist" cluster "$corpus"
  run dist-dedup "$bin/simhash-dist" dedup "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
fi
