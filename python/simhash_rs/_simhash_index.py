"""The in-memory Hamming index: :class:`SimhashIndex`."""

from __future__ import annotations

from typing import Any, Hashable, List, Optional, Tuple

from . import _native


class SimhashIndex:
    """Fingerprints under ids (any hashable), and every stored fingerprint within ``k``
    bits of a query, exactly (block-permutation tables: Manku, Jain & Das Sarma, 2007).
    ``k`` and ``blocks`` when not given: the simhash method's (3 bits; the planner's
    blocks).

    >>> index = SimhashIndex(k=3)
    >>> index.add("a", 0b1011)
    >>> index.add("b", 0b1000)
    >>> index.add("c", 2**64 - 1)
    >>> index.query(0b1111)
    [('a', 1), ('b', 3)]
    >>> index.find_all()
    [('a', 'b', 2)]
    """

    def __init__(self, k: Optional[int] = None, blocks: Optional[int] = None) -> None:
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
