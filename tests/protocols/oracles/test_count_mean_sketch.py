"""Apple's CMS and HCMS: exact ε, unbiasedness and variance (fresh hash functions per trial),
mergeable and serializable aggregates, any keys, validation."""

import math

import numpy as np
import pytest

from protocols import (CMS, HCMS, IncompatibleError, LDPTypeError, LDPValueError, audit_mechanism,
                       exact_epsilon)
from bfrrce.io.formats import dump_aggregate, load_aggregate

from tests.helpers import variance_ratio_tolerance

SKETCHES = [CMS, HCMS]


def separated_pair(mech, d=200):
    """Two keys hashed to different columns in every row (the worst case for ε)."""
    cols = mech.encode(np.arange(d))
    for b in range(1, d):
        if (cols[b] != cols[0]).all():
            return [0, b]
    raise AssertionError("no separated pair")


@pytest.mark.parametrize("cls", SKETCHES)
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_exact_epsilon_by_enumeration(cls, eps):
    mech = cls(epsilon=eps, d=6, k=2, m=4, seed=1)
    assert audit_mechanism(mech).ok                                  # every pair of the domain
    assert exact_epsilon(mech.output_distribution, separated_pair(mech)) == pytest.approx(eps)
    assert sum(mech.output_distribution(0).values()) == pytest.approx(1.0)


def skewed_counts(d, n):
    weights = 1 / np.arange(1, d + 1)
    return np.random.default_rng(0).multinomial(n, weights / weights.sum())


def check_unbiased_and_variance(mech_of_seed, run, truth, trials):
    """Estimates over ``trials`` fresh hash functions: means within 5 standard errors of the truth,
    MSE / analytic variance within 5 standard errors of 1 (per value and pooled)."""
    estimates = np.array([run(mech_of_seed(s), s) for s in range(trials)])
    var = mech_of_seed(0).variances(truth)
    assert np.all(np.abs(estimates.mean(axis=0) - truth) <= 5 * np.sqrt(var / trials))
    ratio = np.mean((estimates - truth) ** 2, axis=0) / var
    tol = variance_ratio_tolerance(estimates)
    assert np.all(np.abs(ratio - 1) <= tol), ratio
    assert abs(ratio.mean() - 1) <= tol.max()
    return ratio.mean()


@pytest.mark.parametrize("cls", SKETCHES)
def test_unbiased_with_analytic_variance_from_reports(cls):
    truth = skewed_counts(12, 1500)
    values = np.repeat(np.arange(12), truth)

    def run(mech, s):
        return mech.estimate(mech.aggregate(mech.privatize(values, rng=s)))
    check_unbiased_and_variance(lambda s: cls(epsilon=2.0, d=12, k=3, m=8, seed=s), run, truth, 300)


@pytest.mark.parametrize("m, k", [(8, 2), (64, 16)])
def test_cms_simulation_unbiased_with_analytic_variance(m, k):
    """The exact simulation at many trials: small m makes the hash-collision term dominant."""
    truth = skewed_counts(40, 20_000)

    def run(mech, s):
        return mech.estimate(mech.simulate(np.arange(mech.d), counts=truth, rng=s))
    check_unbiased_and_variance(lambda s: CMS(epsilon=1.0, d=40, k=k, m=m, seed=s), run, truth, 1000)


def test_hcms_simulation_matches_reports():
    mech = HCMS(epsilon=1.0, d=5, k=2, m=8, seed=0)
    agg = mech.simulate(np.arange(5), counts=np.array([3, 0, 2, 0, 1]), rng=0)
    assert agg.n == 6 and agg.counts.shape == (2, 8)
    assert np.abs(agg.counts).sum() == 6                        # one ±1 per user


@pytest.mark.parametrize("cls", SKETCHES)
def test_merge_serialize_and_refuse_other_hashes(cls):
    mech = cls(epsilon=1.0, d=30, k=4, m=32, seed=5)
    values = np.arange(900) % 30
    reports = mech.privatize(values, rng=3)
    part = (lambda a, b: tuple(x[a:b] for x in reports)) if cls is CMS else (lambda a, b: reports[a:b])
    parts = [mech.aggregate(part(i, i + 300)) for i in (0, 300, 600)]
    whole = mech.aggregate(reports)
    assert parts[2] + (parts[0] + parts[1]) == whole
    assert mech.empty_aggregate() + whole == whole
    assert load_aggregate(dump_aggregate(whole)) == whole
    with pytest.raises(IncompatibleError):
        whole + cls(epsilon=1.0, d=30, k=4, m=32, seed=6).aggregate(reports)
    with pytest.raises(LDPValueError):
        load_aggregate(dump_aggregate(whole)[:-8])


@pytest.mark.parametrize("cls", SKETCHES)
def test_any_keys_as_candidates(cls):
    mech = cls(epsilon=4.0, d=2, k=8, m=64, seed=0)
    keys = np.array(["apple"] * 3000 + ["pear"] * 1000 + [f"x{i}" for i in range(1000)])
    agg = mech.aggregate(mech.privatize(keys, rng=0))
    est = mech.estimate(agg, candidates=["apple", "pear", "plum"])
    sd = np.sqrt(mech.variance(5000, np.array([0.6, 0.2, 0.0]), np.array([0.04, 0.36, 0.4])))
    assert np.all(np.abs(est - [3000, 1000, 0]) <= 5 * sd)


def test_reports_repeat_with_the_seed_and_validation():
    mech = HCMS(epsilon=1.0, d=16, k=4, m=16)
    values = np.arange(500) % 16
    np.testing.assert_array_equal(mech.privatize(values, rng=7), mech.privatize(values, rng=7))
    assert mech.aggregate(mech.privatize(values)).n == 500          # OS CSPRNG by default
    cms = CMS(epsilon=1.0, d=16, k=4, m=16)
    np.testing.assert_array_equal(cms.privatize(values, rng=7).bits, cms.privatize(values, rng=7).bits)
    with pytest.raises(LDPValueError, match="power of two"):
        HCMS(epsilon=1.0, d=16, m=12)
    with pytest.raises(IncompatibleError):
        HCMS(epsilon=1.0, d=16, k=2, m=16).aggregate(mech.privatize(values, rng=0))
    with pytest.raises(LDPTypeError):
        cms.aggregate(mech.privatize(values, rng=0))
    with pytest.raises(LDPTypeError):
        cms.privatize(np.array([0.5]))
    with pytest.raises(LDPValueError):
        cms.variance(10, f=1.5)
    assert math.isclose(cms.variance(100), CMS(epsilon=1.0, d=16, k=4, m=16, seed=9).variance(100))
