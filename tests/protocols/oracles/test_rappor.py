import math
import sys

import numpy as np
import pytest

from protocols import RAPPOR, LDPTypeError, LDPValueError, exact_epsilon
from protocols.bits import packing as bits
from protocols.oracles.rappor import nnls, ols_fit

from tests.helpers import tolerance_mean


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
    from protocols.bits import packing as bits
    b = bits.unpack(rep.bits, 16)
    pos = mech.filter_positions([0], [0])[0, 0]
    others = np.delete(b, pos, axis=1).mean()
    assert abs(others - 0.25) <= 5 * math.sqrt(0.25 * 0.75 / (15 * n)) * math.sqrt(15)
    assert abs(b[:, pos].mean() - 0.75) <= 5 * math.sqrt(0.75 * 0.25 / n)


def heavy_hitter_aggregate(mech, seed=4):
    rng = np.random.default_rng(0)
    truth = {0: 20000, 1: 10000, 2: 5000}
    values = np.concatenate([np.full(c, v) for v, c in truth.items()] +
                            [rng.integers(100, 10**6, 5000)])
    return truth, mech.aggregate(mech.privatize(values, rng=seed))


@pytest.mark.parametrize("method", ["lasso", "nnls"])
@pytest.mark.parametrize("correction", ["bonferroni", "bh"])
def test_candidate_estimates_recover_heavy_values(method, correction):
    if method == "lasso":
        pytest.importorskip("sklearn")
    mech = RAPPOR(num_bits=64, num_hashes=2, num_cohorts=8)
    truth, agg = heavy_hitter_aggregate(mech)
    est = mech.estimate(agg, candidates=range(20), method=method, correction=correction)
    for v, c in truth.items():
        assert est.significant[v] and est.p_values[v] < 1e-6
        assert abs(est.counts[v] - c) <= 5 * est.stderr[v]
    assert est.significant[3:].sum() <= 1
    assert np.all(est.p_values[est.counts == 0] == 1)
    with pytest.raises(LDPTypeError):
        mech.estimate(agg)


def test_lasso_decoder_p_values_of_absent_candidates():
    """Only values outside the candidates: nothing significant under either correction, and
    p-values not too small: Pr[p < 0.05] within 5 binomial standard errors of 0.05 over 400 p-values.
    (Without the intercept, the background mass went to the candidates: min p ≈ 0.001 per run.)"""
    pytest.importorskip("sklearn")
    mech = RAPPOR(num_bits=32, num_hashes=2, num_cohorts=16)
    values = np.random.default_rng(1).integers(1000, 10**6, 30_000)
    p_values = []
    for seed in range(8):
        agg = mech.aggregate(mech.privatize(values, rng=seed))
        for correction in ("bonferroni", "bh"):
            est = mech.estimate(agg, candidates=range(50), correction=correction)
            assert not est.significant.any()
        p_values.append(est.p_values)
    small = np.mean(np.concatenate(p_values) < 0.05)
    assert small <= 0.05 + 5 * math.sqrt(0.05 * 0.95 / 400)


def test_benjamini_hochberg_keeps_at_least_bonferroni():
    pytest.importorskip("sklearn")
    mech = RAPPOR(num_bits=32, num_hashes=2, num_cohorts=8)
    counts = np.array([3000, 1500, 900, 600, 400, 300])
    values = np.concatenate([np.repeat(np.arange(6), counts), np.arange(10**5, 10**5 + 20_000)])
    agg = mech.aggregate(mech.privatize(values, rng=2))
    bonf = mech.estimate(agg, candidates=range(40), alpha=0.1)
    bh = mech.estimate(agg, candidates=range(40), alpha=0.1, correction="bh")
    assert np.all(bh.significant >= bonf.significant)
    np.testing.assert_array_equal(bh.p_values, bonf.p_values)


def test_least_squares_agrees_with_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(60, 4)).astype(float)
    y = X @ [0.3, 0.1, 0.0, 0.05] + rng.normal(0, 0.05, 60)
    beta, se, p = ols_fit(X, y)
    ref = sm.OLS(y, X).fit()
    np.testing.assert_allclose(beta, ref.params, rtol=1e-9)
    np.testing.assert_allclose(se, ref.bse, rtol=1e-9)
    one_sided = np.where(ref.tvalues > 0, ref.pvalues / 2, 1 - ref.pvalues / 2)
    np.testing.assert_allclose(p, one_sided, rtol=1e-6)


def test_decoder_options_are_validated(monkeypatch):
    mech = RAPPOR(num_bits=16, num_hashes=2, num_cohorts=2)
    agg = mech.aggregate(mech.privatize(np.arange(100), rng=0))
    with pytest.raises(LDPValueError, match="method"):
        mech.estimate(agg, candidates=range(4), method="ridge")
    with pytest.raises(LDPValueError, match="correction"):
        mech.estimate(agg, candidates=range(4), correction="holm")
    monkeypatch.setitem(sys.modules, "sklearn.linear_model", None)
    with pytest.raises(ImportError, match="nnls"):
        mech.estimate(agg, candidates=range(4))
    assert mech.estimate(agg, candidates=range(4), method="nnls").counts.shape == (4,)


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


def test_rappor_clears_true_bits():
    """P[S=1 | B=1] = q* < 1: a true bit is cleared with probability 1 − q* (ε is finite)."""
    mech = RAPPOR(num_bits=16, num_hashes=1, num_cohorts=1)
    n = 40000
    rep = mech.privatize(np.zeros(n, dtype=np.int64), rng=2)
    pos = mech.filter_positions([0], [0])[0, 0]
    rate = bits.unpack(rep.bits, 16)[:, pos].mean()
    s = math.sqrt(mech.p_star * (1 - mech.p_star))
    assert abs(rate - mech.p_star) <= tolerance_mean(s, n)
    assert rate < 0.9
