#!/usr/bin/env python3
"""Accuracy bench: the `simhash` binary and datasketch's MinHash-LSH on the shared dev set.

  python3 scripts/bench/bench_accuracy.py [--dir /tmp/simhash-devset] [--run "ARGS"]... [--no-baseline]

1. builds the dev set into --dir with ../shared/data (skipped when it is already there);
2. builds the `simhash` binary (release);
3. runs `simhash pairs INPUT ARGS` for each --run (default: a standard set of settings), then
   datasketch's MinHash-LSH in a virtual environment created in --dir (datasketch is installed
   from PyPI there; the project never needs it);
4. scores every output with `simhash eval` against the dev set's truth and tiers, and prints
   one table: pairwise precision/recall/F1, B-cubed F1, recall per tier, wall and CPU
   seconds, and each run's CPU time as a fraction of datasketch's in the same run.

Nothing generated is written inside the project.
"""
import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")
DATASKETCH = "datasketch==1.6.5"

DEFAULT_RUNS = [
    "--method simhash -k 3",
    "--method simhash -k 8",
    "--method minhash",
]


def sh(cmd, **kw):
    print("+", " ".join(shlex.quote(str(c)) for c in cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, **kw)


def timed(cmd):
    """Runs cmd; returns (wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    sh(cmd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def build_devset(d):
    if os.path.exists(os.path.join(d, "devset.pairs.tsv")):
        return
    os.makedirs(d, exist_ok=True)
    sh([sys.executable, os.path.join(SHARED, "make_pool.py"), "--out", d])
    sh([sys.executable, os.path.join(SHARED, "make_devset.py"),
        "--real", os.path.join(d, "pool.jsonl"), "--meta", os.path.join(d, "pool.meta.jsonl"),
        "--out-prefix", os.path.join(d, "devset")])


def venv_python(d):
    venv = os.path.join(d, "venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        sh([sys.executable, "-m", "venv", venv])
        sh([py, "-m", "pip", "install", "-q", DATASKETCH])
    return py


def score(simhash, pred, d):
    out = subprocess.run(
        [simhash, "eval", pred, "--truth", os.path.join(d, "devset.truth.jsonl"),
         "--tiers", os.path.join(d, "devset.pairs.tsv"), "--json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="/tmp/simhash-devset", help="dev set and venv folder")
    ap.add_argument("--run", action="append", help="arguments of one `simhash pairs` run")
    ap.add_argument("--threads", default=None, help="simhash -j (default: all cores)")
    ap.add_argument("--no-baseline", action="store_true", help="skip datasketch")
    ap.add_argument("--baseline-threshold", type=float, default=0.5)
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    a = ap.parse_args()

    d = os.path.abspath(a.dir)
    build_devset(d)
    sh(["cargo", "build", "--release", "--quiet", "-p", "simhash-cli"], cwd=ROOT)
    simhash = os.path.join(ROOT, "target", "release", "simhash")
    data = os.path.join(d, "devset.jsonl")
    rows = []
    for i, args in enumerate(a.run or DEFAULT_RUNS):
        pred = os.path.join(d, f"pred-{i}.tsv")
        cmd = [simhash, "pairs", data, "-q", "-o", pred] + shlex.split(args)
        if a.threads:
            cmd += ["-j", a.threads]
        wall, cpu = timed(cmd)
        rows.append(("simhash " + args, wall, cpu, score(simhash, pred, d)))
    if not a.no_baseline:
        py = venv_python(d)
        pred = os.path.join(d, "pred-datasketch.tsv")
        t = a.baseline_threshold
        wall, cpu = timed([py, os.path.join(ROOT, "scripts", "datasketch_lsh.py"), data,
                           "--output", pred, "--threshold", str(t)])
        rows.append((f"datasketch MinHashLSH 128 perm, J>={t}", wall, cpu, score(simhash, pred, d)))

    base_cpu = rows[-1][2] if not a.no_baseline else None
    tiers = ["easy", "medium", "hard", "very-hard"]
    head = f"{'run':44s} {'P':>6s} {'R':>6s} {'F1':>6s} {'B3-F1':>6s} " + \
        " ".join(f"{t:>9s}" for t in tiers) + f" {'wall s':>7s} {'CPU s':>7s} {'CPU/ds':>7s}"
    print(head)
    out = []
    for name, wall, cpu, s in rows:
        by = {t["tier"]: t["recall"] for t in s["tiers"]}
        ratio = f"{cpu / base_cpu:7.4f}" if base_cpu else f"{'-':>7s}"
        print(f"{name[:44]:44s} {s['precision']:6.4f} {s['recall']:6.4f} {s['f1']:6.4f} "
              f"{s['bcubed_f1']:6.4f} " + " ".join(f"{by.get(t, 0):9.4f}" for t in tiers) +
              f" {wall:7.2f} {cpu:7.2f} {ratio}")
        out.append({"run": name, "wall_s": wall, "cpu_s": cpu, "scores": s})
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
