import numpy as np
import pytest

from bfrrce import BFRRCE, estimate_distinct, suggest_parameters
from bfrrce.wire import FormatError, dump_reports, load_reports
from bfrrce import ColumnSums
from protocols import IncompatibleError, LDPTypeError, LDPValueError


@pytest.mark.parametrize("kwargs, error", [
    (dict(epsilon=0), LDPValueError), (dict(epsilon=-1), LDPValueError),
    (dict(epsilon=float("nan")), LDPValueError), (dict(epsilon="2"), LDPTypeError),
    (dict(epsilon=1, L=0), LDPValueError), (dict(epsilon=1, l=0), LDPValueError),
    (dict(epsilon=1, L=4, l=5), LDPValueError), (dict(), LDPValueError),
    (dict(epsilon=1, per_bit_epsilon=0.4), LDPValueError),
    (dict(epsilon=1, perturbation="fancy"), LDPValueError), (dict(epsilon=1, unit="user"), LDPValueError),
    (dict(per_bit_epsilon=0.4, perturbation="optimized"), LDPValueError),
    (dict(epsilon=500.0, perturbation="symmetric"), LDPValueError)])
def test_bad_parameters(kwargs, error):
    with pytest.raises(error):
        BFRRCE(**kwargs)


def test_bad_values():
    mech = BFRRCE(epsilon=1.0, L=64)
    with pytest.raises(LDPValueError, match="empty"):
        mech.privatize([])
    with pytest.raises(LDPTypeError):
        mech.privatize(np.array([1.0, np.nan]))
    with pytest.raises(LDPValueError):
        mech.privatize_sets([[1]])                # unit="value"
    with pytest.raises(LDPValueError):
        estimate_distinct([], epsilon=1.0)


def test_reports_shape_bit_order_and_determinism():
    mech = BFRRCE(epsilon=2.0, L=100, l=3)
    r = mech.privatize(np.arange(50), rng=3)
    assert r.shape == (50, 13) and r.dtype == np.uint8
    np.testing.assert_array_equal(r, mech.privatize(np.arange(50), rng=3))
    quiet = BFRRCE(epsilon=60.0, L=100, l=1, perturbation="symmetric")   # q ≈ 1e-13
    pos = quiet.bloom.positions([42])[0, 0]
    rep = quiet.privatize([42], rng=0)[0]
    assert rep[pos // 8] == 1 << (pos % 8)


def test_sets_for_item_unit():
    mech = BFRRCE(epsilon=4.0, L=64, l=2, unit="item")
    reports = mech.privatize_sets([[1, 2, 3], [4], []], rng=0)
    assert reports.shape == (3, 8)
    assert mech.aggregate(reports).n == 3


def test_repr_and_equality():
    a, b = BFRRCE(epsilon=1.0, L=64), BFRRCE(epsilon=1.0, L=64)
    assert a == b and hash(a) == hash(b)
    assert "perturbation='optimized'" in repr(a)
    assert a != BFRRCE(epsilon=1.0, L=64, seed=1)


def test_column_sums_round_trip_and_refusals():
    mech = BFRRCE(epsilon=1.0, L=50, l=2)
    agg = mech.aggregate(mech.privatize(np.arange(100), rng=0))
    data = agg.to_bytes()
    assert ColumnSums.from_bytes(data) == agg
    assert ColumnSums.from_bytes(data, mech) == agg
    with pytest.raises(IncompatibleError):
        ColumnSums.from_bytes(data, BFRRCE(epsilon=2.0, L=50, l=2))
    with pytest.raises(FormatError, match="checksum"):
        ColumnSums.from_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    with pytest.raises(FormatError):
        ColumnSums.from_bytes(data[:30])
    with pytest.raises(FormatError, match="magic"):
        ColumnSums.from_bytes(b"x" * 40)
    with pytest.raises(FormatError, match="version"):
        ColumnSums.from_bytes(data[:8] + b"\x02\x00" + data[10:])


def test_reports_round_trip():
    mech = BFRRCE(epsilon=1.0, L=20)
    reports = mech.privatize(np.arange(10), rng=0)
    back_mech, back, batch = load_reports(dump_reports(mech, reports, batch="ab" * 16), mech)
    assert batch == "ab" * 16
    assert back_mech == mech
    np.testing.assert_array_equal(back, reports)
    with pytest.raises(FormatError, match="kind"):
        ColumnSums.from_bytes(dump_reports(mech, reports))


def test_suggest_parameters_prefers_one_hash():
    s = suggest_parameters(10_000, 4.0, (100, 150), Ls=[128, 256], trials=3)
    assert s.l == 1
    assert {row["l"] for row in s.table} == {1, 2, 3}
    assert "l=1" in s.explanation
    with pytest.raises(LDPValueError):
        suggest_parameters(100, 1.0, (50, 10))


def test_report_files_are_counted_once():
    mech = BFRRCE(epsilon=1.0, L=20)
    f1 = dump_reports(mech, mech.privatize(np.arange(10), rng=0))
    f2 = dump_reports(mech, mech.privatize(np.arange(10, 30), rng=1))
    agg = mech.empty_aggregate().add_file(f1).add_file(f2)
    assert agg.n == 30 and len(agg.batches) == 2
    with pytest.raises(IncompatibleError, match="already counted"):
        agg.add_file(f1)
    other = mech.empty_aggregate().add_file(f2)
    with pytest.raises(IncompatibleError, match="counted twice"):
        mech.empty_aggregate().add_file(f1).merge(other).merge(other)
    assert ColumnSums.from_bytes(agg.to_bytes()) == agg           # batches survive a round trip
    assert ColumnSums.from_bytes(agg.to_bytes()).batches == agg.batches


@pytest.mark.parametrize("l", [1, 3])
def test_per_bit_mode_round_trips(l):
    import warnings
    from bfrrce import PrivacyWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        mech = BFRRCE(per_bit_epsilon=0.4, L=64, l=l)
    agg = mech.aggregate(mech.privatize(np.arange(50), rng=0))
    assert ColumnSums.from_bytes(agg.to_bytes(), mech) == agg


@pytest.mark.parametrize("kwargs", [dict(epsilon=1e300), dict(per_bit_epsilon=600.0),
                                    dict(epsilon=699.0, perturbation="symmetric")])
def test_huge_epsilon_is_a_clear_error(kwargs):
    with pytest.raises(LDPValueError, match="too large"):
        BFRRCE(**kwargs)
