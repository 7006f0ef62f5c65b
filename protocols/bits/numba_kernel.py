"""Column counts of packed reports, compiled with numba (the optional extra ``fast``).

Importing this module imports numba; :mod:`protocols.bits.accel` decides when that is worth it.
The kernel is the carry-save scheme of :mod:`protocols.bits.bitslice` (Harley–Seal, per position)
in compiled loops over 64-bit words. Rows are added two at a time into five running bit
planes (counts 1, 2, 4, 8, 16 of every position): a pair is one full adder per word, done in
two passes (the first row with a half adder, then the second row), which leaves a carry of
weight 2. The carries climb the adder tree of a group of 32 rows in post-order: at each level
a carry either waits in a held row for the carry of the same weight from a later pair, or
meets the one waiting there in a full adder with that level's plane, whose carry climbs on.
Each group thus ends with one carry of weight 32, added into eight byte-lane counters per
word (lane i of counter k counts bit 8i + k), which are flushed to int64 every 255 groups,
before a lane can overflow; at the end, the planes and the carries still held go through the
lanes with their weights. Every pass is a loop over the words of one row, which the compiler
vectorises, and the rows are read one after another, so memory is read as one sequential
stream whatever the row width. (The loop before read word j of the 32 rows of a group at
once: 32 streams one row apart, which the hardware prefetchers did not follow once rows were
1 KiB wide; docs/measurements.md, "Speed and scale", gives both rates.) Rows narrower than
:data:`_SUPER_BYTES`, or whose width is not a multiple of 8 bytes, are read as super-rows of
several reports, so that the loops are long enough to vectorise.
Compiled code is cached on disk (``cache=True``, in ``__pycache__`` or ``NUMBA_CACHE_DIR``):
compilation happens once per installation, later processes only load it.

References
----------
W. Muła, N. Kurz, D. Lemire, "Faster population counts using AVX2 instructions", The Computer
Journal 61(1), 2018 (the Harley–Seal carry-save adder tree, here kept per bit position).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_GROUP = 32                 # rows per adder tree (five planes, then a carry of weight 32)
_LANE_GROUPS = 255          # groups counted in byte lanes between flushes
_SUPER_BYTES = 256          # narrower rows are read as super-rows at least this wide (of
                            # 32 to 2048 bytes, 256 and 512 were fastest in a prototype run)
_CHUNK_BYTES = 1 << 24      # unaligned input is copied this many bytes at a time
_ONES = np.uint64(0x0101010101010101)


@njit(inline="always")
def _csa(a, b, c):
    """Full adder on words: (sum, carry) = (a ⊕ b ⊕ c, maj(a, b, c))."""
    u = a ^ b
    return u ^ c, (a & b) | (u & c)


@njit(cache=True)
def _flush(lanes, out, weight):
    """out[64j + 8i + k] += weight · (byte i of lanes[k, j]); lanes are cleared."""
    for j in range(lanes.shape[1]):
        for k in range(8):
            v = lanes[k, j]
            if v:                                 # skip the work for words left at zero
                for i in range(8):
                    out[64 * j + 8 * i + k] += weight * np.int64((v >> np.uint64(8 * i)) & np.uint64(0xFF))
                lanes[k, j] = 0


@njit(inline="always")
def _add_lanes(row, lanes, weight):
    """lanes[k, j] += weight · (bits k, k + 8, ..., k + 56 of row[j], one per byte)."""
    for j in range(row.shape[0]):
        for k in range(8):
            lanes[k, j] += weight * ((row[j] >> np.uint64(k)) & _ONES)


@njit(cache=True)
def count_words(words, out):
    """Add to ``out[b]`` the number of rows of ``words`` with bit b set, for b < 64w.

    Pair p of a group (p = 0, ..., 15) leaves a carry of weight 2; it meets the carries held
    at levels 1, 2, ... while bits 0, 1, ... of p are set, and is held at the first level
    whose bit is clear (after the 16th pair it has weight 32 and goes to the byte lanes).
    So after the last pair, level k holds a carry iff bit k − 1 of the number of pairs in
    the last group is set. An odd last row is paired with a row of zeros.

    Parameters
    ----------
    words : ndarray of uint64, shape (n, w), C-contiguous
        Rows; bit b of a row is bit b % 64 of word b // 64.
    out : ndarray of int64, shape (64 w,)
        Running counts, updated in place.
    """
    n, w = words.shape
    planes = np.zeros((5, w), np.uint64)          # bit k of the count of every position
    held = np.zeros((5, w), np.uint64)            # held[k]: a carry of weight 2^k (k ≥ 1)
    ones, half = planes[0], held[0]               # held[0]: the half adder's carry
    carry, zeros = np.empty(w, np.uint64), np.zeros(w, np.uint64)
    lanes = np.zeros((8, w), np.uint64)
    pairs = (n + 1) // 2
    for pair in range(pairs):
        p = pair % (_GROUP // 2)
        if p == 0 and pair and pair // (_GROUP // 2) % _LANE_GROUPS == 0:
            _flush(lanes, out, _GROUP)
        a, b = words[2 * pair], words[2 * pair + 1] if 2 * pair + 1 < n else zeros
        for j in range(w):
            half[j], ones[j] = ones[j] & a[j], ones[j] ^ a[j]
        for j in range(w):
            u = ones[j]
            ones[j], carry[j] = u ^ b[j], half[j] | (u & b[j])
        level = 1
        while p >> (level - 1) & 1:
            plane, other = planes[level], held[level]
            for j in range(w):
                plane[j], carry[j] = _csa(plane[j], other[j], carry[j])
            level += 1
        if level < 5:
            held[level] = carry
        else:
            _add_lanes(carry, lanes, np.uint64(1))
    if pairs >= _GROUP // 2:                      # lanes left at zero otherwise
        _flush(lanes, out, _GROUP)
    last = pairs % (_GROUP // 2)                  # the planes and held carries, at most
    for level in range(5):                        # 31 + 30 in a byte lane
        _add_lanes(planes[level], lanes, np.uint64(1) << np.uint64(level))
        if level and last >> (level - 1) & 1:
            _add_lanes(held[level], lanes, np.uint64(1) << np.uint64(level))
    _flush(lanes, out, 1)


def super_rows(width: int) -> int:
    """Reports per super-row for rows of ``width`` bytes: the least multiple m of
    8 / gcd(width, 8) with m · width ≥ :data:`_SUPER_BYTES` (m = 1 from 256 bytes, L = 2048)."""
    unit = 8 // math.gcd(width, 8)
    return unit * max(1, -(-_SUPER_BYTES // (width * unit)))


def column_counts(packed: np.ndarray) -> tuple[np.ndarray, int]:
    """Column counts of packed little-endian rows, all but the last few.

    Groups of m = :func:`super_rows` (width) rows are read as one super-row of whole 64-bit
    words; input that is not 8-byte aligned is copied 16 MiB at a time.

    Parameters
    ----------
    packed : ndarray of uint8, shape (n, width), C-contiguous
        Packed rows, bit j of a row being bit j % 8 of byte j // 8.

    Returns
    -------
    counts : ndarray of int64, shape (8 width,)
        counts[j] = number of rows among the first ``rows`` with bit j set.
    rows : int
        n rounded down to a multiple of m; the caller counts the n − rows < m rows left.
    """
    n, width = packed.shape
    m = super_rows(width)
    rows = n // m * m
    out = np.zeros(8 * width * m, np.int64)
    supers = packed[:rows].reshape(-1, width * m)
    aligned = supers.ctypes.data % 8 == 0
    step = max(1, len(supers) if aligned else _CHUNK_BYTES // (width * m))
    for start in range(0, len(supers), step):
        chunk = supers[start:start + step]
        count_words((chunk if aligned else chunk.copy()).view(np.uint64), out)
    return (out.reshape(m, 8 * width).sum(axis=0) if m > 1 else out), rows
