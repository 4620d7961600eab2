"""The engines against brute force, on random and adversarial inputs: exactly k and k+1
bits, identical texts, floods, templated families, duplicate ids, tiny and empty texts."""

import itertools
import random

import numpy as np
import pytest

import simhash_rs

WORDS = [f"w{i}" for i in range(3000)]


def random_text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def edited(rng, text, edits):
    words = text.split()
    for _ in range(edits):
        words[rng.randrange(len(words))] = rng.choice(WORDS)
    return " ".join(words)


def corpus(seed, bases=60, copies=4):
    """Bases, near copies with a few edits, exact copies, a flood, a template family,
    tiny and empty texts; shuffled."""
    rng = random.Random(seed)
    texts = []
    for _ in range(bases):
        base = random_text(rng, rng.randrange(20, 120))
        texts.append(base)
        for _ in range(rng.randrange(copies)):
            texts.append(edited(rng, base, rng.randrange(0, 12)))
    texts += [texts[0]] * 40  # a flood of one text
    template = random_text(rng, 40)
    texts += [f"{template} item {i} price {i * 7}" for i in range(30)]
    texts += ["", "a", "b c", "!!", "a"]
    rng.shuffle(texts)
    return texts


def popcount(x):
    return bin(x).count("1")


def jaccard(a, b):
    a, b = set(a.tolist()), set(b.tolist())
    return len(a & b) / len(a | b) if a or b else 0.0


# ----------------------------------------------------------------------------------------
# Simhash: exact, so equal to brute force.


def planted_fingerprints(seed, n=400, k=3):
    """Random fingerprints, with others at exactly k and k + 1 bits from them, and copies."""
    rng = random.Random(seed)
    fps = [rng.getrandbits(64) for _ in range(n)]
    for i in range(0, n, 7):
        for d in (k, k + 1, 1, 0):
            bits = rng.sample(range(64), d)
            fps.append(fps[i] ^ sum(1 << b for b in bits))
    rng.shuffle(fps)
    return fps


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k, blocks", [(3, None), (3, 4), (3, 7), (0, None), (6, 8)])
def test_simhash_index_equals_brute_force(seed, k, blocks):
    fps = planted_fingerprints(seed, k=k)
    index = simhash_rs.SimhashIndex(k=k, blocks=blocks)
    for i, fp in enumerate(fps):
        index.add(f"id{i}", fp)
    assert len(index) == len(fps)
    expected = sorted(
        (f"id{i}", f"id{j}", popcount(fps[i] ^ fps[j]))
        for i, j in itertools.combinations(range(len(fps)), 2)
        if popcount(fps[i] ^ fps[j]) <= k
    )
    found = index.find_all()
    assert sorted(found) == expected
    assert any(d == k for _, _, d in expected) or k == 0
    for q in fps[:50]:
        hits = index.query(q)
        assert sorted(hits, key=lambda h: (h[1], int(h[0][2:]))) == hits
        assert sorted(hits) == sorted((f"id{i}", popcount(q ^ fp)) for i, fp in enumerate(fps) if popcount(q ^ fp) <= k)


def test_simhash_index_replace_and_remove():
    index = simhash_rs.SimhashIndex(k=2)
    index.add("a", 0)
    index.add("b", 0b11)
    index.add("a", 2**64 - 1)  # replaces a's fingerprint
    assert len(index) == 2 and "a" in index and index.get("a") == 2**64 - 1
    assert index.query(0) == [("b", 2)]
    assert index.remove("b") and not index.remove("b")
    assert index.query(0) == [] and index.find_all() == []
    with pytest.raises(ValueError):
        index.add("c", -1)
    with pytest.raises(ValueError):
        index.add("c", 2**64)
    with pytest.raises(ValueError):
        simhash_rs.SimhashIndex(k=3, blocks=3)  # blocks must exceed k


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [3, 8])
def test_simhash_pairs_equal_brute_force(seed, k):
    texts = corpus(seed)
    fps, present = simhash_rs.fingerprints(texts, with_mask=True)
    fps, present = fps.tolist(), present.tolist()
    # As `simhash pairs` lists them: each copy with the first of its fingerprint, and the
    # other pairs between first members.
    first = {}
    expected = []
    for i, (fp, has) in enumerate(zip(fps, present)):
        if not has:
            continue
        if fp in first:
            expected.append((first[fp], i, 0))
        else:
            first[fp] = i
    reps = sorted(first.values())
    for a, b in itertools.combinations(reps, 2):
        d = popcount(fps[a] ^ fps[b])
        if d <= k:
            expected.append((a, b, d))
    assert simhash_rs.pairs(texts, method="simhash", k=k) == sorted(expected)


@pytest.mark.parametrize("seed", range(3))
def test_simhash_dedup_equals_the_walk(seed):
    texts = corpus(seed)
    k = 6
    fps, present = simhash_rs.fingerprints(texts, with_mask=True)
    result = simhash_rs.dedup(texts, method="simhash", k=k)
    kept = []
    for i in range(len(texts)):
        match = None
        if present[i]:
            match = next((j for j in kept if popcount(int(fps[i]) ^ int(fps[j])) <= k), None)
        if match is None:
            kept.append(i)
            assert result.keep[i] and result.duplicate_of[i] == -1
        else:
            # The walk names the first kept document within k bits of one identical to it,
            # so check the decision rather than the choice: removed against a kept one.
            assert not result.keep[i]
            of = int(result.duplicate_of[i])
            assert result.keep[of] and of < i
            assert popcount(int(fps[i]) ^ int(fps[of])) == result.similarity[i] <= k
    assert result.keep.sum() == len(kept)


# ----------------------------------------------------------------------------------------
# MinHash: candidates are probabilistic, verification is exact.


@pytest.mark.parametrize("seed", range(3))
def test_minhash_pairs_are_verified_and_find_the_near_ones(seed):
    texts = corpus(seed)
    mh = simhash_rs.MinHasher()
    sets = [mh.shingles(t) for t in texts]
    found = simhash_rs.pairs(texts)
    listed = {(a, b) for a, b, _ in found}
    for a, b, score in found:
        assert a < b
        assert score == pytest.approx(jaccard(sets[a], sets[b]), abs=1e-12)
        assert score >= 0.4
    # Identical sets are paired with their first only; every other pair of first members
    # at Jaccard 0.8 or more is found (LSH misses one with probability below 1e-11).
    first = {}
    for i, s in enumerate(sets):
        if len(s):
            first.setdefault(tuple(s.tolist()), i)
    reps = sorted(first.values())
    for a, b in itertools.combinations(reps, 2):
        j = jaccard(sets[a], sets[b])
        if j >= 0.8:
            assert (a, b) in listed, (a, b, j)
    for i, s in enumerate(sets):
        if len(s) and first[tuple(s.tolist())] != i:
            assert (first[tuple(s.tolist())], i, 1.0) in found


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("keep", ["first", "longest", "lowest-id"])
def test_minhash_dedup_removes_only_verified_duplicates_of_kept_texts(seed, keep):
    texts = corpus(seed)
    ids = [(i * 7919) % len(texts) for i in range(len(texts))]  # a permutation of ints
    mh = simhash_rs.MinHasher()
    sets = [mh.shingles(t) for t in texts]
    result = simhash_rs.dedup(texts, ids=ids, keep=keep)
    if keep == "first":
        order = list(range(len(texts)))
    elif keep == "longest":
        order = sorted(range(len(texts)), key=lambda i: (-len(texts[i].encode()), i))
    else:
        order = sorted(range(len(texts)), key=lambda i: (ids[i], i))
    place = {d: r for r, d in enumerate(order)}
    for d in result.removed.tolist():
        of = int(result.duplicate_of[d])
        assert result.keep[of] and place[of] < place[d]
        j = jaccard(sets[d], sets[of])
        assert j >= 0.4 and abs(result.similarity[d] - j) < 1e-6
    # Kept texts with near-identical sets would have been caught (Jaccard 0.8: LSH misses
    # one with probability below 1e-11).
    kept = result.kept.tolist()
    for a, b in itertools.combinations(kept, 2):
        if len(sets[a]) and len(sets[b]):
            assert jaccard(sets[a], sets[b]) < 0.8


def test_floods_and_tiny_texts():
    n = 20000
    text = "the same words again and again in every record of the flood"
    result = simhash_rs.dedup([text] * n)
    assert result.keep.sum() == 1 and (result.duplicate_of[1:] == 0).all()
    assert (result.similarity[1:] == 1.0).all()
    assert len(simhash_rs.pairs([text] * n)) == n - 1
    tiny = ["", "a", "", "b", "!!", "c d"]
    assert simhash_rs.pairs(tiny) == []
    assert simhash_rs.dedup(tiny).keep.all()
    # Two one-word texts that are the same text are a pair; empty ones never are.
    assert simhash_rs.pairs(["", "a", "", "a"]) == [(1, 3, 1.0)]
    assert simhash_rs.pairs([], method="simhash") == []
    assert len(simhash_rs.dedup([])) == 0
    assert simhash_rs.fingerprints([]).dtype == np.uint64


def test_duplicate_ids_are_labels_only():
    texts = ["a b c d e f g h", "a b c d e f g h", "x y z w v u t s"]
    assert simhash_rs.pairs(texts, ids=["same", "same", "other"]) == [("same", "same", 1.0)]
    result = simhash_rs.dedup(texts, ids=[5, 5, 1], keep="lowest-id")
    assert result.keep.tolist() == [True, False, True]


@pytest.mark.parametrize("seed", range(2))
def test_spill_gives_the_same_answers(seed, tmp_path, monkeypatch):
    # The spilled store writes its temporary files in TMPDIR (the next test shows it
    # needs it): a fresh directory, to check that nothing is left behind.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    texts = corpus(seed) + [corpus(seed)[0]] * 300  # a flood too
    assert simhash_rs.pairs(texts, spill=True) == simhash_rs.pairs(texts)
    for keep in ("first", "longest"):
        spilled, held = simhash_rs.dedup(texts, keep=keep, spill=True), simhash_rs.dedup(texts, keep=keep)
        assert (spilled.duplicate_of == held.duplicate_of).all()
        np.testing.assert_array_equal(spilled.similarity, held.similarity)
    np.testing.assert_array_equal(simhash_rs.clusters(texts, spill=True), simhash_rs.clusters(texts))
    # Temporary files are unlinked at creation: nothing is left behind.
    assert list(tmp_path.iterdir()) == []


def test_spill_is_refused_with_simhash_and_reports_an_unwritable_tmpdir(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="spill applies to method='minhash'"):
        simhash_rs.pairs(["a b c"], method="simhash", spill=True)
    with pytest.raises(ValueError, match="spill applies to method='minhash'"):
        simhash_rs.dedup(["a b c"], method="auto", k=3, spill=True)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    with pytest.raises(OSError):
        simhash_rs.dedup(["a b c d", "a b c d"], spill=True)
    # Held in memory, no temporary file is needed.
    assert simhash_rs.dedup(["a b c d", "a b c d"]).keep.tolist() == [True, False]
