"""Inputs: texts cut into chunks for the native code (a list, any iterable of ``str``, or
the buffers of a pyarrow / polars string column), and ids (positions by default, and the
``keep="lowest-id"`` order)."""

from __future__ import annotations

import itertools
import re
from typing import Any, Hashable, Iterator, List, Optional, Sequence, Tuple

#: Texts handed to the native code per call: the unit of parallel work and of
#: interruption (Ctrl-C is seen between chunks, and during searches).
CHUNK = 8192


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


def chunks(texts: Any, size: int = CHUNK) -> Iterator[Tuple[int, Any]]:
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


def positions_or(ids: Optional[Sequence[Hashable]], n: int) -> Sequence[Hashable]:
    if ids is None:
        return range(n)
    ids = list(ids)
    if len(ids) != n:
        raise ValueError(f"{len(ids)} ids for {n} texts")
    return ids


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def lowest_id_ranks(ids: Sequence[Hashable]) -> List[int]:
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


def templates_arg(templates: Any) -> Optional[str]:
    """``templates`` as the native code takes it: ``None`` or a string (its values are
    checked there, as the command checks ``--templates``); another type is refused by
    name, not as a bare conversion error."""
    if templates is not None and not isinstance(templates, str):
        raise TypeError(f"templates must be 'remove', 'keep' or None, not {templates!r}")
    return templates
