#!/usr/bin/env python3
"""Lists the files a new matching method touches, counted as docs/DESIGN.md counts them:
non-test Rust files (under crates/ and python/src/) with a `match` whose next 40 lines name
both methods' variants (of `Matching`, `Method` or the stored `Settings`).

Run from the repository root: python3 scripts/check/method_files.py
It prints the count, then the files. It measures; it does not fail.
"""
import re
import subprocess

MINHASH = re.compile(r"\b(Matching|Method|StoredSettings|Settings)::(Minhash|MinHash)\b")
SIMHASH = re.compile(r"\b(Matching|Method|StoredSettings|Settings)::Simhash\b")
MATCH = re.compile(r"\bmatch\b")
WINDOW = 40


def non_test_lines(path):
    """The file's lines up to its `#[cfg(test)] mod ...` (its unit tests)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "#[cfg(test)]" and re.match(r"\s*mod \w+", lines[i + 1]):
            return lines[:i]
    return lines


def dispatches(lines):
    """Whether a `match` there has arms for both methods."""
    for i, line in enumerate(lines):
        if MATCH.search(line):
            window = "\n".join(lines[i : i + WINDOW])
            if MINHASH.search(window) and SIMHASH.search(window):
                return True
    return False


def main():
    listed = subprocess.run(
        ["git", "ls-files", "crates/*.rs", "python/src/*.rs"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    files = [
        path
        for path in listed
        if "/tests/" not in path
        and not path.endswith("tests.rs")
        and "/benches/" not in path
        and dispatches(non_test_lines(path))
    ]
    print(len(files))
    print("\n".join(files))


if __name__ == "__main__":
    main()
