"""Packed bit reports.

Bit order is little-endian, everywhere in the project: bit j of a report is bit ``j % 8`` of
byte ``j // 8``, as ``numpy.packbits(..., bitorder="little")`` and ``bitarray(endian="little")``.
A report of d bits takes ``ceil(d / 8)`` bytes; padding bits beyond d must be zero.
"""

from __future__ import annotations

import numpy as np

from ._validate import check_array
from .errors import IncompatibleError

BITORDER = "little"
_LANE_ROWS = 255                # rows summed in uint8 lanes before overflow could occur


def nbytes(d):
    """Bytes in one packed report of ``d`` bits."""
    return (int(d) + 7) // 8


def pack(bits):
    """Pack a bool matrix (n, d) into uint8 rows (n, ceil(d/8)), little-endian bit order."""
    return np.packbits(np.asarray(bits, dtype=bool), axis=-1, bitorder=BITORDER)


def unpack(packed, d):
    """Unpack uint8 rows into a bool matrix (n, d)."""
    return np.unpackbits(packed, axis=-1, count=int(d), bitorder=BITORDER).astype(bool)


def check_packed(reports, d, name="reports"):
    """Validate packed reports of ``d`` bits: dtype uint8, width ceil(d/8), zero padding bits."""
    arr = check_array(reports, np.uint8, (nbytes(d),), name)
    pad = 8 * nbytes(d) - int(d)
    if pad and arr.size and (arr[:, -1] >> np.uint8(8 - pad)).any():
        raise IncompatibleError(
            f"{name} have bits set beyond bit {d - 1}: they come from a mechanism with another d")
    return arr


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def row_weights(packed):
    """Number of ones in each packed row (int64)."""
    return _POPCOUNT[np.asarray(packed, dtype=np.uint8)].sum(axis=1, dtype=np.int64)


def dyadic_bits(random_bytes, numerator, bits):
    """Packed bits, each 1 with probability numerator / 2^bits, from ``bits`` random byte planes.

    ``random_bytes`` has shape (bits, ...): bit-plane i holds bit i (most significant first) of
    a uniform ``bits``-bit number per output bit; the output bit is [number < numerator],
    evaluated bit-sliced on whole bytes (8 output bits per operation).
    """
    less = np.zeros(random_bytes.shape[1:], dtype=np.uint8)
    equal = np.full(random_bytes.shape[1:], 0xFF, dtype=np.uint8)
    for i in range(bits):
        plane = random_bytes[i]
        if (numerator >> (bits - 1 - i)) & 1:
            less |= equal & ~plane
            equal &= plane
        else:
            equal &= ~plane
    return less


def column_sums(packed, d):
    """Number of reports with bit j set, for j < d, as int64.

    Rows are unpacked 255 at a time and summed in uint8 lanes (exact: at most 255 per lane,
    and byte-wide SIMD additions), then added to int64 totals: memory O(255·d).
    """
    sums = np.zeros(int(d), dtype=np.int64)
    for start in range(0, packed.shape[0], _LANE_ROWS):
        chunk = np.unpackbits(packed[start:start + _LANE_ROWS], axis=1, count=int(d), bitorder=BITORDER)
        sums += np.add.reduce(chunk, axis=0, dtype=np.uint8)
    return sums
