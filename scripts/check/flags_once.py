#!/usr/bin/env python3
"""Fails when a command-line flag is declared in two crates.

Every front end's flags are declared once in the workspace: in the library that owns the
setting (a clap flag group behind its `clap` feature) or in the one binary that has the flag
alone; the other front ends and commands flatten the group (and may change its help with
clap's `mut_arg`, as `dedup`, `cluster` and `decontaminate` do for `--annotate`). This reads
each crate's `#[arg(...)]` attributes with `long` (the flag's name is `long = "..."`, or the
field's name with `-` for `_`) and fails on every long name declared in two crates.

    python3 scripts/check/flags_once.py             # the workspace
    python3 scripts/check/flags_once.py --self-test # the parser on planted declarations
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# An `#[arg(...)]` attribute (on one or more lines), then the field it is on.
ARG = re.compile(r"#\[arg\((?P<body>(?:[^()]|\([^()]*\))*)\)\]\s*(?:///[^\n]*\s*|#\[[^\n]*\]\s*)*"
                 r"(?:pub(?:\([a-z]+\))?\s+)?(?P<field>[a-z_][a-z0-9_]*)\s*:", re.S)
LONG = re.compile(r"\blong\s*(?:=\s*\"(?P<name>[^\"]+)\")?")


def flags(text):
    """The long names of the flags declared in `text` (Rust source)."""
    names = []
    for m in ARG.finditer(text):
        body = m.group("body")
        long = LONG.search(body)
        if not long:
            continue
        names.append(long.group("name") or m.group("field").replace("_", "-"))
    return names


def crate_of(path):
    parts = path.relative_to(ROOT).parts
    return "/".join(parts[:2]) if parts[0] == "crates" else parts[0]


def declared():
    """Per long name, the crates that declare it (tests excluded)."""
    where = {}
    for path in sorted(ROOT.glob("**/src/**/*.rs")):
        if "target" in path.relative_to(ROOT).parts:
            continue
        for name in flags(path.read_text(encoding="utf-8")):
            where.setdefault(name, set()).add(crate_of(path))
    return where


def self_test():
    text = '''
    #[arg(short, long, value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
    /// Docs.
    #[arg(long = "threads", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) workers: u64,
    #[arg(value_name = "INPUT")]
    paths: Vec<PathBuf>,
    #[arg(
        long,
        hide = true,
    )]
    /// Docs after.
    max_record_bytes: usize,
    '''
    got = flags(text)
    want = ["output", "threads", "max-record-bytes"]
    assert got == want, f"{got} != {want}"
    print("flags_once self-test: 3 of 3")


def main():
    if "--self-test" in sys.argv[1:]:
        self_test()
        return 0
    where = declared()
    twice = {n: c for n, c in where.items() if len(c) > 1}
    for name, crates in sorted(twice.items()):
        print(f"--{name} is declared in {', '.join(sorted(crates))}")
    if twice:
        print(f"{len(twice)} flags declared in two crates: declare each once (a flag group in "
              "the library that owns it) and flatten it")
        return 1
    print(f"each of {len(where)} flags is declared in one crate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
