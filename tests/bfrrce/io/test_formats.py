"""The binary formats: round trips, refusals, batch identity (docs/formats.md)."""

import struct
import warnings
import zlib

import numpy as np
import pytest

from bfrrce import BFRRCE, ColumnSums, PrivacyWarning
from bfrrce.io.formats import (MAGIC, SUPPORT_COUNTS, add_file, dump_aggregate, dump_column_sums, dump_reports,
                               load_aggregate, load_column_sums, load_reports, sums_batch)
from protocols import GRR, OLH, SUE, FormatError, IncompatibleError, LDPTypeError


def test_column_sums_round_trip_and_refusals():
    mech = BFRRCE(epsilon=1.0, L=50, l=2)
    agg = mech.aggregate(mech.privatize(np.arange(100), rng=0))
    data = dump_column_sums(agg)
    assert load_column_sums(data) == agg                  # labelled by the reports' content
    assert load_column_sums(data, mech) == agg
    unlabelled = ColumnSums(mech, agg.counts, agg.n)      # unlabelled sums are written as one batch
    assert load_column_sums(dump_column_sums(unlabelled)) == unlabelled.as_batch(sums_batch(unlabelled))
    with pytest.raises(IncompatibleError):
        load_column_sums(data, BFRRCE(epsilon=2.0, L=50, l=2))
    with pytest.raises(FormatError, match="checksum"):
        load_column_sums(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    with pytest.raises(FormatError):
        load_column_sums(data[:30])
    with pytest.raises(FormatError, match="magic"):
        load_column_sums(b"x" * 40)
    with pytest.raises(FormatError, match="version"):
        load_column_sums(data[:8] + b"\x03\x00" + data[10:])


def test_reports_round_trip():
    mech = BFRRCE(epsilon=1.0, L=20)
    reports = mech.privatize(np.arange(10), rng=0)
    back_mech, back, batch = load_reports(dump_reports(mech, reports), mech)
    assert mech.aggregate(reports).batches == {batch}
    assert back_mech == mech
    np.testing.assert_array_equal(back, reports)
    with pytest.raises(FormatError, match="kind"):
        load_column_sums(dump_reports(mech, reports))


def test_report_files_are_counted_once():
    mech = BFRRCE(epsilon=1.0, L=20)
    f1 = dump_reports(mech, mech.privatize(np.arange(10), rng=0))
    f2 = dump_reports(mech, mech.privatize(np.arange(10, 30), rng=1))
    agg = add_file(add_file(mech.empty_aggregate(), f1), f2)
    assert agg.n == 30 and len(agg.batches) == 2
    with pytest.raises(IncompatibleError, match="already counted"):
        add_file(agg, f1)
    other = add_file(mech.empty_aggregate(), f2)
    with pytest.raises(IncompatibleError, match="already counted"):
        add_file(mech.empty_aggregate(), f1).merge(other).merge(other)
    assert load_column_sums(dump_column_sums(agg)) == agg           # batches survive a round trip
    assert load_column_sums(dump_column_sums(agg)).batches == agg.batches


@pytest.mark.parametrize("l", [1, 3])
def test_per_bit_mode_round_trips(l):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        mech = BFRRCE(per_bit_epsilon=0.4, L=64, l=l)
    agg = mech.aggregate(mech.privatize(np.arange(50), rng=0))
    assert load_column_sums(dump_column_sums(agg), mech) == agg


@pytest.mark.parametrize("mech", [GRR(epsilon=1.0, d=5), OLH(epsilon=2.0, d=9), SUE(epsilon=0.5, d=12)])
def test_oracle_aggregates_round_trip(mech):
    agg = mech.aggregate(mech.privatize(np.arange(mech.d), rng=1))
    data = dump_aggregate(agg)
    assert data[:8] == MAGIC and data[10] == SUPPORT_COUNTS
    assert load_aggregate(data) == agg
    assert load_aggregate(bytearray(data)).merge(agg).n == 2 * agg.n


def test_oracle_aggregate_files_are_checked():
    data = dump_aggregate(GRR(epsilon=1.0, d=4).empty_aggregate())
    with pytest.raises(LDPTypeError):
        dump_aggregate(np.zeros(4, dtype=np.int64))
    with pytest.raises(LDPTypeError, match="dump_column_sums"):
        dump_aggregate(BFRRCE(epsilon=1.0, L=8).aggregate(np.zeros((0, 1), dtype=np.uint8)))
    with pytest.raises(FormatError, match="bad magic"):
        load_aggregate(b"GARBAGE!" + data[8:])
    with pytest.raises(FormatError, match="checksum"):
        load_aggregate(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(FormatError, match="kind"):
        load_column_sums(data)

    def recrc(body):
        return body + struct.pack("<I", zlib.crc32(body))

    with pytest.raises(FormatError, match="no mechanism class named 'XYZ'"):
        load_aggregate(recrc(data[:-4].replace(b'"GRR"', b'"XYZ"')))
    shape = data[:-4].replace(b'"shape": [4]', b'"shape": [2]')
    with pytest.raises(IncompatibleError):
        load_aggregate(recrc(shape[:-16]))


def test_headers_that_say_seed_are_read():
    """Files written before hash_seed was named so carry "seed" in the mechanism header."""
    from bfrrce.io.formats import COLUMN_SUMS, _container, _params
    mech = BFRRCE(epsilon=1.0, L=40, l=2, hash_seed=9)
    agg = mech.aggregate(mech.privatize(np.arange(30), rng=0))
    params = {("seed" if k == "hash_seed" else k): v for k, v in _params(mech).items()}
    old = _container(COLUMN_SUMS, agg.n, agg.counts.astype("<i8").tobytes(),
                     {"mechanism": params, "batches": sorted(agg.batches), "seeded": False})
    loaded = load_column_sums(old)
    assert loaded.mechanism == mech and loaded.mechanism.hash_seed == 9
    assert np.array_equal(loaded.counts, agg.counts)
