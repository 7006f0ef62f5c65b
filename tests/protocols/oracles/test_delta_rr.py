"""(ε, δ) randomized response (Holohan, Leith, Mason 2017): exact δ by the hockey-stick audit,
unbiased estimates and the analytic variance against simulation at fixed seeds."""

import math

import numpy as np
import pytest

from protocols import GRR, LDPValueError, PrivacyAccountant, RandomizedResponse, exact_delta, exact_epsilon


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-6, 0.01, 0.2])
@pytest.mark.parametrize("d", [2, 3, 8])
def test_delta_is_exact(epsilon, delta, d):
    mech = GRR(epsilon=epsilon, d=d, delta=delta)
    assert math.isclose(exact_delta(mech.output_distribution, range(d), epsilon), delta, rel_tol=1e-9)
    # smaller ε costs more than δ; the pure ε of the mechanism is ln(p/q) > ε
    assert exact_delta(mech.output_distribution, range(d), 0.9 * epsilon) > delta
    assert math.isclose(exact_epsilon(mech.output_distribution, range(d)), math.log(mech.p / mech.q))


def test_binary_optimum_and_pure_limit():
    rr = RandomizedResponse(epsilon=1.0, delta=0.05)
    e = math.e
    assert math.isclose(rr.p, (e + 0.05) / (e + 1)) and math.isclose(rr.q, 1 - rr.p)
    assert RandomizedResponse(epsilon=1.0, delta=0.0) == RandomizedResponse(epsilon=1.0)
    # the variance falls with δ at fixed ε
    assert rr.variance(1000) < RandomizedResponse(epsilon=1.0).variance(1000)
    for bad in (-0.1, 1.0, 1.5):
        with pytest.raises(LDPValueError, match="delta"):
            RandomizedResponse(epsilon=1.0, delta=bad)


@pytest.mark.parametrize("d, delta", [(2, 0.05), (4, 0.1)])
def test_unbiased_with_the_analytic_variance(d, delta):
    mech = GRR(epsilon=0.5, d=d, delta=delta)
    n, trials = 2000, 2000
    values = np.arange(n) % d
    values[: n // 2] = 0                                      # value 0 holds more than 1/d
    truth = np.bincount(values, minlength=d)
    rng = np.random.default_rng(12)
    est = np.array([mech.estimate(mech.simulate(values, rng=rng)) for _ in range(trials)])
    var = np.array([mech.variance(n, t / n) for t in truth])
    assert np.all(np.abs(est.mean(axis=0) - truth) <= 5 * np.sqrt(var / trials))
    # sample variance of normal-ish estimates: sd ≈ σ²·√(2/(T − 1))
    assert np.all(np.abs(est.var(axis=0, ddof=1) - var) <= 5 * var * math.sqrt(2 / (trials - 1)))


def test_privatize_matches_the_law():
    mech = RandomizedResponse(epsilon=0.5, delta=0.1)
    reports = mech.privatize(np.zeros(200_000, dtype=np.int64), rng=3)
    se = math.sqrt(mech.p * mech.q / reports.size)
    assert abs((reports == 0).mean() - mech.p) <= 5 * se


def test_accountant_refuses_approximate_mechanisms():
    with pytest.raises(LDPValueError, match="pure ε only"):
        PrivacyAccountant(total=5.0).spend([1, 2], RandomizedResponse(epsilon=1.0, delta=1e-3))
