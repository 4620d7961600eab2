#!/usr/bin/env bash
# Prints a SHA-256 of every command's output on a JSONL corpus, one line per command, to
# compare two builds byte for byte on corpora too large for a test (the dev set, the bench
# corpus): a refactoring must leave every line the same.
#   scripts/bench/output_digests.sh target/release devset.jsonl > new.txt
#   scripts/bench/output_digests.sh /path/to/old/release devset.jsonl > old.txt && diff old.txt new.txt
# Covers simhash's commands with both methods, keep policies, --templates, --output-dir,
# --against (an index of the corpus's first half, the second half deduplicated against it),
# Parquet input (when Python has pyarrow to write it), --report pages, and simhash-dist.
# With SIMHASH_PY, a Python that imports the build's simhash_rs (scripts/check/python_tests.sh
# installs it in target/python-venv; give each build its own), the Python package's too:
#   SIMHASH_PY=target/python-venv/bin/python scripts/bench/output_digests.sh target/release devset.jsonl
# stderr is included without the closing summary's elapsed time (simhash-dist's: its times
# and peak memory); a report page without its
# times and peak memory (the only figures that differ between two runs).
set -euo pipefail
shopt -s nullglob
bin=${1:?usage: output_digests.sh BIN_DIR CORPUS.jsonl}
corpus=${2:?usage: output_digests.sh BIN_DIR CORPUS.jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
  local name=$1
  shift
  rm -rf "$tmp"/out.* "$tmp"/rm.* "$tmp"/page.html "$tmp"/ix
  local code=0
  "$@" >"$tmp/stdout" 2>"$tmp/stderr" || code=$?
  sed -E -e 's/ in [0-9]+\.[0-9]+s$//' -e '/^simhash-dist:/ s/; (read [0-9.]+s|total [0-9.]+s).*$//' \
    "$tmp/stderr" >"$tmp/stderr.n"
  if [ -f "$tmp/page.html" ]; then
    # The page's run figures that change from run to run: seconds and peak memory.
    sed -E -e 's#<tr><th>(seconds by phase|seconds|peak memory)</th><td>[^<]*</td>#<tr><th>\1</th><td></td>#' \
      "$tmp/page.html" >"$tmp/rm.page.html"
    rm -f "$tmp/page.html"
  fi
  local sum
  sum=$(cat "$tmp/stdout" "$tmp/stderr.n" $(find "$tmp" -maxdepth 2 -path "$tmp/out.*" -type f | sort) \
    "$tmp"/rm.* | sha256sum | cut -c1-16)
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
run dedup-keep-longest "$s" dedup --keep longest "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
run dedup-keep-lowest-id "$s" dedup --keep lowest-id "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
run dedup-templates-keep "$s" dedup --templates keep "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
run dedup-annotate "$s" dedup --annotate "$corpus" -o "$tmp/out.jsonl"
run dedup-report "$s" dedup "$corpus" -o "$tmp/out.jsonl" --report "$tmp/page.html"
run pairs-report "$s" pairs "$corpus" -o "$tmp/out.tsv" --report "$tmp/page.html"
run cluster-report "$s" cluster "$corpus" -o "$tmp/out.tsv" --report "$tmp/page.html"
# Two shards of the corpus: --output-dir, and --against an index of the first.
mkdir -p "$tmp/shards"
lines=$(wc -l <"$corpus")
head -n $((lines / 2)) "$corpus" >"$tmp/shards/a.jsonl"
tail -n +$((lines / 2 + 1)) "$corpus" >"$tmp/shards/b.jsonl"
run dedup-output-dir "$s" dedup "$tmp/shards" --output-dir "$tmp/out.dir" --removed "$tmp/rm.jsonl"
run dedup-against sh -c '"$1" index add "$2/ix" "$2/shards/a.jsonl" -q && "$1" dedup "$2/shards/b.jsonl" --against "$2/ix" -o "$2/out.jsonl" --removed "$2/rm.jsonl"' _ "$s" "$tmp"
run index-query sh -c '"$1" index add "$2/ix" "$2/shards/a.jsonl" -q && "$1" index query "$2/ix" "$2/shards/b.jsonl"' _ "$s" "$tmp"
py=${PYTHON:-python3}
if "$py" -c "import pyarrow" 2>/dev/null; then
  "$py" - "$corpus" "$tmp/corpus.parquet" <<'PY'
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
pq.write_table(pa.table({"id": [str(r["id"]) for r in rows], "text": [r["text"] for r in rows]}),
               sys.argv[2], row_group_size=1000)
PY
  run dedup-parquet "$s" dedup "$tmp/corpus.parquet" -o "$tmp/out.parquet" --removed "$tmp/rm.jsonl"
  run pairs-parquet "$s" pairs "$tmp/corpus.parquet"
fi
run cluster "$s" cluster "$corpus"
run cluster-minhash "$s" cluster --method minhash "$corpus"
run fork "$s" --format json --text_column=text --id_column=id --window=5 --blocks 5 --distance 3 --input "$corpus"
"$s" fingerprint "$corpus" 2>/dev/null | tail -n +2 | cut -f2 | grep . >"$tmp/decimal.txt" || true
run find-all "$bin/simhash-find-all" -i "$tmp/decimal.txt" -d 3 -b 6
run find-clusters "$bin/simhash-find-clusters" -i "$tmp/decimal.txt" -d 3 -b 6
if [ -n "${SIMHASH_PY:-}" ]; then
  # Each call's value as text: decisions, similarities, relations, pairs, clusters, an
  # index's dedup of the second half against the first, and the report page of a run.
  cat >"$tmp/py_outputs.py" <<'PY'
import json, math, sys
import simhash_rs
what, corpus, tmp = sys.argv[1:4]
rows = [json.loads(l) for l in open(corpus, encoding="utf-8") if l.strip()]
texts, ids = [r["text"] for r in rows], [str(r["id"]) for r in rows]
def show(result):
    for i in range(len(result)):
        s = float(result.similarity[i])
        rel = result.relation[i] if result.relation else None
        print(int(result.keep[i]), int(result.duplicate_of[i]), "nan" if math.isnan(s) else repr(s), rel)
if what.startswith("dedup"):
    method, templates = ("simhash", None) if what == "dedup-simhash" else ("minhash", None)
    if what == "dedup-templates-keep":
        templates = "keep"
    show(simhash_rs.dedup(texts, ids, method=method, templates=templates))
elif what.startswith("pairs"):
    for p in simhash_rs.pairs(texts, ids, method="simhash" if what == "pairs-simhash" else "minhash"):
        print(*p)
elif what == "clusters":
    print([int(c) for c in simhash_rs.clusters(texts)])
elif what.startswith("index"):
    half = len(texts) // 2
    ix = simhash_rs.Index.open(f"{tmp}/pyix-{what}", create=True,
                                method="simhash" if what == "index-simhash" else "minhash")
    ix.add(texts[:half], ids[:half])
    result = ix.dedup(texts[half:], ids[half:])
    show(result)
    print(result.indexed)
elif what == "report":
    simhash_rs.dedup(texts, ids).report(f"{tmp}/page.html", texts=texts)
PY
  for what in dedup dedup-simhash dedup-templates-keep pairs pairs-simhash clusters index index-simhash report; do
    run "python-$what" "$SIMHASH_PY" "$tmp/py_outputs.py" "$what" "$corpus" "$tmp"
  done
fi
if [ -x "$bin/simhash-dist" ]; then
  run dist-pairs "$bin/simhash-dist" pairs --method simhash "$corpus"
  run dist-cluster "$bin/simhash-dist" cluster "$corpus"
  run dist-dedup "$bin/simhash-dist" dedup "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
  run dist-dedup-keep-longest "$bin/simhash-dist" dedup --keep longest "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
  run dist-dedup-simhash "$bin/simhash-dist" dedup --method simhash "$corpus" -o "$tmp/out.jsonl" --removed "$tmp/rm.jsonl"
  run dist-pairs-minhash "$bin/simhash-dist" pairs "$corpus"
fi
