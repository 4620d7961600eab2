#!/usr/bin/env bash
# The `--report` page in a real browser: installs Debian's chromium with apt-get when
# /usr/bin/chromium is missing, makes a small dedup run with --report (two shards, a
# hostile text, --report-group), renders the page headless, and checks from the rendered
# DOM (scripts/check/report_check.py) that every removed record appears with its kept record and
# that nothing was loaded from the network (CSP meta, no src/href but data: and #, and
# chromium's net log); then labels 5 pairs with the keyboard, reloads and exports the labels
# (scripts/check/report_labels.py, over the DevTools protocol); and that the relation filter
# shows each relation's pairs (scripts/check/report_filters.py). Leaves the page, the DOM, a
# screenshot and the labels file in $OUT (default: a temporary directory, printed).
#
#   bash scripts/check/report_tests.sh
#   SIMHASH_BIN=target/release/simhash OUT=dir bash scripts/check/report_tests.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ ! -x /usr/bin/chromium ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if [ -z "${SIMHASH_BIN:-}" ]; then
  cargo build --quiet --bin simhash
  SIMHASH_BIN=target/debug/simhash
fi
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
# Absolute: the browser is given file:// URLs of the files in it.
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Two shards: the news example, and edited copies of some of its records (one with a text
# that would run script if it were ever parsed as HTML).
mkdir -p "$work/in"
cp examples/news.jsonl "$work/in/a.jsonl"
python3 - "$work/in/a.jsonl" "$work/in/b.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for i, r in enumerate(rows[:8]):
        text = r["text"].replace(" the ", " a ", 2)
        if i == 0:
            text += ' </script><img src=x onerror="document.title=1"><!-- \u2028 <a href="https://example.com/">x</a>'
        out.write(json.dumps({"id": f"copy-{i}", "source": "copies", "text": text}) + "\n")
PY

"$SIMHASH_BIN" dedup "$work/in" -o "$work/kept.jsonl" --removed "$out/removed.jsonl" \
  --report "$out/report.html" --report-group source -j2 -q || [ $? -eq 1 ]

chromium=(/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$work/profile")
timeout 120 "${chromium[@]}" --log-net-log="$out/netlog.json" --dump-dom "file://$out/report.html" \
  >"$out/dom.html" 2>"$work/chromium.log"
timeout 120 "${chromium[@]}" --screenshot="$out/report.png" --window-size=1400,3000 \
  "file://$out/report.html" 2>>"$work/chromium.log" >/dev/null
# A control: a page that does load something (no CSP) must show in the net log as the
# page's request, or the net-log check proves nothing.
printf '<!DOCTYPE html><img src="http://127.0.0.1:9/control.png">' >"$work/control.html"
timeout 120 "${chromium[@]}" --log-net-log="$work/control.json" --dump-dom "file://$work/control.html" \
  >/dev/null 2>>"$work/chromium.log"
if ! python3 scripts/check/report_check.py --requests "$work/control.json" | grep -q '127.0.0.1:9/control.png'; then
  echo "FAIL: the net log does not show the control page's request" >&2
  exit 1
fi
python3 scripts/check/report_check.py "$out/dom.html" "$out/removed.jsonl" "$out/netlog.json"
# Labelling, driven over the DevTools protocol: 5 pairs labelled with the keyboard, kept
# across a reload, exported as a labels file (in $out), no request made.
timeout 120 python3 scripts/check/report_labels.py "$out/report.html" "$out"
# The relation filter: on this page (star mode), and on a components-mode page whose chain
# of template siblings reaches a record with content of its own against the kept one
# (`overlap`, which the filter must offer there).
timeout 120 python3 scripts/check/report_filters.py "$out/report.html"
python3 - "$work/chain.jsonl" <<'PY'
import json, random, sys
rng = random.Random(5)
words = ("alpha beta gamma delta epsilon zeta theta iota kappa lambda mu nu xi omicron pi rho "
         "sigma tau upsilon phi chi psi omega river stone cloud field house tree light water night").split()
text = [rng.choice(words) for _ in range(120)]
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for step in range(8):
        out.write(json.dumps({"id": f"c{step}", "text": " ".join(text)}) + "\n")
        for _ in range(6):  # six words swapped each step: the next sibling
            text[rng.randrange(len(text))] = f"w{rng.randrange(1000)}"
PY
"$SIMHASH_BIN" dedup "$work/chain.jsonl" --mode components -o "$work/chain-kept.jsonl" \
  --report "$out/components.html" -q
timeout 120 python3 scripts/check/report_filters.py "$out/components.html" template overlap
# ... and `simhash audit` reads them back with the page.
"$SIMHASH_BIN" audit "$out/report.html" "$out/labels.jsonl" >"$out/audit.txt"
grep -q ": 5 labels from " "$out/audit.txt" || { cat "$out/audit.txt" >&2; echo "FAIL: simhash audit did not read the 5 labels" >&2; exit 1; }
echo "report tests passed: $out"
