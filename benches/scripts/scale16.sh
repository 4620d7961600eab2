#!/bin/bash
# The 16-core figures of issue 30, in one call (prepared for a device session that had none): thread scaling of `simhash dedup` (both methods)
# on bench_cli's 1 GB corpus, then simhash-dist against `simhash -j16` on it and on the
# boilerplate corpus. Every dist output is checked byte-identical by bench_dist.
#
# Put in one folder: this script, the stripped release binaries `simhash`, `simhash-dist`,
# `bench_cli`, `bench_dist`, `benches/scripts/threads.sh`, and the boilerplate corpus
# (`python3 ../shared/data/gen_boilerplate_corpus.py 20000 11 bp20k.jsonl; gzip bp20k.jsonl`),
# then run `bash FOLDER/scale16.sh` on the 16-core machine (about 4 minutes).
set -u
B=$(cd "$(dirname "$0")" && pwd)
T=/tmp/simdev; mkdir -p "$T"
echo "== machine: $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB"
start=$(date +%s)
el() { echo "== elapsed $(( $(date +%s) - start )) s"; }
echo "== corpus (bench_cli, 1 GB) and one -j16 run of each method"
timeout 120 "$B/bench_cli" --mb 1000 --dir "$T" --simhash "$B/simhash" --threads 16 --method minhash,simhash
el
C=$(ls "$T"/corpus-*.jsonl | head -1)
echo "== threads.sh (RUNS=2) on $C"
RUNS=2 timeout 200 bash "$B/threads.sh" "$B" "$C"
el
echo "== dist dedup on $C, 16 workers: 1x16 and 4x4"
timeout 120 "$B/bench_dist" --corpus "$C" --method minhash --command dedup --runs 2 --threads 16 --processes 4 --bin "$B" --dir "$T/bd"
el
gunzip -c "$B/bp20k.jsonl.gz" > "$T/bp.jsonl"
for c in dedup cluster; do
  echo "== dist $c on the boilerplate corpus, 16 workers: 1x16 and 4x4"
  timeout 50 "$B/bench_dist" --corpus "$T/bp.jsonl" --method minhash --command $c --runs 2 --threads 16 --processes 4 --bin "$B" --dir "$T/bd2"
  el
done
echo "== dist dedup on $C: 2x8"
timeout 40 "$B/bench_dist" --corpus "$C" --method minhash --command dedup --runs 1 --threads 16 --processes 2 --bin "$B" --dir "$T/bd"
el
