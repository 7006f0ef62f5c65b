"""Microsoft's 1BitMean and dBitFlip: exact ε (one round and many rounds of the memoized forms),
unbiasedness and variance, mergeable and serializable aggregates, validation."""

import math

import numpy as np
import pytest

from protocols import (DBitFlip, DuchiMean, IncompatibleError, LDPTypeError, LDPValueError,
                       MemoizedDBitFlip, MemoizedOneBitMean, OneBitMean, exact_epsilon)
from bfrrce.io.formats import dump_aggregate, load_aggregate

from tests.helpers import variance_ratio_tolerance


# --- privacy ---------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_one_bit_mean_exact_epsilon_and_duchi_law(eps):
    mech = OneBitMean(epsilon=eps, high=10.0)
    xs = np.linspace(0, 10, 11)
    assert exact_epsilon(mech.output_distribution, xs) == pytest.approx(eps)
    duchi = DuchiMean(epsilon=eps)
    for x in xs:
        assert mech.output_distribution(x)[1] == pytest.approx(duchi.output_distribution(x / 5 - 1)[duchi.C])


@pytest.mark.parametrize("num_bits", [1, 2, 3])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_dbitflip_exact_epsilon(num_bits, eps):
    mech = DBitFlip(epsilon=eps, d=4, num_bits=num_bits)
    measured = exact_epsilon(mech.output_distribution, range(4))
    assert measured == pytest.approx(mech.tight_epsilon)
    assert measured <= eps * (1 + 1e-9)
    assert sum(mech.output_distribution(0).values()) == pytest.approx(1.0)


@pytest.mark.parametrize("rounds", [1, 2, 5])
def test_memoized_one_bit_mean_over_many_rounds(rounds):
    """Constant values: one report repeated, ε for the whole period (α-point rounding included).
    A change of the rounded value is visible (ε = ∞ against a constant history); two distinct
    rounded values with the same pattern of rounds cost 2ε (tight)."""
    mech = MemoizedOneBitMean(epsilon=1.0, high=10.0, s=4)
    constant = [(x,) * rounds for x in (0.0, 3.3, 6.1, 10.0)]
    for h in constant:
        assert sum(mech.history_distribution(h).values()) == pytest.approx(1.0)
    assert exact_epsilon(mech.history_distribution, constant) == pytest.approx(1.0)
    if rounds >= 2:
        changing = (0.0,) * (rounds - 1) + (10.0,)
        assert exact_epsilon(mech.history_distribution, [constant[0], changing]) == math.inf
        swapped = (10.0,) * (rounds - 1) + (0.0,)
        assert exact_epsilon(mech.history_distribution, [changing, swapped]) == pytest.approx(2.0)


def test_memoized_dbitflip_over_many_rounds():
    mech = MemoizedDBitFlip(epsilon=1.0, d=4, num_bits=2)
    constant = [(v,) * 4 for v in range(4)]
    assert exact_epsilon(mech.history_distribution, constant) == pytest.approx(1.0)
    assert exact_epsilon(mech.history_distribution, [(0, 0), (0, 1)]) == math.inf
    assert exact_epsilon(mech.history_distribution, [(0, 1), (2, 3), (1, 0)]) <= 2.0 + 1e-9


@pytest.mark.parametrize("cls, args", [(MemoizedOneBitMean, dict(high=10.0, s=8)),
                                       (MemoizedDBitFlip, dict(d=16, num_bits=3))])
def test_memoized_reports_repeat_with_the_secret(cls, args):
    mech = cls(epsilon=1.0, **args)
    values = np.arange(400) % 10
    secrets = np.arange(400, dtype=np.uint64) * 7919
    a, b = mech.privatize(values, secrets=secrets), mech.privatize(values, rng=5, secrets=secrets)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert not np.array_equal(np.asarray(a), np.asarray(mech.privatize(values, secrets=secrets + 1)))
    with pytest.raises(LDPTypeError):
        mech.privatize(values, secrets=secrets[:5])


def test_alpha_rounding_keys():
    mech = MemoizedOneBitMean(epsilon=1.0, high=8.0, s=4)
    secrets = np.arange(100_000, dtype=np.uint64)
    keys = mech.memo_keys(np.full(100_000, 3.0), secrets)            # 3.0 = 1.5 grid steps
    assert set(np.unique(keys)) == {1, 2}
    assert abs((keys == 2).mean() - 0.5) <= 5 * math.sqrt(0.25 / 100_000)
    np.testing.assert_array_equal(mech.memo_keys(np.array([0.0, 8.0]), secrets[:2]), [0, 4])


# --- accuracy --------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [OneBitMean, MemoizedOneBitMean])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_one_bit_mean_unbiased_with_analytic_variance(cls, eps):
    mech = cls(epsilon=eps, high=10.0)
    x = np.linspace(0, 10, 1000)
    trials = 400
    est = np.array([mech.estimate(mech.aggregate(mech.privatize(x, rng=s))) for s in range(trials)])
    var = mech.population_variance(x)
    assert abs(est.mean() - x.mean()) <= 5 * math.sqrt(var / trials)
    ratio = np.mean((est - x.mean()) ** 2) / var
    assert abs(ratio - 1) <= variance_ratio_tolerance(est[:, None])[0]


@pytest.mark.parametrize("cls", [DBitFlip, MemoizedDBitFlip])
@pytest.mark.parametrize("num_bits", [1, 3])
def test_dbitflip_unbiased_with_analytic_variance(cls, num_bits):
    mech = cls(epsilon=1.0, d=8, num_bits=num_bits)
    truth = np.array([800, 500, 300, 200, 100, 60, 30, 10])
    values = np.repeat(np.arange(8), truth)
    n, trials = truth.sum(), 300
    reports = mech.privatize(np.tile(values, trials), rng=9)
    est = np.array([mech.estimate(mech.aggregate(tuple(r[i * n:(i + 1) * n] for r in reports)))
                    for i in range(trials)])
    var = np.array([mech.variance(n, f) for f in truth / n])
    assert np.all(np.abs(est.mean(axis=0) - truth) <= 5 * np.sqrt(var / trials))
    ratio = np.mean((est - truth) ** 2, axis=0) / var
    tol = variance_ratio_tolerance(est)
    assert np.all(np.abs(ratio - 1) <= tol), ratio
    assert abs(ratio.mean() - 1) <= tol.max()


# --- aggregates and validation ---------------------------------------------------------------

def test_merge_and_serialize():
    flip = DBitFlip(epsilon=1.0, d=10, num_bits=2)
    reports = flip.privatize(np.arange(600) % 10, rng=1)
    parts = [flip.aggregate(tuple(r[i:i + 200] for r in reports)) for i in (0, 200, 400)]
    whole = flip.aggregate(reports)
    assert parts[2] + parts[0] + parts[1] == whole
    assert load_aggregate(dump_aggregate(whole)) == whole
    mean = MemoizedOneBitMean(epsilon=1.0, high=3.0, s=3)
    bits = mean.privatize(np.linspace(0, 3, 500), rng=0)
    agg = mean.aggregate(bits[:100]) + mean.aggregate(bits[100:])
    assert agg == mean.aggregate(bits)
    assert load_aggregate(dump_aggregate(agg)) == agg
    with pytest.raises(IncompatibleError):
        agg + OneBitMean(epsilon=1.0, high=3.0).aggregate(bits)


def test_validation():
    flip = DBitFlip(epsilon=1.0, d=10, num_bits=2)
    buckets, flags = flip.privatize(np.arange(10), rng=0)
    with pytest.raises(LDPValueError, match="distinct"):
        flip.aggregate((buckets[:, ::-1].copy(), flags))
    with pytest.raises(IncompatibleError):
        DBitFlip(epsilon=1.0, d=5, num_bits=2).aggregate((buckets, flags))
    with pytest.raises(LDPValueError):
        DBitFlip(epsilon=1.0, d=4, num_bits=5)
    with pytest.raises(LDPValueError):
        flip.privatize([10])
    with pytest.raises(LDPValueError, match="found 11.0"):
        OneBitMean(epsilon=1.0, high=10.0).privatize([1.0, 11.0])
    with pytest.raises(LDPValueError):
        OneBitMean(epsilon=1.0, high=10.0).estimate(OneBitMean(epsilon=1.0, high=10.0).empty_aggregate())
    with pytest.raises(IncompatibleError):
        OneBitMean(epsilon=1.0, high=1.0).aggregate(np.array([0, 2], dtype=np.uint8))
