#!/usr/bin/env python3
"""Python bench: the simhash_rs package against datasketch and rensa on the shared dev set.

  python3 scripts/bench/bench_python.py [--dir /tmp/simhash-devset] [--venv VENV] [--verify MODE]

1. builds the dev set into --dir with ../shared/data (skipped when it is already there),
   as scripts/bench/bench_accuracy.py does;
2. creates a virtual environment (--venv, default --dir/pyvenv) and installs into it the
   project's package (`pip install python/`: maturin and cargo build it, a few minutes; the
   Rust build goes to --dir/cargo-target, not the project's target/), numpy, and pinned
   datasketch and rensa from PyPI. A package that fails to install is reported in the
   table and the other tools still run;
3. runs one worker process per tool in that environment (this script with --worker), all
   reading the same JSONL and each writing a pairs TSV `id_a<TAB>id_b<TAB>score` to --dir:
     simhash_rs.pairs   `simhash_rs.pairs(texts)` with its defaults (MinHash LSH,
                        exact Jaccard >= 0.4 verification);
     simhash_rs.dedup   `simhash_rs.dedup(texts, ids)` with its defaults; each removed text
                        paired with the kept text it duplicates;
     datasketch         MinHash (--num-perm) of word 3-shingles in a MinHashLSH at
                        --threshold, exactly as scripts/bench/datasketch_lsh.py (the accuracy
                        bench's baseline) does: query, then insert;
     rensa              the same shingles in rensa's RMinHash / RMinHashLSH at the same
                        threshold and permutations (bulk API: from_token_sets, insert_many,
                        query_all), bands chosen by datasketch's own rule (least
                        false-positive + false-negative area) among those that divide
                        --num-perm, as rensa requires;
   the LSH candidates of datasketch and rensa are kept as they are (--verify none, what
   bench_accuracy.py scores), kept only when their estimated Jaccard (from the signatures)
   reaches the threshold (--verify estimated), or both, as separate runs (the default);
4. times each worker (wall, and CPU of the child from getrusage), scores every file with
   `simhash eval` against the dev set's truth (the scorer of the project's other accuracy
   figures), and prints one table: pairs, precision, recall, F1 and its difference from
   simhash_rs.pairs, wall and CPU seconds and their ratios to simhash_rs.pairs in the same
   run.

Standard library only outside the workers. Nothing generated is written inside the project.
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
PACKAGE = os.path.join(ROOT, "python")
DATASKETCH = "datasketch==1.6.5"  # the version scripts/bench/bench_accuracy.py pins
RENSA = "rensa==0.5.0"  # the latest on PyPI when this was written
NUMPY = "numpy"
SEED = 42  # rensa's (datasketch keeps its default seed, as datasketch_lsh.py)

# tool -> the module its worker imports
TOOLS = {
    "simhash_rs.pairs": "simhash_rs",
    "simhash_rs.dedup": "simhash_rs",
    "datasketch": "datasketch",
    "rensa": "rensa",
}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    log("+", " ".join(shlex.quote(str(c)) for c in cmd))
    return subprocess.run(cmd, **kw)


# ---------------------------------------------------------------------------------------
# The workers: run inside the venv, one process per tool.

def _shingles_fn():
    """scripts/bench/datasketch_lsh.py's shingles (lower-cased `\\w+` word 3-shingles, or
    character 3-grams for CJK-heavy text): the same sets as the accuracy bench."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from datasketch_lsh import shingles

    return shingles


def best_bands(num_perm, threshold):
    """datasketch's rule for (bands, rows): the least 0.5 * false-positive area + 0.5 *
    false-negative area of the S-curve, here among the band counts that divide num_perm."""

    def integral(f, a, b, steps=400):
        h = (b - a) / steps
        return sum(f(a + (i + 0.5) * h) for i in range(steps)) * h

    best = None
    for b in range(1, num_perm + 1):
        if num_perm % b:
            continue
        r = num_perm // b
        fp = integral(lambda s: 1 - (1 - s ** r) ** b, 0.0, threshold)
        fn = integral(lambda s: (1 - s ** r) ** b, threshold, 1.0)
        err = 0.5 * fp + 0.5 * fn
        if best is None or err < best[0]:
            best = (err, b)
    return best[1]


def worker(a):
    t0 = time.perf_counter()
    ids, texts = [], []
    with open(a.input, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            ids.append(str(r["id"]))
            texts.append(r["text"])
    t1 = time.perf_counter()
    verify = a.verify == "estimated"
    info = {}
    rows = []  # (i, j, score) positions, i < j
    if a.worker == "simhash_rs.pairs":
        import simhash_rs

        info["version"] = simhash_rs.__version__
        found = simhash_rs.pairs(texts)
        rows = [(x, y, s) for x, y, s in found]
    elif a.worker == "simhash_rs.dedup":
        import simhash_rs

        info["version"] = simhash_rs.__version__
        res = simhash_rs.dedup(texts, ids=ids)
        of = res.duplicate_of.tolist()
        sim = res.similarity.tolist()
        rows = [(o, i, sim[i]) for i, o in enumerate(of) if o >= 0]
    elif a.worker == "datasketch":
        import datasketch
        from datasketch import MinHash, MinHashLSH

        info["version"] = datasketch.__version__ if hasattr(datasketch, "__version__") else "?"
        shingles = _shingles_fn()
        sigs = []
        for text in texts:
            m = MinHash(num_perm=a.num_perm)
            m.update_batch([s.encode("utf-8") for s in shingles(text)])
            sigs.append(m)
        lsh = MinHashLSH(threshold=a.threshold, num_perm=a.num_perm)
        info["bands"], info["rows"] = lsh.b, lsh.r
        pairs = set()
        for i, m in enumerate(sigs):
            for j in lsh.query(m):
                if verify:
                    e = m.jaccard(sigs[j])
                    if e < a.threshold:
                        continue
                    rows.append((j, i, e))
                else:
                    pairs.add((j, i))
            lsh.insert(i, m)
        if not verify:
            rows = [(j, i, "") for j, i in pairs]
    elif a.worker == "rensa":
        import rensa
        from importlib.metadata import version

        info["version"] = version("rensa")
        shingles = _shingles_fn()
        bands = best_bands(a.num_perm, a.threshold)
        info["bands"], info["rows"] = bands, a.num_perm // bands
        sigs = rensa.RMinHash.from_token_sets([list(shingles(t)) for t in texts], a.num_perm, SEED)
        lsh = rensa.RMinHashLSH(a.threshold, a.num_perm, bands)
        lsh.insert_many(sigs)
        for i, cands in enumerate(lsh.query_all(sigs)):
            for j in cands:
                if j >= i:
                    continue
                if verify:
                    e = sigs[i].jaccard(sigs[j])
                    if e < a.threshold:
                        continue
                    rows.append((j, i, e))
                else:
                    rows.append((j, i, ""))
    else:
        raise SystemExit(f"unknown worker {a.worker!r}")
    t2 = time.perf_counter()
    rows.sort(key=lambda r: (r[0], r[1]))
    with open(a.output, "w", encoding="utf-8") as out:
        out.write("id_a\tid_b\tscore\n")
        for x, y, s in rows:
            score = s if s == "" else f"{s:.4f}"
            out.write(f"{ids[x]}\t{ids[y]}\t{score}\n")
    t3 = time.perf_counter()
    info.update({"docs": len(texts), "pairs": len(rows), "load_s": round(t1 - t0, 3),
                 "work_s": round(t2 - t1, 3), "write_s": round(t3 - t2, 3)})
    print(json.dumps(info))


# ---------------------------------------------------------------------------------------
# The driver.

def build_devset(d):
    if os.path.exists(os.path.join(d, "devset.pairs.tsv")):
        return
    os.makedirs(d, exist_ok=True)
    sh([sys.executable, os.path.join(SHARED, "make_pool.py"), "--out", d], check=True)
    sh([sys.executable, os.path.join(SHARED, "make_devset.py"),
        "--real", os.path.join(d, "pool.jsonl"), "--meta", os.path.join(d, "pool.meta.jsonl"),
        "--out-prefix", os.path.join(d, "devset")], check=True)


def simhash_binary():
    simhash = os.path.join(ROOT, "target", "release", "simhash")
    if not os.path.exists(simhash):
        sh(["cargo", "build", "--release", "--quiet", "-p", "simhash-cli"], cwd=ROOT, check=True)
    return simhash


def importable(py, module):
    r = subprocess.run([py, "-c", f"import {module}"], capture_output=True, text=True)
    return r.returncode == 0


def tail(text, n=6):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


def prepare_venv(venv, d, reinstall):
    """Creates the venv when missing and installs the packages; returns (python, {module:
    None when usable, else why not})."""
    py = os.path.join(venv, "bin", "python")
    status = {}
    if not os.path.exists(py):
        r = sh([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
        if r.returncode != 0:
            why = "venv creation failed: " + tail(r.stderr)
            return None, {m: why for m in set(TOOLS.values())}
        sh([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], capture_output=True)
    steps = [
        ("numpy", [NUMPY], {}),
        ("datasketch", [DATASKETCH], {}),
        ("rensa", [RENSA], {}),
        # maturin + cargo; the Rust build goes outside the project's target/ so it neither
        # waits for nor disturbs a build there.
        ("simhash_rs", [PACKAGE], {"CARGO_TARGET_DIR": os.path.join(d, "cargo-target")}),
    ]
    for module, reqs, env in steps:
        if module == "simhash_rs" and not reinstall and importable(py, module):
            log(f"simhash_rs already in {venv}: not rebuilt (--reinstall rebuilds it)")
            status[module] = None
            continue
        start = time.perf_counter()
        r = sh([py, "-m", "pip", "install", "-q"] + reqs, capture_output=True, text=True,
               env={**os.environ, **env})
        log(f"  {module}: pip exit {r.returncode} in {time.perf_counter() - start:.0f} s")
        if r.returncode != 0:
            status[module] = f"pip install {' '.join(reqs)} failed: " + tail(r.stderr)
        elif not importable(py, module):
            status[module] = f"installed but `import {module}` fails"
        else:
            status[module] = None
    return py, status


def run_worker(py, tool, data, pred, a, verify):
    cmd = [py, os.path.abspath(__file__), "--worker", tool, "--input", data, "--output", pred,
           "--threshold", str(a.threshold), "--num-perm", str(a.num_perm), "--verify", verify]
    log("+", " ".join(shlex.quote(c) for c in cmd))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode != 0:
        return None, f"worker exit {r.returncode}: " + tail(r.stderr, 4)
    try:
        info = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        info = {}
    info.update({"wall_s": wall, "cpu_s": cpu, "command": cmd})
    return info, None


def score(simhash, pred, d):
    r = subprocess.run(
        [simhash, "eval", pred, "--truth", os.path.join(d, "devset.truth.jsonl"),
         "--tiers", os.path.join(d, "devset.pairs.tsv"), "--json"],
        capture_output=True, text=True)
    if r.returncode != 0:
        return None, "simhash eval failed: " + tail(r.stderr)
    return json.loads(r.stdout), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="/tmp/simhash-devset", help="dev set and output folder")
    ap.add_argument("--venv", help="virtual environment to use or create (default: DIR/pyvenv)")
    ap.add_argument("--reinstall", action="store_true",
                    help="rebuild and reinstall simhash_rs even when the venv has it")
    ap.add_argument("--threshold", type=float, default=0.5,
                    help="Jaccard threshold of the datasketch and rensa LSH (default 0.5, "
                         "as bench_accuracy.py)")
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--verify", choices=["none", "estimated", "both"], default="both",
                    help="datasketch/rensa candidates: as they are, kept when the estimated "
                         "Jaccard reaches the threshold, or both as separate runs")
    ap.add_argument("--tools", default=",".join(TOOLS),
                    help="comma-separated subset of " + ", ".join(TOOLS))
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    ap.add_argument("--output", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)

    command = " ".join(shlex.quote(c) for c in [os.path.basename(sys.executable)] + sys.argv)
    d = os.path.abspath(a.dir)
    build_devset(d)
    simhash = simhash_binary()
    data = os.path.join(d, "devset.jsonl")
    venv = os.path.abspath(a.venv or os.path.join(d, "pyvenv"))
    py, status = prepare_venv(venv, d, a.reinstall)

    tools = [t.strip() for t in a.tools.split(",") if t.strip()]
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t!r} (known: {', '.join(TOOLS)})")
    modes = ["none", "estimated"] if a.verify == "both" else [a.verify]
    runs = []  # (label, tool, verify mode)
    for t in tools:
        if t.startswith("simhash_rs"):
            runs.append((t + " (defaults)", t, "none"))
        else:
            for m in modes:
                what = "LSH candidates" if m == "none" else f"est. J>={a.threshold}"
                runs.append((f"{t} {what}", t, m))

    rows = []
    for label, tool, mode in runs:
        row = {"run": label, "tool": tool, "verify": mode}
        rows.append(row)
        why = status.get(TOOLS[tool], "no venv") if py else "no venv"
        if why:
            row["error"] = why
            continue
        slug = tool.replace(".", "-") + ("" if tool.startswith("simhash_rs") else "-" + mode)
        pred = os.path.join(d, f"pred-py-{slug}.tsv")
        info, err = run_worker(py, tool, data, pred, a, mode)
        if err:
            row["error"] = err
            continue
        row.update(info)
        s, err = score(simhash, pred, d)
        if err:
            row["error"] = err
            continue
        row["scores"] = s

    base = next((r for r in rows if r["tool"] == "simhash_rs.pairs" and "scores" in r), None)
    print(f"command: {command}")
    print(f"dev set: {data} ({'?' if base is None else base.get('docs', '?')} docs); "
          f"datasketch/rensa: word 3-shingles, {a.num_perm} perm, LSH threshold {a.threshold}; "
          f"simhash_rs: its defaults (MinHash LSH, exact Jaccard >= 0.4)")
    head = (f"{'run':34s} {'pairs':>7s} {'P':>6s} {'R':>6s} {'F1':>6s} {'dF1':>7s} "
            f"{'wall s':>7s} {'CPU s':>7s} {'wall/x':>7s} {'CPU/x':>7s} {'work s':>7s}")
    print(head)
    for r in rows:
        if "scores" not in r:
            print(f"{r['run'][:34]:34s} FAILED: {r.get('error')}")
            continue
        s = r["scores"]
        if base:
            df1 = f"{s['f1'] - base['scores']['f1']:+7.4f}"
            wr = f"{r['wall_s'] / base['wall_s']:7.2f}"
            cr = f"{r['cpu_s'] / base['cpu_s']:7.2f}" if base["cpu_s"] > 0 else f"{'-':>7s}"
        else:
            df1 = wr = cr = f"{'-':>7s}"
        print(f"{r['run'][:34]:34s} {r.get('pairs', 0):7d} {s['precision']:6.4f} "
              f"{s['recall']:6.4f} {s['f1']:6.4f} {df1} {r['wall_s']:7.2f} {r['cpu_s']:7.2f} "
              f"{wr} {cr} {r.get('work_s', float('nan')):7.2f}")
    print("pairs: lines written (eval closes them transitively); dF1, wall/x, CPU/x: against "
          "simhash_rs.pairs in this run; wall and CPU: the whole worker process (start, "
          "imports, reading the JSONL, writing the TSV); work s: the tool's calls alone.")
    versions = ", ".join(f"{r['tool']} {r['version']}" for r in rows
                         if r.get("version") and r["verify"] != "estimated")
    extra = [f"rensa bands x rows: {r['bands']}x{r['rows']}" for r in rows
             if r["tool"] == "rensa" and "bands" in r][:1]
    extra += [f"datasketch bands x rows: {r['bands']}x{r['rows']}" for r in rows
              if r["tool"] == "datasketch" and "bands" in r][:1]
    print("versions: " + versions + ("; " + "; ".join(extra) if extra else ""))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"command": command, "rows": rows}, f, indent=1)
    return 0 if all("scores" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
