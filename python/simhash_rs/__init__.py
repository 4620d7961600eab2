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

from ._audit import audit
from ._contamination import Contamination, decontaminate
from ._disk import Index
from ._fingerprint import MinHasher, fingerprint, fingerprints, hamming
from ._match import clusters, dedup, pairs
from ._native import MAX_PERM, MAX_WINDOW, CorruptIndexError, IndexLockedError, __version__
from ._results import AddResult, DedupResult
from ._simhash_index import SimhashIndex
from ._texts import CHUNK

__all__ = [
    "AddResult",
    "Contamination",
    "CorruptIndexError",
    "DedupResult",
    "Index",
    "IndexLockedError",
    "MAX_PERM",
    "MAX_WINDOW",
    "MinHasher",
    "SimhashIndex",
    "audit",
    "clusters",
    "decontaminate",
    "dedup",
    "fingerprint",
    "fingerprints",
    "hamming",
    "pairs",
]

# `doctest.testmod(simhash_rs)` finds examples only in what this module defines itself: the
# public objects defined in the modules above, with their methods, are listed for it.
__test__ = {
    routine.__qualname__: routine
    for obj in map(globals().get, __all__)
    if getattr(obj, "__module__", "").startswith(f"{__name__}._") and obj.__module__ != f"{__name__}._native"
    for member in [obj, *(vars(obj).values() if isinstance(obj, type) else ())]
    for routine in [getattr(member, "__func__", getattr(member, "fget", member))]
    if callable(routine) and routine.__doc__
}
