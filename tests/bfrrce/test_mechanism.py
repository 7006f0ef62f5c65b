import numpy as np
import pytest

from bfrrce import BFRRCE, estimate_distinct
from protocols import DuchiMean, IncompatibleError, LDPTypeError, LDPValueError, Mechanism


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
    assert a != BFRRCE(epsilon=1.0, L=64, hash_seed=1)


@pytest.mark.parametrize("kwargs", [dict(epsilon=1e300), dict(per_bit_epsilon=600.0),
                                    dict(epsilon=699.0, perturbation="symmetric")])
def test_huge_epsilon_is_a_clear_error(kwargs):
    with pytest.raises(LDPValueError, match="too large"):
        BFRRCE(**kwargs)


def test_one_interface_for_every_mechanism():
    mech = BFRRCE(epsilon=2.0, L=64)
    for m in (mech, DuchiMean(epsilon=1.0)):
        assert isinstance(m, Mechanism)
    with pytest.raises(TypeError):
        Mechanism()
    agg = mech.simulate([1, 2, 3], counts=[5, 0, 2], rng=0)
    assert mech.check_aggregate(agg) is agg and agg.n == 7
    reports = mech.privatize([1, 2], rng=0)
    assert mech.check_reports(reports) is reports
    with pytest.raises(IncompatibleError):
        BFRRCE(epsilon=1.0, L=64).check_aggregate(agg)


def test_one_report_as_a_bitarray_is_the_packed_row():
    """report(): the client's single report, bit j at index j, bytes equal to privatize's row."""
    mech = BFRRCE(epsilon=2.0, L=20, l=2)
    ba = mech.report("alice", rng=7)
    row = mech.privatize(["alice"], rng=7)[0]
    assert ba.endian == "little" and len(ba) == 20
    assert ba.tobytes() == row.tobytes()
    assert mech.aggregate(np.frombuffer(ba.tobytes(), dtype=np.uint8)[None]).n == 1


def test_hash_seed_and_its_deprecated_alias():
    mech = BFRRCE(epsilon=1.0, L=64, hash_seed=5)
    assert "hash_seed=5" in repr(mech) and "seed=5," not in repr(mech).replace("hash_seed", "")
    with pytest.warns(DeprecationWarning, match="hash_seed"):
        old = BFRRCE(epsilon=1.0, L=64, seed=5)
    assert old == mech and old.seed == 5 and old.hash_seed == 5
    import dataclasses
    assert dataclasses.replace(mech, L=32).hash_seed == 5
    with pytest.raises(LDPValueError):
        BFRRCE(epsilon=1.0, L=64, seed=5, hash_seed=6)


def test_interval_is_a_named_tuple():
    mech = BFRRCE(epsilon=4.0, L=256)
    est = mech.estimate(mech.aggregate(mech.privatize([f"v{i % 30}" for i in range(3000)], rng=0)))
    lower, upper = est.interval
    assert (est.interval.lower, est.interval.upper) == (lower, upper) == (est.lower, est.upper)
    assert est.interval == (lower, upper) and est.visible.interval.lower <= est.visible.interval.upper
