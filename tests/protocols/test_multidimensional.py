"""Multi-dimensional range queries (protocols.multidimensional): exact ε, unbiased answers with
the analytic variance at fixed seeds, SUM by stochastic rounding, merging, consistency."""

import itertools
import math

import numpy as np
import pytest

from protocols import LDPValueError, exact_epsilon
from protocols.multidimensional import HIO, Hierarchy, PerAttribute


def table(n, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 16, n)
    b = np.clip(a // 2 + rng.integers(-2, 3, n), 0, 7)             # correlated with a
    c = rng.integers(0, 3, n)
    return np.stack([a, b, c], axis=1)


def truth(rows, ranges, weights=None):
    keep = np.ones(len(rows), dtype=bool)
    for j, r in enumerate(ranges):
        if r is not None:
            keep &= (rows[:, j] >= r[0]) & (rows[:, j] <= r[1])
    return float(keep.sum() if weights is None else weights[keep].sum())


def test_decomposition_is_a_disjoint_cover():
    h = Hierarchy(37, True, 3)
    for lo, hi in itertools.combinations_with_replacement(range(37), 2):
        covered = []
        for level, i in h.decompose(lo, hi):
            start = i * h.widths[level]
            covered.extend(range(start, min(start + h.widths[level], 37)))
        assert sorted(covered) == list(range(lo, hi + 1))
        assert len(h.decompose(lo, hi)) <= 2 * (3 - 1) * len(h.widths)


@pytest.mark.parametrize("measure", [False, True])
def test_exact_epsilon_small_domain(measure):
    mech = HIO(epsilon=1.0, domains=(4, 3), ordinal=(True, False), branching=2, measure=measure)
    rows = list(itertools.product(range(4), range(3)))
    assert math.isclose(exact_epsilon(mech.output_distribution, rows), 1.0, rel_tol=1e-9)
    base = PerAttribute(epsilon=1.0, domains=(4, 3), ordinal=(True, False), branching=2)
    assert exact_epsilon(base.output_distribution, rows) <= 1.0 + 1e-9


QUERIES = [[(3, 12), (2, 5), None], [(0, 7), None, (1, 1)], [None, (4, 7), (0, 0)]]


def test_unbiased_with_its_error_bar():
    rows = table(4000)
    mech = HIO(epsilon=2.0, domains=(16, 8, 3), ordinal=(True, True, False))
    rng = np.random.default_rng(5)
    trials = 300
    aggregates = [mech.simulate(rows, rng=rng) for _ in range(trials)]
    for ranges in QUERIES:
        answers = [mech.answer(agg, ranges) for agg in aggregates]
        values = np.array([a.value for a in answers])
        var = np.mean([a.std_error ** 2 for a in answers])
        assert abs(values.mean() - truth(rows, ranges)) <= 5 * math.sqrt(var / trials)
        # sample variance against the analytic one: sd ≈ σ²·√(2/(T − 1)), plus 10% for the plug-in f
        assert abs(values.var(ddof=1) / var - 1) <= 5 * math.sqrt(2 / (trials - 1)) + 0.1


def test_privatize_agrees_with_simulate_and_merges():
    rows = table(3000, seed=1)
    mech = HIO(epsilon=4.0, domains=(16, 8, 3), ordinal=(True, True, False))
    q = QUERIES[0]
    a = mech.aggregate(mech.privatize(rows[:1500], rng=1))
    b = mech.aggregate(mech.privatize(rows[1500:], rng=2))
    both = a + b
    assert both == b + a and both.n == 3000
    assert all(np.array_equal(x.counts, y.counts + z.counts) for x, y, z in zip(both.layers, a.layers, b.layers))
    est = mech.answer(both, q)
    assert abs(est.value - truth(rows, q)) <= 5 * est.std_error
    assert mech.answer(both, [None, None, None]).value == 3000
    assert mech.answer(mech.empty_aggregate() + both, q) == est


def test_sum_queries():
    rows = table(4000, seed=2)
    weights = np.random.default_rng(3).random(4000)
    mech = HIO(epsilon=2.0, domains=(16, 8, 3), ordinal=(True, True, False), measure=True)
    rng = np.random.default_rng(7)
    aggregates = [mech.simulate(rows, rng=rng, weights=weights) for _ in range(200)]
    for ranges in (QUERIES[0], [None, None, None]):
        values = np.array([mech.answer(agg, ranges).value for agg in aggregates])
        sd = values.std(ddof=1)
        assert abs(values.mean() - truth(rows, ranges, weights)) <= 5 * sd / math.sqrt(200)
    with pytest.raises(LDPValueError, match="weights"):
        mech.privatize(rows)


def test_consistency_keeps_layers_on_the_simplex():
    rows = table(2000, seed=4)
    mech = HIO(epsilon=1.0, domains=(16, 8, 3), ordinal=(True, True, False))
    agg = mech.simulate(rows, rng=0)
    est = mech.answer(agg, QUERIES[0], consistency="norm_sub")
    assert 0 <= est.value <= 2000 and math.isnan(est.std_error)
    with pytest.raises(LDPValueError, match="consistency"):
        mech.answer(agg, QUERIES[0], consistency="magic")


@pytest.mark.parametrize("ranges, message", [
    ([(3, 20), None, None], "not within"),
    ([None, None, (0, 1)], "categorical"),
    ([None, None], "one range"),
])
def test_bad_queries(ranges, message):
    mech = HIO(epsilon=1.0, domains=(16, 8, 3), ordinal=(True, True, False))
    with pytest.raises(LDPValueError, match=message):
        mech.answer(mech.empty_aggregate(), ranges)


def test_shared_verbs_of_the_interface():
    """empty_aggregate is the neutral element, aggregate_batches merges, estimate_with_error's
    values are estimate's (every layer) and its errors follow the layer oracles' variances."""
    hio = HIO(epsilon=2.0, domains=(8, 4))
    rows = np.random.default_rng(0).integers(0, 4, size=(600, 2))
    first, second = hio.privatize(rows[:300], rng=1), hio.privatize(rows[300:], rng=2)
    whole = hio.aggregate(first).merge(hio.aggregate(second))
    merged = hio.aggregate_batches([first, second])
    assert merged.n == whole.n == 600 and hio.empty_aggregate().merge(whole).n == 600
    assert all(np.array_equal(a, b) for a, b in zip(hio.estimate(merged), hio.estimate(whole)))
    for est, value in zip(hio.estimate_with_error(whole), hio.estimate(whole)):
        assert np.allclose(est.value, value) and np.all(est.std_error > 0)
    base = PerAttribute(epsilon=2.0, domains=(8, 4))
    agg = base.aggregate(base.privatize(rows, rng=2))
    assert all(e.n == 0 for e in base.empty_aggregate())
    assert len(base.estimate_with_error(agg)) == 2
