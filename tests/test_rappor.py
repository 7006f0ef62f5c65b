import math

import numpy as np
import pytest

from protocols import RAPPOR, LDPTypeError, LDPValueError, exact_epsilon
from protocols.rappor import nnls


def disjoint_values(mech, count=2):
    """Values whose cohort-0 filters share no bit (the worst case for ε)."""
    chosen, used = [], set()
    for v in range(1000):
        pos = set(mech.filter_positions([v], [0])[0].tolist())
        if len(pos) == mech.num_hashes and not pos & used:
            chosen.append(v)
            used |= pos
            if len(chosen) == count:
                return chosen
    raise AssertionError("no disjoint values")


@pytest.mark.parametrize("h, f", [(1, 0.5), (2, 0.25), (2, 0.75)])
def test_epsilons_by_enumeration(h, f):
    mech = RAPPOR(num_bits=8, num_hashes=h, num_cohorts=2, f=f, p=0.4, q=0.8)
    values = disjoint_values(mech)
    assert exact_epsilon(lambda v: mech.output_distribution(v, 0), values) == pytest.approx(mech.epsilon)
    assert exact_epsilon(lambda v: mech.permanent_distribution(v, 0), values) == pytest.approx(
        mech.epsilon_permanent)
    # any pair of values, filters overlapping or not, stays within the bound
    assert exact_epsilon(lambda v: mech.output_distribution(v, 0), range(6)) <= mech.epsilon + 1e-9
    assert mech.epsilon_permanent == pytest.approx(2 * h * math.log((1 - f / 2) / (f / 2)))


def test_permanent_response_repeats_with_the_secret():
    mech = RAPPOR(num_bits=32, num_hashes=2, num_cohorts=4, p=0.0, q=1.0)   # no instantaneous noise
    secrets = np.arange(50, dtype=np.uint64)
    values = np.arange(50) % 7
    a = mech.privatize(values, rng=1, secrets=secrets)
    b = mech.privatize(values, rng=2, secrets=secrets)
    np.testing.assert_array_equal(a.bits, b.bits)
    np.testing.assert_array_equal(a.cohorts, b.cohorts)


def test_permanent_law():
    """Bits outside the filter are 1 with probability f/2 (over users' secrets)."""
    mech = RAPPOR(num_bits=16, num_hashes=1, num_cohorts=1, f=0.5, p=0.0, q=1.0)
    n = 20000
    rep = mech.privatize(np.zeros(n, dtype=np.int64), rng=3)
    from protocols import bits
    b = bits.unpack(rep.bits, 16)
    pos = mech.filter_positions([0], [0])[0, 0]
    others = np.delete(b, pos, axis=1).mean()
    assert abs(others - 0.25) <= 5 * math.sqrt(0.25 * 0.75 / (15 * n)) * math.sqrt(15)
    assert abs(b[:, pos].mean() - 0.75) <= 5 * math.sqrt(0.75 * 0.25 / n)


def test_candidate_estimates_recover_heavy_values():
    mech = RAPPOR(num_bits=64, num_hashes=2, num_cohorts=8)
    rng = np.random.default_rng(0)
    truth = {0: 20000, 1: 10000, 2: 5000}
    values = np.concatenate([np.full(c, v) for v, c in truth.items()] +
                            [rng.integers(100, 10**6, 5000)])
    est = mech.estimate(mech.aggregate(mech.privatize(values, rng=4)), candidates=range(20))
    for v, c in truth.items():
        assert est.significant[v]
        assert abs(est.counts[v] - c) <= 5 * est.stderr[v]
    assert est.significant[3:].sum() <= 1
    with pytest.raises(LDPTypeError):
        mech.estimate(mech.aggregate(mech.privatize(values[:10], rng=1)))


def test_string_values_and_validation():
    mech = RAPPOR(num_bits=16, num_hashes=2, num_cohorts=2)
    rep = mech.privatize(["a", "b", "a"], rng=0)
    assert rep.bits.shape == (3, 2)
    with pytest.raises(LDPValueError):
        RAPPOR(p=0.8, q=0.2)
    with pytest.raises(LDPValueError):
        RAPPOR(f=1.5)
    with pytest.raises(LDPValueError):
        mech.privatize([], rng=0)
    with pytest.raises(LDPTypeError):
        mech.aggregate(rep.bits)


def test_nnls_matches_brute_force():
    rng = np.random.default_rng(1)
    from itertools import product
    for _ in range(20):
        A = rng.normal(size=(8, 4))
        b = rng.normal(size=8)
        x = nnls(A, b)
        assert (x >= 0).all()
        best = np.inf
        for support in product([False, True], repeat=4):
            s = np.array(support)
            z = np.zeros(4)
            if s.any():
                z[s] = np.linalg.lstsq(A[:, s], b, rcond=None)[0]
            if (z >= 0).all():
                best = min(best, np.sum((A @ z - b) ** 2))
        assert np.sum((A @ x - b) ** 2) == pytest.approx(best, rel=1e-9, abs=1e-12)
