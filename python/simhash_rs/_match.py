"""Matching a corpus: :func:`pairs`, :func:`dedup` and :func:`clusters`, by either method,
as the ``simhash`` command decides them.

The matching arguments go to the native matcher as the caller gave them (``None`` when not
given): the settings contract (``simhash_index::settings``, the one the command maps its
flags onto) resolves ``auto``, fills in the defaults and checks them, once."""

from __future__ import annotations

from typing import Any, Hashable, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _native
from ._results import DedupResult, PageSource, relation_names, reusable
from ._texts import chunks, lowest_id_ranks, positions_or, templates_arg


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
    spill: bool,
    templates: Optional[str],
) -> Any:
    """The native matcher of ``texts``, made with the arguments as given: it resolves
    them (``m.method``, ``m.settings()``) and refuses what the command refuses."""
    m = _native.Matcher(
        method, preset, window, jaccard, lsh_threshold, num_perm, k, blocks, bool(spill), templates_arg(templates)
    )
    for start, chunk in chunks(texts):
        m.add(chunk, start)
    return m


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

    A text identical to an earlier one (the same shingle set and words in the same order,
    or fingerprint) is paired with the first of them only, and other pairs are listed
    between such first texts: a flood of copies gives one pair per copy, not one per pair
    of copies. ``ids`` default to positions.

    Memory: minhash keeps each text's shingle set (8 bytes a shingle) and band hashes;
    ``spill=True`` writes them to temporary files (in ``TMPDIR``), as the ``simhash``
    command does, so that a corpus larger than memory can be matched. The answers are the
    same either way. An unwritable ``TMPDIR`` raises ``OSError``.

    ``templates`` (minhash): ``"remove"`` (the default) lists pairs of the same text and of
    template siblings, ``"keep"`` the same text only; two texts that both have content of
    their own are never listed (see :func:`dedup`), as ``simhash pairs --templates``.
    """
    m = _matcher(texts, method, preset, window, jaccard, lsh_threshold, num_perm, k, blocks, spill, templates)
    a, b, score = m.pairs()
    ids = positions_or(ids, len(m))
    if m.method == "simhash":
        return [(ids[x], ids[y], int(s)) for x, y, s in zip(a.tolist(), b.tolist(), score.tolist())]
    return [(ids[x], ids[y], s) for x, y, s in zip(a.tolist(), b.tolist(), score.tolist())]


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
    m = _matcher(texts, method, preset, window, jaccard, lsh_threshold, num_perm, k, blocks, spill, templates)
    rank = None
    if ids is not None:
        ids = positions_or(ids, len(m))
    if keep == "lowest-id":
        rank = lowest_id_ranks(positions_or(ids, len(m)))
    of, similarity, relation, run = m.dedup(keep if keep != "lowest-id" else "first", rank)
    page = PageSource(run, ids, texts if reusable(texts) else None)
    return DedupResult(
        keep=of < 0,
        duplicate_of=of,
        similarity=similarity,
        method=m.method,
        relation=relation_names(relation, m.method),
        _page=page,
    )


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
    m = _matcher(texts, method, preset, window, jaccard, lsh_threshold, num_perm, k, blocks, spill, templates)
    return m.clusters()
