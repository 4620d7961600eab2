#!/usr/bin/env bash
# The project's whole test suite: what CI runs and what to run before each commit.
# Formatting, lints (warnings are errors), docs, tests, and a smoke run of every benchmark.
set -euo pipefail
shopt -s inherit_errexit 2>/dev/null || true
cd "$(dirname "$0")/.."

# Each step with the time it starts, so a slow CI run shows which step took the time.
step() { printf '\n==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# The Python tests' packages (maturin, numpy, pytest, pytest-xdist, pyarrow, polars: a
# minute of downloading in a fresh clone) install in the background while cargo compiles,
# and the dev set the tests compare on is built there too (half a minute); the Python step
# waits for them.
pydeps_log=$(mktemp)
bash scripts/check/python_tests.sh --deps >"$pydeps_log" 2>&1 &
pydeps=$!
log=$(mktemp)
units=$(mktemp -d)
trap 'kill "$pydeps" 2>/dev/null || true; rm -rf "$log" "$pydeps_log" "$units"' EXIT

step "cargo fmt --all --check"
cargo fmt --all --check
# No Rust file may import one that imports it back, directly or through others (a module
# circle); the script's own checks first.
step "module circles (scripts/check/module_circles.py)"
python3 scripts/check/module_circles.py --self-test
python3 scripts/check/module_circles.py
# No flag may be declared in two front ends: each is declared once, in a flag group the
# front ends flatten.
step "flags declared once (scripts/check/flags_once.py)"
python3 scripts/check/flags_once.py --self-test
python3 scripts/check/flags_once.py
step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
step "cargo doc --workspace --no-deps (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
# Everything above and below builds the libraries with their `serde` feature (the binaries
# pin it on, see the test step); their users may leave it off.
step "cargo check: the libraries without their serde feature"
cargo check -p simhash-core -p simhash-index -p simhash-cluster --lib --locked
# One build of the workspace's tests, which reuses the libraries of the README's main job
# (`cargo run --bin simhash`: same profile and features, see the feature pins in
# crates/simhash-cli/Cargo.toml; the libraries' serde tests run, the binaries pin that
# feature on). `--benches` adds the criterion benches to the tests, run once each in test
# mode on a hundredth of their inputs (`benches::smoke`): their smoke run shares the tests'
# build, where `cargo bench -- --test` built the workspace again, optimized. Not
# `--all-targets`: its `--lib` also builds the Python extension's library, which has no Rust
# tests (`test = false`), for nothing. Doctests run separately (target flags leave them
# out), on the same build.
step "cargo test --workspace --tests --benches --examples, then --doc"
# That reuse is checked, from cargo's own report of the units it compiled: a dependency that
# turns a feature on only in the tests would otherwise double the test build's time unseen.
# The first command is the main job's build (nothing to do after `.ci/run`'s main job).
cargo build --bin simhash --locked --message-format=json-render-diagnostics >"$units/main.json"
cargo test --workspace --tests --benches --examples --locked --no-run \
  --message-format=json-render-diagnostics >"$units/test.json"
python3 scripts/check/rebuilt_units.py "$units/main.json" "$units/test.json"
cargo test --workspace --tests --benches --examples --locked 2>&1 | tee "$log"
cargo test --workspace --doc --locked 2>&1 | tee -a "$log"
step "python: pip install ./python into a venv the script makes, doctests, pytest python/tests"
if ! wait "$pydeps"; then
  cat "$pydeps_log" >&2
  echo "scripts/check.sh: installing the Python tests' packages or building their dev set failed" >&2
  exit 1
fi
bash scripts/check/python_tests.sh 2>&1 | tee -a "$log"
step "the --report page in headless chromium (installed with apt-get when missing)"
# Its page, DOM and screenshot go to target/report-tests (replaced each run), not /tmp.
rm -rf target/report-tests
SIMHASH_BIN=target/debug/simhash OUT=target/report-tests bash scripts/check/report_tests.sh 2>&1 | tee -a "$log"

# One closing line for the whole suite: cargo's test and doctest result lines, the Python
# package's doctests and pytest cases, and the browser check (one).
step "done"
awk '/^test result:/ { p += $4; f += $6 }
     /^doctests: [0-9]+ run, [0-9]+ failed/ { p += $2 - $4; f += $4 }
     /^[0-9]+ passed.* in [0-9.]+s/ { p += $1 }
     /^report tests passed:/ { p += 1 }
     END { printf "\ntests: %d passed, %d failed (Rust tests and doctests, Python doctests and tests, the browser check)\n", p, f }' "$log"
