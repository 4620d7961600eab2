"""Fingerprints and signatures: :func:`fingerprint`, :func:`fingerprints`, :func:`hamming`
and :class:`MinHasher`."""

from __future__ import annotations

import functools
from typing import Any, Iterable, Optional, Tuple, Union

import numpy as np

from . import _native
from ._texts import chunks


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
    for start, chunk in chunks(texts):
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
    the signatures the default method's LSH bands are cut from: ``num_perm`` slots (the
    matching methods' signature length when not given: 128), ``seed`` for the permutations.

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
        self, num_perm: Optional[int] = None, seed: int = 0, preset: str = "default", window: Optional[int] = None
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
        rows = [self._native.signatures(chunk, start) for start, chunk in chunks(texts)]
        if not rows:
            return np.zeros((0, self.num_perm), dtype=np.uint32)
        return np.concatenate(rows)

    def estimate_jaccard(self, a: "np.ndarray", b: "np.ndarray") -> float:
        """The share of equal slots: an estimate of the two texts' Jaccard similarity."""
        return float(np.mean(np.asarray(a) == np.asarray(b)))

    def __repr__(self) -> str:
        n = self._native
        return f"MinHasher(num_perm={n.num_perm}, seed={n.seed}, preset={n.preset!r}, window={n.window})"
