"""What the matching calls return: :class:`DedupResult` (:func:`dedup`,
:meth:`Index.dedup`) and :class:`AddResult` (what :meth:`Index.add` committed)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Hashable, List, Optional, Sequence, Tuple, Union

import numpy as np

#: The relations of removals by their codes (the native module's; -1 when kept).
RELATIONS = {0: "same", 1: "template"}


def relation_names(codes: np.ndarray, method: str) -> Optional[List[Optional[str]]]:
    """Per text, the relation of its removal named from the native module's ``codes`` (None
    when kept); None with simhash, which reads no relation."""
    return [RELATIONS.get(r) for r in codes.tolist()] if method == "minhash" else None


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
    #: minhash (:func:`dedup`, :meth:`Index.dedup`): per text, what its removal is:
    #: ``"same"`` (a copy, version, revision or edition) or ``"template"`` (a sibling
    #: filled into the same template); None when kept. The ``"relation"`` of ``simhash dedup --removed``
    #: (and ``--against``: a match in the index read from the tokens it stores).
    relation: Optional[List[Optional[str]]] = None
    #: :func:`dedup`: what :meth:`report` needs of the run (not part of the result's value).
    _page: Optional["PageSource"] = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.keep)

    def report(
        self,
        path: Union[str, "os.PathLike[str]"],
        texts: Optional[Sequence[str]] = None,
        *,
        sample: int = 30,
        group: Optional[Sequence[Optional[str]]] = None,
        group_name: str = "group",
    ) -> None:
        """Writes the run's HTML page to ``path``: the page ``simhash dedup --report``
        writes (figures, charts, the removals sampled per similarity bucket with both
        texts, the largest clusters, labelling for a precision audit), made from this
        run. The same texts, ids and settings give the same sampled pairs, buckets and
        texts as the command line's page (``sample``: pairs per bucket, as
        ``--report-sample``).

        The page shows the texts that :func:`dedup` was given when they were a list (or
        another sequence, an Arrow array or a polars Series), read again for the sampled
        pairs only. Texts that came from a one-shot iterator (a generator, a file) were read
        once and not kept: pass them again as ``texts`` (the same texts in the same order;
        a text that differs from the one the run read raises ``ValueError``).

        ``group``: each text's value of a field (a ``str``, or ``None`` for no value), one
        per text; the page then counts the records and the removals by value, as
        ``--report-group FIELD`` does, under the name ``group_name``.

        The page is written to a temporary file beside ``path`` and renamed over it, so
        ``path`` holds the whole page or is left as it was. Raises ``ValueError`` for
        missing or different texts, a bad ``sample``, not one ``group`` value per text, or
        ids that repeat (as text: the page's labels name each pair by its two ids),
        ``OSError`` when the page cannot be written, and ``TypeError`` for a value that is
        not a ``str`` or when this result did not come from :func:`dedup`.

        >>> import os, tempfile
        >>> import simhash_rs
        >>> texts = ["the quick brown fox jumps over the lazy dog by the river",
        ...          "the quick brown fox jumps over the lazy dog by the river!",
        ...          "an unrelated sentence about the weather in the mountains"]
        >>> result = simhash_rs.dedup(texts)
        >>> page = os.path.join(tempfile.mkdtemp(), "report.html")
        >>> result.report(page)
        >>> open(page, encoding="utf-8").read().startswith("<!DOCTYPE html>")
        True
        """
        if self._page is None:
            raise TypeError("report() is for the results of simhash_rs.dedup (this result has no run to show)")
        self._page.report(path, texts, len(self), sample, group, group_name)

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


def reusable(texts: Any) -> bool:
    """Whether ``texts`` can be read again by position (a list, a tuple, another sequence,
    an Arrow array, a polars Series), not a one-shot iterator."""
    if isinstance(texts, (str, bytes, Iterator)):
        return False
    return hasattr(texts, "__len__") and hasattr(texts, "__getitem__")


class PageSource:
    """What :meth:`DedupResult.report` reads of a :func:`dedup` run: the native run (its
    settings, decisions, scores and figures, and a hash of each text as the run read it),
    the ids as given, and the texts when they can be read again."""

    __slots__ = ("_run", "_ids", "_texts")

    def __init__(self, run: Any, ids: Optional[Sequence[Hashable]], texts: Optional[Any]) -> None:
        self._run = run
        self._ids = ids
        self._texts = texts

    def report(
        self,
        path: Union[str, "os.PathLike[str]"],
        texts: Optional[Any],
        n: int,
        sample: int,
        group: Optional[Sequence[Optional[str]]],
        group_name: str,
    ) -> None:
        if texts is None:
            texts = self._texts
            if texts is None:
                raise ValueError(
                    "the texts came from an iterator, which dedup read once and did not keep: "
                    "pass them again, result.report(path, texts=...)"
                )
        elif not reusable(texts):
            raise ValueError("texts must be a list (or a sequence read by position), not an iterator")
        if len(texts) != n:
            raise ValueError(f"{len(texts)} texts for a run of {n}")
        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
            raise ValueError(f"sample must be a positive int, not {sample!r}")
        ids = None if self._ids is None else [str(i) for i in self._ids]
        if ids is not None:
            # The page's labels (and `simhash audit`) name each sampled pair by its two ids.
            first = {}
            for i, id_ in enumerate(ids):
                if first.setdefault(id_, i) != i:
                    raise ValueError(
                        f"the report needs distinct ids, as its labels name each pair by its ids: "
                        f"texts {first[id_]} and {i} both have the id {id_!r}; pass distinct ids "
                        f"to dedup, or none (the texts' positions)"
                    )
        grouped = None
        if group is not None:
            if not reusable(group):
                raise ValueError("group must be a list of values (or a sequence read by position), not an iterator")
            values = [_value(v) for v in group]
            for i, v in enumerate(values):
                if v is not None and not isinstance(v, str):
                    raise TypeError(f"group[{i}] is {type(v).__name__}, not str or None")
            if not isinstance(group_name, str):
                raise TypeError(f"group_name is {type(group_name).__name__}, not str")
            grouped = (group_name, values)

        def text_at(i: int) -> Any:
            return _value(texts[i])

        self._run.report(os.fspath(path), ids, text_at, sample, grouped)


def _value(item: Any) -> Any:
    """An item of a list, or of an Arrow column (a scalar, as a Python value)."""
    as_py = getattr(item, "as_py", None)
    return as_py() if as_py is not None else item
