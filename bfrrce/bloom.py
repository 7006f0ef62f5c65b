"""Bloom filters with l seeded MurmurHash3 hashes, vectorised over batches, packed bits.

Bit k of a value's filter is set at ``mmh3.hash(key, seed + k, signed=False) % L`` for
k = 0..l−1, with the canonical key bytes of :mod:`protocols.hashing`: ``bytes`` as is, ``str``
as UTF-8, integers as 8-byte little-endian signed two's complement. A client in another
language reproduces a filter from these three lines. Packed filters use little-endian bit
order (bit j is bit ``j % 8`` of byte ``j // 8``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from protocols import bits
from protocols._validate import check_int
from protocols.errors import LDPValueError
from protocols.hashing import hash_keys

# Positions are 32-bit hashes mod L, so columns beyond 2**32 could never be set; and a report is
# L/8 bytes, the column sums 8L bytes: L = 2**24 already means 2 MiB per user and 128 MiB of sums.
MAX_L = 2 ** 24


@dataclass(frozen=True, kw_only=True)
class BloomFilter:
    """A Bloom filter of ``L`` bits (2 <= L <= ``MAX_L`` = 2**24) with ``l`` hashes seeded
    ``seed, …, seed + l − 1``."""

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

    def positions(self, values):
        """Bit positions (n, l) int64 of each value (repeats possible when hashes collide)."""
        if len(values) == 0:
            raise LDPValueError("values is empty")
        seeds = self.seed + np.arange(self.l)
        return (hash_keys(values, seeds).astype(np.int64) % self.L)

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
