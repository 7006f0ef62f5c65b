"""Packed bit reports.

Bit order is little-endian, everywhere in the project: bit j of a report is bit ``j % 8`` of
byte ``j // 8``, as ``numpy.packbits(..., bitorder="little")`` and ``bitarray(endian="little")``.
A report of d bits takes ``ceil(d / 8)`` bytes; padding bits beyond d must be zero.
"""

from __future__ import annotations

import math

import numpy as np
from bitarray import bitarray

from protocols.bits import accel
from protocols.core.validation import check_array
from protocols.bits.bitslice import BitSlicedCounter, fold_halves
from protocols.errors import IncompatibleError

BITORDER = "little"
_LANE_ROWS = 255                # rows summed in uint8 lanes before overflow could occur
_SLAB_BYTES = 1 << 16           # bytes per bit-sliced row: a slab and its carries stay in cache; a tuning choice (benchmarks/aggregation.py)
_ALIGN_ROWS = 64                # slabs copied at a time when the reports are not 8-byte aligned


def nbytes(d):
    """Bytes in one packed report of ``d`` bits.

    Parameters
    ----------
    d : int
        Bits per report.

    Returns
    -------
    int
        ceil(d / 8).
    """
    return (int(d) + 7) // 8


def pack(bits):
    """Pack a bool matrix into uint8 rows, little-endian bit order (bit j in bit j % 8 of byte j // 8).

    Parameters
    ----------
    bits : array_like of bool
        (n, d) or (d,).

    Returns
    -------
    numpy.ndarray
        uint8 (n, ceil(d/8)) (or (ceil(d/8),)); padding bits are 0.
    """
    return np.packbits(np.asarray(bits, dtype=bool), axis=-1, bitorder=BITORDER)


def unpack(packed, d):
    """Unpack uint8 rows (little-endian bit order) into a bool matrix.

    Parameters
    ----------
    packed : numpy.ndarray
        uint8 (n, ceil(d/8)).
    d : int
        Bits per row.

    Returns
    -------
    numpy.ndarray
        bool (n, d).
    """
    return np.unpackbits(packed, axis=-1, count=int(d), bitorder=BITORDER).astype(bool)


def to_bitarray(row, d) -> bitarray:
    """One packed report (ceil(d/8) uint8) as a ``bitarray(endian="little")`` of its d bits.

    Bit j of the result is bit j of the report (bit ``j % 8`` of byte ``j // 8``), so client code
    can read and set report bits by index; :func:`from_bitarray` gives the packed row back.

    Parameters
    ----------
    row : array_like of uint8
        One packed report, ceil(d/8) bytes.
    d : int
        Bits in the report.

    Returns
    -------
    bitarray
        d bits, little-endian.
    """
    row = np.ascontiguousarray(row, dtype=np.uint8).reshape(-1)
    if row.size != nbytes(d):
        raise IncompatibleError(f"a packed report of {d} bits has {nbytes(d)} bytes, got {row.size}")
    bits = bitarray(endian=BITORDER)
    bits.frombytes(row.tobytes())
    del bits[int(d):]
    return bits


def from_bitarray(bits: bitarray) -> np.ndarray:
    """A report held as a ``bitarray`` (either endianness) as one packed row: uint8
    (ceil(len/8),), little-endian bit order, zero padding bits (the inverse of :func:`to_bitarray`).

    Parameters
    ----------
    bits : bitarray
        One report of d bits.

    Returns
    -------
    numpy.ndarray
        uint8 (ceil(d/8),).

    Raises
    ------
    IncompatibleError
        Not a bitarray.
    """
    if not isinstance(bits, bitarray):
        raise IncompatibleError(f"expected a bitarray, got {type(bits).__name__}")
    if bits.endian != BITORDER:
        bits = bitarray(bits, endian=BITORDER)
    return np.frombuffer(bits.tobytes(), dtype=np.uint8).copy()      # tobytes pads with zeros


def check_packed(reports, d, name="reports"):
    """Validate packed reports of ``d`` bits: dtype uint8, width ceil(d/8), zero padding bits.

    Parameters
    ----------
    reports : array_like
        Packed reports (n, ceil(d/8)).
    d : int
        Bits per report.
    name : str
        Name used in error messages.

    Returns
    -------
    numpy.ndarray
        The same reports (not copied).

    Raises
    ------
    LDPTypeError
        Not a uint8 array of two dimensions.
    IncompatibleError
        Another width, or padding bits set (the reports of a mechanism with another d).
    """
    arr = check_array(reports, np.uint8, (nbytes(d),), name)
    pad = 8 * nbytes(d) - int(d)
    if pad and arr.size and (arr[:, -1] >> np.uint8(8 - pad)).any():
        raise IncompatibleError(
            f"{name} have bits set beyond bit {d - 1}: they come from a mechanism with another d")
    return arr


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def row_weights(packed):
    """Number of ones in each packed row (Hamming weight).

    Parameters
    ----------
    packed : array_like of uint8
        Packed rows (n, bytes).

    Returns
    -------
    numpy.ndarray
        int64 (n,).
    """
    return _POPCOUNT[np.asarray(packed, dtype=np.uint8)].sum(axis=1, dtype=np.int64)


def dyadic_bits(random_bytes, numerator, bits):
    """Packed bits, each 1 with probability numerator / 2^bits, from ``bits`` random byte planes.

    ``random_bytes`` has shape (bits, ...): bit-plane i holds bit i (most significant first) of
    a uniform ``bits``-bit number per output bit; the output bit is [number < numerator],
    evaluated bit-sliced on whole bytes (8 output bits per operation).

    Parameters
    ----------
    random_bytes : numpy.ndarray
        uint8 (bits, ...), uniform random bytes.
    numerator : int
        In [0, 2^bits].
    bits : int
        Precision of the probability.

    Returns
    -------
    numpy.ndarray
        uint8 of shape ``random_bytes.shape[1:]``, 8 packed output bits per byte.
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


def _lane_sums(packed, d):
    """Column sums of packed rows, unpacking 255 rows at a time into uint8 lanes (exact: at
    most 255 per lane, and byte-wide SIMD additions)."""
    sums = np.zeros(int(d), dtype=np.int64)
    for start in range(0, packed.shape[0], _LANE_ROWS):
        chunk = np.unpackbits(packed[start:start + _LANE_ROWS], axis=1, count=int(d), bitorder=BITORDER)
        sums += np.add.reduce(chunk, axis=0, dtype=np.uint8)
    return sums


class ColumnCounter:
    """Column sums of packed rows of ``d`` bits, added batch by batch in bounded memory.

    Rows are read as slabs of ~64 KiB that hold a whole number of reports and of 64-bit words,
    added bit-sliced by :class:`protocols.bits.bitslice.BitSlicedCounter` (five word operations per
    64 bits), which leaves log₂(slabs) bit planes, each a slab of rows. The planes' halves are
    added bit-sliced (:func:`protocols.bits.bitslice.fold_halves`) down to at most 255 rows, whose
    column sums, weighted by 2^w, add up to the answer. Rows of a batch after its last whole
    slab are unpacked. Memory: O(slab · log n), whatever n is. Rows are not validated here.

    Parameters
    ----------
    d : int
        Bits per row.
    """

    def __init__(self, d):
        self.d = int(d)
        self.width = nbytes(d)
        unit = math.lcm(self.width, 8)
        self.slab_rows = max(1, _SLAB_BYTES // unit) * unit // self.width
        self._counter = BitSlicedCounter(self.slab_rows * self.width // 8)
        self._unpacked = np.zeros(self.d, dtype=np.int64)

    def add(self, packed):
        """Add the rows of a uint8 array (n, ceil(d/8)).

        A large batch goes to the compiled counter when :func:`protocols.bits.accel.column_kernel`
        chooses it (same result; its last few rows are unpacked here).
        """
        packed = np.ascontiguousarray(packed)
        kernel = accel.column_kernel(packed.nbytes, len(packed))
        if kernel is not None:
            sums, rows = kernel(packed)
            self._unpacked += sums[:self.d]
            self._unpacked += _lane_sums(packed[rows:], self.d)
            return
        slabs = len(packed) // self.slab_rows
        whole = slabs * self.slab_rows if slabs >= 2 else 0     # for one slab, unpacking is as fast
        words = packed[:whole].reshape(-1, self.slab_rows * self.width).view(np.uint64)
        for start in range(0, len(words), _ALIGN_ROWS):
            rows = words[start:start + _ALIGN_ROWS]
            self._counter.add(rows if rows.flags.aligned else rows.copy())
        self._unpacked += _lane_sums(packed[whole:], self.d)

    def counts(self):
        """Number of rows added with bit j set, for j < d (int64)."""
        planes, rows = [p.view(np.uint8) for p in self._counter.bit_planes()], self.slab_rows
        while planes and rows % 2 == 0 and rows > _LANE_ROWS:
            planes, rows = fold_halves(planes), rows // 2
        sums = self._unpacked.copy()
        for weight, plane in enumerate(planes):
            sums += _lane_sums(plane.reshape(rows, self.width), self.d) << weight
        return sums


def column_sums(packed, d):
    """Number of reports with bit j set, for j < d (see :class:`ColumnCounter`).

    Parameters
    ----------
    packed : numpy.ndarray
        uint8 (n, ceil(d/8)), validated by the caller.
    d : int
        Bits per report.

    Returns
    -------
    numpy.ndarray
        int64 (d,).
    """
    counter = ColumnCounter(d)
    counter.add(packed)
    return counter.counts()
