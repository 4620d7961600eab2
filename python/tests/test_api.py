"""Inputs of every kind give the same answers; errors are Python exceptions with clear
messages; Ctrl-C interrupts long calls."""

import contextlib
import math
import os
import signal
import threading
import time

import numpy as np
import pytest

import simhash_rs
from test_engines import corpus

TEXTS = corpus(7)


def test_iterables_give_the_list_answer():
    expected = simhash_rs.fingerprints(TEXTS)
    assert (simhash_rs.fingerprints(tuple(TEXTS)) == expected).all()
    # A tuple of five texts is texts, not the five parts of an Arrow chunk.
    five = tuple(TEXTS[:5])
    assert (simhash_rs.fingerprints(five) == expected[:5]).all()
    assert simhash_rs.pairs(five) == simhash_rs.pairs(list(five))
    ix_free = simhash_rs.dedup(five)
    assert len(ix_free) == 5
    assert (simhash_rs.fingerprints(t for t in TEXTS) == expected).all()
    assert (simhash_rs.fingerprints(np.array(TEXTS, dtype=object)) == expected).all()
    pairs = simhash_rs.pairs(TEXTS)
    assert simhash_rs.pairs(iter(TEXTS)) == pairs
    # Many chunks.
    many = TEXTS * 80
    assert len(many) > 2 * simhash_rs.CHUNK
    assert (simhash_rs.fingerprints(iter(many)) == np.tile(expected, 80)).all()
    # Copies are removed, except of featureless texts, which match nothing and are kept.
    featureless = int((~simhash_rs.fingerprints(TEXTS, with_mask=True)[1]).sum())
    assert featureless == 2
    kept = simhash_rs.dedup(iter(many)).keep
    assert kept.sum() == simhash_rs.dedup(TEXTS).keep.sum() + 79 * featureless
    assert (kept[len(TEXTS):] == np.array([t.strip("!") == "" for t in TEXTS] * 79)).all()


def test_arrow_columns_give_the_list_answer():
    pa = pytest.importorskip("pyarrow")
    expected = simhash_rs.fingerprints(TEXTS)
    many = TEXTS * 30
    columns = [
        pa.array(TEXTS),
        pa.array(TEXTS, type=pa.large_string()),
        pa.chunked_array([TEXTS[:10], TEXTS[10:100], [], TEXTS[100:]]),
        pa.array(["x"] * 7 + TEXTS).slice(7),
        pa.array(TEXTS).dictionary_encode(),
    ]
    if hasattr(pa, "string_view"):
        columns.append(pa.array(TEXTS, type=pa.string_view()))
    for column in columns:
        assert (simhash_rs.fingerprints(column) == expected).all(), column.type
        assert simhash_rs.pairs(column) == simhash_rs.pairs(TEXTS)
    big = pa.array(many)
    assert (simhash_rs.fingerprints(big) == np.tile(expected, 30)).all()
    assert (simhash_rs.MinHasher().signatures(big)[: len(TEXTS)] == simhash_rs.MinHasher().signatures(TEXTS)).all()
    with pytest.raises(ValueError, match=r"texts\[2\] is null"):
        simhash_rs.fingerprints(pa.array(["a", "b", None]))
    with pytest.raises(TypeError, match="not of strings"):
        simhash_rs.fingerprints(pa.array([1, 2, 3]))


def test_polars_series_give_the_list_answer():
    pl = pytest.importorskip("polars")
    assert (simhash_rs.fingerprints(pl.Series(TEXTS)) == simhash_rs.fingerprints(TEXTS)).all()


def test_fingerprint_and_presets():
    # Reference values of simhash-cpp and the fork (the project's own vectors).
    fp = simhash_rs.fingerprint("hello world foo bar")
    assert fp == simhash_rs.fingerprints(["hello world foo bar"])[0]
    assert simhash_rs.fingerprint("!!") is None
    assert simhash_rs.fingerprint("") is None
    a = simhash_rs.fingerprint("It was the best of times, it was the worst of times.")
    b = simhash_rs.fingerprint("It was the best of times; it was the worst of times!")
    c = simhash_rs.fingerprint("Call me Ishmael. Some years ago, never mind how long.")
    assert a == b and simhash_rs.hamming(a, c) > 10
    assert simhash_rs.hamming(0, 2**64 - 1) == 64
    for preset in ("moz", "fork", "default-v1"):
        assert simhash_rs.fingerprint("a few words of text here", preset=preset) is not None
    assert simhash_rs.fingerprint("one two three four five", window=2) != simhash_rs.fingerprint(
        "one two three four five"
    )


def test_minhasher():
    mh = simhash_rs.MinHasher(num_perm=32, seed=3)
    sigs = mh.signatures(["a b c d e f", "", "a b c d e f"])
    assert sigs.shape == (3, 32) and sigs.dtype == np.uint32
    assert (sigs[1] == simhash_rs.MinHasher.EMPTY).all()
    assert (sigs[0] == sigs[2]).all() and (sigs[0] != simhash_rs.MinHasher.EMPTY).all()
    assert (mh.signature("a b c d e f") == sigs[0]).all()
    assert not (simhash_rs.MinHasher(num_perm=32, seed=4).signature("a b c d e f") == sigs[0]).all()
    x, y = TEXTS[0], TEXTS[1]
    big = simhash_rs.MinHasher(num_perm=1024)
    sx, sy = set(big.shingles(x).tolist()), set(big.shingles(y).tolist())
    exact = len(sx & sy) / len(sx | sy)
    assert abs(big.estimate_jaccard(big.signature(x), big.signature(y)) - exact) < 0.1
    assert mh.signatures([]).shape == (0, 32)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: simhash_rs.fingerprints(["ok", 3]), TypeError, r"texts\[1\] is int, not str"),
        (lambda: simhash_rs.pairs("a single string"), TypeError, "is a str"),
        (lambda: simhash_rs.fingerprint("x", preset="nope"), ValueError, "nope"),
        (lambda: simhash_rs.fingerprint("x", window=0), ValueError, "window"),
        (lambda: simhash_rs.fingerprint("x", window=65), ValueError, "window"),
        (lambda: simhash_rs.MinHasher(num_perm=0), ValueError, "num_perm"),
        (lambda: simhash_rs.MinHasher(num_perm=10**6), ValueError, "num_perm"),
        (lambda: simhash_rs.pairs(["a"], jaccard=0), ValueError, "jaccard"),
        (lambda: simhash_rs.pairs(["a"], jaccard=1.5), ValueError, "jaccard"),
        (lambda: simhash_rs.pairs(["a"], lsh_threshold=1.0), ValueError, "lsh_threshold"),
        (lambda: simhash_rs.pairs(["a"], k=3), ValueError, "k and blocks"),
        (lambda: simhash_rs.pairs(["a"], method="simhash", jaccard=0.5), ValueError, "jaccard"),
        (lambda: simhash_rs.pairs(["a"], method="simhash", k=3, blocks=2), ValueError, "blocks"),
        (lambda: simhash_rs.pairs(["a"], method="lsh"), ValueError, "method"),
        (lambda: simhash_rs.pairs(["a", "b"], ids=["x"]), ValueError, "1 ids for 2 texts"),
        (lambda: simhash_rs.dedup(["a"], keep="last"), ValueError, "keep"),
        (lambda: simhash_rs.dedup(["a", "b"], ids=[1], keep="lowest-id"), ValueError, "1 ids"),
        (lambda: simhash_rs.hamming(-1, 0), OverflowError, "negative"),
        (lambda: simhash_rs.dedup(["a"], templates=1), TypeError, "templates must be 'remove', 'keep' or None, not 1"),
        (lambda: simhash_rs.pairs(["a"], templates="kep"), ValueError, "templates"),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_settings_refusals_are_the_commands_in_argument_names():
    # One contract decides and words them (simhash_index::settings); flags become names.
    for call, message in [
        (lambda: simhash_rs.pairs(["a"], method="simhash", jaccard=0.5),
         "jaccard, lsh_threshold, num_perm and templates apply to method='minhash', not simhash"),
        (lambda: simhash_rs.pairs(["a"], method="minhash", k=3),
         "k and blocks apply to method='simhash', not minhash (use jaccard)"),
        (lambda: simhash_rs.pairs(["a"], jaccard=1.5), "jaccard must be more than 0 and at most 1, not 1.5"),
        (lambda: simhash_rs.pairs(["a"], lsh_threshold=1.0), "lsh_threshold must be below 1, not 1"),
        (lambda: simhash_rs.pairs(["a"], num_perm=0), "num_perm must be between 1 and 1024, not 0"),
        (lambda: simhash_rs.pairs(["a"], method="simhash", k=3, blocks=2),
         "invalid blocks and k: blocks (2) must be greater than the maximum distance (3)"),
        (lambda: simhash_rs.dedup(["a"], method="auto", preset="moz", jaccard=0.5),
         "jaccard, lsh_threshold, num_perm and templates apply to method='minhash', not simhash"),
    ]:
        with pytest.raises(ValueError) as raised:
            call()
        assert str(raised.value) == message
    # auto: simhash for k, blocks or a preset that implies it, as the command.
    assert simhash_rs.dedup(TEXTS, method="auto", preset="moz").method == "simhash"
    assert simhash_rs.dedup(TEXTS, method="auto", k=2).method == "simhash"


def test_auto_method_follows_the_cli():
    assert simhash_rs.dedup(TEXTS, method="auto").method == "minhash"
    assert simhash_rs.dedup(TEXTS, method="auto", preset="moz").method == "simhash"
    assert simhash_rs.dedup(TEXTS, method="auto", k=5).method == "simhash"


#: When the interrupt tests send SIGINT, in seconds after the call starts.
INTERRUPT_AT = 0.3


@contextlib.contextmanager
def sigint_after(seconds):
    """Sends this process SIGINT (Ctrl-C) `seconds` from now, from a timer thread. On the
    way out the timer is cancelled, or its signal handled here, so that a SIGINT never
    lands in a later test."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        yield
    finally:
        try:
            timer.cancel()
            timer.join()
            time.sleep(0.1)  # a signal sent but not yet handled is handled by then, here
        except KeyboardInterrupt:
            pass  # it came after the call: the test fails on DID NOT RAISE or on its time


def seconds_until_interrupted(call):
    """Runs `call()` with a SIGINT due INTERRUPT_AT seconds in; it must raise
    KeyboardInterrupt. Returns the seconds it took. (CPython raises a KeyboardInterrupt
    that came during a call once the call returns, so only the time tells whether the
    call stopped for it.)"""
    start = time.monotonic()
    with sigint_after(INTERRUPT_AT), pytest.raises(KeyboardInterrupt):
        call()
    return time.monotonic() - start


def test_ctrl_c_interrupts_a_long_sketching_call():
    text = "many words in a long document " * 300
    # Ctrl-C is seen between chunks of CHUNK texts: the call ends with the chunk the signal
    # lands in. One chunk takes 0.35 s here (2 cores); the input is at least 16 chunks and
    # 4 s of work, so it ends long after the bound unless it stops for the signal.
    start = time.monotonic()
    simhash_rs.fingerprints([text] * simhash_rs.CHUNK)
    chunk = time.monotonic() - start
    chunks = max(16, math.ceil(4.0 / chunk))
    texts = [text] * (chunks * simhash_rs.CHUNK)  # 16 chunks: about 1.2 GB of text
    bound = INTERRUPT_AT + 2 * chunk + 0.5
    elapsed = seconds_until_interrupted(lambda: simhash_rs.fingerprints(texts))
    assert elapsed < bound, (
        f"the call went on {elapsed:.2f} s, not stopping at the interrupt "
        f"({chunks} chunks of {chunk:.2f} s; the bound {bound:.2f} s)"
    )


def test_ctrl_c_interrupts_a_long_search():
    rng = np.random.default_rng(1)
    index = simhash_rs.SimhashIndex(k=8, blocks=9)  # one-block prefixes: slow on purpose
    for i, fp in enumerate(rng.integers(0, 2**63, size=400000, dtype=np.int64).tolist()):
        index.add(i, fp)
    # The search checks for signals every 50 ms, so it ends within a few tenths of a second
    # of the interrupt on any machine; uninterrupted it takes 2.7 to 3.6 s here (2 cores).
    bound = 1.2
    elapsed = seconds_until_interrupted(index.find_all)
    assert elapsed < bound, f"the search went on {elapsed:.2f} s, not stopping at the interrupt"
