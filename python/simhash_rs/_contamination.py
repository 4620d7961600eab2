"""Benchmark contamination: :func:`decontaminate` finds eval-set text inside a corpus,
exactly, with where it is written (the library's ``simhash_index::contamination``)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from . import _native
from ._texts import chunks


@dataclass
class Contamination:
    """What :func:`decontaminate` found.

    ``hits``: one dict per (document, item) that reaches ``min_overlap``, in document order:
    ``doc`` (the document's position in ``texts``), ``eval`` (the set's name), ``item``
    (its id), ``overlap`` (the share of the item's n-grams found), ``longest`` (the longest
    run in common, in words), ``spans`` (``(start, end)`` character offsets, in code points,
    end exclusive, of the matched text in the document), ``matched`` and ``ngrams`` (the
    item's n-grams found, and kept). The figures: ``documents`` scanned, eval ``ngrams``,
    ``dropped`` (found in more documents than ``max_df`` allows), ``items`` and
    ``unmatchable`` (items whose every n-gram was dropped)."""

    hits: List[Dict[str, Any]] = field(default_factory=list)
    documents: int = 0
    ngrams: int = 0
    dropped: int = 0
    items: int = 0
    unmatchable: int = 0


def _max_df(max_df: Union[int, float, str, None]) -> Optional[str]:
    """``max_df`` as the native side reads it: ``None`` (the default), ``"none"``, a count
    or a share."""
    if max_df is None or isinstance(max_df, str):
        return max_df
    if isinstance(max_df, bool):
        raise TypeError("max_df is a count (int), a share (float) or 'none', not a bool")
    if isinstance(max_df, numbers.Integral):  # int, numpy's integers
        return str(int(max_df))
    return repr(float(max_df))


def decontaminate(
    texts: Any,
    evals: Mapping[str, Iterable[Union[str, Tuple[str, str]]]],
    *,
    ngram: Optional[int] = None,
    min_overlap: Optional[float] = None,
    max_df: Union[int, float, str, None] = None,
) -> Contamination:
    """The eval items found in ``texts``: word n-grams of each item (after a normalization
    that ignores case, Unicode form, punctuation, white space and line breaks) found in a
    document, each verified word by word, so no hash collision is reported.

    ``evals`` maps each eval set's name to its items: ``(id, text)`` pairs, or texts (their
    ids are their positions); names are read as ``str``, so two that read the same (``1``
    and ``"1"``) are refused. ``ngram`` (10 by default) is the n-gram's length in words; an
    item shorter than that matches only whole. A document is contaminated by an item when
    the share of the item's n-grams it holds reaches ``min_overlap`` (0.2). N-grams found in
    more than ``max_df`` documents (1000; an ``int`` count, a ``float`` share of the
    documents, or ``"none"``) are dropped: boilerplate says nothing about contamination.

    >>> import simhash_rs
    >>> corpus = ["Trivia night! WHICH planet is known as\\nthe red planet -- mars, of course.",
    ...           "Nothing to see here."]
    >>> quiz = [("q1", "Which planet is known as the Red Planet? Mars."),
    ...         ("q2", "Who wrote the novel Moby-Dick?")]
    >>> found = simhash_rs.decontaminate(corpus, {"quiz": quiz}, ngram=4)
    >>> [(h["doc"], h["eval"], h["item"], h["overlap"], h["longest"]) for h in found.hits]
    [(0, 'quiz', 'q1', 1.0, 9)]
    >>> start, end = found.hits[0]["spans"][0]
    >>> corpus[0][start:end]
    'WHICH planet is known as\\nthe red planet -- mars'
    """
    native = _native.Contamination(ngram, min_overlap, _max_df(max_df))
    names: Dict[str, Any] = {}
    for name, items in evals.items():
        if isinstance(items, (str, bytes)):
            raise TypeError(
                f"evals[{name!r}] is one {type(items).__name__}, not its items: give a list of "
                f"texts or (id, text) pairs, e.g. {{{name!r}: [text]}}"
            )
        if str(name) in names:
            raise ValueError(f"eval sets {names[str(name)]!r} and {name!r} have one name, {str(name)!r}")
        names[str(name)] = name
        for position, item in enumerate(items):
            item_id, text = (str(position), item) if isinstance(item, str) else item
            native.add_item(str(name), str(item_id), text)
    for start, chunk in chunks(texts):
        native.scan(chunk, start)
    hits, figures = native.finish()
    return Contamination(hits=hits, **figures)
