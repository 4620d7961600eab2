"""Fixtures: the `simhash` binary (to compare against) and the shared dev set.

``SIMHASH_BIN`` names the binary (default: the workspace's ``target/debug/simhash``,
which ``scripts/check/python_tests.sh`` builds); ``SIMHASH_DEVSET`` a built ``devset.jsonl`` (default:
built once into ``target/python-tests/devset`` by the project's copies of the dev set's builders in
``python/tests/devset``: a clone tests on its own, with no ``../shared`` beside it).
"""

import fcntl  # the tests are POSIX's: they send signals, and the dev set is built under a lock
import json
import os
import signal
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEVSET_BUILDERS = os.path.join(ROOT, "python", "tests", "devset")

# The interrupt tests send SIGINT to this process and to child interpreters. Started as a
# background job of a script (`bash check.sh &`), Python inherits SIGINT ignored and installs
# no handler (nor do its children, which inherit the disposition): the tests would wait for
# a KeyboardInterrupt that never comes. Python's own handler, as an interactive start has it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def simhash_bin():
    path = os.environ.get("SIMHASH_BIN") or os.path.join(ROOT, "target", "debug", "simhash")
    if not os.path.exists(path):
        pytest.fail(f"no simhash binary at {path}: run `cargo build --bin simhash` or set SIMHASH_BIN")
    return path


@pytest.fixture(scope="session")
def cli(simhash_bin):
    """Runs `simhash ARGS...` and returns its stdout (fails the test on a non-zero exit)."""

    def run(*args, check=True):
        done = subprocess.run([simhash_bin, *map(str, args)], capture_output=True, text=True)
        if check and done.returncode != 0:
            pytest.fail(f"simhash {' '.join(map(str, args))} exited {done.returncode}: {done.stderr}")
        return done

    return run


@pytest.fixture(scope="session")
def devset():
    """(path of devset.jsonl, ids, texts)."""
    path = os.environ.get("SIMHASH_DEVSET") or ensure_devset()
    ids, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            ids.append(record["id"])
            texts.append(record["text"])
    return path, ids, texts


def ensure_devset():
    """The path of the dev set built into ``target/python-tests/devset``, built there first
    when missing. By one process: others (the test workers of pytest-xdist, or
    ``scripts/check/python_tests.sh --deps`` building it while cargo compiles) wait for it,
    then find it built."""
    out = os.path.join(ROOT, "target", "python-tests", "devset")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "build.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # The builder's last file: a build cut short is made again.
        if not os.path.exists(os.path.join(out, "devset.params.json")):
            build_devset(out)
    return os.path.join(out, "devset.jsonl")


def build_devset(out):
    """The dev set into ``out``, by the project's copies of its builders."""
    subprocess.run([sys.executable, os.path.join(DEVSET_BUILDERS, "make_pool.py"), "--out", out], check=True)
    subprocess.run(
        [
            sys.executable,
            os.path.join(DEVSET_BUILDERS, "make_devset.py"),
            "--real", os.path.join(out, "pool.jsonl"),
            "--meta", os.path.join(out, "pool.meta.jsonl"),
            "--out-prefix", os.path.join(out, "devset"),
        ],
        check=True,
    )


def write_jsonl(path, ids, texts):
    with open(path, "w", encoding="utf-8") as f:
        for i, t in zip(ids, texts):
            f.write(json.dumps({"id": i, "text": t}) + "\n")
    return path
