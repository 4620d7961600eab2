"""What the matching calls return: :class:`DedupResult` (:func:`dedup`,
:meth:`Index.dedup`) and :class:`AddResult` (what :meth:`Index.add` committed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np


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
