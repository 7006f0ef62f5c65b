"""Column counts of packed reports, compiled with numba (the optional extra ``fast``).

Importing this module imports numba; :mod:`protocols.accel` decides when that is worth it.
The kernel is the carry-save scheme of :mod:`protocols.bitslice` (Harley–Seal, per position)
in one compiled loop: groups of 32 rows of 64-bit words go through a tree of 31 full adders
into five running bit planes (counts 1, 2, 4, 8, 16 of every position), and the carry of
weight 32 left by each group is added into eight byte-lane counters per word (lane i of
counter k counts bit 8i + k), which are flushed to int64 every 255 groups, before a lane can
overflow. The loop over the words of a row is the inner one, so the compiler vectorises it.
Reports whose width is not a multiple of 8 bytes are read as super-rows of several reports.
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

_GROUP = 32                 # rows per adder tree (five planes); 16 was slower in a prototype run
_LANE_GROUPS = 255          # groups counted in byte lanes between flushes
_CHUNK_BYTES = 1 << 24      # unaligned input is copied this many bytes at a time
_ONES = np.uint64(0x0101010101010101)


@njit(inline="always")
def _csa(a, b, c):
    """Full adder on words: (sum, carry) = (a ⊕ b ⊕ c, maj(a, b, c))."""
    u = a ^ b
    return u ^ c, (a & b) | (u & c)


@njit(inline="always")
def _add4(o, t, rows, r, j):
    """Add word j of rows r..r+3 into planes (o, t); returns them and the carry of weight 4."""
    o, ta = _csa(o, rows[r, j], rows[r + 1, j])
    o, tb = _csa(o, rows[r + 2, j], rows[r + 3, j])
    t, f = _csa(t, ta, tb)
    return o, t, f


@njit(inline="always")
def _add8(o, t, f, rows, r, j):
    o, t, fa = _add4(o, t, rows, r, j)
    o, t, fb = _add4(o, t, rows, r + 4, j)
    f, g = _csa(f, fa, fb)
    return o, t, f, g


@njit(inline="always")
def _add16(o, t, f, g, rows, r, j):
    o, t, f, ga = _add8(o, t, f, rows, r, j)
    o, t, f, gb = _add8(o, t, f, rows, r + 8, j)
    g, h = _csa(g, ga, gb)
    return o, t, f, g, h


@njit(cache=True)
def _flush(lanes, out, weight):
    """out[64j + 8i + k] += weight · (byte i of lanes[k, j]); lanes are cleared."""
    for k in range(8):
        for j in range(lanes.shape[1]):
            v = lanes[k, j]
            for i in range(8):
                out[64 * j + 8 * i + k] += weight * np.int64((v >> np.uint64(8 * i)) & np.uint64(0xFF))
            lanes[k, j] = 0


@njit(cache=True)
def _add_bits(row, out, weight):
    """out[b] += weight · (bit b of the uint64 row)."""
    for j in range(row.shape[0]):
        v = row[j]
        for b in range(64):
            out[64 * j + b] += weight * np.int64((v >> np.uint64(b)) & np.uint64(1))


@njit(cache=True)
def count_words(words, out):
    """Add to ``out[b]`` the number of rows of ``words`` with bit b set, for b < 64w.

    Parameters
    ----------
    words : ndarray of uint64, shape (n, w), C-contiguous
        Rows; bit b of a row is bit b % 64 of word b // 64.
    out : ndarray of int64, shape (64 w,)
        Running counts, updated in place.
    """
    n, w = words.shape
    planes = np.zeros((5, w), np.uint64)
    p1, p2, p4, p8, p16 = planes[0], planes[1], planes[2], planes[3], planes[4]
    lanes = np.zeros((8, w), np.uint64)
    groups = n // _GROUP
    for group in range(groups):
        if group % _LANE_GROUPS == 0 and group:
            _flush(lanes, out, _GROUP)
        r = _GROUP * group
        for j in range(w):
            o, t, f, g, ha = _add16(p1[j], p2[j], p4[j], p8[j], words, r, j)
            o, t, f, g, hb = _add16(o, t, f, g, words, r + 16, j)
            h, carry = _csa(p16[j], ha, hb)
            p1[j], p2[j], p4[j], p8[j], p16[j] = o, t, f, g, h
            for k in range(8):
                lanes[k, j] += (carry >> np.uint64(k)) & _ONES
    _flush(lanes, out, _GROUP)
    for weight in range(5):                       # the planes, then the rows after the last group
        _add_bits(planes[weight], out, np.int64(1) << weight)
    for r in range(_GROUP * groups, n):
        _add_bits(words[r], out, np.int64(1))


def column_counts(packed: np.ndarray) -> tuple[np.ndarray, int]:
    """Column counts of packed little-endian rows, all but the last few.

    Groups of m = 8 / gcd(width, 8) rows are read as one row of whole 64-bit words (m ≤ 8);
    input that is not 8-byte aligned is copied 16 MiB at a time.

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
    m = 8 // math.gcd(width, 8)
    rows = n // m * m
    out = np.zeros(8 * width * m, np.int64)
    supers = packed[:rows].reshape(-1, width * m)
    aligned = supers.ctypes.data % 8 == 0
    step = max(1, len(supers) if aligned else _CHUNK_BYTES // (width * m))
    for start in range(0, len(supers), step):
        chunk = supers[start:start + step]
        count_words((chunk if aligned else chunk.copy()).view(np.uint64), out)
    return out.reshape(m, 8 * width).sum(axis=0), rows
