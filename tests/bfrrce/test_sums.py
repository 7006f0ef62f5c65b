"""Theorem 2 (debiased column sums are unbiased, with the stated variance) and exact simulation."""

import math

import numpy as np
import pytest

from bfrrce import BFRRCE, ColumnSums
from protocols import IncompatibleError, LDPTypeError, LDPValueError

TRIALS = 300


def setting(perturbation, l):
    mech = BFRRCE(epsilon=2.0, L=32, l=l, perturbation=perturbation)
    values = np.repeat(np.arange(6), [200, 120, 80, 50, 30, 20])        # n = 500
    t = mech.bloom.column_counts(mech.bloom.positions(np.arange(6)), [200, 120, 80, 50, 30, 20])
    return mech, values, t


@pytest.mark.parametrize("perturbation", ["symmetric", "optimized"])
@pytest.mark.parametrize("l", [1, 3])
def test_theorem2_on_real_reports(perturbation, l):
    mech, values, t = setting(perturbation, l)
    n = values.size
    reports = mech.privatize(np.tile(values, TRIALS), rng=99)
    t_hat = np.array([mech.debias(mech.aggregate(r)).t_hat for r in np.split(reports, TRIALS)])
    p, q = mech.p, mech.q
    var = (t * p * (1 - p) + (n - t) * q * (1 - q)) / (p - q) ** 2
    assert np.all(np.abs(t_hat.mean(axis=0) - t) <= 5 * np.sqrt(var / TRIALS))
    ratio = t_hat.var(axis=0, ddof=1) / var
    assert np.all(np.abs(ratio - 1) <= 5 * math.sqrt(2 / (TRIALS - 1)))


@pytest.mark.parametrize("l", [1, 3])
def test_simulate_matches_reports_in_distribution(l):
    """Both the simulated and the real column sums have mean t p + (n − t) q and variance
    t p(1 − p) + (n − t) q(1 − q) (5-standard-error tolerances)."""
    mech, values, t = setting("optimized", l)
    n, p, q = values.size, mech.p, mech.q
    mean = t * p + (n - t) * q
    var = t * p * (1 - p) + (n - t) * q * (1 - q)
    sim = np.array([mech.simulate(values, rng=s).counts for s in range(TRIALS)])
    real = np.array([mech.aggregate(r).counts for r in
                     np.split(mech.privatize(np.tile(values, TRIALS), rng=5), TRIALS)])
    for c in (sim, real):
        assert np.all(np.abs(c.mean(axis=0) - mean) <= 5 * np.sqrt(var / TRIALS))
        assert np.all(np.abs(c.var(axis=0, ddof=1) / var - 1) <= 5 * math.sqrt(2 / (TRIALS - 1)))
    sim_counts = mech.simulate(np.arange(6), rng=1, counts=[200, 120, 80, 50, 30, 20])
    assert sim_counts.n == n


def test_simulate_scales_to_a_billion_users():
    mech = BFRRCE(epsilon=1.0, L=1024)
    counts = np.full(1000, 10 ** 6)
    agg = mech.simulate(np.arange(1000), rng=0, counts=counts)
    assert agg.n == 10 ** 9
    # l = 1: Σ_j t_j = n exactly; Var(Σ t̂_j) = Σ_j [t_j p(1−p) + (n − t_j) q(1−q)]/(p − q)²
    t = mech.bloom.column_counts(mech.bloom.positions(np.arange(1000)), counts)
    p, q, n = mech.p, mech.q, 10 ** 9
    var = np.sum(t * p * (1 - p) + (n - t) * q * (1 - q)) / (p - q) ** 2
    assert t.sum() == n
    assert abs(mech.debias(agg).t_hat.sum() - n) <= 5 * math.sqrt(var)


def same_counts(a, b):
    return a.n == b.n and np.array_equal(a.counts, b.counts)


def test_merge_add_and_equality():
    mech = BFRRCE(epsilon=1.0, L=40, l=2)
    reports = mech.privatize(np.arange(300) % 17, rng=1)
    whole = mech.aggregate(reports)
    parts = mech.empty_aggregate().add(reports[:100]).add(reports[100:])
    assert isinstance(parts, ColumnSums) and same_counts(parts, whole) and len(parts.batches) == 2
    assert same_counts(mech.aggregate(reports[200:]) + mech.aggregate(reports[:200]), whole)
    assert mech.aggregate(reports[::-1]) == whole            # the identifier ignores the order
    other = BFRRCE(epsilon=1.0, L=40, l=2, hash_seed=1)
    with pytest.raises(IncompatibleError):
        whole.merge(other.aggregate(reports))
    before = parts
    with pytest.raises(LDPTypeError):
        parts.add(reports.astype(np.int64))
    assert parts == before                      # a rejected batch changes nothing


def test_reports_validation():
    mech = BFRRCE(epsilon=1.0, L=36)
    with pytest.raises(IncompatibleError):
        mech.aggregate(np.zeros((3, 6), dtype=np.uint8))
    with pytest.raises(IncompatibleError, match="beyond bit"):
        mech.aggregate(np.full((3, 5), 255, dtype=np.uint8))
    with pytest.raises(LDPValueError):
        mech.estimate(mech.empty_aggregate())
