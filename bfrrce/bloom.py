"""Bloom filters with l seeded MurmurHash3 hashes, vectorised over batches, packed bits.

Bit k of a value's filter is set at ``mmh3.hash(key, seed + k, signed=False) % L`` for
k = 0..l−1, with the canonical key bytes of :mod:`protocols.hashing`: ``bytes`` as is, ``str``
as UTF-8, integers as 8-byte little-endian signed two's complement. A client in another
language reproduces a filter from these three lines. Packed filters use little-endian bit
order (bit j is bit ``j % 8`` of byte ``j // 8``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from protocols import bits
from protocols._validate import check_int
from protocols.errors import LDPValueError
from protocols.hashing import hash_buffer, hash_keys

_MEMO: dict = {}        # id(array) -> (weak reference to it, {seed: uint32 hashes})


def memoize(values) -> np.ndarray:
    """A read-only copy of ``values`` whose hashes :meth:`BloomFilter.positions` keeps.

    Every Bloom filter that later asks for the positions of this very array (any L, l and
    seed) hashes each seed once and reuses it: evaluations that run many trials on the same
    values hash them once. The cache lives as long as the returned array.

    Parameters
    ----------
    values : sequence or numpy.ndarray
        Keys (:mod:`protocols.hashing`).

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


@dataclass(frozen=True, kw_only=True)
class BloomFilter:
    """A Bloom filter of ``L`` bits with ``l`` hashes seeded ``seed, …, seed + l − 1``."""

    L: int
    l: int = 1
    seed: int = 0

    def __post_init__(self):
        L = check_int(self.L, "L", 2)
        l = check_int(self.l, "l", 1)
        if l > L:
            raise LDPValueError(f"l must be <= L, got l={l} > L={L}")
        seed = check_int(self.seed, "seed", 0, 2 ** 32 - l)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "l", l)
        object.__setattr__(self, "seed", seed)

    def positions(self, values):
        """Bit positions (n, l) int64 of each value (repeats possible when hashes collide)."""
        if len(values) == 0:
            raise LDPValueError("values is empty")
        return (_hashes(values, self.seeds) % np.uint32(self.L)).astype(np.int64)

    @property
    def seeds(self) -> list:
        """The hash seeds seed, …, seed + l − 1."""
        return list(range(self.seed, self.seed + self.l))

    def key_positions(self, data, offsets):
        """Bit positions (k, l) int64 of keys stored back to back (:func:`protocols.hashing.hash_buffer`):
        the positions :meth:`positions` gives for the same canonical keys."""
        return (hash_buffer(data, offsets, self.seeds) % np.uint32(self.L)).astype(np.int64)

    def bits(self, values):
        """Filters as a bool matrix (n, L)."""
        pos = self.positions(values)
        out = np.zeros((pos.shape[0], self.L), dtype=bool)
        out[np.arange(pos.shape[0])[:, None], pos] = True
        return out

    def encode(self, values):
        """Filters of single values, packed: uint8 (n, ceil(L/8))."""
        return bits.pack(self.bits(values))

    def set_bits(self, sets):
        """Filters of sets of items (the union of the items' filters): bool (len(sets), L)."""
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

    def contains(self, filter_bits, candidates):
        """Membership of each candidate in a filter given as a bool vector of L bits."""
        filter_bits = np.asarray(filter_bits, dtype=bool)
        if filter_bits.shape != (self.L,):
            raise LDPValueError(f"filter must have {self.L} bits, got shape {filter_bits.shape}")
        return filter_bits[self.positions(candidates)].all(axis=1)

    def column_counts(self, positions, weights=1):
        """For each column j, Σ over rows of weight·[j among the row's positions] (int64, L).

        A row's repeated positions (hash collisions inside one filter) count once. With
        positions of distinct values and their user counts as weights this is t_j, the number of
        users whose filter has bit j; with unit weights, the number of values touching column j.
        """
        pos = np.sort(np.asarray(positions, dtype=np.int64), axis=1)
        first = np.ones(pos.shape, dtype=bool)
        first[:, 1:] = pos[:, 1:] != pos[:, :-1]
        w = np.broadcast_to(np.asarray(weights, dtype=np.int64).reshape(-1, 1), pos.shape)
        return np.bincount(pos[first], weights=w[first], minlength=self.L).astype(np.int64)
