"""``simhash_rs.decontaminate`` against a plain n-gram scan written here: the same hits on
random texts of a small vocabulary (items planted whole, cut, re-cased, re-wrapped and
re-punctuated, items shorter than the n-gram, boilerplate common to many documents), at
any chunk size; spans that point at the planted words; and its refusals."""

import random
import re

import pytest

import simhash_rs

WORDS = [w * (1 + i // 8) for i, w in enumerate("abcdefgh" * 3)]


def words(text):
    """The lowercase words of ASCII letter text (the engine's tokens for such text)."""
    return re.findall(r"[a-z]+", text.lower())


def oracle(corpus, evals, n, min_overlap, max_df):
    """Per (doc, eval, item): n-grams found and kept, by a plain scan."""
    grams_of = {}
    for name, items in evals.items():
        for item_id, text in items:
            w = words(text)
            if not w:
                continue
            grams = [tuple(w[i:i + n]) for i in range(len(w) - n + 1)] if len(w) >= n else [tuple(w)]
            grams_of[(name, item_id)] = grams
    doc_grams = []
    for text in corpus:
        w = words(text)
        have = set()
        for length in {len(g) for gs in grams_of.values() for g in gs}:
            have.update(tuple(w[i:i + length]) for i in range(len(w) - length + 1))
        doc_grams.append(have)
    df = {}
    for have in doc_grams:
        for g in {g for gs in grams_of.values() for g in gs} & have:
            df[g] = df.get(g, 0) + 1
    hits = {}
    for doc, have in enumerate(doc_grams):
        for key, grams in grams_of.items():
            kept = [g for g in grams if max_df is None or df.get(g, 0) <= max_df]
            found = sum(1 for g in kept if g in have)
            if kept and found and found / len(kept) >= min_overlap:
                hits[(doc,) + key] = (found, len(kept))
    return hits


def disguise(rng, text):
    """``text`` re-cased, re-wrapped and re-punctuated at random."""
    out = []
    for w in text.split():
        w = w.upper() if rng.random() < 0.3 else w
        out.append(w + rng.choice(["", ",", ";", " --", "!"]))
    return "".join(word + rng.choice([" ", "\n", "  \t"]) for word in out)


def corpus_and_evals(seed):
    rng = random.Random(seed)
    evals = {"quiz": [], "exam": []}
    for i in range(12):
        length = rng.choice([2, 3, 6, 12, 20])
        evals[rng.choice(["quiz", "exam"])].append((f"i{i}", " ".join(rng.choice(WORDS) for _ in range(length))))
    boiler = " ".join(rng.choice(WORDS) for _ in range(8))
    items = [text for set_items in evals.values() for _, text in set_items]
    corpus = []
    for _ in range(40):
        parts = [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 15)))]
        if rng.random() < 0.5:
            parts.append(boiler)
        if rng.random() < 0.6:
            item = rng.choice(items).split()
            if rng.random() < 0.4:
                item = item[: max(1, len(item) // 2)]
            parts.append(disguise(rng, " ".join(item)))
        parts.append(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 15))))
        corpus.append(" ".join(parts))
    return corpus, evals


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n,min_overlap,max_df", [(3, 0.2, None), (4, 0.5, 5), (2, 0.3, 12), (5, 0.2, None)])
def test_hits_agree_with_a_plain_scan(seed, n, min_overlap, max_df):
    corpus, evals = corpus_and_evals(seed)
    want = oracle(corpus, evals, n, min_overlap, max_df)
    found = simhash_rs.decontaminate(
        corpus, evals, ngram=n, min_overlap=min_overlap, max_df="none" if max_df is None else max_df
    )
    got = {(h["doc"], h["eval"], h["item"]): (h["matched"], h["ngrams"]) for h in found.hits}
    assert got == want
    assert found.documents == len(corpus)
    assert [h["doc"] for h in found.hits] == sorted(h["doc"] for h in found.hits)
    # The same at any chunk size (texts given as an iterator: the package cuts it).
    again = simhash_rs.decontaminate(
        iter(corpus), evals, ngram=n, min_overlap=min_overlap, max_df="none" if max_df is None else max_df
    )
    assert again == found


def test_spans_point_at_the_planted_words():
    item = "Which planet is known as the Red Planet"
    doc = "Trivia!\nWHICH planet, is known as\n\nthe red PLANET? Mars."
    found = simhash_rs.decontaminate([doc, "nothing here"], {"quiz": [("q", item)]}, ngram=3)
    assert len(found.hits) == 1
    (start, end), = found.hits[0]["spans"]
    assert words(doc[start:end]) == words(item)
    assert found.hits[0]["longest"] == len(words(item))


def test_defaults_and_refusals():
    found = simhash_rs.decontaminate([], {"quiz": ["a short item"]})
    assert (found.hits, found.documents, found.items) == ([], 0, 1)
    with pytest.raises(ValueError):
        simhash_rs.decontaminate(["x"], {"quiz": ["a b c"]}, ngram=0)
    with pytest.raises(ValueError):
        simhash_rs.decontaminate(["x"], {"quiz": ["a b c"]}, min_overlap=1.5)
    with pytest.raises(ValueError):
        simhash_rs.decontaminate(["x"], {"quiz": ["a b c"]}, max_df=0)
    with pytest.raises(ValueError):
        simhash_rs.decontaminate(["x"], {"quiz": [("a", "one two"), ("a", "three four")]})
    with pytest.raises(TypeError):
        simhash_rs.decontaminate(["x"], {"quiz": ["a b c"]}, max_df=True)
    # One text given as a set's items is not read a character at a time.
    with pytest.raises(TypeError, match="evals\\['quiz'\\] is one str"):
        simhash_rs.decontaminate(["a b c"], {"quiz": "a b c"})
    # Names are read as text: 1 and "1" would be one set.
    with pytest.raises(ValueError, match="have one name"):
        simhash_rs.decontaminate(["a b c"], {1: ["a b c"], "1": ["d e f"]})
    # A numpy integer is a count, as an int is.
    np = pytest.importorskip("numpy")
    docs = ["the same words here"] * 6
    assert simhash_rs.decontaminate(docs, {"q": ["the same words here"]}, ngram=2, max_df=np.int64(5)).hits == []
    assert len(simhash_rs.decontaminate(docs, {"q": ["the same words here"]}, ngram=2, max_df=6).hits) == 6
