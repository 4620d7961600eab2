"""The Python API decides what the `simhash` command decides, on the shared dev set
(11k real documents with realistic near-duplicates): fingerprints, pairs, dedup and
clusters, for both methods and every keep policy."""

import json

import numpy as np
import pytest

import simhash_rs


def tsv_rows(text):
    lines = text.splitlines()
    return [line.split("\t") for line in lines[1:]]


@pytest.mark.parametrize("preset", ["default", "moz", "fork"])
def test_fingerprints_equal_the_cli(cli, devset, preset):
    path, ids, texts = devset
    rows = tsv_rows(cli("fingerprint", path, "--preset", preset, "-q").stdout)
    assert [r[0] for r in rows] == ids
    fps, present = simhash_rs.fingerprints(texts, preset=preset, with_mask=True)
    expected = [int(r[1]) if r[1] else None for r in rows]
    got = [int(f) if p else None for f, p in zip(fps.tolist(), present.tolist())]
    assert got == expected
    # One at a time too, for a sample.
    for i in range(0, len(texts), 997):
        assert simhash_rs.fingerprint(texts[i], preset=preset) == expected[i]


@pytest.mark.parametrize(
    "flags, kwargs",
    [
        ([], {}),
        (["--jaccard", "0.7"], {"jaccard": 0.7}),
        (["--method", "simhash", "-k", "3"], {"method": "simhash", "k": 3}),
        (["--method", "simhash", "-k", "6"], {"method": "simhash", "k": 6}),
    ],
)
def test_pairs_equal_the_cli(cli, devset, flags, kwargs):
    path, ids, texts = devset
    # The command's fourth column (minhash: each pair's relation) is not in the tuples.
    expected = [r[:3] for r in tsv_rows(cli("pairs", path, "-q", *flags).stdout)]
    got = simhash_rs.pairs(texts, ids, **kwargs)
    assert len(got) > 500
    simhash = kwargs.get("method") == "simhash"
    formatted = [[a, b, str(s) if simhash else f"{s:.4f}"] for a, b, s in got]
    assert sorted(formatted) == sorted(expected)


def removed_of(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            score = r["jaccard"] if "jaccard" in r else r["distance"]
            out[r["id"]] = (r["duplicate_of"], score, r.get("relation"))
    return out


@pytest.mark.parametrize("keep", ["first", "longest", "lowest-id"])
@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_dedup_equals_the_cli(cli, devset, tmp_path, keep, method):
    path, ids, texts = devset
    removed = tmp_path / "removed.jsonl"
    cli("dedup", path, "-q", "--method", method, "--keep", keep, "-o", tmp_path / "kept.jsonl", "--removed", removed)
    expected = removed_of(removed)
    result = simhash_rs.dedup(texts, ids, method=method, keep=keep)
    assert len(result) == len(texts)
    got = {}
    for d in result.removed.tolist():
        of = int(result.duplicate_of[d])
        assert result.keep[of], "a text is removed only as the duplicate of a kept one"
        score = float(result.similarity[d])
        got[ids[d]] = (ids[of], score)
    assert len(got) > 500
    assert sorted(got) == sorted(expected)
    if method == "minhash":
        # What each removal is, as --removed says it.
        for d in result.removed.tolist():
            assert result.relation[d] == expected[ids[d]][2], ids[d]
        assert all(result.relation[d] is None for d in result.kept.tolist())
    else:
        assert result.relation is None
    for d, (of, score) in got.items():
        assert of == expected[d][0]
        if method == "minhash":
            # float32 similarity against the 4 decimals printed from the f64 one.
            assert abs(score - expected[d][1]) <= 0.5e-4 + 1e-6, d
        else:
            assert score == expected[d][1], d
    assert np.isnan(result.similarity[result.keep]).all()
    assert (result.duplicate_of[result.keep] == -1).all()


@pytest.mark.parametrize("templates", ["remove", "keep"])
def test_templates_equal_the_cli(cli, devset, tmp_path, templates):
    path, ids, texts = devset
    removed = tmp_path / "removed.jsonl"
    cli("dedup", path, "-q", "--templates", templates, "-o", tmp_path / "kept.jsonl", "--removed", removed)
    expected = removed_of(removed)
    result = simhash_rs.dedup(texts, ids, templates=templates)
    got = {ids[d]: (ids[int(result.duplicate_of[d])], result.relation[d]) for d in result.removed.tolist()}
    assert got == {d: (e[0], e[2]) for d, e in expected.items()}
    if templates == "keep":
        assert set(result.relation[d] for d in result.removed.tolist()) == {"same"}
    pairs = simhash_rs.pairs(texts, ids, templates=templates)
    rows = [r[:3] for r in tsv_rows(cli("pairs", path, "-q", "--templates", templates).stdout)]
    assert sorted([a, b, f"{s:.4f}"] for a, b, s in pairs) == sorted(rows)
    with pytest.raises(ValueError, match="templates"):
        simhash_rs.dedup(texts[:3], method="simhash", templates="keep")


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_clusters_equal_the_cli(cli, devset, method):
    path, ids, texts = devset
    rows = tsv_rows(cli("cluster", path, "-q", "--mode", "components", "--method", method).stdout)
    expected = {}
    for r in rows:
        expected.setdefault(r[2], set()).add(r[0])
    expected = sorted(sorted(c) for c in expected.values() if len(c) > 1)
    labels = simhash_rs.clusters(texts, method=method)
    got = {}
    for i, label in enumerate(labels.tolist()):
        got.setdefault(label, []).append(ids[i])
        assert label <= i
    got = sorted(sorted(c) for c in got.values() if len(c) > 1)
    assert len(got) > 500
    assert got == expected
