"""Column sums of packed reports: the bit-sliced counter against a plain unpack-and-sum.

These tests are about the numpy counter: the compiled one (tests/protocols/bits/test_accel.py) is kept out even
if another test of the session has loaded it.
"""

import math

import numpy as np
import pytest
from bitarray import bitarray

import protocols
from protocols.errors import IncompatibleError
from protocols.bits import accel, packing as bits
from protocols.bits.bitslice import BitSlicedCounter, fold_halves


@pytest.fixture(autouse=True)
def numpy_counter(monkeypatch):
    monkeypatch.setenv(accel.ENV, "numpy")


def reference(packed, d):
    return np.unpackbits(packed, axis=1, count=d, bitorder="little").sum(axis=0, dtype=np.int64)


def reports(rng, n, d, density=0.5):
    return bits.pack(rng.random((n, d)) < density)


@pytest.mark.parametrize("d", [1, 7, 8, 63, 64, 65, 256, 1000, 1024, 8195])
def test_column_sums_equal_unpacking(d):
    rng = np.random.default_rng(d)
    slab_rows = bits.ColumnCounter(d).slab_rows
    for n in (0, 1, slab_rows - 1, 2 * slab_rows, 5 * slab_rows + 3):
        for density in (0.0, 0.3, 1.0):
            packed = reports(rng, n, d, density)
            np.testing.assert_array_equal(bits.column_sums(packed, d), reference(packed, d))


def test_counts_at_powers_of_two_carry_through_every_plane():
    d = 64                                          # 8-byte rows: 8192 rows per 64 KiB slab
    slab_rows = bits.ColumnCounter(d).slab_rows
    for slabs in (2, 3, 31, 32, 33, 64):
        n = slabs * slab_rows
        ones = np.full((n, 8), 0xFF, dtype=np.uint8)
        assert (bits.column_sums(ones, d) == n).all()
        assert (bits.column_sums(ones[1:], d) == n - 1).all()


def test_batches_of_any_size_give_the_one_shot_sums():
    d = 1000
    rng = np.random.default_rng(3)
    packed = reports(rng, 9000, d)
    counter = bits.ColumnCounter(d)
    cuts = np.sort(rng.integers(0, len(packed), 12))
    for part in np.split(packed, cuts):             # includes empty and one-row batches
        counter.add(part)
    np.testing.assert_array_equal(counter.counts(), reference(packed, d))
    counter.add(packed[:5])                         # counts() does not end the stream
    np.testing.assert_array_equal(counter.counts(), reference(packed, d) + reference(packed[:5], d))


def test_unaligned_and_strided_reports():
    d = 256
    rng = np.random.default_rng(4)
    packed = reports(rng, 6000, d)
    buf = np.zeros(packed.size + 1, dtype=np.uint8)
    buf[1:] = packed.ravel()
    unaligned = buf[1:].reshape(packed.shape)
    assert not unaligned[:, :8].view(np.uint64).flags.aligned
    np.testing.assert_array_equal(bits.column_sums(unaligned, d), reference(packed, d))
    strided = reports(rng, 12000, d)[::2]
    np.testing.assert_array_equal(bits.column_sums(strided, d), reference(strided, d))


def test_reports_are_not_modified():
    packed = reports(np.random.default_rng(5), 5000, 512)
    before = packed.copy()
    bits.column_sums(packed, 512)
    np.testing.assert_array_equal(packed, before)


def test_bit_sliced_counter_planes_and_memory():
    rng = np.random.default_rng(6)
    rows = rng.integers(0, 2 ** 63, size=(1001, 4), dtype=np.uint64)
    counter = BitSlicedCounter(4)
    counter.add(rows[:500])
    counter.add(rows[500:])
    planes = counter.bit_planes()
    assert len(planes) <= math.log2(len(rows)) + 2
    counts = sum(np.unpackbits(p.view(np.uint8), bitorder="little").astype(np.int64) << w
                 for w, p in enumerate(planes))
    np.testing.assert_array_equal(counts, np.unpackbits(rows.view(np.uint8), axis=1,
                                                        bitorder="little").sum(axis=0))


@pytest.mark.parametrize("mech", [protocols.SUE(epsilon=1, d=300), protocols.OUE(epsilon=2, d=64),
                                  protocols.GRR(epsilon=1, d=10), protocols.OLH(epsilon=1, d=50),
                                  protocols.SubsetSelection(epsilon=1, d=40)],
                         ids=lambda m: type(m).__name__)
def test_aggregate_batches_equals_merged_aggregates(mech):
    rng = np.random.default_rng(7)
    batches = [mech.privatize(rng.integers(0, mech.d, n), rng=rng) for n in (3000, 1, 4000)]
    batches.insert(1, batches[0][:0])
    merged = mech.empty_aggregate()
    for batch in batches:
        merged = merged.merge(mech.aggregate(batch))
    assert mech.aggregate_batches(iter(batches)) == merged
    assert mech.aggregate_batches([]) == mech.empty_aggregate()


def test_aggregate_batches_validates_every_batch():
    mech = protocols.SUE(epsilon=1, d=300)
    good = mech.privatize(np.arange(100), rng=0)
    with pytest.raises(protocols.LDPError):
        mech.aggregate_batches([good, good[:, :-1]])


def test_fold_halves_adds_the_two_halves():
    rng = np.random.default_rng(8)
    counts = rng.integers(0, 2 ** 12, size=64)       # a count per position, 64 positions
    planes = [np.packbits((counts >> w) & 1, bitorder="little") for w in range(12)]
    folded = fold_halves(planes)
    value = sum(np.unpackbits(p, bitorder="little").astype(np.int64) << w for w, p in enumerate(folded))
    np.testing.assert_array_equal(value, counts[:32] + counts[32:])
    assert len(folded) <= 13


@pytest.mark.parametrize("chunk_bits", [1, 13, 64, 1 << 23])
def test_randomized_response_packed_keeps_rows_aligned_across_chunks(chunk_bits):
    from unittest import mock

    from protocols.core import randomness
    rng = np.random.default_rng(9)
    n, d = 50, 21
    ones = rng.random((n, d)) < 0.3
    ones[7] = False                                   # a row without ones
    with mock.patch.object(randomness, "_PACK_CHUNK_BITS", chunk_bits):
        kept = randomness.randomized_response_packed(rng, (n, d), np.nonzero(ones), 1.0, 0.0)
        flipped = randomness.randomized_response_packed(rng, (n, d), np.nonzero(ones), 0.0, 1.0)
    np.testing.assert_array_equal(kept, bits.pack(ones))
    np.testing.assert_array_equal(flipped, bits.pack(~ones))


@pytest.mark.parametrize("d", [1, 7, 8, 13, 64])
def test_bitarray_round_trip(d):
    """A packed row and its bitarray hold the same bits by index, and back (either endianness)."""
    rows = bits.pack(np.random.default_rng(d).random((3, d)) < 0.5)
    for row in rows:
        ba = bits.to_bitarray(row, d)
        assert ba.endian == "little" and len(ba) == d
        assert ba.tolist() == bits.unpack(row[None], d)[0].tolist()
        assert np.array_equal(bits.from_bitarray(ba), row)
        assert np.array_equal(bits.from_bitarray(bitarray(ba, endian="big")), row)
    with pytest.raises(IncompatibleError):
        bits.to_bitarray(rows[0][:0], d)
