#!/usr/bin/env python3
"""rejudge.py: a second reading of judged pairs, to measure how far the labels can be trusted.

    rejudge.py select VERDICTS OUTDIR [--seed 2026]
    rejudge.py select-templates VERDICTS OUTDIR [--seed 2026]
    rejudge.py merge OUTDIR/key.tsv OUT.jsonl LABELS_A_1 LABELS_A_2 LABELS_B_1 LABELS_B_2
    rejudge.py score rejudge.jsonl

`select` takes the relation's verdict on every judged pair (`cargo run --release -p benches --bin
judged_verdicts > VERDICTS`) and picks, from the three sets of this folder:
  - contested: every DISTINCT pair the relation does not name `overlap` (a distinct document it would
    remove) and every DUP pair it does not name `same` (a same document `--templates keep` keeps);
  - simd-template: 30 TEMPLATE pairs of SIMD intrinsic pages (`core/arch`), the shape the contested
    DISTINCT pairs mostly have;
  - control: 24 other pairs labelled DUP, TEMPLATE or DISTINCT.
It shuffles them and writes two packets (`packetA.md`, `packetB.md`) as `judge_sample.py` does (both
texts cut at 1,500 characters, the ids, the word runs each side has alone; never the similarity, the
verdict, the first label or the category) and `key.tsv` (packet pair, set, line, category, first
label). Each packet goes to two judges who see nothing else. `merge` joins their `PAIR<TAB>LABEL<TAB>
reason` files into one line per pair; `score` prints how often the readings agree, per category.
`select-templates` picks, from the two Debian sets (`debian.jsonl`, `debian2.jsonl`), every TEMPLATE
pair the relation names `overlap` (a template sibling the default keeps: "missed-template") and, as
controls drawn at random, 24 TEMPLATE pairs it names `template` ("template-control") and 12 DISTINCT
pairs it names `overlap` ("distinct-control"), and writes the packets the same way.
Standard library only; the word runs are computed as `judge_sample.py` computes them."""
import collections, difflib, json, os, random, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = ["pairs.jsonl", "fresh.jsonl", "fresh2.jsonl"]
DEBIAN_SETS = ["debian.jsonl", "debian2.jsonl"]
LABELS = ("DUP", "TEMPLATE", "DISTINCT")


def own_runs(a, b, cap=60):
    """The word runs each text has alone (as judge_sample.py shows them)."""
    wa, wb = a.split(), b.split()
    ops = difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes()
    only_a = [" ".join(wa[i1:i2])[:200] for op, i1, i2, j1, j2 in ops if op != "equal" and i2 > i1]
    only_b = [" ".join(wb[j1:j2])[:200] for op, i1, i2, j1, j2 in ops if op != "equal" and j2 > j1]
    return only_a[:cap], only_b[:cap]


def judged(sets=SETS):
    data = {}
    for s in sets:
        with open(os.path.join(HERE, s), encoding="utf-8") as f:
            for i, line in enumerate(f):
                data[(s, str(i))] = json.loads(line)
    return data


def select(verdicts, outdir, seed=2026):
    rows = [l.rstrip("\n").split("\t") for l in open(verdicts, encoding="utf-8")]
    simd = lambda r: any(s in r[5] + r[6] for s in ("core/arch", "core_arch"))
    sel, rng = {}, random.Random(seed)
    for r in rows:
        rel = r[4].lower()
        if (r[3] == "DISTINCT" and rel != "overlap") or (r[3] == "DUP" and rel != "same"):
            sel[(r[0], r[1])] = "contested"
    simd_t = [r for r in rows if simd(r) and r[3] == "TEMPLATE"]
    rng.shuffle(simd_t)
    for r in simd_t[:30]:
        sel.setdefault((r[0], r[1]), "simd-template")
    rest = [r for r in rows if (r[0], r[1]) not in sel and r[3] in LABELS]
    rng.shuffle(rest)
    for r in rest[:24]:
        sel.setdefault((r[0], r[1]), "control")
    write_packets(sel, judged(), outdir, rng)


def select_templates(verdicts, outdir, seed=2026):
    rows = [l.rstrip("\n").split("\t") for l in open(verdicts, encoding="utf-8")]
    rows = [r for r in rows if r[0] in DEBIAN_SETS]
    sel, rng = {}, random.Random(seed)
    for r in rows:
        if r[3] == "TEMPLATE" and r[4] == "overlap":
            sel[(r[0], r[1])] = "missed-template"
    for label, relation, n, cat in [("TEMPLATE", "template", 24, "template-control"),
                                    ("DISTINCT", "overlap", 12, "distinct-control")]:
        pool = [r for r in rows if r[3] == label and r[4] == relation]
        rng.shuffle(pool)
        for r in pool[:n]:
            sel.setdefault((r[0], r[1]), cat)
    write_packets(sel, judged(DEBIAN_SETS), outdir, rng)


def write_packets(sel, data, outdir, rng):
    """Two packets of the selected pairs, shuffled, and the key."""
    keys = sorted(sel)
    rng.shuffle(keys)
    cut = lambda t: t if len(t) <= 1500 else t[:1500] + f" [... {len(t) - 1500} more characters]"
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "key.tsv"), "w", encoding="utf-8") as key:
        for h, half in enumerate([keys[0::2], keys[1::2]]):
            with open(os.path.join(outdir, f"packet{'AB'[h]}.md"), "w", encoding="utf-8") as out:
                for n, k in enumerate(half):
                    d, pid = data[k], f"{'AB'[h]}{n}"
                    tr, tk = d["removed"], d["kept"]
                    only_r, only_k = own_runs(tr[:20000], tk[:20000])
                    out.write(f"\n\n## PAIR {pid}\n\nREMOVED ({len(tr)} characters) {json.dumps({'id': d['removed_id']})}\n\n```\n{cut(tr)}\n```\n\n")
                    out.write(f"KEPT ({len(tk)} characters) {json.dumps({'id': d['kept_id']})}\n\n```\n{cut(tk)}\n```\n\n")
                    out.write("Only in REMOVED: " + " | ".join(only_r)[:3000] + "\n\nOnly in KEPT: " + " | ".join(only_k)[:3000] + "\n")
                    key.write(f"{pid}\t{k[0]}\t{k[1]}\t{sel[k]}\t{d['label']}\n")
    print(f"{len(keys)} pairs: {dict(collections.Counter(sel.values()))}")


def merge(key, out, labels):
    read = {}
    for n, path in enumerate(labels):
        for line in open(path, encoding="utf-8"):
            p = line.rstrip("\n").split("\t")
            if len(p) >= 2:
                read.setdefault(p[0].strip(), {})[n % 2] = (p[1].strip().upper(), p[2].strip() if len(p) > 2 else "")
    with open(out, "w", encoding="utf-8") as f:
        for line in open(key, encoding="utf-8"):
            pid, s, i, cat, label = line.rstrip("\n").split("\t")
            r = read[pid]
            f.write(json.dumps({"set": s, "line": int(i), "category": cat, "label": label, "packet_pair": pid,
                                "second": [r[0][0], r[1][0]], "notes": [r[0][1], r[1][1]]}, ensure_ascii=False) + "\n")


def score(path):
    rows = [json.loads(l) for l in open(path, encoding="utf-8")]
    print("category        pairs  second readings agree  each agrees with the label  all three agree")
    cats = list(dict.fromkeys(r["category"] for r in rows))
    for cat in sorted(cats) + ["all"]:
        rs = [r for r in rows if cat in ("all", r["category"])]
        n = len(rs)
        agree = sum(r["second"][0] == r["second"][1] for r in rs) / n
        with_label = sum((r["second"][0] == r["label"]) + (r["second"][1] == r["label"]) for r in rs) / (2 * n)
        all3 = sum(r["second"][0] == r["second"][1] == r["label"] for r in rs) / n
        print(f"{cat:15} {n:5}  {agree:21.3f}  {with_label:26.3f}  {all3:15.3f}")
    print("label -> second readings (pairs)")
    for (label, a, b), c in sorted(collections.Counter((r["label"], *sorted(r["second"])) for r in rows).items()):
        print(f"  {label:9} -> {a} / {b}: {c}")


if __name__ == "__main__":
    cmd = sys.argv[1:2]
    if cmd in (["select"], ["select-templates"]) and len(sys.argv) >= 4:
        pick = select if cmd == ["select"] else select_templates
        pick(sys.argv[2], sys.argv[3], int(sys.argv[5]) if sys.argv[4:5] == ["--seed"] else 2026)
    elif cmd == ["merge"] and len(sys.argv) == 8:
        merge(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == ["score"] and len(sys.argv) == 3:
        score(sys.argv[2])
    else:
        sys.exit(__doc__)
