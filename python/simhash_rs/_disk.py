"""The persistent index on disk: :class:`Index`, the one ``simhash index`` and ``simhash
dedup --against`` use."""

from __future__ import annotations

import dataclasses
import itertools
import os
import threading
from typing import Any, Hashable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._results import AddResult, DedupResult, relation_names
from ._texts import chunks, lowest_id_ranks, positions_or, templates_arg


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
        path, or an empty directory), creates it with these settings and, for the rest, the
        settings contract's defaults, as ``simhash index add`` makes a new index: method
        ``"auto"`` (``None``) is minhash, or simhash for ``k``, ``blocks`` or the ``moz``
        and ``fork`` presets.

        On an existing index, each setting given must equal the stored one: a
        ``ValueError`` names each that differs. No index without ``create`` is a
        ``FileNotFoundError`` (so a mistyped path creates nothing); a damaged index is a
        :class:`CorruptIndexError`, and so is a directory that holds files but no
        ``MANIFEST`` (something else, or an index whose manifest was lost): nothing is
        created over it and nothing in it is changed.
        """
        # As given (None: not given): the native side resolves them by the contract, or
        # lays them over the index's own.
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
                    for start, chunk in chunks(texts):
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
        for start, chunk in chunks(texts):
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
        --against`` tells them: it is left out of its own matches and kept, as the index
        holds it (a text earlier in the batch cannot remove it), and with ``update=True`` it
        is not added again (``added.already`` counts it). A text whose first match in
        the index is such a copy of a text kept here names that text in ``duplicate_of``.
        So rerunning a committed ``dedup(..., update=True)`` decides what it decided and
        adds nothing. A kept text whose id the index holds with other content is kept and
        not added (``added.refused`` lists it). Texts without ``ids`` are never their own
        indexed copy.

        ``templates`` (a MinHash index): which relations remove a text, as :func:`dedup`'s
        (``"remove"``, the default: the same text and template siblings; ``"keep"``: the
        same text only); a text with content of its own is never removed.
        """
        templates = templates_arg(templates)  # before the writer's lock is taken
        if keep not in ("first", "longest", "lowest-id"):
            raise ValueError(f"keep must be 'first', 'longest' or 'lowest-id', not {keep!r}")
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

    def _dedup(self, texts: Iterable[str], ids: Any, keep: str, writer: Any, templates: Optional[str]) -> Any:
        """The dedup against the index's current state; with a ``writer``, the kept texts
        are added to it (not committed) and the result comes with the positions added, in
        the order added, and how many the index already held."""
        d = self._native.deduper(templates)
        labels = None if ids is None else list(ids)
        for start, chunk in chunks(texts):
            if labels is None:
                d.add(chunk, start)
                continue
            n = chunk[3] if isinstance(chunk, tuple) else len(chunk)
            if start + n > len(labels):
                raise ValueError(f"fewer ids ({len(labels)}) than texts")
            d.add(chunk, start, [i if isinstance(i, str) else str(i) for i in labels[start : start + n]])
        n = len(d)
        labels = positions_or(labels, n)
        rank = lowest_id_ranks(labels) if keep == "lowest-id" else None
        of, similarity, indexed, relation = d.finish("first" if keep == "lowest-id" else keep, rank)
        kept = (of < 0) & np.array([i is None for i in indexed], dtype=bool)
        method = self.settings()["method"]
        result = DedupResult(
            keep=kept,
            duplicate_of=of,
            similarity=similarity,
            method=method,
            indexed=indexed,
            relation=relation_names(relation, method),
        )
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
