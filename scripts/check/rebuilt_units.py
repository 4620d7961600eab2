#!/usr/bin/env python3
"""Fails when the test build compiles a second variant of a unit that the main job built.

    python3 scripts/check/rebuilt_units.py MAIN_JOB.json TEST_BUILD.json

Both files are cargo's `--message-format=json` output: MAIN_JOB.json of
`cargo build --bin simhash` (the README's main job), TEST_BUILD.json of the test build run
after it. A crate target that both builds use must be the same unit in both: the same
output files (their names carry a hash of the features, profile and dependencies) and
features, and not compiled again. Otherwise the tests pay for a second build of the
libraries (86 s of CPU on 2 cores when it last happened). The usual cause is a dependency
that turns a feature on only in the tests; the fix is a pin in crates/simhash-cli/Cargo.toml
and python/Cargo.toml (see their feature pins), not a change to this script.

The check does not depend on what the target directory held before: a variant built by an
earlier run, and so fresh now, is still a second variant.
"""

import json
import sys


def artifacts(path):
    """The non-test compiler artifacts of a build, by (package id, target name, target
    kinds): a list of (output files, features, fresh), one per unit."""
    units = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            message = json.loads(line)
            if message.get("reason") != "compiler-artifact" or message["profile"]["test"]:
                continue
            target = message["target"]
            key = (message["package_id"], target["name"], tuple(target["kind"]))
            unit = (tuple(sorted(message["filenames"])), tuple(message["features"]))
            units.setdefault(key, []).append((unit, message["fresh"]))
    return units


def second_builds(main_job, test_build):
    """The test build's units of a target that the main job built, which are not the main
    job's unit or were compiled again: (key, the main job's features, the test's)."""
    found = []
    for key, units in sorted(test_build.items()):
        if key not in main_job:
            continue
        built = {unit for unit, _ in main_job[key]}
        for unit, fresh in units:
            if unit not in built or not fresh:
                found.append((key, sorted(u[1] for u in built), unit[1]))
    return found


def main(argv):
    if len(argv) != 3:
        print("usage: rebuilt_units.py MAIN_JOB.json TEST_BUILD.json", file=sys.stderr)
        return 2
    main_job = artifacts(argv[1])
    test_build = artifacts(argv[2])
    for path, units in ((argv[1], main_job), (argv[2], test_build)):
        if not units:
            print(f"{path}: no compiler artifacts: not cargo's JSON messages", file=sys.stderr)
            return 2
    shared = sum(1 for key in test_build if key in main_job)
    found = second_builds(main_job, test_build)
    if found:
        print(
            f"the test build compiled {len(found)} units that the main job (`cargo build "
            "--bin simhash`) built differently: a feature or profile differs between the two "
            "builds; pin it in crates/simhash-cli/Cargo.toml and python/Cargo.toml (see their "
            "feature pins):",
            file=sys.stderr,
        )
        for (package_id, name, kinds), before, after in found:
            why = "a dependency differs" if after in before else "its features differ"
            before = " / ".join(",".join(f) or "(none)" for f in before)
            print(
                f"  {name} ({', '.join(kinds)}) of {package_id}: {why} (features {before} in "
                f"the main job, {','.join(after) or '(none)'} in the test build)",
                file=sys.stderr,
            )
        return 1
    print(f"the test build reused all {shared} units it shares with the main job", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
