"""Packed bit reports: packing (:mod:`.packing`, re-exported here), the bit-sliced column counter
(:mod:`.bitslice`), and the choice of the optional compiled counter (:mod:`.accel`,
:mod:`.numba_kernel`)."""

from protocols.bits.packing import (ColumnCounter, check_packed, column_sums, dyadic_bits, from_bitarray, nbytes,
                                    pack, row_weights, to_bitarray, unpack)

__all__ = ["ColumnCounter", "check_packed", "column_sums", "dyadic_bits", "from_bitarray", "nbytes", "pack", "row_weights",
           "to_bitarray", "unpack"]
