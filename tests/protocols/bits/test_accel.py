"""The compiled column counter (numba) against the numpy one, and the choice between them."""

import numpy as np
import pytest

from protocols.bits import accel, packing as bits
from protocols.errors import LDPValueError

DS = [1, 7, 8, 63, 64, 65, 1000, 1024, 4097]
NS = [0, 1, 7, 64, 1000, 10 ** 5]


@pytest.fixture(params=["numpy", "numba"])
def path(request, monkeypatch):
    """Run the test with BFRRCE_ACCEL forced to one path; numba for batches of any size."""
    if request.param == "numba":
        pytest.importorskip("numba")
        monkeypatch.setattr(accel, "MIN_BATCH_BYTES", 0)
    monkeypatch.setenv(accel.ENV, request.param)
    return request.param


def random_reports(rng, n, d):
    """Uniform packed reports of d bits (padding bits zero)."""
    packed = rng.integers(0, 256, (n, bits.nbytes(d)), dtype=np.uint8)
    if d % 8:
        packed[:, -1] &= (1 << (d % 8)) - 1
    return packed


def reference(packed, d, rows=4096):
    """Column sums by unpacking every bit, a few thousand rows at a time."""
    sums = np.zeros(d, np.int64)
    for start in range(0, len(packed), rows):
        sums += np.unpackbits(packed[start:start + rows], axis=1, count=d,
                              bitorder="little").sum(axis=0, dtype=np.int64)
    return sums


@pytest.mark.parametrize("d", DS)
def test_both_paths_equal_unpacking(path, d):
    rng = np.random.default_rng(d)
    for n in NS:
        packed = random_reports(rng, n, d)
        np.testing.assert_array_equal(bits.column_sums(packed, d), reference(packed, d), err_msg=f"n={n}")


@pytest.mark.parametrize("d", [7, 64, 1000])
def test_uneven_batches_mixing_both_paths(monkeypatch, d):
    """One counter fed batches of 0 to 40,000 rows; with numba, the large ones go compiled."""
    pytest.importorskip("numba")
    monkeypatch.setenv(accel.ENV, "numba")
    monkeypatch.setattr(accel, "MIN_BATCH_BYTES", 5000)
    rng = np.random.default_rng(d + 1)
    packed = random_reports(rng, 90_000, d)
    counter = bits.ColumnCounter(d)
    cuts = np.sort(np.concatenate([rng.integers(0, len(packed), 15), [10, 10, 11, 50_000]]))
    for part in np.split(packed, cuts):
        counter.add(part)
    np.testing.assert_array_equal(counter.counts(), reference(packed, d))


@pytest.mark.parametrize("d", [64, 1024])
def test_all_ones_through_column_sums(path, d):
    for n in (32 * 255, 32 * 255 * 2 + 31, 32 * 255 * 2 + 32):
        ones = np.full((n, d // 8), 0xFF, np.uint8)
        assert (bits.column_sums(ones, d) == n).all()


def test_kernel_all_ones_carry_through_the_lane_flushes():
    """Every column at its maximum: byte lanes reach 255 before each flush (32 rows a group),
    and after the last group the planes and held carries (up to 31 + 30) go through them."""
    kernel = pytest.importorskip("protocols.bits.numba_kernel")
    for n in [*range(70), 32 * 255, 32 * 255 + 1, 32 * 255 * 2 + 31, 32 * 255 * 2 + 62]:
        out = np.zeros(64 * 3, np.int64)
        kernel.count_words(np.full((n, 3), np.uint64(2 ** 64 - 1)), out)
        assert (out == n).all(), n


@pytest.mark.parametrize("w", [1, 3, 8, 17, 131])
def test_kernel_every_pair_position_and_odd_tail(w):
    """count_words directly on n = 0..100 rows (every pair position in a group, odd n, a
    second group) and on a count added to a running total."""
    kernel = pytest.importorskip("protocols.bits.numba_kernel")
    rng = np.random.default_rng(w)
    for n in range(101):
        words = rng.integers(0, 2 ** 64, (n, w), dtype=np.uint64)
        out = np.arange(64 * w, dtype=np.int64)
        kernel.count_words(words, out)
        expected = reference(words.view(np.uint8), 64 * w) + np.arange(64 * w)
        np.testing.assert_array_equal(out, expected, err_msg=f"n={n}")


@pytest.mark.parametrize("d", [8192, 8200, 2 ** 15 + 8])
def test_both_paths_equal_on_wide_rows(path, d):
    """Rows of 1 KiB and more (no super-rows), widths not a multiple of 8 bytes, few rows."""
    rng = np.random.default_rng(d)
    for n in (0, 1, 2, 31, 33, 64, 300):
        packed = random_reports(rng, n, d)
        np.testing.assert_array_equal(bits.column_sums(packed, d), reference(packed, d), err_msg=f"n={n}")


def test_unaligned_and_strided_input_in_small_chunks(path, monkeypatch):
    if path == "numba":
        from protocols.bits import numba_kernel
        monkeypatch.setattr(numba_kernel, "_CHUNK_BYTES", 3000)       # several copied chunks
    d = 1000                                        # 125 bytes: super-rows of 8 reports
    packed = random_reports(np.random.default_rng(2), 5003, d)
    buf = np.zeros(packed.size + 1, np.uint8)
    buf[1:] = packed.ravel()
    unaligned = buf[1:].reshape(packed.shape)
    np.testing.assert_array_equal(bits.column_sums(unaligned, d), reference(packed, d))
    np.testing.assert_array_equal(bits.column_sums(packed[::3], d), reference(packed[::3], d))


def test_forcing_numpy_never_loads_the_kernel(monkeypatch):
    def refuse():
        raise AssertionError("the compiled kernel was loaded")
    monkeypatch.setattr(accel, "load", refuse)
    monkeypatch.setattr(accel, "LOAD_AFTER_BYTES", 0)
    monkeypatch.setenv(accel.ENV, "NumPy")
    packed = random_reports(np.random.default_rng(3), 5000, 1024)
    np.testing.assert_array_equal(bits.column_sums(packed, 1024), reference(packed, 1024))


def test_auto_loads_the_kernel_once_numpy_has_counted_enough(monkeypatch):
    loads = []
    monkeypatch.delenv(accel.ENV, raising=False)
    monkeypatch.setattr(accel, "_KERNEL", "protocols._not_loaded_yet")
    monkeypatch.setattr(accel, "available", lambda: True)
    monkeypatch.setattr(accel, "load", lambda: loads.append(1) or "kernel")
    monkeypatch.setattr(accel, "_counted", 0)
    monkeypatch.setattr(accel, "LOAD_AFTER_BYTES", 3 * accel.MIN_BATCH_BYTES)
    assert accel.column_kernel(accel.MIN_BATCH_BYTES - 1, accel.MIN_ROWS) is None       # too small: not counted
    assert accel.column_kernel(accel.MIN_BATCH_BYTES, accel.MIN_ROWS) is None
    assert accel.column_kernel(accel.MIN_BATCH_BYTES, accel.MIN_ROWS) is None
    assert not loads and accel._counted == 2 * accel.MIN_BATCH_BYTES
    assert accel.column_kernel(accel.MIN_BATCH_BYTES, accel.MIN_ROWS) == "kernel"
    assert loads == [1]


def test_auto_leaves_few_wide_rows_to_numpy(monkeypatch):
    """Once loaded, the kernel counts 16 rows of 4 KiB (64 KiB, numpy's slow unpacking path)
    and 256 of them, but not 64 (256 KiB, where numpy was faster: docs/measurements.md table)."""
    monkeypatch.delenv(accel.ENV, raising=False)
    monkeypatch.setattr(accel, "_KERNEL", "protocols")                   # "already loaded"
    monkeypatch.setattr(accel, "load", lambda: "kernel")
    row = 4096
    assert accel.column_kernel(16 * row, 16) == "kernel"
    assert accel.column_kernel(64 * row, 64) is None
    assert accel.column_kernel(256 * row, 256) == "kernel"
    monkeypatch.setenv(accel.ENV, "numba")                               # forced: every batch
    assert accel.column_kernel(64 * row, 64) == "kernel"


def test_auto_without_numba_stays_on_numpy(monkeypatch):
    monkeypatch.delenv(accel.ENV, raising=False)
    monkeypatch.setattr(accel, "_KERNEL", "protocols._no_such_kernel")   # an import that fails
    monkeypatch.setattr(accel, "available", lambda: True)
    monkeypatch.setattr(accel, "LOAD_AFTER_BYTES", 0)
    assert accel.column_kernel(1 << 20, 1024) is None
    monkeypatch.setenv(accel.ENV, "numba")
    with pytest.raises(ImportError):
        accel.column_kernel(1 << 20, 1024)


def test_unknown_mode_is_refused(monkeypatch):
    monkeypatch.setenv(accel.ENV, "cuda")
    with pytest.raises(LDPValueError, match="cuda"):
        bits.column_sums(np.zeros((10, 1), np.uint8), 8)
