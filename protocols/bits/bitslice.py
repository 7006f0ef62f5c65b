"""Per-position bit counts of many packed rows, by bit-sliced carry-save addition.

Counting, for every bit position, the rows that have it set by unpacking bits to bytes moves
8 bytes per packed byte. Here rows of 64-bit words are added with full adders applied bitwise
(64 positions per machine operation), so each packed byte is read once and the running counts
stay bit-sliced: plane w holds bit w of the count of every position, and a carry of weight 2^w
may wait in a pending row for a partner.

A full adder on rows a, b, c returns the sum a ⊕ b ⊕ c and the carry maj(a, b, c) =
(a ∧ b) ∨ (c ∧ (a ⊕ b)): five word operations. Rows are added in pairs into plane 0; two
carries of weight 2^w are added into plane w, and so on (the Harley–Seal scheme of Muła, Kurz
& Lemire 2018, "Faster population counts using AVX2 instructions", kept per position): five
operations per row on average, one numpy call each, on rows of ~64 KiB that stay in cache.
"""

from __future__ import annotations

import numpy as np

_xor, _and, _or = np.bitwise_xor, np.bitwise_and, np.bitwise_or


class BitSlicedCounter:
    """Running count of set bits at each position of uint64 rows of ``words`` words.

    ``add(rows)`` takes a (k, words) uint64 array (rows are read, never written);
    ``bit_planes()`` returns rows P_w such that the count at a position is Σ_w 2^w · (its bit
    in P_w). Memory: O(words · log₂ rows), whatever the number of rows added.

    Parameters
    ----------
    words : int
        uint64 words per row.
    """

    def __init__(self, words):
        self.words = int(words)
        self._planes = []
        self._pending = []
        self._free = []
        self._odd = None
        self._sum = np.empty(self.words, np.uint64)
        self._scratch = np.empty(self.words, np.uint64)

    def _add_pair(self, x, y, weight=0):
        """plane[weight] += x + y, the carries propagated to higher planes."""
        planes, pending, free, half, scratch = self._planes, self._pending, self._free, self._sum, self._scratch
        while True:
            while weight + 1 >= len(planes):
                planes.append(np.zeros(self.words, np.uint64))
                pending.append(None)
            plane = planes[weight]
            carry = free.pop() if free else np.empty(self.words, np.uint64)
            _xor(x, y, half)
            _and(x, y, carry)
            _and(plane, half, scratch)
            _or(carry, scratch, carry)
            _xor(plane, half, plane)
            if weight:                          # x and y are our carry rows, not the caller's
                free.append(x)
                free.append(y)
            weight += 1
            if pending[weight] is None:
                pending[weight] = carry
                return
            x, y = pending[weight], carry
            pending[weight] = None

    def add(self, rows):
        """Add every row of a (k, words) uint64 array."""
        start = 0
        if self._odd is not None and len(rows):
            self._add_pair(self._odd, rows[0])
            self._odd, start = None, 1
        stop = start + (len(rows) - start) // 2 * 2
        for i in range(start, stop, 2):
            self._add_pair(rows[i], rows[i + 1])
        if stop < len(rows):
            self._odd = rows[stop].copy()

    def bit_planes(self):
        """Rows P_0, P_1, …: the count at each position is Σ_w 2^w · (its bit in P_w).

        Waiting rows are first added into the planes (a few operations per plane).
        """
        if self._odd is not None:
            self._add_pair(self._odd, np.zeros(self.words, np.uint64))
            self._odd = None
        weight = 1
        while weight < len(self._pending):
            row, self._pending[weight] = self._pending[weight], None
            if row is not None and row.any():       # a zero carry ends the propagation
                self._add_pair(row, np.zeros(self.words, np.uint64), weight)
            weight += 1
        return list(self._planes)


def fold_halves(planes):
    """Bit planes of the sum of the two halves of a bit-sliced count.

    ``planes`` are equal-length rows (uint8 or uint64) of an even length 2h; plane w holds bit w of
    a count per position. Returns planes of length h whose count at position i is the count at i
    plus the count at i + h: a ripple-carry addition, five operations per plane. Not modified.

    Parameters
    ----------
    planes : list of numpy.ndarray
        Bit planes, least significant first, each of even length 2h.

    Returns
    -------
    list of numpy.ndarray
        Bit planes of length h (one more plane when the top carry is set).
    """
    h = len(planes[0]) // 2
    out, carry = [], None
    for plane in planes:
        a, b = plane[:h], plane[h:]
        total, next_carry = a ^ b, a & b
        if carry is not None:
            next_carry |= total & carry
            total ^= carry
        out.append(total)
        carry = next_carry
    if carry.any():
        out.append(carry)
    return out
