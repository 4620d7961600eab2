"""Near-duplicate detection at web scale, from Python.

The engines are the `simhash` command line's (Rust, multithreaded, the GIL released):

* MinHash LSH with exact Jaccard verification, the default method: a pair is a match only
  when the exact Jaccard similarity of the two texts' shingle sets reaches the threshold
  (0.4 by default), never by a hash collision;
* 64-bit simhash fingerprints (Charikar), bit-compatible with Moz's simhash-cpp and
  simhash-py (``preset="moz"``) and the OpenMP fork (``preset="fork"``), with an exact
  index that finds every fingerprint within ``k`` bits;
* a persistent index on disk (:class:`Index`), the one ``simhash index`` and
  ``simhash dedup --against`` use.

``texts`` may be a list or any iterable of ``str``, a pyarrow ``Array`` /
``ChunkedArray`` of strings, or a polars ``Series`` of strings. Work is done a chunk at a
time, so Ctrl-C raises ``KeyboardInterrupt`` promptly, and memory holds one chunk of text
at a time beyond what the result needs.

>>> import simhash_rs
>>> texts = ["the quick brown fox jumps over the lazy dog by the river",
...          "an unrelated sentence about the weather in the mountains",
...          "the quick brown fox jumps over the lazy dog by the river!"]
>>> result = simhash_rs.dedup(texts)
>>> result.keep.tolist()
[True, True, False]
>>> int(result.duplicate_of[2]), float(result.similarity[2])
(0, 1.0)
>>> simhash_rs.pairs(texts, ids=["a", "b", "c"])
[('a', 'c', 1.0)]
"""

from __future__ import annotations

import functools
import itertools
import os
import dataclasses
import re
import threading
from dataclasses import dataclass
from typing import Any, Hashable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import CorruptIndexError, IndexLockedError, MAX_PERM, MAX_WINDOW

__version__ = _native.__version__

__all__ = [
    "AddResult",
    "CorruptIndexError",
    "DedupResult",
    "Index",
    "IndexLockedError",
    "MAX_PERM",
    "MAX_WINDOW",
    "MinHasher",
    "SimhashIndex",
    "clusters",
    "dedup",
    "fingerprint",
    "fingerprints",
    "hamming",
    "pairs",
]

#: Texts handed to the native code per call: the unit of parallel work and of
#: interruption (Ctrl-C is seen between chunks, and during searches).
CHUNK = 8192

#: The ``simhash`` command's defaults.
DEFAULT_JACCARD = 0.4
DEFAULT_LSH_THRESHOLD = 0.3
DEFAULT_NUM_PERM = 128
DEFAULT_K = 3


# ---------------------------------------------------------------------------------------
# Inputs: chunks of texts for the native code.


def _arrow_chunks(column: Any, size: int) -> Iterator[Any]:
    """Chunks of a pyarrow Array / ChunkedArray of strings, as the native code reads them:
    ``(offsets, data, offset, length, large)`` over the array's own buffers."""
    import pyarrow as pa

    arrays = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    position = 0
    for array in arrays:
        kind = array.type
        if pa.types.is_dictionary(kind):
            array = array.dictionary_decode()
            kind = array.type
        if hasattr(pa.types, "is_string_view") and pa.types.is_string_view(kind):
            array = array.cast(pa.large_string())
            kind = array.type
        if pa.types.is_string(kind):
            large = False
        elif pa.types.is_large_string(kind):
            large = True
        else:
            raise TypeError(f"texts is an Arrow column of {kind}, not of strings")
        if array.null_count:
            nulls = array.is_null().to_pylist()
            raise ValueError(f"texts[{position + nulls.index(True)}] is null, not str")
        buffers = array.buffers()
        offsets = buffers[1].to_pybytes() if buffers[1] is not None else b"\0" * (8 if large else 4)
        data = buffers[2].to_pybytes() if buffers[2] is not None else None
        for start in range(0, len(array), size):
            length = min(size, len(array) - start)
            yield (offsets, data, array.offset + start, length, large)
        position += len(array)


def _chunks(texts: Any, size: int = CHUNK) -> Iterator[Tuple[int, Any]]:
    """``(first position, chunk)`` over ``texts``: a chunk is a list of texts, or (a
    tuple) the buffers of an Arrow string array."""
    if isinstance(texts, str):
        raise TypeError("texts is a str: pass a list of texts (or any iterable of str)")
    module = type(texts).__module__ or ""
    if module.startswith("polars"):
        texts = texts.to_arrow()
        module = type(texts).__module__ or ""
    if module.startswith("pyarrow"):
        position = 0
        for chunk in _arrow_chunks(texts, size):
            yield position, chunk
            position += chunk[3]
        return
    if isinstance(texts, list):
        for start in range(0, len(texts), size):
            yield start, texts[start : start + size]
        return
    # Anything else is read into lists: a chunk that is a tuple means Arrow buffers.
    iterator = iter(texts)
    start = 0
    while True:
        chunk = list(itertools.islice(iterator, size))
        if not chunk:
            return
        yield start, chunk
        start += len(chunk)


def _positions_or(ids: Optional[Sequence[Hashable]], n: int) -> Sequence[Hashable]:
    if ids is None:
        return range(n)
    ids = list(ids)
    if len(ids) != n:
        raise ValueError(f"{len(ids)} ids for {n} texts")
    return ids


# ---------------------------------------------------------------------------------------
# Fingerprints and signatures.


def fingerprint(text: str, preset: str = "default", window: Optional[int] = None) -> Optional[int]:
    """The 64-bit simhash fingerprint of ``text``, as ``simhash fingerprint`` prints it;
    ``None`` for a text without features (too short, or only punctuation), which the
    command prints as an empty hash.

    ``preset``: ``"default"`` (Unicode words, NFKC and case folding, 3-word shingles,
    sublinear tf weights), ``"moz"`` (simhash-cpp's ``hash_text``, bit for bit) or
    ``"fork"`` (the OpenMP fork's JSON mode); ``window``: tokens per shingle (bytes for
    ``fork``), the preset's own by default.
    """
    return _fingerprinter(preset, window).fingerprint(text)


@functools.lru_cache(maxsize=16)
def _fingerprinter(preset: str, window: Optional[int]) -> Any:
    return _native.Fingerprinter(preset, window)


def fingerprints(
    texts: Iterable[str],
    preset: str = "default",
    window: Optional[int] = None,
    *,
    with_mask: bool = False,
) -> Union["np.ndarray", Tuple["np.ndarray", "np.ndarray"]]:
    """The fingerprints of ``texts`` as a ``uint64`` array, computed in parallel with the
    GIL released. A text without features gets 0; with ``with_mask=True`` the result is
    ``(fingerprints, has_features)``, the second a ``bool`` array that tells them apart."""
    f = _fingerprinter(preset, window)
    values, masks = [], []
    for start, chunk in _chunks(texts):
        v, m = f.fingerprints(chunk, start)
        values.append(v)
        masks.append(m)
    fps = np.concatenate(values) if values else np.zeros(0, dtype=np.uint64)
    if not with_mask:
        return fps
    return fps, (np.concatenate(masks) if masks else np.zeros(0, dtype=bool))


def hamming(a: int, b: int) -> int:
    """The number of bits in which two 64-bit fingerprints differ."""
    return _native.hamming(a, b)


class MinHasher:
    """MinHash signatures of the shingles that ``preset`` and ``window`` make of a text,
    the signatures the default method's LSH bands are cut from.

    >>> mh = MinHasher(num_perm=64)
    >>> sigs = mh.signatures(["a b c d e", "a b c d e", "x y z w v"])
    >>> sigs.shape, sigs.dtype.name
    ((3, 64), 'uint32')
    >>> bool((sigs[0] == sigs[1]).all()), bool((sigs[0] == sigs[2]).all())
    (True, False)
    """

    #: The slot value of every slot of a text without shingles (no other signature has it).
    EMPTY = 2**32 - 1

    def __init__(
        self, num_perm: int = DEFAULT_NUM_PERM, seed: int = 0, preset: str = "default", window: Optional[int] = None
    ) -> None:
        self._native = _native.MinHasher(num_perm, seed, preset, window)

    @property
    def num_perm(self) -> int:
        return self._native.num_perm

    @property
    def seed(self) -> int:
        return self._native.seed

    def signature(self, text: str) -> "np.ndarray":
        """The signature of one text (``uint32``, ``num_perm`` slots)."""
        return self._native.signatures([text], 0)[0]

    def shingles(self, text: str) -> "np.ndarray":
        """The text's distinct shingle hashes (``uint64``, sorted): the set a signature
        summarises and whose exact Jaccard similarity verifies a match."""
        return self._native.shingles(text)

    def signatures(self, texts: Iterable[str]) -> "np.ndarray":
        """The signatures of ``texts``: a ``uint32`` array of shape ``(n, num_perm)``, one row
        per text (a row of :attr:`EMPTY` for a text without shingles)."""
        rows = [self._native.signatures(chunk, start) for start, chunk in _chunks(texts)]
        if not rows:
            return np.zeros((0, self.num_perm), dtype=np.uint32)
        return np.concatenate(rows)

    def estimate_jaccard(self, a: "np.ndarray", b: "np.ndarray") -> float:
        """The share of equal slots: an estimate of the two texts' Jaccard similarity."""
        return float(np.mean(np.asarray(a) == np.asarray(b)))

    def __repr__(self) -> str:
        n = self._native
        return f"MinHasher(num_perm={n.num_perm}, seed={n.seed}, preset={n.preset!r}, window={n.window})"


# ---------------------------------------------------------------------------------------
# Matching: pairs, dedup, clusters.


def _method(
    method: str,
    preset: str,
    jaccard: Optional[float],
    lsh_threshold: Optional[float],
    num_perm: Optional[int],
    k: Optional[int],
    blocks: Optional[int],
) -> str:
    """The method (``auto`` resolved) with its settings checked by the one settings contract
    the ``simhash`` command maps its flags onto (``simhash_index::settings``)."""
    return _native.resolve_method(method, preset, jaccard, lsh_threshold, num_perm, k, blocks)


def _matcher(
    texts: Any,
    method: str,
    preset: str,
    window: Optional[int],
    jaccard: Optional[float],
    lsh_threshold: Optional[float],
    num_perm: Optional[int],
    k: Optional[int],
    blocks: Optional[int],
    spill: bool = False,
    templates: Optional[str] = None,
) -> Tuple[Any, str]:
    method = _method(method, preset, jaccard, lsh_threshold, num_perm, k, blocks)
    if spill and method != "minhash":
        raise ValueError("spill applies to method='minhash' (simhash keeps 8 bytes a text)")
    if templates is not None and method != "minhash":
        raise ValueError("templates applies to method='minhash', not simhash")
    m = _native.Matcher(
        method,
        preset,
        window,
        DEFAULT_JACCARD if jaccard is None else float(jaccard),
        DEFAULT_LSH_THRESHOLD if lsh_threshold is None else float(lsh_threshold),
        DEFAULT_NUM_PERM if num_perm is None else int(num_perm),
        DEFAULT_K if k is None else int(k),
        blocks,
        bool(spill),
        "remove" if templates is None else str(templates),
    )
    for start, chunk in _chunks(texts):
        m.add(chunk, start)
    return m, method


def pairs(
    texts: Iterable[str],
    ids: Optional[Sequence[Hashable]] = None,
    method: str = "minhash",
    jaccard: Optional[float] = None,
    k: Optional[int] = None,
    *,
    preset: str = "default",
    window: Optional[int] = None,
    num_perm: Optional[int] = None,
    lsh_threshold: Optional[float] = None,
    blocks: Optional[int] = None,
    spill: bool = False,
    templates: Optional[str] = None,
) -> List[Tuple[Hashable, Hashable, float]]:
    """Every near-duplicate pair ``(id_a, id_b, score)``, as ``simhash pairs`` lists them,
    sorted by position (``id_a`` before ``id_b`` in the input).

    ``method="minhash"`` (the default): the score is the exact Jaccard similarity of the
    two shingle sets, at least ``jaccard`` (0.4); LSH bands tuned for ``lsh_threshold``
    (0.3) over ``num_perm`` (128) slots choose which pairs are compared.
    ``method="simhash"``: the score is the number of bits (an ``int``) between the two
    fingerprints, at most ``k`` (3); ``blocks`` is a speed setting (the planner's choice by
    default). ``"auto"`` is minhash, or simhash for ``k``/``blocks`` or the moz and fork
    presets.

    A text identical to an earlier one (the same shingle set, or fingerprint) is paired
    with the first of them only, and other pairs are listed between such first texts: a
    flood of copies gives one pair per copy, not one per pair of copies. ``ids`` default to
    positions.

    Memory: minhash keeps each text's shingle set (8 bytes a shingle) and band hashes;
    ``spill=True`` writes them to temporary files (in ``TMPDIR``), as the ``simhash``
    command does, so that a corpus larger than memory can be matched. The answers are the
    same either way. An unwritable ``TMPDIR`` raises ``OSError``.

    ``templates`` (minhash): ``"remove"`` (the default) lists pairs of the same text and of
    template siblings, ``"keep"`` the same text only; two texts that both have content of
    their own are never listed (see :func:`dedup`), as ``simhash pairs --templates``.
    """
    m, method = _matcher(texts, method, preset, window, jaccard, lsh_threshold, num_perm, k, blocks, spill, templates)
    a, b, score = m.pairs()
    ids = _positions_or(ids, len(m))
    if method == "simhash":
        return [(ids[x], ids[y], int(s)) for x, y, s in zip(a.tolist(), b.tolist(), score.tolist())]
    return [(ids[x], ids[y], s) for x, y, s in zip(a.tolist(), b.tolist(), score.tolist())]


@dataclass(frozen=True)
class DedupResult:
    """What :func:`dedup` decided, one entry per text in input order.

    ``keep`` (``bool``): kept. ``duplicate_of`` (``int64``): the position of the kept text
    each removed one duplicates, -1 when kept (or, from :meth:`Index.dedup`, when removed
    as the duplicate of an indexed text, which ``indexed`` names). ``similarity`` (``float32``): the exact
    Jaccard similarity (minhash) or the bits apart (simhash) of a removed text and its kept
    one, NaN when kept: the ``similarity`` that ``simhash dedup --annotate`` writes.
    """

    keep: "np.ndarray"
    duplicate_of: "np.ndarray"
    similarity: "np.ndarray"
    method: str
    #: :meth:`Index.dedup` only: per text, the id of the indexed text it duplicates (None
    #: when it matched nothing in the index, or when that indexed text is the own copy of
    #: a text kept in this call: then ``duplicate_of`` names that text); texts with an
    #: indexed id have ``duplicate_of`` -1.
    indexed: Optional[List[Optional[str]]] = None
    #: :meth:`Index.dedup` with ``update=True``: what was added to the index.
    added: Optional["AddResult"] = None
    #: minhash (:func:`dedup`): per text, what its removal is: ``"same"`` (a copy, version
    #: or revision) or ``"template"`` (a sibling filled into the same template); None when
    #: kept. The ``"relation"`` of ``simhash dedup --removed``.
    relation: Optional[List[Optional[str]]] = None

    def __len__(self) -> int:
        return len(self.keep)

    @property
    def kept(self) -> "np.ndarray":
        """The positions of the kept texts."""
        return np.flatnonzero(self.keep)

    @property
    def removed(self) -> "np.ndarray":
        """The positions of the removed texts."""
        return np.flatnonzero(~self.keep)


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def _lowest_id_ranks(ids: Sequence[Hashable]) -> List[int]:
    """Each id's rank, lowest first, as ``--keep lowest-id`` orders them: numerically when
    both ids are integers, bytewise otherwise, numbers first; ties in input order."""

    def key(i: int) -> Tuple[int, int, bytes, int]:
        text = str(ids[i])
        if _INTEGER.match(text) and -(2**127) <= int(text) < 2**127:
            return (0, int(text), text.encode(), i)
        return (1, 0, text.encode(), i)

    order = sorted(range(len(ids)), key=key)
    ranks = [0] * len(ids)
    for rank, i in enumerate(order):
        ranks[i] = rank
    return ranks


def dedup(
    texts: Iterable[str],
    ids: Optional[Sequence[Hashable]] = None,
    method: str = "minhash",
    jaccard: Optional[float] = None,
    k: Optional[int] = None,
    *,
    keep: str = "first",
    preset: str = "default",
    window: Optional[int] = None,
    num_perm: Optional[int] = None,
    lsh_threshold: Optional[float] = None,
    blocks: Optional[int] = None,
    spill: bool = False,
    templates: Optional[str] = None,
) -> DedupResult:
    """Keep/remove decisions, the same as ``simhash dedup``'s: texts are walked in the
    ``keep`` order (``"first"``: input order; ``"longest"``: longest text first;
    ``"lowest-id"``: lowest id first) and each is kept unless it matches a text already
    kept (see :func:`pairs` for the methods and settings); ``duplicate_of`` names the first
    such kept text. A text is removed only for a verified match with a kept one, and a
    flood of identical or templated texts costs about one comparison each.

    With minhash every verified match is also read for what differs (``relation``): a text
    with content of its own (a sentence, a clause, options the kept one lacks) is never
    removed; ``templates="remove"`` (the default) removes the same text and template
    siblings, ``templates="keep"`` the same text only, as ``simhash dedup --templates``.
    """
    if keep not in ("first", "longest", "lowest-id"):
        raise ValueError(f"keep must be 'first', 'longest' or 'lowest-id', not {keep!r}")
    m, method = _matcher(texts, method, preset, window, jaccard, lsh_threshold, num_perm, k, blocks, spill, templates)
    rank = None
    if keep == "lowest-id":
        rank = _lowest_id_ranks(_positions_or(ids, len(m)))
    elif ids is not None:
        _positions_or(ids, len(m))
    of, similarity, relation = m.dedup(keep if keep != "lowest-id" else "first", rank)
    names = None
    if method == "minhash":
        names = [_RELATIONS.get(r) for r in relation.tolist()]
    return DedupResult(keep=of < 0, duplicate_of=of, similarity=similarity, method=method, relation=names)


_RELATIONS = {0: "same", 1: "template"}


def clusters(
    texts: Iterable[str],
    method: str = "minhash",
    jaccard: Optional[float] = None,
    k: Optional[int] = None,
    *,
    preset: str = "default",
    window: Optional[int] = None,
    num_perm: Optional[int] = None,
    lsh_threshold: Optional[float] = None,
    blocks: Optional[int] = None,
    spill: bool = False,
    templates: Optional[str] = None,
) -> "np.ndarray":
    """Connected components of the matches (``simhash cluster --mode components``): an
    ``int64`` array giving each text's cluster, named by the position of its first text.
    Note that components chain: in a templated family, texts far apart can share one."""
    m, _ = _matcher(texts, method, preset, window, jaccard, lsh_threshold, num_perm, k, blocks, spill, templates)
    return m.clusters()


# ---------------------------------------------------------------------------------------
# The in-memory Hamming index.


class SimhashIndex:
    """Fingerprints under ids (any hashable), and every stored fingerprint within ``k``
    bits of a query, exactly (block-permutation tables: Manku, Jain & Das Sarma, 2007).

    >>> index = SimhashIndex(k=3)
    >>> index.add("a", 0b1011)
    >>> index.add("b", 0b1000)
    >>> index.add("c", 2**64 - 1)
    >>> index.query(0b1111)
    [('a', 1), ('b', 3)]
    >>> index.find_all()
    [('a', 'b', 2)]
    """

    def __init__(self, k: int = DEFAULT_K, blocks: Optional[int] = None) -> None:
        self._table = _native.HammingTable(k, blocks)
        self._slot_of: dict = {}
        self._id_of: dict = {}
        self._next = 0

    @property
    def k(self) -> int:
        return self._table.k

    @property
    def blocks(self) -> int:
        return self._table.blocks

    def add(self, id: Hashable, fp: int) -> None:
        """Stores ``fp`` (an unsigned 64-bit int) under ``id``, replacing what ``id`` held."""
        fp = _u64(fp)
        slot = self._slot_of.get(id)
        if slot is None:
            slot = self._next
            self._next += 1
            self._slot_of[id] = slot
            self._id_of[slot] = id
        self._table.insert(slot, fp)

    def remove(self, id: Hashable) -> bool:
        """Removes ``id``; False when it was not stored."""
        slot = self._slot_of.pop(id, None)
        if slot is None:
            return False
        del self._id_of[slot]
        self._table.remove(slot)
        return True

    def get(self, id: Hashable) -> Optional[int]:
        """The fingerprint stored under ``id``."""
        slot = self._slot_of.get(id)
        return None if slot is None else self._table.get(slot)

    def query(self, fp: int) -> List[Tuple[Hashable, int]]:
        """``(id, distance)`` of every stored fingerprint within ``k`` bits of ``fp``,
        nearest first (equal distances in the order the ids were first added)."""
        return [(self._id_of[s], d) for s, d in self._table.query(_u64(fp))]

    def find_all(self) -> List[Tuple[Hashable, Hashable, int]]:
        """Every pair of stored fingerprints within ``k`` bits, ``(id_a, id_b, distance)``,
        ``id_a`` added before ``id_b``; identical fingerprints are pairs at distance 0."""
        a, b, d = self._table.find_all()
        ids = self._id_of
        return [(ids[x], ids[y], z) for x, y, z in zip(a.tolist(), b.tolist(), d.tolist())]

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, id: object) -> bool:
        return id in self._slot_of

    def __repr__(self) -> str:
        return f"SimhashIndex(k={self.k}, blocks={self.blocks}, len={len(self)})"


def _u64(fp: Any) -> int:
    value = int(fp)
    if not 0 <= value < 2**64:
        raise ValueError(f"a fingerprint is an unsigned 64-bit int, not {value}")
    return value


# ---------------------------------------------------------------------------------------
# The persistent index.


@dataclass(frozen=True)
class AddResult:
    """What :meth:`Index.add` (or :meth:`Index.dedup` with ``update=True``) committed:
    ``added`` texts, ``documents`` in the index now, and each ``refused`` text as
    ``(position, id)``: its id was already in the index (or earlier in the same add), so
    it was not added (from :meth:`Index.dedup`: with other content; a text it holds with
    the same id and content counts as ``already``)."""

    added: int
    documents: int
    refused: List[Tuple[int, str]]
    #: :meth:`Index.dedup` with ``update=True``: kept texts that the index already held
    #: (the same id and the same content: a rerun's), not added again.
    already: int = 0


class Index:
    """The persistent near-duplicate index on disk: the same directory, format and answers
    as ``simhash index`` and ``simhash dedup --against``. Open it with :meth:`open`.

    A directory of immutable, checksummed segment files and an atomically replaced
    manifest: one writer at a time (``IndexLockedError`` otherwise), any number of
    readers, and a crash at any moment leaves the last commit. The index stores its
    settings (method, preset, thresholds) and refuses others by name (``ValueError``).

    **Threads**: every method may be called from any thread. Queries (``query``,
    ``dedup`` without ``update``, ``stats``, ``len``, ``verify``) run concurrently with each
    other and with a write, and see the state of the last commit made or read through this
    object: a write's commit replaces it at once (for calls that start afterwards). Writes
    through one ``Index`` (``add``, ``dedup(update=True)``, ``compact``) take turns;
    another ``Index`` object or process writing the same directory meanwhile gets
    ``IndexLockedError``.

    **Commits**: a write commits all of its change or nothing, and an exception out of
    ``add``, ``dedup(update=True)`` or ``compact`` says which: nothing was committed unless
    ``getattr(e, "committed", False)`` is ``True``. Ctrl-C is seen until the commit
    starts (the last check is just before it); a commit once started is finished, and a
    ``KeyboardInterrupt`` that came meanwhile is raised after it with ``committed = True``,
    ``result`` (what the call would have returned) and a note: the change is on disk, and
    this object already sees it. (An interrupt that comes after the call has returned is
    raised in the caller's code, as anywhere else.)
    """

    def __init__(self, native: Any) -> None:
        self._native = native
        # Writes through this object take turns (the index's lock would refuse the second).
        self._writing = threading.Lock()

    @classmethod
    def open(
        cls,
        path: Union[str, "os.PathLike[str]"],
        create: bool = False,
        *,
        method: Optional[str] = None,
        preset: Optional[str] = None,
        window: Optional[int] = None,
        jaccard: Optional[float] = None,
        lsh_threshold: Optional[float] = None,
        num_perm: Optional[int] = None,
        k: Optional[int] = None,
        blocks: Optional[int] = None,
    ) -> "Index":
        """Opens the index at ``path``; with ``create=True``, where there is none (no such
        path, or an empty directory), creates it with these settings and the ``simhash``
        command's defaults for the rest (method ``"minhash"``).

        On an existing index, each setting given must equal the stored one: a
        ``ValueError`` names each that differs. No index without ``create`` is a
        ``FileNotFoundError`` (so a mistyped path creates nothing); a damaged index is a
        :class:`CorruptIndexError`, and so is a directory that holds files but no
        ``MANIFEST`` (something else, or an index whose manifest was lost): nothing is
        created over it and nothing in it is changed.
        """
        if method is not None and method not in ("minhash", "simhash", "auto"):
            raise ValueError(f"method must be 'minhash', 'simhash' or 'auto', not {method!r}")
        if method == "auto":
            method = None
        if method == "simhash" and (jaccard is not None or lsh_threshold is not None or num_perm is not None):
            raise ValueError("jaccard, lsh_threshold and num_perm apply to method='minhash', not simhash")
        if method in (None, "minhash") and (k is not None or blocks is not None):
            if method == "minhash":
                raise ValueError("k and blocks apply to method='simhash', not minhash (use jaccard)")
            method = "simhash" if not os.path.exists(os.path.join(os.fspath(path), "MANIFEST")) else None
        if jaccard is not None and not (0 < jaccard <= 1):
            raise ValueError(f"jaccard must be more than 0 and at most 1, not {jaccard}")
        if lsh_threshold is not None and not (0 < lsh_threshold < 1):
            raise ValueError(f"lsh_threshold must be more than 0 and below 1, not {lsh_threshold}")
        asked = {
            "method": method,
            "preset": preset,
            "window": window,
            "jaccard": jaccard,
            "lsh_threshold": lsh_threshold,
            "num_perm": num_perm,
            "k": k,
            "blocks": blocks,
        }
        return cls(_native.NativeIndex.open(os.fspath(path), create, asked))

    @property
    def path(self) -> str:
        return os.fspath(self._native.path)

    def settings(self) -> dict:
        """The settings the index was made with."""
        return self._native.settings()

    def stats(self) -> dict:
        """``documents``, ``segments``, ``bytes`` on disk, ``generation`` and ``settings``."""
        return self._native.stats()

    def __len__(self) -> int:
        return len(self._native)

    def add(self, texts: Iterable[str], ids: Sequence[Hashable]) -> AddResult:
        """Adds ``texts`` under ``ids`` (stored as text: ``str(id)``) and commits: all of
        them or, on any error or interrupt before the commit starts, none (the exception's
        ``committed`` says which; see :class:`Index`). A text whose id the index already
        holds with other content (or an earlier text of this add holds) is refused, not
        added, and listed in the result; one it holds with the same id and content (a
        rerun's) is counted as ``already``, not added again, as ``simhash index add``
        counts it."""
        writer = None
        try:
            with self._writing:
                writer = self._native.writer()
                try:
                    position = 0
                    id_chunks = _id_chunks(ids)
                    for start, chunk in _chunks(texts):
                        n = chunk[3] if isinstance(chunk, tuple) else len(chunk)
                        chunk_ids = _take(id_chunks, n, position)
                        writer.add(chunk, chunk_ids, start)
                        position += n
                    if next(id_chunks, None) is not None:
                        raise ValueError(f"more ids than texts ({position} texts)")
                    writer.commit()
                except BaseException:
                    writer.rollback()  # nothing once committed
                    raise
            return _add_result(writer.result, writer.positions, writer.already)
        except BaseException as e:
            _mark(e, writer, lambda done: _add_result(done, writer.positions, writer.already))
            raise

    def query(
        self, texts: Iterable[str], ids: Optional[Sequence[Hashable]] = None, *, first: bool = False
    ) -> List[Tuple[Hashable, str, float]]:
        """Every indexed text each text matches: ``(id, indexed_id, similarity)`` in input
        order, then the order texts were added to the index. The similarity is the exact
        Jaccard similarity (minhash; at least the index's ``jaccard``) or the bits apart
        (simhash, an ``int``; at most its ``k``). With ``first=True``, only each text's
        earliest-added match: what ``simhash dedup --against`` names as ``duplicate_of``.
        ``ids`` default to positions."""
        found: List[Tuple[int, str, float]] = []
        for start, chunk in _chunks(texts):
            found.extend(self._native.query(chunk, start, first))
        n_known = None
        if ids is not None:
            ids = list(ids)
            n_known = len(ids)
        as_int = self.settings()["method"] == "simhash"
        out = []
        for position, indexed, score in found:
            if n_known is not None and position >= n_known:
                raise ValueError(f"fewer ids ({n_known}) than texts")
            key = ids[position] if ids is not None else position
            out.append((key, indexed, int(score) if as_int else score))
        return out

    def dedup(
        self,
        texts: Iterable[str],
        ids: Optional[Sequence[Hashable]] = None,
        *,
        keep: str = "first",
        update: bool = False,
        templates: Optional[str] = None,
    ) -> DedupResult:
        """Deduplicates ``texts`` against the index, as ``simhash dedup --against`` does:
        the indexed texts count as kept before any of these, so a text that matches one is
        removed as its duplicate (``indexed`` names the earliest added, ``similarity`` says
        how near); the others are deduplicated among themselves in the ``keep`` order.

        With ``update=True`` (``ids`` required), the kept texts are added under their ids
        (in the ``keep`` order) and committed, so that deduplicating batch after batch this
        way decides what one :func:`dedup` of them all decides (with ``keep="first"``). The
        writer's lock is taken first; an error or interrupt before the commit starts
        commits nothing (the exception's ``committed`` says which; see :class:`Index`).

        Reruns: a text whose id the index holds with the same content (the same shingle set,
        or fingerprint) is that text, not a duplicate of itself, as ``simhash dedup
        --against`` tells them: it is left out of its own matches, and with ``update=True``
        it is not added again (``added.already`` counts it). A text whose first match in
        the index is such a copy of a text kept here names that text in ``duplicate_of``.
        So rerunning a committed ``dedup(..., update=True)`` decides what it decided and
        adds nothing. A kept text whose id the index holds with other content is kept and
        not added (``added.refused`` lists it). Texts without ``ids`` are never their own
        indexed copy.

        ``templates`` (a MinHash index): which relations remove a text, as :func:`dedup`'s
        (``"remove"``, the default: the same text and template siblings; ``"keep"``: the
        same text only); a text with content of its own is never removed.
        """
        if keep not in ("first", "longest", "lowest-id"):
            raise ValueError(f"keep must be 'first', 'longest' or 'lowest-id', not {keep!r}")
        if templates is not None and self.settings()["method"] != "minhash":
            raise ValueError("templates applies to a MinHash index, not simhash")
        templates = "remove" if templates is None else str(templates)
        if update and ids is None:
            raise ValueError("update=True stores the kept texts under their ids: give ids")
        if not update:
            return self._dedup(texts, ids, keep, None, templates)
        writer = None
        to_result: Any = _add_result
        try:
            with self._writing:
                writer = self._native.writer()
                try:
                    self._native.reload()  # what other writers committed before the lock
                    result, (docs, already) = self._dedup(texts, ids, keep, writer, templates)
                    to_result = lambda done: _add_result(done, docs, already)  # noqa: E731
                    writer.commit()
                except BaseException:
                    writer.rollback()  # nothing once committed
                    raise
            return dataclasses.replace(result, added=to_result(writer.result))
        except BaseException as e:
            _mark(e, writer, to_result)
            raise

    def _dedup(self, texts: Iterable[str], ids: Any, keep: str, writer: Any, templates: str) -> Any:
        """The dedup against the index's current state; with a ``writer``, the kept texts
        are added to it (not committed) and the result comes with the positions added, in
        the order added, and how many the index already held."""
        d = self._native.deduper(templates)
        labels = None if ids is None else list(ids)
        for start, chunk in _chunks(texts):
            if labels is None:
                d.add(chunk, start)
                continue
            n = chunk[3] if isinstance(chunk, tuple) else len(chunk)
            if start + n > len(labels):
                raise ValueError(f"fewer ids ({len(labels)}) than texts")
            d.add(chunk, start, [i if isinstance(i, str) else str(i) for i in labels[start : start + n]])
        n = len(d)
        labels = _positions_or(labels, n)
        rank = _lowest_id_ranks(labels) if keep == "lowest-id" else None
        of, similarity, indexed = d.finish("first" if keep == "lowest-id" else keep, rank)
        kept = (of < 0) & np.array([i is None for i in indexed], dtype=bool)
        method = self.settings()["method"]
        result = DedupResult(keep=kept, duplicate_of=of, similarity=similarity, method=method, indexed=indexed)
        if writer is None:
            return result
        kept_docs = np.flatnonzero(kept).tolist()
        ids_of = [i if isinstance(i, str) else str(i) for i in (labels[x] for x in kept_docs)]
        docs, already = d.add_to(writer, kept_docs, ids_of)
        return result, (docs, already)

    def verify(self) -> None:
        """Reads and checks every byte (:class:`CorruptIndexError` names a damaged file)."""
        self._native.verify()

    def compact(self) -> dict:
        """Merges every segment into one (queries get faster); takes the writer's lock. An
        exception says whether the compaction was committed (see :class:`Index`)."""
        writer = None
        try:
            with self._writing:
                writer = self._native.writer()
                try:
                    writer.compact()
                except BaseException:
                    writer.rollback()
                    raise
            return self._compacted(writer.result)
        except BaseException as e:
            _mark(e, writer, self._compacted)
            raise

    def _compacted(self, done: Any) -> dict:
        _added, documents, generation, _refused = done
        return {"documents": documents, "generation": generation, "segments": self._native.stats()["segments"]}

    def reload(self) -> None:
        """Reads the index again, to see what other writers committed since it was opened."""
        self._native.reload()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __repr__(self) -> str:
        return f"Index({self.path!r}, documents={len(self)}, method={self.settings()['method']!r})"


def _add_result(done: Any, docs: Optional[List[int]] = None, already: int = 0) -> AddResult:
    """A writer's commit, ``(added, documents, generation, refused)``, as an AddResult
    (refused positions mapped through ``docs``, the texts added in the order added, when
    given; ``already``: the kept texts the index already held)."""
    added, documents, _generation, refused = done
    where = (lambda p: docs[p]) if docs is not None else (lambda p: p)
    return AddResult(
        added=added, documents=documents, refused=[(where(p), i) for p, i, _ in refused], already=already
    )


def _mark(e: BaseException, writer: Any, result_of: Any) -> None:
    """Tells on an exception out of a write whether the write was committed: ``committed``
    and, when it was, ``result`` (what the write would have returned, or None when the
    commit's own error came after the manifest named the change) and a note. An uncommitted
    writer is rolled back (already, but for an interrupt between its making and the ``try``
    that rolls it back), so that the exception's traceback does not keep the index's lock."""
    if writer is not None:
        writer.rollback()  # nothing once committed, or rolled back
    committed = bool(writer is not None and writer.committed)
    try:
        e.committed = committed  # type: ignore[attr-defined]
        if committed:
            done = writer.result
            e.result = result_of(done) if done is not None else None  # type: ignore[attr-defined]
            note = "simhash_rs: the change WAS committed (it is on disk, and the Index sees it)"
            if hasattr(e, "add_note"):
                e.add_note(note)
    except Exception:  # an exception that takes no attributes: leave it as it is
        pass


def _id_chunks(ids: Iterable[Hashable]) -> Iterator[str]:
    for i in ids:
        yield i if isinstance(i, str) else str(i)


def _take(ids: Iterator[str], n: int, position: int) -> List[str]:
    chunk = list(itertools.islice(ids, n))
    if len(chunk) != n:
        raise ValueError(f"fewer ids than texts ({position + len(chunk)} ids)")
    return chunk
