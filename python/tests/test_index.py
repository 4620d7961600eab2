"""The persistent index: round trips, the same answers as `simhash index` (either makes
the index, either reads it), brute force for simhash, errors, and damage."""

import collections
import os
import random

import numpy as np
import pytest

import simhash_rs
from conftest import write_jsonl
from test_engines import corpus, edited, popcount, random_text


def split(seed):
    texts = corpus(seed)
    # No text identical to another: `simhash index query` lists groups of identical texts
    # once, Index.query lists every match.
    unique = list(dict.fromkeys(texts))
    half = len(unique) // 2
    old, new = unique[:half], unique[half:]
    return [f"old-{i}" for i in range(len(old))], old, [f"new-{i}" for i in range(len(new))], new


def cli_query(cli, index, path):
    rows = cli("index", "query", index, path, "-q").stdout.splitlines()[1:]
    return sorted(tuple(r.split("\t")) for r in rows)


def formatted(found, method):
    return sorted((q, i, str(s) if method == "simhash" else f"{s:.4f}") for q, i, s in found)


@pytest.mark.parametrize("method", ["minhash", "simhash"])
@pytest.mark.parametrize("made_by", ["python", "cli"])
def test_query_equals_the_cli(cli, tmp_path, method, made_by):
    old_ids, old, new_ids, new = split(1)
    index = tmp_path / "ix"
    old_path = write_jsonl(tmp_path / "old.jsonl", old_ids, old)
    new_path = write_jsonl(tmp_path / "new.jsonl", new_ids, new)
    if made_by == "python":
        ix = simhash_rs.Index.open(index, create=True, method=method)
        result = ix.add(old, old_ids)
        assert (result.added, result.documents, result.refused) == (len(old), len(old), [])
    else:
        cli("index", "add", index, old_path, "-q", "--method", method)
        ix = simhash_rs.Index.open(index)
    assert ix.settings()["method"] == method and len(ix) == len(old)
    found = ix.query(new, new_ids)
    assert len(found) > 20
    assert formatted(found, method) == cli_query(cli, index, new_path)
    # The earliest-added match of each text, as dedup --against names it.
    firsts = ix.query(new, new_ids, first=True)
    by_query = {}
    for q, i, s in found:
        by_query.setdefault(q, (i, s))
    assert firsts == [(q, i, s) for q, (i, s) in by_query.items()]


def test_simhash_query_equals_brute_force(tmp_path):
    old_ids, old, new_ids, new = split(2)
    k = 8
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True, method="simhash", k=k)
    ix.add(old, old_ids)
    a, has_a = simhash_rs.fingerprints(old, with_mask=True)
    b, has_b = simhash_rs.fingerprints(new, with_mask=True)
    expected = sorted(
        (new_ids[j], old_ids[i], popcount(int(b[j]) ^ int(a[i])))
        for j in range(len(new)) if has_b[j]
        for i in range(len(old)) if has_a[i] and popcount(int(b[j]) ^ int(a[i])) <= k
    )
    assert len(expected) > 10
    assert sorted(ix.query(new, new_ids)) == expected


def test_adds_reopen_and_compact(tmp_path):
    old_ids, old, new_ids, new = split(3)
    path = tmp_path / "ix"
    ix = simhash_rs.Index.open(path, create=True)
    half = len(old) // 2
    ix.add(old[:half], old_ids[:half])
    ix.add(iter(old[half:]), iter(old_ids[half:]))
    before = ix.query(new, new_ids)
    assert ix.stats()["segments"] == 2
    again = simhash_rs.Index.open(path, create=False)
    assert len(again) == len(old) and again.query(new, new_ids) == before
    done = again.compact()
    assert done["segments"] == 1 and done["documents"] == len(old)
    assert again.query(new, new_ids) == before
    again.verify()
    # ix still reads its own committed state, then sees the compaction after reload.
    assert ix.query(new, new_ids) == before
    ix.reload()
    assert ix.stats()["segments"] == 1


def test_adding_the_same_texts_again_adds_nothing_and_refuses_nothing(tmp_path):
    # A rerun of a committed add (the same ids and texts) counts them as already held, as
    # `simhash index add` does; other content under a held id is still refused, and the
    # refused positions stay the texts' positions when held ones are passed over.
    for method in ["minhash", "simhash"]:
        ix = simhash_rs.Index.open(tmp_path / method, create=True, method=method)
        texts = [f"the text number {i} says something of its own here" for i in range(50)]
        ids = [f"t{i}" for i in range(50)]
        first = ix.add(texts, ids)
        assert (first.added, first.already, first.refused) == (50, 0, [])
        again = ix.add(texts, ids)
        assert (again.added, again.already, again.refused, again.documents) == (0, 50, [], 50)
        mixed = ix.add(
            [texts[0], "a new text with new words in it", "other content for t2", texts[3]],
            ["t0", "new", "t2", "t3"],
        )
        assert (mixed.added, mixed.already, mixed.refused) == (1, 2, [(2, "t2")])
        assert len(ix) == 51


def test_refused_ids_and_rollback(tmp_path):
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True)
    ix.add(["one two three four", "five six seven eight"], ["a", 7])
    result = ix.add(["x y z w", "p q r s", "m n o p"], ["a", "b", "b"])
    assert result.added == 1 and result.documents == 3
    assert result.refused == [(0, "a"), (2, "b")]
    assert ix.query(["five six seven eight"]) == [(0, "7", 1.0)]
    # An add that fails half way commits nothing and leaves no file behind.
    files = sorted(os.listdir(tmp_path / "ix"))
    texts = [f"text number {i} with some words" for i in range(20000)]
    with pytest.raises(ValueError, match="fewer ids") as raised:
        ix.add(texts, [str(i) for i in range(10000)])
    assert raised.value.committed is False
    with pytest.raises(TypeError) as raised:
        ix.add(["fine", 3], ["x", "y"])
    assert raised.value.committed is False
    assert len(simhash_rs.Index.open(tmp_path / "ix")) == len(ix) == 3
    assert sorted(os.listdir(tmp_path / "ix")) == files
    assert ix.add(["after the errors"], ["z"]).added == 1  # no lock left held
    assert len(ix) == 4


def test_settings_are_checked_by_name(tmp_path):
    path = tmp_path / "ix"
    simhash_rs.Index.open(path, create=True, jaccard=0.5, num_perm=64)
    assert simhash_rs.Index.open(path, jaccard=0.5).settings()["num_perm"] == 64
    with pytest.raises(ValueError, match="jaccard"):
        simhash_rs.Index.open(path, jaccard=0.6)
    with pytest.raises(ValueError, match="num_perm"):
        simhash_rs.Index.open(path, num_perm=128)
    with pytest.raises(ValueError, match="simhash"):
        simhash_rs.Index.open(path, method="simhash")
    with pytest.raises(ValueError, match="preset"):
        simhash_rs.Index.open(path, preset="moz")
    with pytest.raises(ValueError, match="k and blocks"):
        simhash_rs.Index.open(path, k=3)
    with pytest.raises(FileNotFoundError):
        simhash_rs.Index.open(tmp_path / "missing", create=False)
    with pytest.raises(ValueError, match="jaccard"):
        simhash_rs.Index.open(tmp_path / "bad", create=True, jaccard=1.5)
    assert not (tmp_path / "bad").exists()


def test_one_writer_at_a_time(tmp_path):
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True)
    writer = ix._native.writer()
    try:
        with pytest.raises(simhash_rs.IndexLockedError):
            simhash_rs.Index.open(tmp_path / "ix").add(["a b c"], ["x"])
        assert isinstance(simhash_rs.IndexLockedError("x"), OSError)
        assert ix.query(["a b c"]) == []  # readers are never blocked
    finally:
        writer.rollback()
    assert ix.add(["a b c"], ["x"]).added == 1


def test_damage_is_an_error_never_an_answer(tmp_path):
    path = tmp_path / "ix"
    ix = simhash_rs.Index.open(path, create=True)
    texts = [f"document {i} about subject {i % 17} with words {i * 3} and {i * 5}" for i in range(3000)]
    ix.add(texts, [str(i) for i in range(len(texts))])
    before = ix.query(texts[:50])
    segment = next(p for p in os.listdir(path) if p not in ("MANIFEST", "LOCK"))
    data = bytearray((path / segment).read_bytes())
    rng = random.Random(5)
    for at in (len(data) // 2, rng.randrange(len(data))):
        data[at] ^= 0x40
    (path / segment).write_bytes(bytes(data))
    with pytest.raises(simhash_rs.CorruptIndexError, match=segment):
        simhash_rs.Index.open(path).verify()
    try:
        assert simhash_rs.Index.open(path).query(texts[:50]) == before
    except simhash_rs.CorruptIndexError as e:
        assert segment in str(e)
    manifest = (path / "MANIFEST").read_bytes()
    (path / "MANIFEST").write_bytes(manifest[: len(manifest) // 3])
    with pytest.raises(simhash_rs.CorruptIndexError, match="MANIFEST"):
        simhash_rs.Index.open(path)


def removed_lines(path):
    import json

    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            out[str(r["id"])] = (str(r["duplicate_of"]), r.get("jaccard", r.get("distance")), r.get("relation"))
    return out


@pytest.mark.parametrize("method", ["minhash", "simhash"])
@pytest.mark.parametrize("keep", ["first", "longest", "lowest-id"])
def test_dedup_against_equals_the_cli(cli, devset, tmp_path, method, keep):
    _, ids, texts = devset
    cut = len(texts) * 2 // 3
    old_path = write_jsonl(tmp_path / "old.jsonl", ids[:cut], texts[:cut])
    new_path = write_jsonl(tmp_path / "new.jsonl", ids[cut:], texts[cut:])
    index = tmp_path / "ix"
    cli("index", "add", index, old_path, "-q", "--method", method)
    removed = tmp_path / "removed.jsonl"
    cli("dedup", new_path, "-q", "--against", index, "--keep", keep, "-o", tmp_path / "kept.jsonl", "--removed", removed)
    expected = removed_lines(removed)
    result = simhash_rs.Index.open(index).dedup(texts[cut:], ids[cut:], keep=keep)
    new_ids = ids[cut:]
    got = {}
    for d in result.removed.tolist():
        of = result.indexed[d] if result.indexed[d] is not None else new_ids[int(result.duplicate_of[d])]
        relation = None if result.relation is None else result.relation[d]
        got[new_ids[d]] = (of, float(result.similarity[d]), relation)
    assert sum(i is not None for i in result.indexed) > 200
    assert sorted(got) == sorted(expected)
    for d, (of, score, relation) in got.items():
        assert of == expected[d][0], d
        assert abs(score - expected[d][1]) <= 0.5e-4 + 1e-6, d
        # The relation of each removal, against the index or among the texts, as the CLI's.
        assert relation == expected[d][2], d
    if method == "minhash":
        assert {got[d][2] for d in got} == {"same", "template"}
        assert all(result.relation[d] is None for d in result.kept.tolist())
    else:
        assert result.relation is None


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_dedup_batch_after_batch_equals_one_dedup(devset, tmp_path, method):
    _, ids, texts = devset
    whole = simhash_rs.dedup(texts, ids, method=method)
    expected = [ids[d] for d in whole.kept.tolist()]
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True, method=method)
    kept = []
    cuts = [0, 1000, 4000, 4001, len(texts)]
    for a, b in zip(cuts, cuts[1:]):
        result = ix.dedup(texts[a:b], ids[a:b], update=True)
        assert result.added.added == int(result.keep.sum()) and result.added.refused == []
        kept += [ids[a + d] for d in result.kept.tolist()]
    assert kept == expected
    assert len(ix) == len(expected)
    # Without ids nothing new: every text matches the index (none is its own copy).
    again = ix.dedup(texts[:500])
    assert not again.keep.any() and all(i is not None for i in again.indexed)
    # With their ids, the kept texts are their own indexed copies: the same decisions.
    again = ix.dedup(texts[:500], ids[:500])
    assert again.keep.tolist() == whole.keep[:500].tolist()
    assert again.duplicate_of.tolist() == whole.duplicate_of[:500].tolist()


@pytest.mark.parametrize("templates", ["remove", "keep"])
def test_dedup_templates_equal_the_cli(cli, devset, tmp_path, templates):
    """``templates=`` against an index decides what ``simhash dedup --against
    --templates`` decides, batch after batch."""
    import json

    _, ids, texts = devset
    cut = len(texts) // 2
    old_path = write_jsonl(tmp_path / "old.jsonl", ids[:cut], texts[:cut])
    new_path = write_jsonl(tmp_path / "new.jsonl", ids[cut:], texts[cut:])
    common = ["-q", "--against", tmp_path / "cli-ix", "--update", "--templates", templates]
    cli("dedup", old_path, *common, "-o", tmp_path / "k0.jsonl")
    cli("dedup", new_path, *common, "-o", tmp_path / "k1.jsonl")
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True)
    kept = []
    for a, b in ((0, cut), (cut, len(texts))):
        r = ix.dedup(texts[a:b], ids[a:b], update=True, templates=templates)
        kept += [ids[a + d] for d in r.kept.tolist()]
    want = []
    for name in ("k0.jsonl", "k1.jsonl"):
        with open(tmp_path / name, encoding="utf-8") as f:
            want += [str(json.loads(line)["id"]) for line in f]
    assert kept == want
    with pytest.raises(ValueError, match="templates"):
        ix.dedup(texts[:3], templates="sometimes")
    with pytest.raises(TypeError, match="templates must be"):
        ix.dedup(texts[:3], templates=True)


def same_decisions(a, b):
    """Two DedupResults decide the same: keep, duplicate_of, similarity (NaN alike),
    indexed and relation."""
    assert a.keep.tolist() == b.keep.tolist()
    assert a.duplicate_of.tolist() == b.duplicate_of.tolist()
    assert np.array_equal(a.similarity, b.similarity, equal_nan=True)
    assert a.indexed == b.indexed
    assert a.relation == b.relation


@pytest.mark.parametrize("method", ["minhash", "simhash"])
@pytest.mark.parametrize("keep", ["first", "longest", "lowest-id"])
def test_dedup_update_rerun_decides_the_same_and_adds_nothing(tmp_path, method, keep):
    """The same dedup(update=True) twice: the second decides what the first did (its kept
    texts are their own indexed copies, not duplicates of themselves) and adds nothing."""
    texts = corpus(11)  # near copies, exact copies, a flood, featureless texts
    ids = [f"d{i}" if i % 3 else i for i in range(len(texts))]  # str and int ids
    cut = len(texts) // 3
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True, method=method)
    ix.dedup(texts[:cut], ids[:cut], keep=keep, update=True)
    first = ix.dedup(texts[cut:], ids[cut:], keep=keep, update=True)
    documents = len(ix)
    assert first.added.added == int(first.keep.sum()) > 20
    assert (~first.keep).sum() > 20 and any(i is not None for i in first.indexed)
    for _ in range(2):
        again = ix.dedup(texts[cut:], ids[cut:], keep=keep, update=True)
        same_decisions(again, first)
        assert first.added.already == 0
        assert (again.added.added, again.added.already, again.added.refused) == (0, first.added.added, [])
        assert again.added.documents == documents == len(ix)
    # Reading only (no update): the same decisions again; and the first batch's too.
    same_decisions(ix.dedup(texts[cut:], ids[cut:], keep=keep), first)
    assert len(simhash_rs.Index.open(tmp_path / "ix")) == documents
    ix.verify()


def mixed_batch(rng):
    """Indexed texts (ids b0..b9) and a batch that mixes them with new near-duplicates of
    them, a new text, an indexed id with a near copy of its text, and one with other text."""
    base = [random_text(rng, 40) for _ in range(10)]
    near = [edited(rng, t, 2) for t in base]
    batch = [
        (base[0], "b0"),  # 0: indexed itself: kept, already held
        (near[0], "n0"),  # 1: removed as the duplicate of text 0
        (random_text(rng, 40), "u0"),  # 2: new: kept and added
        (base[1], "b1"),  # 3: indexed itself
        (near[1], "n1"),  # 4: removed as the duplicate of text 3
        (near[2], "n2"),  # 5: removed as the duplicate of indexed b2 (not in the batch)
        (near[3], "b3"),  # 6: b3's id with other (near) content: removed against b3
        (random_text(rng, 40), "b4"),  # 7: b4's id with other content: kept, refused
    ]
    return base, [t for t, _ in batch], [i for _, i in batch]


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_dedup_update_of_indexed_texts_and_their_near_duplicates(cli, tmp_path, method):
    import json
    import shutil

    rng = random.Random(17)
    base, texts, ids = mixed_batch(rng)
    path = tmp_path / "ix"
    ix = simhash_rs.Index.open(path, create=True, method=method, **({"k": 12} if method == "simhash" else {}))
    assert ix.dedup(base, [f"b{i}" for i in range(10)], update=True).added.added == 10
    shutil.copytree(path, tmp_path / "cli-ix")
    for run in range(2):
        r = ix.dedup(texts, ids, update=True)
        assert r.keep.tolist() == [True, False, True, True, False, False, False, True], run
        assert r.duplicate_of.tolist() == [-1, 0, -1, -1, 3, -1, -1, -1], run
        assert r.indexed == [None, None, None, None, None, "b2", "b3", None], run
        removed = r.similarity[~r.keep]
        assert not np.isnan(removed).any() and np.isnan(r.similarity[r.keep]).all()
        # The second time, the new text u0 is held too.
        counts = (1, 2) if run == 0 else (0, 3)
        assert (r.added.added, r.added.already, r.added.refused) == (*counts, [(7, "b4")]), run
        assert len(ix) == r.added.documents == 11
    # The CLI decides the same on the same texts (and reports b4, exit 1).
    batch = write_jsonl(tmp_path / "batch.jsonl", ids, texts)
    out, rm, stats = tmp_path / "kept.jsonl", tmp_path / "removed.jsonl", tmp_path / "stats.json"
    for run in range(2):
        done = cli(
            "dedup", batch, "-q", "--against", tmp_path / "cli-ix", "--update", "-o", out, "--removed", rm,
            "--stats", stats, check=False,
        )
        assert done.returncode == 1 and "b4" in done.stderr, done.stderr
        with open(out, encoding="utf-8") as f:
            assert [json.loads(line)["id"] for line in f] == [ids[d] for d in r.kept.tolist()]
        got = {ids[d]: r.indexed[d] or ids[int(r.duplicate_of[d])] for d in r.removed.tolist()}
        assert {k: v for k, (v, _, _) in removed_lines(rm).items()} == got
        summary = json.loads(stats.read_text())
        assert (summary["index_added"], summary["index_already"]) == ((1, 2) if run == 0 else (0, 3))


def test_an_indexed_text_is_kept_before_the_batchs_texts(cli, tmp_path):
    """A text the index holds (its id, its text) counts as kept before every text of the
    batch: a new text earlier in the batch that adds a paragraph of its own to it is kept for
    that paragraph and does not remove it (the held text is the same document as the longer
    one: relations are directed), as the CLI decides."""
    base = (
        "The quick brown fox jumps over the lazy dog near the river bank while the farmer watches "
        "from the old wooden barn and the children play in the green meadow beyond the hills"
    )
    own = (
        " Furthermore the maintainers added extensive documentation describing every configuration "
        "option, the migration steps from older releases, and a long list of known problems"
    )
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True)
    ix.dedup([base], ["x"], update=True)
    r = ix.dedup([base + own, base], ["y", "x"], update=True)
    assert r.keep.tolist() == [True, True]
    assert (r.added.added, r.added.already, r.added.refused) == (1, 1, [])
    assert len(ix) == 2
    # The CLI, on a copy of the first index state.
    cli_ix = simhash_rs.Index.open(tmp_path / "cli-ix", create=True)
    cli_ix.dedup([base], ["x"], update=True)
    del cli_ix
    batch = write_jsonl(tmp_path / "batch.jsonl", ["y", "x"], [base + own, base])
    out, rm = tmp_path / "kept.jsonl", tmp_path / "removed.jsonl"
    cli("dedup", batch, "-q", "--against", tmp_path / "cli-ix", "--update", "-o", out, "--removed", rm)
    assert rm.read_text() == "" and len(out.read_text().splitlines()) == 2


@pytest.mark.parametrize("method", ["minhash", "simhash"])
@pytest.mark.parametrize("keep", ["first", "longest"])
def test_dedup_update_rerun_equals_the_cli(cli, devset, tmp_path, method, keep):
    """A committed batch run again, by Python and by `simhash dedup --against --update`:
    the same kept and removed texts, and the same counts added and already held."""
    import json

    _, ids, texts = devset
    cut = len(texts) // 2
    old_path = write_jsonl(tmp_path / "old.jsonl", ids[:cut], texts[:cut])
    new_path = write_jsonl(tmp_path / "new.jsonl", ids[cut:], texts[cut:])
    common = ["-q", "--against", tmp_path / "cli-ix", "--update", "--method", method, "--keep", keep]
    cli("dedup", old_path, *common, "-o", tmp_path / "k0.jsonl")
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True, method=method)
    ix.dedup(texts[:cut], ids[:cut], keep=keep, update=True)
    new_ids = ids[cut:]
    results = []
    for run in range(2):
        kept, removed, stats = (tmp_path / f"{name}{run}" for name in ("kept", "removed", "stats"))
        cli("dedup", new_path, *common, "-o", kept, "--removed", removed, "--stats", stats)
        r = ix.dedup(texts[cut:], new_ids, keep=keep, update=True)
        results.append(r)
        with open(kept, encoding="utf-8") as f:
            assert [str(json.loads(line)["id"]) for line in f] == [new_ids[d] for d in r.kept.tolist()]
        expected = removed_lines(removed)
        got = {}
        for d in r.removed.tolist():
            of = r.indexed[d] if r.indexed[d] is not None else new_ids[int(r.duplicate_of[d])]
            got[new_ids[d]] = (of, float(r.similarity[d]), None if r.relation is None else r.relation[d])
        assert sorted(got) == sorted(expected)
        for d, (of, score, relation) in got.items():
            assert of == expected[d][0], d
            assert abs(score - expected[d][1]) <= 0.5e-4 + 1e-6, d
            assert relation == expected[d][2], d
        summary = json.loads(stats.read_text())
        assert (summary["index_added"], summary["index_already"]) == (r.added.added, r.added.already)
        assert summary["index_documents"] == len(ix) - r.added.added
    same_decisions(results[1], results[0])
    assert results[1].added.added == 0 and results[1].added.already == results[0].added.added > 100


def test_dedup_update_needs_ids_and_the_lock(tmp_path):
    ix = simhash_rs.Index.open(tmp_path / "ix", create=True)
    with pytest.raises(ValueError, match="ids"):
        ix.dedup(["a b c"], update=True)
    writer = ix._native.writer()
    try:
        with pytest.raises(simhash_rs.IndexLockedError):
            ix.dedup(["a b c"], ["x"], update=True)
        assert ix.dedup(["a b c"]).keep.tolist() == [True]  # reading needs no lock
    finally:
        writer.rollback()
    result = ix.dedup(["a b c d", "a b c d", "e f g h"], ["x", "y", "x"], update=True)
    assert result.keep.tolist() == [True, False, True]
    assert result.added.added == 1 and result.added.refused == [(2, "x")]


def test_open_creates_only_when_asked_and_only_where_nothing_is(tmp_path):
    # A missing path is an error by default, and nothing is made there.
    with pytest.raises(FileNotFoundError, match="create=True"):
        simhash_rs.Index.open(tmp_path / "typo.idx")
    assert not (tmp_path / "typo.idx").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError):
        simhash_rs.Index.open(tmp_path / "empty")
    assert os.listdir(tmp_path / "empty") == []
    # create=True makes one where nothing is: no path, an empty directory.
    assert len(simhash_rs.Index.open(tmp_path / "ix", create=True)) == 0
    # The index directory is made, not its parents (a mistyped path makes nothing), as the CLI.
    with pytest.raises(FileNotFoundError):
        simhash_rs.Index.open(tmp_path / "new" / "ix", create=True)
    assert not (tmp_path / "new").exists()
    assert len(simhash_rs.Index.open(tmp_path / "empty", create=True)) == 0
    # What a first commit that never finished leaves (the lock, a manifest not renamed yet)
    # holds no documents: still no index, and a new one may be made there.
    (tmp_path / "crashed").mkdir()
    (tmp_path / "crashed" / "LOCK").write_bytes(b"")
    (tmp_path / "crashed" / "MANIFEST.tmp").write_bytes(b"simhash-index manifest")
    with pytest.raises(FileNotFoundError):
        simhash_rs.Index.open(tmp_path / "crashed")
    assert len(simhash_rs.Index.open(tmp_path / "crashed", create=True)) == 0
    # An index whose manifest was lost: its segments are never removed or built over.
    path = tmp_path / "ix"
    ix = simhash_rs.Index.open(path, create=True)
    ix.add([f"text {i} of some words {i * 3}" for i in range(100)], [str(i) for i in range(100)])
    os.remove(path / "MANIFEST")
    files = {name: (path / name).read_bytes() for name in os.listdir(path)}
    assert any(name.endswith(".seg") for name in files)
    for create in (False, True):
        with pytest.raises(simhash_rs.CorruptIndexError, match="MANIFEST"):
            simhash_rs.Index.open(path, create=create)
    assert {name: (path / name).read_bytes() for name in os.listdir(path)} == files
    # Nor is a directory of something else.
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(simhash_rs.CorruptIndexError, match="notes.txt"):
        simhash_rs.Index.open(other, create=True)
    assert os.listdir(other) == ["notes.txt"]


def test_queries_run_while_adds_commit(tmp_path):
    """Three threads query one Index while the main thread adds to it: every add commits
    and returns, every query answers from a committed state, and the Index sees each add
    (its stats equal the index on disk)."""
    import threading

    ix = simhash_rs.Index.open(tmp_path / "ix", create=True)
    base = [f"base text {i} with words {i * 7} and {i % 13}" for i in range(2000)]
    ix.add(base, [f"b{i}" for i in range(2000)])
    stop = threading.Event()
    failures, answers = [], []

    def query():
        try:
            while not stop.is_set():
                found = ix.query(base[:200], first=True)
                answers.append(len(found))
                assert sorted(p for p, _, _ in found) == list(range(200))
                assert len(ix) >= 2000 and ix.stats()["documents"] >= 2000
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(e)

    threads = [threading.Thread(target=query) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for k in range(10):
            texts = [f"new text {k} {i} more words {i * 3}" for i in range(500)]
            result = ix.add(texts, [f"n{k}-{i}" for i in range(500)])
            assert (result.added, result.documents) == (500, 2000 + 500 * (k + 1))
            assert len(ix) == ix.stats()["documents"] == result.documents
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert failures == [] and answers
    assert len(simhash_rs.Index.open(tmp_path / "ix")) == len(ix) == 7000
    assert ix.compact()["documents"] == 7000 and ix.stats()["segments"] == 1


def test_writes_from_threads_take_turns(tmp_path):
    import threading

    ix = simhash_rs.Index.open(tmp_path / "ix", create=True)
    errors = []

    def add(k):
        try:
            ix.add([f"thread {k} text {i} words {i * 5}" for i in range(300)], [f"{k}-{i}" for i in range(300)])
            ix.dedup([f"thread {k} other {i}" for i in range(50)], [f"{k}-d{i}" for i in range(50)], update=True)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=add, args=(k,)) for k in range(4)] + [threading.Thread(target=ix.compact)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(ix) == len(simhash_rs.Index.open(tmp_path / "ix")) == 4 * 350
    ix.verify()


# A child process that adds N texts to the index at PATH (WHAT: with `add`, or `dedup` with
# update=True) and is interrupted (SIGINT) or killed (SIGKILL): at a delay after the add
# starts ("timer"), or as soon as the commit writes its first file ("commit"). It prints
# what the add said, as JSON.
CHILD = r"""
import json, os, signal, sys, threading, time
import simhash_rs

path, what, how, sig, delay, n, tag = sys.argv[1:8]
delay, n, sig = float(delay), int(n), getattr(signal, sig)
ix = simhash_rs.Index.open(path)
texts = [f"{tag} text {i} words {i * 7 % 1013} and {i % 97} more" for i in range(n)]
ids = [f"{tag}-{i}" for i in range(n)]


def at_commit():
    names = set(os.listdir(path))
    while not set(os.listdir(path)) - names:
        time.sleep(0.0002)
    os.kill(os.getpid(), sig)


trigger = threading.Thread(target=at_commit, daemon=True) if how == "commit" else threading.Timer(delay, os.kill, (os.getpid(), sig))
out = {}
try:
    try:
        started = time.monotonic()
        trigger.start()
        if what == "add":
            result = ix.add(texts, ids)
        else:
            result = ix.dedup(texts, ids, update=True).added
        out = {"raised": False, "added": result.added, "seconds": time.monotonic() - started}
    except KeyboardInterrupt as e:
        out = {"raised": True, "committed": getattr(e, "committed", False), "len": len(ix)}
        result = getattr(e, "result", None)
        out["result_added"] = None if result is None else result.added
    if how == "timer":
        trigger.cancel()
    time.sleep(0.2)  # an interrupt that comes after the add is raised here
except KeyboardInterrupt:
    pass
print(json.dumps(out), flush=True)
"""


def run_child(path, how, sig, n, tag, delay=0.0, what="add"):
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), what, how, sig, str(delay), str(n), tag],
        capture_output=True, text=True, timeout=120,
    )
    lines = done.stdout.splitlines()
    return done.returncode, (json.loads(lines[-1]) if lines else None), done.stderr


def check_whole_or_nothing(path, before, n):
    ix = simhash_rs.Index.open(path)
    ix.verify()
    assert len(ix) in (before, before + n)
    return len(ix)


N_CHILD = 60000


@pytest.mark.parametrize("what", ["add", "dedup"])
def test_an_interrupt_during_the_commit_says_it_was_committed(tmp_path, what):
    path = tmp_path / "ix"
    simhash_rs.Index.open(path, create=True).add(["a b c d"], ["first"])
    code, out, err = run_child(path, "commit", "SIGINT", N_CHILD, "c", what=what)
    assert code == 0, err
    # The interrupt came once the commit had started: the add is whole on disk, and the
    # exception says so (and the Index already sees it).
    assert out["raised"], out
    assert out["committed"] is True and out["len"] == 1 + N_CHILD and out["result_added"] == N_CHILD
    assert check_whole_or_nothing(path, 1, N_CHILD) == 1 + N_CHILD


def test_interrupts_and_kills_at_random_moments(tmp_path):
    """SIGINT and SIGKILL at random moments of an add (and, for a kill, as the commit
    starts): after each, the index verifies and holds the add whole or not at all, and a
    KeyboardInterrupt's `committed` says which."""
    path = tmp_path / "ix"
    simhash_rs.Index.open(path, create=True).add(["a b c d"], ["first"])
    code, out, err = run_child(path, "timer", "SIGINT", N_CHILD, "t0", delay=60.0)  # not interrupted
    assert code == 0 and out["raised"] is False and out["added"] == N_CHILD, (out, err)
    seconds = out["seconds"]
    count = 1 + N_CHILD
    rng = random.Random(27)
    runs = [("timer", "SIGINT")] * 5 + [("timer", "SIGKILL")] * 3 + [("commit", "SIGKILL")]
    seen = collections.Counter()  # outcomes: "SIGINT rolled back", "SIGKILL finished", ...
    for r, (how, sig) in enumerate(runs):
        delay = rng.uniform(0.0, 1.1 * seconds)
        code, out, err = run_child(path, how, sig, N_CHILD, f"r{r}", delay=delay)
        now = check_whole_or_nothing(path, count, N_CHILD)
        if sig == "SIGKILL":
            # Killed, or the add was over before the kill was due.
            finished = code == 0 and out["raised"] is False and now == count + N_CHILD
            assert code == -9 or finished, (how, delay, code, err)
            seen[f"{sig} {'finished' if finished else 'killed'}"] += 1
        else:
            assert code == 0, err
            if out["raised"]:
                assert out["committed"] is (now == count + N_CHILD), (delay, out, now)
                assert out["len"] == now
                seen[f"{sig} {'committed' if out['committed'] else 'rolled back'}"] += 1
            else:
                assert now == count + N_CHILD and out["added"] == N_CHILD
                seen[f"{sig} finished"] += 1
        count = now
    # Signals landed mid-add, or the checks above checked nothing: with this seed the
    # delays are 0.07 to 1.05 of an uninterrupted add's time, so 8 of the 9 runs are due
    # before it ends (7 with some margin), 4 of the 5 SIGINTs (2 of them early on, before
    # the commit: rolled back).
    interrupted = sum(n for outcome, n in seen.items() if not outcome.endswith("finished"))
    assert interrupted >= 6, f"too few runs were interrupted: {dict(seen)}"
    assert seen["SIGINT rolled back"] + seen["SIGINT committed"] >= 3, f"too few KeyboardInterrupts: {dict(seen)}"
    assert seen["SIGINT rolled back"] >= 1, f"no interrupt rolled an add back: {dict(seen)}"
    # The index takes adds after all of it.
    ix = simhash_rs.Index.open(path)
    assert ix.add(["last text here"], ["last"]).documents == count + 1
    ix.verify()
