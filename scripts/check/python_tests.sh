#!/usr/bin/env bash
# The Python package's tests: builds `simhash_rs` with `pip install ./python` into a virtual
# environment this script creates (maturin, numpy, pytest, pytest-xdist, pyarrow and polars
# come from PyPI; nothing needs to be installed beforehand), then runs its doctests and
# `pytest python/tests`, which compare it with the `simhash` binary (built here) on the
# shared dev set.
#
# pip builds the extension as users get it, but in cargo's dev profile (debug assertions
# on, the engines optimized): it then reuses the libraries that `cargo build --bin
# simhash` built (scripts/check.sh: the README's main job), where the release build compiled
# them all again (87 s of CI's 2 cores). `SIMHASH_PY_PROFILE=release` builds the wheel
# users install.
#
#   bash scripts/check/python_tests.sh            # venv in target/python-venv (kept between runs)
#   SIMHASH_PY_VENV=DIR bash scripts/check/python_tests.sh
#   SIMHASH_PY_PROFILE=release bash scripts/check/python_tests.sh
#   bash scripts/check/python_tests.sh --deps     # only the venv, its packages and the dev set
#                                           # (scripts/check.sh makes them while cargo compiles)
set -euo pipefail
shopt -s inherit_errexit 2>/dev/null || true
cd "$(dirname "$0")/../.."

python=${PYTHON:-python3}
venv=${SIMHASH_PY_VENV:-target/python-venv}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "maturin>=1.9,<2" "numpy>=1.21" "pytest>=7" "pytest-xdist>=3.6.1" "pyarrow>=12" "polars>=1"
if [ "${1:-}" = "--deps" ]; then
  # The dev set the tests compare on (python/tests/conftest.py builds it once, under a lock:
  # the tests wait for it if it is still being built).
  "$venv/bin/python" -c 'import sys; sys.path.insert(0, "python/tests"); import conftest; conftest.ensure_devset()'
  exit 0
fi
# What a user runs: pip builds the extension with maturin and installs it.
MATURIN_PEP517_ARGS="--profile ${SIMHASH_PY_PROFILE:-dev}" \
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python
# The binary the tests compare with: the debug one, built as the README's main job builds
# it (so already built in CI); the inputs are small.
cargo build --locked --bin simhash
# From the workspace root, so that `import simhash_rs` is the installed package.
"$venv/bin/python" -c 'import doctest, sys, simhash_rs; r = doctest.testmod(simhash_rs); print(f"doctests: {r.attempted} run, {r.failed} failed"); sys.exit(r.failed != 0)'
# On every core (pytest-xdist): a test's Python side and the `simhash` processes it starts
# mostly take turns, so one test keeps about one core busy; on 2 cores the tests took 48 to
# 59 s in three runs, 71 s one at a time.
SIMHASH_BIN=${SIMHASH_BIN:-target/debug/simhash} "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  -n auto python/tests
