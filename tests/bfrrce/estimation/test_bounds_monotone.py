"""Monotone in ε (exact degradation of the sums) and sets whose parties' items collide."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from bfrrce import BFRRCE, ColumnSums, PrivacyWarning
from bfrrce.estimation import bounds
from bfrrce.estimation.design import Observed
from protocols.core.perturbation import count_variance


def test_degradation_is_the_law_of_the_smaller_epsilon():
    """c′ = Binomial(c, a) + Binomial(n − c, b) has the mean and variance of
    Binomial(t, p′) + Binomial(n − t, q′): checked on 4,000 columns within 5 standard errors."""
    hi, lo = BFRRCE(epsilon=10.0, L=4000), BFRRCE(epsilon=8.0, L=4000)
    a, b = bounds.thinning(hi.p, hi.q, lo.p, lo.q)
    n, t = 5000, 300
    rng = np.random.default_rng(3)
    counts = rng.binomial(t, hi.p, 4000) + rng.binomial(n - t, hi.q, 4000)
    out = bounds.degrade_counts(counts, n, a, b)
    mean, var = t * lo.p + (n - t) * lo.q, float(count_variance(t, n, lo.p, lo.q))
    assert abs(out.mean() - mean) <= 5 * math.sqrt(var / out.size)
    assert abs(out.var() - var) <= 5 * var * math.sqrt(2 / out.size)
    assert np.array_equal(out, bounds.degrade_counts(counts, n, a, b))       # seeded by the sums


def test_upper_bound_at_epsilon_is_at_most_the_bound_on_the_degraded_sums():
    """On a full filter (Zipf 0.8, 10^5 users, L = 1024) every column is visible at ε = 10 and the
    bound on the sums as reported is n. They are in the exact regime, so the laws are ε_x, ε_x/√2
    and ε_x/2 with ε_x where an empty column's sum has sd EXACT_BELOW (not the grid 8, 5.66, 4),
    and the estimate is at most the bound on the sums degraded to ε_x at that law's share."""
    rng = np.random.default_rng(0)
    w = np.arange(1, 20001, dtype=float) ** -0.8
    f = rng.multinomial(10 ** 5, w / w.sum())
    f = f[f > 0]
    mech = BFRRCE(epsilon=10.0, L=1024)
    agg = mech.simulate(np.arange(f.size), counts=f, rng=rng)
    est = mech.estimate(agg)
    assert list(mech.degraded_laws()) == [2.0 ** (k / 2) for k in range(6, 3, -1)]
    laws = mech.degraded_laws(agg.n)
    top = next(iter(laws))
    assert list(laws) == pytest.approx([top, top / math.sqrt(2), top / 2]) and 8.0 < top < 10.0
    p2, q2 = laws[top]
    assert bounds.exact_regime(agg.n, mech.p, mech.q) and not bounds.exact_regime(agg.n, p2, q2)
    assert math.sqrt(count_variance(0, agg.n, p2, q2)) == pytest.approx(bounds.EXACT_BELOW, rel=1e-5)
    degraded = bounds.degrade_counts(agg.counts, agg.n, *bounds.thinning(mech.p, mech.q, p2, q2))
    alpha = (1 - 0.95) / 2 * bounds.law_shares(mech.design(agg.n), laws)[1]
    at_top, _ = bounds.upper_bound(Observed(degraded, mech.design(agg.n).at(p2, q2)), alpha)
    assert est.upper <= at_top < agg.n
    assert est.lower <= f.size <= est.upper


def test_degraded_laws_move_only_where_the_sums_are_exact():
    """The grid is kept where n reports at ε are outside the exact regime (ε = 8, n = 10^5) and
    where no law is outside it (n = 100: an empty column's sum has sd at most √n/2 = 5); where ε
    and ε/2√2 are both inside it (ε = 12, n = 1,000) the grid's last law is ε_x, at which that sd
    is EXACT_BELOW."""
    for eps, n in ((8.0, 10 ** 5), (12.0, 100)):
        mech = BFRRCE(epsilon=eps, L=1024)
        assert mech.degraded_laws(n) == mech.degraded_laws()
    mech = BFRRCE(epsilon=12.0, L=1024)
    laws, grid = mech.degraded_laws(1000), mech.degraded_laws()
    assert list(laws)[:2] == list(grid)[:2] and list(laws)[2] < list(grid)[2]
    p2, q2 = list(laws.values())[2]
    assert all(bounds.exact_regime(1000, *law) for law in list(laws.values())[:2])
    assert not bounds.exact_regime(1000, p2, q2)
    assert math.sqrt(count_variance(0, 1000, p2, q2)) == pytest.approx(bounds.EXACT_BELOW, rel=1e-5)


def test_upper_bound_tries_the_law_outside_the_exact_regime_where_the_grid_is_inside_it():
    """One value held by 500 users at ε = 10, L = 1024: the sums and the grid's first two laws
    (8, 5.66) are in the exact regime, so the bound is at most the one on the sums degraded to
    ε_x at that law's share, though neither grid law improves on the sums' own (the search goes
    on past them); at ε = 8, ε_x is the first law."""
    warnings.simplefilter("ignore", PrivacyWarning)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        mech = BFRRCE(epsilon=10.0, L=1024, hash_seed=seed)
        agg = mech.simulate(np.arange(1), counts=np.full(1, 500), rng=rng)
        est = mech.estimate(agg)
        laws = mech.degraded_laws(agg.n)
        eps_x, (p2, q2) = list(laws.items())[-1]
        assert eps_x == pytest.approx(next(iter(BFRRCE(epsilon=8.0, L=1024).degraded_laws(agg.n))))
        degraded = bounds.degrade_counts(agg.counts, agg.n, *bounds.thinning(mech.p, mech.q, p2, q2))
        alpha = (1 - 0.95) / 2 * bounds.law_shares(mech.design(agg.n), laws)[-1]
        at_law, _ = bounds.upper_bound(Observed(degraded, mech.design(agg.n).at(p2, q2)), alpha)
        assert est.lower <= 1 <= est.upper <= at_law


MONOTONE_EPSILONS = (8.0, 10.0, 12.0, 16.0)


def median_uppers(values, users, L, perturbation="optimized", seeds=20):
    """Median upper bound over ``seeds`` seeded runs (hash seed s, noise seed s) at each ε of
    MONOTONE_EPSILONS, for ``values`` values of ``users`` users each; every interval must hold
    D. Returns (the medians, the last mechanism)."""
    warnings.simplefilter("ignore", PrivacyWarning)
    medians = []
    for eps in MONOTONE_EPSILONS:
        uppers = []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            mech = BFRRCE(epsilon=eps, L=L, perturbation=perturbation, hash_seed=seed)
            est = mech.estimate(mech.simulate(np.arange(values), counts=np.full(values, users), rng=rng))
            assert est.lower <= values <= est.upper
            uppers.append(est.upper)
        medians.append(float(np.median(uppers)))
    return medians, mech


def test_one_value_of_few_users_is_bounded_below_the_heavy_columns_noise_and_tighter_with_epsilon():
    """One value held by 500 users, L = 4096 (every sum in the exact regime): the median upper
    bound over 20 seeds does not rise from ε = 8 to 10, 12 and 16 (it rose between ε = 8 and 10
    while the light columns' exact bias was charged to all n users), and at ε = 16 it is below
    1 + 1.96·σ_H, σ_H = (500/4)^{1/2}/(p − q) the heavy column's noise, where a mass balance
    through the complement n − t̂_H stops."""
    medians, mech = median_uppers(1, 500, 4096)
    assert all(b <= a for a, b in zip(medians, medians[1:])), medians
    assert medians[-1] < 1 + 1.96 * math.sqrt(500 / 4) / (mech.p - mech.q)


@pytest.mark.parametrize("values, users, L", [(1, 1000, 1024), (5, 200, 2048), (3, 333, 2000)])
def test_symmetric_flips_bound_few_users_tighter_with_epsilon(values, users, L):
    """Symmetric flips, about 1,000 users in 1–5 values (every sum in the exact regime): the
    median upper bound over 20 seeds does not rise from ε = 8 to 10, 12 and 16. It rose from
    ε = 8 to 10 while the complement's variance charged an empty column's variance to every
    column a hypothesised D occupies: at ε = 8 the first law takes the whole level (ε_x >= 0.8·ε),
    at ε = 10 only 0.6 of it, and the sums' own bound was no help."""
    medians, _ = median_uppers(values, users, L, "symmetric")
    assert all(b <= a for a, b in zip(medians, medians[1:])), medians


def test_law_thresholds_select_at_the_laws_users():
    """A law's threshold read on the sums as reported sits at the users of the law's own:
    (τ − nq)/(p − q) = (τ′ − nq′)/(p′ − q′) rounded up to a count, above the reports' own, and
    an empty column passes it with a probability below the law's tail."""
    hi, lo = BFRRCE(epsilon=10.0, L=1024), BFRRCE(epsilon=5.0, L=1024)
    design = hi.design(10 ** 6)
    for tail in (1e-6, 1 / 1024, 0.1):
        tau, own = bounds.law_threshold(tail, design, (lo.p, lo.q)), bounds.law_threshold(tail, design)
        at_law = (bounds.null_quantile(tail, 10 ** 6, lo.q) - 10 ** 6 * lo.q) / (lo.p - lo.q)
        assert 0 <= (tau - 10 ** 6 * hi.q) / (hi.p - hi.q) - at_law <= 1 / (hi.p - hi.q)
        assert tau > own == bounds.null_quantile(tail, 10 ** 6, hi.q)
        assert stats.binom.sf(tau, 10 ** 6, hi.q) <= tail


def test_upper_bound_no_worse_at_higher_epsilon_on_a_full_filter():
    """20,000 values × 50 users, L = 1024 (the review's case: median 873,996 at ε = 8, 10^6 at
    ε = 10 and 12): the median upper bound at ε = 10 and 12 is at most the one at ε = 8, within
    5 standard errors of a median (1.253·sd/√R)."""
    runs, counts = 12, np.full(20_000, 50)
    medians, spread = {}, {}
    for eps in (8.0, 10.0, 12.0):
        ups = []
        for seed in range(runs):
            mech = BFRRCE(epsilon=eps, L=1024, seed=seed)
            ups.append(mech.estimate(mech.simulate(np.arange(counts.size), counts=counts, rng=seed)).upper)
        medians[eps], spread[eps] = float(np.median(ups)), float(np.std(ups))
    slack = 5 * 1.253 * spread[8.0] / math.sqrt(runs)
    assert medians[10.0] <= medians[8.0] + slack < 10 ** 6
    assert medians[12.0] <= medians[8.0] + slack


def test_sets_whose_items_collide_are_covered():
    """50 parties holding 500 to 1,500 items each at L = 1024 set fewer bits than they hold
    items; the interval holds the true number of distinct items in every run."""
    mech = BFRRCE(epsilon=4.0, L=1024, unit="item")
    rng = np.random.default_rng(1)
    for _ in range(3):
        keys = rng.integers(0, 2 ** 62, 20_000)
        pos = mech.bloom.positions(keys)[:, 0]
        bits = np.zeros((50, mech.L), dtype=bool)
        held = set()
        for party in range(50):
            items = rng.choice(keys.size, int(rng.integers(500, 1501)), replace=False)
            bits[party, pos[items]] = True
            held.update(items.tolist())
        counts = rng.binomial(bits.sum(axis=0), mech.p) + rng.binomial(50 - bits.sum(axis=0), mech.q)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            est = mech.estimate(ColumnSums(mech, counts, 50))
        assert est.lower <= len(held) <= est.upper


def test_an_interval_wider_than_twice_prints_the_bounds_first_and_no_plus_minus():
    """The README's mixture (120 values of 200 users, 500 singletons, ε = 4): upper > 2·lower, so
    the first line gives the bounds and the reason, the estimate line has no ±, and
    ``details["identified_at"]`` names an ε and an n."""
    values = np.concatenate([np.repeat(np.arange(120), 200), np.arange(1000, 1500)])
    mech = BFRRCE(epsilon=4.0, L=1024)
    est = mech.estimate(mech.simulate(values, rng=0))
    assert est.upper > 2 * est.lower
    first, second = str(est).splitlines()[:2]
    assert first.startswith("distinct values: between") and "too rare to see" in first
    assert " ± " not in second and "not a measurement" in second
    assert set(est.details["identified_at"]) == {"epsilon", "n"}


def _heavy_and_singletons(singletons, seed, L=1024):
    counts = np.concatenate([[100_000], np.ones(singletons, dtype=np.int64)])
    rng = np.random.default_rng(seed)
    mech = BFRRCE(epsilon=4.0, L=L, hash_seed=int(rng.integers(2 ** 31)))
    agg = mech.simulate(rng.integers(0, 2 ** 62, counts.size), counts=counts, rng=rng)
    return mech, agg, counts.size


def test_upper_bound_below_d_star_takes_the_whole_level(monkeypatch):
    """The confidence set {D <= d* : D <= B(α)} ∪ {D > d* : D <= M}: where the bound with the laws'
    shares (M) is at most d* = laws_below, the upper end is min(d*, B(α)) with B at the whole α;
    above d* it is M. One value of 10^5 users and 1,000 singletons, L = 1024 (d* = 4,096)."""
    mech, agg, _ = _heavy_and_singletons(1000, 0)
    observed = Observed(agg.counts, mech.design(agg.n))
    laws, alpha = mech.degraded_laws(), 0.025
    assert bounds.laws_below(observed.design) == bounds.LAWS_FROM * mech.L / mech.l
    shared, _ = bounds.upper_bound(observed, bounds.law_shares(observed.design, laws)[0] * alpha)
    whole, _ = bounds.upper_bound(observed, alpha)
    got, info = bounds.upper_bound_over_laws(observed, laws, alpha)
    assert whole < shared <= bounds.laws_below(observed.design)
    assert got == whole and info["upper_epsilon"] is None
    monkeypatch.setattr(bounds, "LAWS_FROM", shared * mech.l / mech.L / 2)   # d* below M: the end is M
    assert bounds.upper_bound_over_laws(observed, laws, alpha)[0] == shared


def test_upper_bound_below_d_star_holds_at_its_level():
    """The same data over 200 runs (new hash seed and noise each): the upper bound, at the whole
    α/2 = 0.025 below d*, misses the true D in at most 0.025 + 3 binomial sd of the runs."""
    runs, miss = 200, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for seed in range(runs):
            mech, agg, D = _heavy_and_singletons(1000, seed)
            est = mech.estimate(agg)
            assert est.upper <= bounds.laws_below(mech.design(agg.n))
            miss += est.upper < D
    assert miss / runs <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / runs)


def test_one_value_held_by_all_is_never_located_closer_and_the_printout_says_so():
    """One value of 10^6 users at ε = 4, L = 1024: the users outside its column stay uncertain by
    that column's own noise (sd ≈ 1,000 users at p = ½), so no ε or n of the search
    puts the mass balance within 2× (``identified_at`` is None for both) and the printout says
    so instead of naming an ε."""
    from bfrrce.advice import predicted_upper

    mech = BFRRCE(epsilon=4.0, L=1024)
    est = mech.estimate(mech.simulate(np.array([7]), counts=np.array([10 ** 6]), rng=0))
    assert est.details["identified_at"] == {"epsilon": None, "n": None}
    assert "no ε up to 8× this one and no n up to 1,024×" in str(est)
    high = BFRRCE(epsilon=32.0, L=1024)
    assert predicted_upper(10 ** 6, 1, high.p, high.q, 1024, 1) > 2 * (1 - 1 / 6)    # the search's end


def test_the_named_epsilon_puts_the_predicted_mass_balance_within_two():
    """200 values × 5,000 users at ε = 8, L = 4096: the mass balance's prediction is above 5/3·D
    at ε = 8 and at most that at the ε that ``identified_at`` names, and not at the grid point
    below it (the first ε of the grid ε·2^{k/4} that passes both criteria)."""
    from bfrrce.advice import predicted_upper, predicted_within

    mech = BFRRCE(epsilon=8.0, L=4096)
    est = mech.estimate(mech.simulate(np.arange(200), counts=np.full(200, 5000), rng=0))
    eps = est.details["identified_at"]["epsilon"]
    assert eps is not None and eps > 8.0

    def predicted(e):
        m = BFRRCE(epsilon=e, L=4096)
        return predicted_upper(10 ** 6, 200, m.p, m.q, 4096, 1)

    assert predicted(8.0) > 2 * (1 - 1 / 6) * 200 >= predicted(eps)
    assert predicted(eps * 2 ** -0.25) > 2 * (1 - 1 / 6) * 200
    for e in (8.0, eps * 2 ** -0.25, eps, 2 * eps):            # the one-evaluation reading agrees
        m = BFRRCE(epsilon=e, L=4096)
        assert predicted_within(10 ** 6, 200, m.p, m.q, 4096, 1, 2 * (1 - 1 / 6) * 200) == (
            predicted(e) <= 2 * (1 - 1 / 6) * 200)


def test_at_most_is_never_wrong_about_the_bound():
    """upper_bound_at_most (one evaluation of the slots' inequality a threshold) says True only
    where upper_bound is at most d: checked on three profiles at d from B/2 to 4B, and it
    says True at the cap."""
    for singletons in (0, 300, 3000):
        mech, agg, _ = _heavy_and_singletons(singletons, 1)
        observed = Observed(agg.counts, mech.design(agg.n))
        parts = list(bounds._threshold_parts(observed, 0.02))
        value, _ = bounds.upper_bound(observed, 0.02, parts=parts)
        assert value == bounds.upper_bound(observed, 0.02)[0]
        for d in (value / 2, value * 0.999, value * 1.01, 2 * value, 4 * value):
            if bounds.upper_bound_at_most(observed, parts, d):
                assert value <= d
        assert bounds.upper_bound_at_most(observed, parts, agg.n)


def test_the_search_for_an_identifying_epsilon_stops_where_float64_does():
    """Symmetric perturbation at ε = 12 (the search would reach 8·ε = 96, where p rounds to 1):
    estimate() returns, and the ε it names, if any, is one float64 represents."""
    mech = BFRRCE(epsilon=12.0, L=1024, perturbation="symmetric")
    est = mech.estimate(mech.simulate(np.arange(20_000), counts=np.full(20_000, 5), rng=0))
    eps = est.details["identified_at"]["epsilon"]
    assert eps is None or BFRRCE(epsilon=eps, L=1024, perturbation="symmetric").p < 1
    assert est.lower <= 20_000 <= est.upper


def test_small_d_in_the_exact_regime_reads_the_first_law_where_it_is_close():
    """500 values × 200 users at ε = 10, L = 1024 (10^5 users, exact regime; the first law ε_x =
    8.29 >= 0.8·ε): the tests of D <= d* read the sums degraded to ε_x at the whole level, as the
    sums at ε = 8 are read there. At ε = 8 and n = 1,000 or 10,000 (ε_x ≈ 3.6 and 6.0 < 0.8·ε)
    they read the sums as reported."""
    mech = BFRRCE(epsilon=10.0, L=1024)
    agg = mech.simulate(np.arange(500), counts=np.full(500, 200), rng=0)
    observed, laws = Observed(agg.counts, mech.design(agg.n)), mech.degraded_laws(agg.n)
    low, eps = bounds._small_d_sums(observed, laws)
    assert eps == next(iter(laws)) and low.design.q == laws[eps][1]
    below = bounds.laws_below(low.design)
    est = mech.estimate(agg)
    assert est.upper == math.floor(bounds.upper_bound(low, 0.025, cap=below)[0]) and est.details["upper_epsilon"] == eps
    assert est.lower <= 500 <= est.upper <= below
    small = BFRRCE(epsilon=8.0, L=1024)
    for D, f in ((12, 83), (125, 80)):
        agg = small.simulate(np.arange(D), counts=np.full(D, f), rng=0)
        observed = Observed(agg.counts, small.design(agg.n))
        assert bounds._small_d_sums(observed, small.degraded_laws(agg.n))[0] is observed


def test_upper_bound_no_worse_at_higher_epsilon_where_light_values_crowd_columns_near_the_threshold():
    """Half of 10^5 users in 5 values, half singletons, L = 1024: at ε = 8 the singletons' columns
    (49 users each) sit just under the clean threshold and some pass it, so the slots of H add to
    |H| + U⁺ and the laws of smaller ε are tried (LAWS_CROWDED); on the same data the median upper
    bound over 5 seeds is then at most that at ε = 4 (without that reading it was above it)."""
    f = np.concatenate([np.full(5, 10 ** 4), np.ones(5 * 10 ** 4, dtype=np.int64)])
    uppers = {4.0: [], 8.0: []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for s in range(5):
            keys = np.random.default_rng(s).integers(0, 2 ** 62, f.size)
            for eps in uppers:
                mech = BFRRCE(epsilon=eps, L=1024)
                agg = mech.simulate(keys, counts=f, rng=np.random.default_rng(100 + s))
                uppers[eps].append(mech.estimate(agg).upper)
    assert np.median(uppers[8.0]) <= np.median(uppers[4.0])
