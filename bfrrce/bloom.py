"""Bloom filters with l seeded MurmurHash3 hashes, vectorised over batches, packed bits.

Bit k of a value's filter is set at ``mmh3.hash(key, seed + k, signed=False) % L`` for
k = 0..l−1, with the canonical key bytes of :mod:`protocols.core.hashing`: ``bytes`` as is, ``str``
as UTF-8, integers as 8-byte little-endian signed two's complement. A client in another
language reproduces a filter from these three lines. Packed filters use little-endian bit
order (bit j is bit ``j % 8`` of byte ``j // 8``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from protocols.core.validation import check_int
from protocols.errors import LDPValueError
from protocols.core.hashing import hash_buffer, hash_keys

_MEMO: dict = {}        # id(array) -> (weak reference to it, {seed: uint32 hashes})


def memoize(values) -> np.ndarray:
    """A read-only copy of ``values`` whose hashes :meth:`BloomFilter.positions` keeps.

    Every Bloom filter that later asks for the positions of this very array (any L, l and
    seed) hashes each seed once and reuses it: evaluations that run many trials on the same
    values hash them once. The cache lives as long as the returned array.

    Parameters
    ----------
    values : sequence or numpy.ndarray
        Keys (:mod:`protocols.core.hashing`).

    Returns
    -------
    numpy.ndarray
        A new array that owns its data, not writeable (so the cached hashes stay its hashes).
    """
    arr = np.array(values)
    arr.flags.writeable = False
    key = id(arr)
    ref = weakref.ref(arr, lambda r: _MEMO.pop(key) if _MEMO.get(key, (None,))[0] is r else None)
    _MEMO[key] = (ref, {})
    return arr


def _hashes(values, seeds):
    """hash_keys(values, seeds), from the memo when ``values`` is a :func:`memoize` array."""
    entry = _MEMO.get(id(values))
    if entry is None or entry[0]() is not values:
        return hash_keys(values, seeds)
    cache = entry[1]
    missing = [s for s in seeds if s not in cache]
    if missing:
        cache.update(zip(missing, hash_keys(values, missing).T))
    return np.stack([cache[s] for s in seeds], axis=1)

# Positions are 32-bit hashes mod L, so columns beyond 2**32 could never be set; and a report is
# L/8 bytes, the column sums 8L bytes: L = 2**24 already means 2 MiB per user and 128 MiB of sums.
MAX_L = 2 ** 24


@dataclass(frozen=True, kw_only=True)
class BloomFilter:
    """A Bloom filter of ``L`` bits with ``l`` MurmurHash3 hashes seeded ``seed, …, seed + l − 1``.

    Bit k of a value's filter is ``mmh3.hash(key, seed + k, signed=False) % L`` on the canonical
    key bytes (module docstring).

    Parameters
    ----------
    L : int
        Bits per filter, 2 <= L <= ``MAX_L`` = 2**24 (a report is L/8 bytes).
    l : int
        Hashes per value, 1 <= l <= L.
    seed : int
        First hash seed, 0 <= seed <= 2**32 − l.

    Raises
    ------
    LDPTypeError, LDPValueError
        A parameter that is not an integer or out of range.

    References
    ----------
    B. H. Bloom, "Space/time trade-offs in hash coding with allowable errors", CACM 13(7), 1970.
    """

    L: int
    l: int = 1
    seed: int = 0

    def __post_init__(self):
        L = check_int(self.L, "L", 2, MAX_L)
        l = check_int(self.l, "l", 1)
        if l > L:
            raise LDPValueError(f"l must be <= L, got l={l} > L={L}")
        seed = check_int(self.seed, "seed", 0, 2 ** 32 - l)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "l", l)
        object.__setattr__(self, "seed", seed)

    def positions(self, values) -> np.ndarray:
        """Bit positions of each value's filter.

        Parameters
        ----------
        values : sequence or numpy.ndarray
            Keys (bytes, str or integers); a :func:`memoize` array reuses its hashes.

        Returns
        -------
        numpy.ndarray
            int64 (n, l); a row may repeat a position when two of its hashes collide.

        Raises
        ------
        LDPValueError
            No values.
        LDPTypeError
            A key without canonical bytes.
        """
        if len(values) == 0:
            raise LDPValueError("values is empty")
        return (_hashes(values, self.seeds) % np.uint32(self.L)).astype(np.int64)

    @property
    def seeds(self) -> list:
        """The hash seeds seed, …, seed + l − 1."""
        return list(range(self.seed, self.seed + self.l))

    def key_positions(self, data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Bit positions of keys stored back to back (:func:`protocols.core.hashing.hash_buffer`).

        Parameters
        ----------
        data : numpy.ndarray
            uint8, the canonical key bytes concatenated.
        offsets : numpy.ndarray
            int64 (k + 1,): key i is ``data[offsets[i]:offsets[i + 1]]``.

        Returns
        -------
        numpy.ndarray
            int64 (k, l): the positions :meth:`positions` gives for the same canonical keys.
        """
        return (hash_buffer(data, offsets, self.seeds) % np.uint32(self.L)).astype(np.int64)

    def bits(self, values) -> np.ndarray:
        """The filters of single values as a bool matrix.

        Parameters
        ----------
        values : sequence or numpy.ndarray
            Keys, as :meth:`positions`.

        Returns
        -------
        numpy.ndarray
            bool (n, L).
        """
        pos = self.positions(values)
        out = np.zeros((pos.shape[0], self.L), dtype=bool)
        out[np.arange(pos.shape[0])[:, None], pos] = True
        return out

    def set_bits(self, sets) -> np.ndarray:
        """The filters of sets of items: the union of the items' filters.

        Parameters
        ----------
        sets : sequence of sequences
            One collection of keys per party (may be empty).

        Returns
        -------
        numpy.ndarray
            bool (len(sets), L).

        Raises
        ------
        LDPValueError
            No sets.
        """
        sets = [list(s) for s in sets]
        if not sets:
            raise LDPValueError("sets is empty")
        sizes = np.array([len(s) for s in sets])
        out = np.zeros((len(sets), self.L), dtype=bool)
        items = [item for s in sets for item in s]
        if items:
            pos = self.positions(items)
            owner = np.repeat(np.arange(len(sets)), sizes)
            out[owner[:, None], pos] = True
        return out

    def column_counts(self, positions: np.ndarray, weights=1) -> np.ndarray:
        """For each column j, Σ over rows of weight·[j among the row's positions].

        A row's repeated positions (hash collisions inside one filter) count once. With the
        positions of distinct values and their user counts as weights this is t_j, the number of
        users whose filter has bit j; with unit weights, the number of values touching column j.

        Parameters
        ----------
        positions : numpy.ndarray
            int (rows, l), as :meth:`positions`.
        weights : int or numpy.ndarray
            One integer weight per row, or one for all.

        Returns
        -------
        numpy.ndarray
            int64 (L,).
        """
        pos = np.sort(np.asarray(positions, dtype=np.int64), axis=1)
        first = np.ones(pos.shape, dtype=bool)
        first[:, 1:] = pos[:, 1:] != pos[:, :-1]
        w = np.broadcast_to(np.asarray(weights, dtype=np.int64).reshape(-1, 1), pos.shape)
        return np.bincount(pos[first], weights=w[first], minlength=self.L).astype(np.int64)
