#!/usr/bin/env bash
# The project's whole test suite: what CI runs and what to run before each commit.
# Formatting, lints (warnings are errors), docs, tests, and a smoke run of every benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

step "cargo fmt --all --check"
cargo fmt --all --check
step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
step "cargo doc --workspace --no-deps (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
step "cargo test --workspace"
cargo test --workspace --locked
step "cargo bench -p benches -- --test (smoke run)"
cargo bench -p benches --locked -- --test
