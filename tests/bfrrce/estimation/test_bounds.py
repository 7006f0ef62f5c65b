"""Occupancy, second moment and the bounds (bfrrce.estimation.occupancy/moments/bounds).

Coverage tolerances: over R seeded runs a coverage of at least 95% has binomial standard error
√(0.95·0.05/R); the tests allow 5 of them below the nominal level.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import special, stats

from bfrrce import BFRRCE
from bfrrce.estimation import bounds, likelihood, moments, occupancy
from bfrrce.estimation.design import Design
from bfrrce.sums import debias


def nominal(runs, level=0.95):
    return level - 5 * math.sqrt(level * (1 - level) / runs)


def test_passing_columns_of_empty_columns_are_super_uniform():
    """R(u)/L <= u for empty columns (the exact binomial law's p-values), within 5 binomial se,
    at every threshold u of the grid."""
    rng = np.random.default_rng(0)
    n, q, size = 3000, 0.05, 200_000
    share = occupancy.passing_columns(rng.binomial(n, q, size), n, q) / size
    u = occupancy.P_GRID
    assert np.all(share <= u + 5 * np.sqrt(u * (1 - u) / size))


@pytest.mark.parametrize("n, q", [(10 ** 7, 0.12), (1000, 0.3), (50, 0.01), (10 ** 6, 3e-4)])
def test_passing_columns_count_the_pvalues_below_each_threshold(n, q):
    """R(u) from the critical counts equals the count of exact p-values <= u, including sums
    at and next to every critical count."""
    rng = np.random.default_rng(4)
    crit = occupancy.critical_counts(n, q)
    counts = np.concatenate([rng.binomial(n, q, 5000), rng.integers(0, n + 1, 200),
                             (crit + np.arange(-2, 3)[:, None]).ravel()]).clip(0, n).astype(np.int64)
    pv = stats.binom.sf(counts - 1, n, q)                     # Pr[Binomial(n, q) >= c_j]
    expected = [np.count_nonzero(pv <= u) for u in occupancy.P_GRID]
    np.testing.assert_array_equal(occupancy.passing_columns(counts, n, q), expected)


def test_fill_inversion_is_exact_without_noise():
    L, l = 1024, 2
    for D in (1, 37, 500, 5000):
        assert occupancy.values_from_empty((1 - 1 / L) ** (l * D), L, l) == pytest.approx(D)
    assert occupancy.values_from_empty(0.0, L, l) == math.inf


def test_occupancy_variance_matches_simulation():
    rng = np.random.default_rng(1)
    L, l, D, runs = 256, 2, 300, 4000
    occupied = [np.unique(rng.integers(0, L, l * D)).size for _ in range(runs)]
    var = occupancy.occupancy_variance(D, L, l)
    # the sample variance of normal-like data has relative se √(2/(runs − 1))
    assert abs(np.var(occupied, ddof=1) / var - 1) <= 5 * math.sqrt(2 / (runs - 1))


@pytest.mark.parametrize("load", [0.1, 1.0, 3.0])
def test_values_bounds_hold_over_hash_draws(load):
    """The Clopper–Pearson inversions of the collision law bound D at their level."""
    rng = np.random.default_rng(2)
    L, l, runs, alpha = 512, 1, 400, 0.05
    D = int(load * L)
    low = high = 0
    for _ in range(runs):
        occupied = np.unique(rng.integers(0, L, l * D)).size
        low += occupancy.values_lower(occupied, L, l, alpha) <= D
        high += occupancy.values_upper(occupied, L, l, alpha) >= D
    assert low / runs >= nominal(runs, 1 - alpha) and high / runs >= nominal(runs, 1 - alpha)


def _occupancy_law(L, slots):
    """Exact Pr[K_s = j] for s = 0 … ``slots`` uniform slots in L columns: K_{s+1} = K_s + 1 with
    probability 1 − K_s/L (rows s, columns j)."""
    law = np.zeros((slots + 1, L + 1))
    law[0, 0] = 1.0
    j = np.arange(L + 1)
    for s in range(slots):
        law[s + 1] = law[s] * j / L
        law[s + 1, 1:] += law[s, :-1] * (1 - j[:-1] / L)
    return law


@pytest.mark.parametrize("L", [16, 64, 200])
def test_waiting_time_bound_holds_by_enumeration(L):
    """slots_at_level against the exact occupancy law, every k and three levels (the blocks of
    WAITING_TERMS included at L = 200 with 64 terms a block): Pr[K_s <= k] <= α at the first
    integer s at or above the upper t, Pr[K_s >= k] <= α at the last at or below the lower t;
    and without blocks the bound is sharp: one slot below the upper t the tail is above α/1000
    (where t is finite and within the enumerated slots)."""
    law = _occupancy_law(L, 12 * L)
    cdf = np.cumsum(law, axis=1)
    blocks = occupancy.WAITING_TERMS
    if L == 200:
        occupancy.WAITING_TERMS = 64
        occupancy.slots_at_level.cache_clear()
    try:
        for alpha in (0.05, 1e-3, 1e-6):
            for k in range(1, L):
                top = occupancy.slots_at_level(k, L, alpha, True)
                if math.isfinite(top) and math.ceil(top) <= 12 * L:
                    assert cdf[math.ceil(top), k] <= alpha
                    if L != 200:                    # blocks widen the bound near a full filter
                        assert cdf[max(math.ceil(top) - 1, 0), k] > alpha / 1000
                bottom = occupancy.slots_at_level(k, L, alpha, False)
                if bottom > k:
                    assert 1 - cdf[math.floor(bottom), k - 1] <= alpha
    finally:
        occupancy.WAITING_TERMS = blocks
        occupancy.slots_at_level.cache_clear()


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_empty_count_bound_holds_by_enumeration_where_clopper_pearson_does_not(alpha):
    """values_upper's empty-count part (empty_fraction_bound, Chernoff) misses D = s with exact
    probability <= α for every s <= 12L at L = 30 (the exact occupancy law): near a full filter
    the empty count's upper tail is heavier than the binomial's, and the Clopper–Pearson
    inversion misses in more than α of the draws there (0.0502 at α = 0.05, 0.2012 at 0.2)."""
    L, top = 30, 360
    law = _occupancy_law(L, top)
    chernoff = np.array([occupancy.values_from_empty(occupancy.empty_fraction_bound(L - k, L, alpha, False), L, 1)
                         if k < L else math.inf for k in range(L + 1)])
    clopper = np.array([occupancy.values_from_empty(special.betaincinv(L - k, k + 1, alpha), L, 1)
                        if k < L else math.inf for k in range(L + 1)])
    misses = np.array([[law[s][chernoff < s].sum(), law[s][clopper < s].sum()] for s in range(1, top + 1)])
    assert misses[:, 0].max() <= alpha
    assert misses[:, 1].max() > alpha


def test_waiting_time_bound_is_sharper_than_the_empty_count_where_the_filter_is_dense():
    """At 414 of 1,024 columns (the named case's 500 values) and α = 3·10⁻⁵, the coupon
    collector's bounds lie inside the empty count's on both sides: the Chernoff bound the package
    uses (empty_fraction_bound) and even the exact binomial quantiles (Clopper–Pearson)."""
    L, k, alpha = 1024, 414, 3e-5
    empty = L - k
    lower = occupancy.slots_at_level(k, L, alpha, False)
    upper = occupancy.slots_at_level(k, L, alpha, True)
    for above, below in ((occupancy.empty_fraction_bound(empty, L, alpha, upper=False),
                          occupancy.empty_fraction_bound(empty, L, alpha, upper=True)),
                         (special.betaincinv(empty, L - empty + 1, alpha),
                          special.betaincinv(empty + 1, L - empty, 1 - alpha))):
        assert occupancy.values_from_empty(below, L, 1) < lower < upper < occupancy.values_from_empty(above, L, 1)


def test_occupied_columns_lower_bound_holds():
    """K⁻ <= K in at least 1 − α of the runs, for values well above and around the limit."""
    mech = BFRRCE(epsilon=4.0, L=256)
    runs, misses = 200, 0
    rng = np.random.default_rng(3)
    for _ in range(runs):
        values = rng.integers(0, 2 ** 62, 60)
        counts = rng.integers(1, 120, 60)
        agg = mech.simulate(values, rng=rng, counts=counts)
        k_true = np.count_nonzero(mech.bloom.column_counts(mech.bloom.positions(values), counts))
        passing = occupancy.passing_columns(agg.counts, agg.n, mech.q)
        misses += occupancy.occupied_columns_lower(passing, mech.L, 0.05) > k_true
    assert 1 - misses / runs >= nominal(runs)


def test_second_moment_is_unbiased():
    """Mean of Ŝ₂ over runs within 5 standard errors of Σ_j t_j², and its reported se matches
    the measured spread: the sample sd of R runs has relative se √(1/(2(R − 1))) (normal
    draws), so the ratio is within 5 of them of 1."""
    mech = BFRRCE(epsilon=2.0, L=128)
    values, counts = np.arange(40), np.arange(1, 41) * 10
    t = mech.bloom.column_counts(mech.bloom.positions(values), counts)
    runs = 400
    draws = []
    for s in range(runs):
        agg = mech.simulate(values, rng=s, counts=counts)
        deb = debias(agg.counts, agg.n, mech.p, mech.q)
        draws.append(moments.second_moment(deb.t_hat, deb.variance, agg.n, mech.p, mech.q))
    s2, se = np.array(draws).T
    truth = float(np.sum(t.astype(float) ** 2))
    assert abs(s2.mean() - truth) <= 5 * s2.std(ddof=1) / math.sqrt(runs)
    assert abs(np.median(se) / s2.std(ddof=1) - 1) <= 5 * math.sqrt(1 / (2 * (runs - 1)))


def test_equal_frequency_estimate_counts_equal_frequencies_and_their_collisions():
    """Equal frequencies, no noise to speak of (ε = 30): the likelihood estimate is D within its
    spread, although 300 values in 1024 columns collide about 40 times."""
    mech = BFRRCE(epsilon=30.0, L=1024)
    D = 300
    agg = mech.simulate(np.arange(D), rng=0, counts=np.full(D, 50))
    value, spread, *_ = likelihood.equal_frequency_estimate(agg.counts, mech.design(agg.n), agg.n)
    assert abs(value - D) <= 5 * spread and spread < 0.05 * D


@pytest.mark.parametrize("epsilon, L, D", [(4.0, 1024, 30), (4.0, 1024, 3), (8.0, 16, 2)])
def test_equal_frequency_estimate_finds_the_mode_between_grid_points(epsilon, L, D):
    """100,000 users, D values of equal frequency, all far above the detection limit: the
    likelihood is a comb of narrow peaks (D, and aliases such as 2D where every column would
    hold two values of half the users), narrower than the first grid's step in log D. The
    estimate must be the highest peak, D within 5 of its spreads, not an alias (it was 60.1 ±
    0.37 for D = 30, 6.0 ± 0.03 for D = 3)."""
    mech = BFRRCE(epsilon=epsilon, L=L)
    rng = np.random.default_rng(2)
    n = 100_000
    for _ in range(3):
        agg = mech.simulate(rng.integers(0, 2 ** 62, D), rng=rng, counts=np.full(D, n // D))
        value, spread, *_ = likelihood.equal_frequency_estimate(agg.counts, mech.design(agg.n), agg.n)
        assert abs(value - D) <= 5 * spread


@pytest.mark.parametrize("n, q, p, t", [(2000, 0.018, 0.5, 16), (2000, 0.018, 0.5, 82),
                                        (10_000, 0.119, 0.5, 82)])
def test_column_law_is_close_to_the_exact_convolution(n, q, p, t):
    """The Edgeworth-corrected law of Binomial(t, p) + Binomial(n − t, q) against the exact
    convolution: total variation <= 0.005 and at most a fifth of the plain normal's."""
    c = np.arange(n + 1)
    exact = np.convolve(stats.binom.pmf(np.arange(t + 1), t, p),
                        stats.binom.pmf(np.arange(n - t + 1), n - t, q))[:n + 1]
    normal_part, factor = likelihood.column_law_parts(c, np.array([float(t)]), n, p, q, dispersion=0.0)
    edgeworth = np.exp(normal_part[:, 0]) * factor[:, 0]
    normal = stats.norm.pdf(c, t * p + (n - t) * q, math.sqrt(t * p * (1 - p) + (n - t) * q * (1 - q)))
    distance = [0.5 * np.abs(f / f.sum() - exact).sum() for f in (edgeworth, normal)]
    assert distance[0] <= 0.005 and distance[0] <= distance[1] / 5


def equal_frequency_draws(eps, L, n, D, runs, seed=11):
    """S and its spread over runs with new hash draws, D values of n/D users each."""
    mech = BFRRCE(epsilon=eps, L=L)
    counts = np.diff(np.linspace(0, n, D + 1).round().astype(np.int64))
    rng = np.random.default_rng(seed)
    draws = np.array([likelihood.equal_frequency_estimate(
        mech.simulate(rng.integers(0, 2 ** 62, D), rng=rng, counts=counts).counts, mech.design(n), n)[:2]
        for _ in range(runs)])
    return draws[:, 0], draws[:, 1]


@pytest.mark.parametrize("eps, L, n", [(4.0, 1024, 10_000), (8.0, 1024, 2000)])
def test_equal_frequency_estimate_is_calibrated_where_values_are_near_the_limit(eps, L, n):
    """122 values among n users (10,000 at ε = 4, L = 1024: about 3 noise sd per column;
    2,000 at ε = 8: 16 users a value, some columns' counts of values misread): over 100 runs
    with new hash draws, the mean is D within 5 standard errors of the mean, and the median
    reported spread is within 0.8–1.25 of the measured sd, give or take 5 standard errors of a
    sample sd."""
    D, runs = 122, 100
    value, spread = equal_frequency_draws(eps, L, n, D, runs)
    assert abs(value.mean() - D) <= 5 * value.std(ddof=1) / math.sqrt(runs)
    slack = 5 * math.sqrt(1 / (2 * (runs - 1)))
    assert 0.8 - slack <= np.median(spread) / value.std(ddof=1) <= 1.25 + slack


def test_equal_frequency_estimate_counts_the_values_where_the_sums_tell_them_apart():
    """122 values of 82 users among 10,000, ε = 8, L = 4096: every column's count of values
    shows in its sum, so Σ_j k_j = lD pins D (the de-Poissonized likelihood): within half a
    value of 122 in every one of 50 runs, with a median spread of the integer step,
    √(1/12) = 0.29 (more where a column's count is in doubt)."""
    value, spread = equal_frequency_draws(8.0, 4096, 10_000, 122, 50)
    assert np.all(np.abs(value - 122) < 0.5)
    assert np.median(spread) == pytest.approx(math.sqrt(1 / 12), rel=0.05)
    assert np.all(spread >= 0.95 * math.sqrt(1 / 12))


def test_equal_frequency_estimate_stays_inside_when_the_data_say_nothing():
    """A full filter at low ε (2,000 users, 122 values, ε = 0.5, L = 16): the likelihood is
    nearly flat, so the estimate is not the end of the range N and its spread is as large as it."""
    mech = BFRRCE(epsilon=0.5, L=16, perturbation="symmetric")
    rng = np.random.default_rng(12)
    counts = np.diff(np.linspace(0, 2000, 123).round().astype(np.int64))
    for _ in range(20):
        agg = mech.simulate(rng.integers(0, 2 ** 62, 122), rng=rng, counts=counts)
        value, spread, *_ = likelihood.equal_frequency_estimate(agg.counts, mech.design(agg.n), agg.n)
        assert value < 1000 and spread > value / 2


def test_slots_bound_is_monotone_and_infinite_when_nothing_is_outside():
    L, alpha = 1024, 0.01
    values = [bounds.values_upper_by_slots(users, 100, L, 1, alpha) for users in (0, 50, 500, 5000)]
    assert values == sorted(values) and values[0] >= 0
    assert bounds.values_upper_by_slots(100, L, L, 2, alpha) == math.inf


@pytest.mark.parametrize("D, inside, L, l", [(300, 200, 1024, 1), (3000, 400, 1024, 1), (2000, 300, 4096, 2),
                                             (50, 10, 64, 3)])
def test_slots_bound_holds_when_the_fullest_columns_are_inside(D, inside, L, l):
    """The worst case of the argument: H is the ``inside`` columns holding the most value slots
    and every slot outside holds one user. Over 400 hash draws the bound at α = 0.05 is below
    D in at most 0.05 + 3 binomial sd of the runs."""
    rng = np.random.default_rng(D + L)
    alpha, runs, missed = 0.05, 400, 0
    for _ in range(runs):
        slots = np.zeros(L, dtype=np.int64)
        for _ in range(l):
            np.add.at(slots, rng.integers(0, L, D), 1)
        outside = np.sort(slots)[:L - inside].sum()
        missed += bounds.values_upper_by_slots(float(outside), inside, L, l, alpha) < D
    assert missed / runs <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


def cell_coverage(mech, make_counts, runs, seed=0):
    rng = np.random.default_rng(seed)
    covered = 0
    for _ in range(runs):
        counts = make_counts(rng)
        agg = mech.simulate(rng.integers(0, 2 ** 62, counts.size), rng=rng, counts=counts)
        est = mech.estimate(agg)
        covered += est.lower <= counts.size <= est.upper
        assert 1 <= est.lower <= est.value <= est.upper <= agg.n
    return covered / runs


CELLS = {
    # the example: synthetic-2 shape at ε = 2, values below the detection limit
    "uniform-invisible": (dict(epsilon=2.0, L=1024), lambda rng: np.full(122, 82)),
    # heavy values hide moderate ones
    "heavy-and-moderate": (dict(epsilon=4.0, L=1024),
                           lambda rng: np.concatenate([np.full(122, 82), np.full(40, 2000)])),
    # every value well above the limit
    "uniform-visible": (dict(epsilon=4.0, L=1024), lambda rng: np.full(500, 200)),
    # a long tail of rare values under a Zipf head
    "zipf": (dict(epsilon=8.0, L=512),
             lambda rng: (lambda f: f[f > 0])(rng.multinomial(20_000, (lambda w: w / w.sum())(
                 np.arange(1, 5001) ** -1.1)))),
    # several hashes and the paper's perturbation
    "l3-symmetric": (dict(epsilon=6.0, L=1024, l=3, perturbation="symmetric"),
                     lambda rng: np.full(300, 30)),
    # nq ~ 1e-3, the thresholds at NULL_FLOOR: light values whose sums sit just under them
    "tiny-nq": (dict(epsilon=16.0, L=1024),
                lambda rng: np.concatenate([np.full(40, 100), np.full(300, 5)])),
}


@pytest.mark.parametrize("n", [200, 5_000, 100_000])
def test_thresholds_stop_falling_below_the_null_floor(n):
    """law_threshold is non-increasing in ε and, where nq < NULL_FLOOR, equals the threshold at
    nq = NULL_FLOOR: at q -> 0 every null quantile falls to 0 and the columns of single light users
    would enter H (the bound then got looser with ε: 40 values × 100 users, L = 1024, ε = 12 → 20)."""
    for tail in (1e-9, 1 / 1024, 0.02, 0.1):
        taus = []
        for eps in (4, 8, 12, 16, 20, 30):
            mech = BFRRCE(epsilon=eps, L=1024)
            design = Design(n=n, p=mech.p, q=mech.q, L=1024, l=1)
            taus.append(bounds.law_threshold(tail, design))
            if n * mech.q < bounds.NULL_FLOOR:
                assert taus[-1] == bounds.null_quantile(tail, n, bounds.NULL_FLOOR / n)
        assert all(a >= b for a, b in zip(taus, taus[1:]))


@pytest.mark.parametrize("name", sorted(CELLS))
def test_interval_covers_the_true_count(name):
    params, make_counts = CELLS[name]
    runs = 100
    assert cell_coverage(BFRRCE(**params), make_counts, runs) >= nominal(runs)


def test_second_moment_is_unbiased_when_the_noise_is_skewed():
    """n q < 5 (n = 2,000, ε = 6, L = 4096): a variance clipped at t̂ >= 0 biased Ŝ₂ down by 20%
    and the second-moment lower bound missed the truth in 27% of runs (synthetic-1 shape)."""
    mech = BFRRCE(epsilon=6.0, L=4096)
    values, counts = np.arange(122), np.diff(np.linspace(0, 2000, 123).round().astype(np.int64))
    t = mech.bloom.column_counts(mech.bloom.positions(values), counts).astype(float)
    runs = 300
    s2 = []
    for s in range(runs):
        agg = mech.simulate(values, rng=s, counts=counts)
        deb = debias(agg.counts, agg.n, mech.p, mech.q)
        s2.append(moments.second_moment(deb.t_hat, deb.variance, agg.n, mech.p, mech.q)[0])
    assert abs(np.mean(s2) - np.sum(t ** 2)) <= 5 * np.std(s2, ddof=1) / math.sqrt(runs)


def test_lower_bound_holds_at_small_n_q():
    """synthetic-1 shape at ε = 6 and 8 with L = 4096 (n q = 4.9 and 0.67), 100 hash seeds."""
    values, counts = np.arange(122), np.diff(np.linspace(0, 2000, 123).round().astype(np.int64))
    for eps in (6.0, 8.0):
        runs = 100
        ok = sum(BFRRCE(epsilon=eps, L=4096, hash_seed=s).estimate(
            BFRRCE(epsilon=eps, L=4096, hash_seed=s).simulate(values, rng=s, counts=counts)).lower <= 122
            for s in range(runs))
        assert ok / runs >= nominal(runs, 0.975)


def test_second_moment_bound_holds_with_few_users():
    """20 users in 4 values, ε = 30 (optimized: every set bit still reported with probability ½),
    L = 1024, 1,000 runs: the lower bound may exceed D in at most 2.5% of runs, give or take 5
    binomial standard errors. The plug-in standard error of Ŝ₂ is smallest when a column's t̂
    falls near 0, and that bound missed in 7.2% of runs; the score bound misses in none."""
    mech = BFRRCE(epsilon=30.0, L=1024)
    rng = np.random.default_rng(1)
    runs, D = 1000, 4
    misses = sum(mech.estimate(mech.simulate(rng.integers(0, 2 ** 62, D), rng=rng,
                                             counts=np.full(D, 5))).lower > D for _ in range(runs))
    assert misses / runs <= 0.025 + 5 * math.sqrt(0.025 * 0.975 / runs)


@pytest.mark.parametrize("heavy, light_share, light_values, l", [
    ((200, 1000), 1 / 16, 3000, 1),   # light values just below the smallest F crowd into H
    ((200, 1000), 0.125, 1500, 1),    # values above the smallest F outside H: their share of U splits
    ((200, 1000), 0.25, 800, 1),      # ... just below the middle F pair up into H
    ((200, 1000), 1.0, 300, 1),       # ... just below the largest F
    ((500, 200), None, 0, 1),         # the named case: every value far above the threshold
    ((100, 2000), None, 3000, 1),     # singletons under a heavy head
    ((150, 1000), 0.5, 400, 2),
])
def test_certified_bound_holds_for_light_values_that_crowd_into_h(heavy, light_share, light_values, l):
    """values_upper_certified with the true users outside H at α = 0.05, capped by the slots'
    bound at α = 0.05 (which it needs as a bound on the light values), is below D in at most
    0.1 + 3 binomial sd of 200 runs, where the light values are the ones its argument fears
    most: just below F, so that a few in one column look like a heavy value, or singletons that
    hide in the heavy values' columns at their rate."""
    mech = BFRRCE(epsilon=8.0, L=1024, l=l)
    D_heavy, f_heavy = heavy
    n_guess = D_heavy * f_heavy
    tau = bounds.null_quantile(bounds.FALSE_POSITIVE * 0.05 / mech.L, n_guess, mech.q)
    at_threshold = (tau - n_guess * mech.q) / (mech.p - mech.q)
    f_light = max(int(light_share * at_threshold) - 1, 1) if light_share else 1
    counts = np.concatenate([np.full(D_heavy, f_heavy), np.full(light_values, f_light)]).astype(np.int64)
    n, D = int(counts.sum()), counts.size
    tau = bounds.null_quantile(bounds.FALSE_POSITIVE * 0.05 / mech.L, n, mech.q)
    rng = np.random.default_rng(D + l)
    alpha, runs, missed = 0.05, 200, 0
    for _ in range(runs):
        values = rng.integers(0, 2 ** 62, D)
        t = mech.bloom.column_counts(mech.bloom.positions(values), counts)
        agg = mech.simulate(values, counts=counts, rng=rng)
        inside = agg.counts > tau
        users_out = float(t[~inside].sum())
        cap = bounds.values_upper_by_slots(users_out, int(inside.sum()), mech.L, l, alpha)
        bound = bounds.values_upper_certified(users_out, agg.counts[inside], n=n, p=mech.p, q=mech.q,
                                              L=mech.L, l=l, tau=tau, alpha=alpha, cap=cap)
        missed += bound < D
    assert missed / runs <= 2 * alpha + 3 * math.sqrt(2 * alpha * (1 - 2 * alpha) / runs)


@pytest.mark.parametrize("heavy, light_values, sd", [((100, 2000), 3000, 40.0), ((500, 200), 0, 300.0)])
def test_certified_bound_holds_beside_a_noisy_reading(heavy, light_values, sd):
    """As above with U⁺ a normal reading's bound, U + sd·(z − N(0, 1)) at α = 0.05, handed to
    values_upper_certified as ``reading`` = (z, sd), which lets the light values' slots in the
    heavy columns count near their mean: below D in at most 3α + 3 binomial sd of 200 runs
    (the reading, the certified step and the cap each at α), and never above the bound
    without the reading (on the same U⁺)."""
    mech = BFRRCE(epsilon=8.0, L=1024)
    counts = np.concatenate([np.full(heavy[0], heavy[1]), np.ones(light_values)]).astype(np.int64)
    n, D = int(counts.sum()), counts.size
    tau = bounds.null_quantile(bounds.FALSE_POSITIVE * 0.05 / mech.L, n, mech.q)
    rng = np.random.default_rng(D)
    alpha, runs, missed, z = 0.05, 200, 0, 1.6448536269514722
    for _ in range(runs):
        values = rng.integers(0, 2 ** 62, D)
        t = mech.bloom.column_counts(mech.bloom.positions(values), counts)
        agg = mech.simulate(values, counts=counts, rng=rng)
        inside = agg.counts > tau
        users_out = float(t[~inside].sum()) + sd * (z - rng.standard_normal())
        cap = bounds.values_upper_by_slots(users_out, int(inside.sum()), mech.L, 1, alpha)
        kwargs = dict(n=n, p=mech.p, q=mech.q, L=mech.L, l=1, tau=tau, alpha=alpha, cap=cap)
        bound = bounds.values_upper_certified(users_out, agg.counts[inside], reading=(z, sd), **kwargs)
        assert bound <= bounds.values_upper_certified(users_out, agg.counts[inside], **kwargs)
        missed += bound < D
    assert missed / runs <= 3 * alpha + 3 * math.sqrt(3 * alpha * (1 - 3 * alpha) / runs)


def test_slots_beside_a_reading_cost_at_most_their_level():
    """binomial_upper_beside_normal's count t, checked by the whole binomial law: the reading's
    failure probability rises by E[Φ(z) − Φ(z − (Y − t)₊/sd)] (Φ(z) where (Y − t)₊ >= z·sd) <= α;
    t is at most Y's own 1 − α quantile, and where sd is 50 times Y's, within one sd of Y of its
    mean (the two errors add in quadrature); beside_normal_range brackets it."""
    from scipy import stats
    for trials, prob in ((0, 0.3), (3, 0.01), (50, 0.1), (2400, 0.048), (600, 0.4), (1000, 0.999), (10 ** 5, 0.5)):
        spread = math.sqrt(trials * prob * (1 - prob))
        for z, sd, alpha in ((2.07, 1010.0, 6.6e-5), (1.64, 3.0, 1e-3), (3.0, 50 * spread, 1e-4), (2.0, 0.5, 0.01)):
            t = occupancy.binomial_upper_beside_normal(alpha, trials, prob, z, sd)
            y = np.maximum(np.arange(trials + 1) - t, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                rise = np.where(y < z * sd, stats.norm.cdf(z) - stats.norm.cdf(z - y / sd), stats.norm.cdf(z))
            rise[y == 0] = 0.0
            assert np.sum(stats.binom.pmf(np.arange(trials + 1), trials, prob) * rise) <= alpha * (1 + 1e-9)
            assert t <= occupancy.binomial_upper(alpha, trials, prob)
            low, high = occupancy.beside_normal_range(alpha, trials, prob)
            assert low <= t <= high
            if sd >= 50 * spread:
                assert t <= trials * prob + spread + 1
    rng = np.random.default_rng(3)
    for _ in range(500):                # the range on laws and readings drawn across their scales
        trials, prob, alpha = int(10 ** rng.uniform(0, 6)), rng.uniform() ** 3, 10 ** rng.uniform(-8, -1)
        t = occupancy.binomial_upper_beside_normal(alpha, trials, prob, rng.uniform(1, 4), 10 ** rng.uniform(-1, 4))
        low, high = occupancy.beside_normal_range(alpha, trials, prob)
        assert low <= t <= high


@pytest.mark.parametrize("peak", [0.0, 0.37, 1.0])
def test_splits_refine_where_the_largest_is(peak):
    """_largest_over_splits of f(u₀, u₁) = h(u₁) + g(u₀) (h non-decreasing, g non-increasing, as
    the heavy and light bounds are) never falls below the largest h(u) + g(u) over [0, U] (the
    true split lies in one interval), is at most its value on the 8 equal intervals, and is
    much closer to it than the equal intervals (an eighth of their excess at most)."""
    U = 800.0

    def h(u):
        return 10 * np.floor(u / 5) / 8 + (0.0 if u <= peak * U else 2 * (u - peak * U))

    def g(u):
        return -1.05 * u + (0.0 if u >= peak * U else -2 * (peak * U - u) + 1.05 * (peak * U - u))

    def split_bound(low, high, floor_only=False):
        return h(high) + g(low)

    grid = np.linspace(0.0, U, 80_001)
    truth = max(h(u) + g(u) for u in grid)
    coarse = max(split_bound(a, b) for a, b in zip(np.linspace(0, U, 9)[:-1], np.linspace(0, U, 9)[1:]))
    refined = bounds._largest_over_splits(split_bound, U, math.inf)
    assert truth <= refined <= coarse
    assert refined - truth <= (coarse - truth) / 8
    assert bounds._largest_over_splits(split_bound, U, truth - 1) >= truth - 1   # at or above best: stops


def test_splits_refine_an_interval_above_the_best_so_far():
    """An equal interval whose bound reaches ``best`` while its end points read well below it is
    refined, not taken as the end of the search: the heavy bound rises steeply at the top of
    [0, U] while the light one falls (a nearly full filter, where the light values' rate is close
    to 1). The largest over u is 800; the last equal interval reads 1,100 against best = 1,000."""
    U = 800.0

    def h(u):
        return 3 * max(u - 700, 0.0)

    def g(u):
        return 800 - 5 * max(u - 700, 0.0)

    def split_bound(low, high, floor_only=False):
        return h(high) + g(low)

    truth = max(h(u) + g(u) for u in np.linspace(0, U, 8001))
    assert split_bound(700, 800) >= 1000 > truth
    assert truth <= bounds._largest_over_splits(split_bound, U, 1000.0) < 1000


@pytest.mark.parametrize("D, L, l", [(216, 4096, 1), (40, 1024, 1), (120, 1024, 2), (500, 1024, 1)])
def test_collision_bound_holds_over_hash_draws(D, L, l):
    """values_upper_by_collisions(occupied) >= D in at least 1 − α of 1,000 hash draws (α =
    0.05, 3 binomial sd), in the sparse regime it is built for and the dense one it falls back in."""
    rng = np.random.default_rng(D * l)
    alpha, runs = 0.05, 1000
    occupied = [np.unique(rng.integers(0, L, l * D)).size for _ in range(runs)]
    missed = np.mean([occupancy.values_upper_by_collisions(k, L, l, alpha) < D for k in occupied])
    assert missed <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    assert occupancy.values_upper_by_collisions(occupied[0], L, l, alpha) <= occupancy.values_upper(
        occupied[0], L, l, alpha)


@pytest.mark.parametrize("L, l", [(64, 1), (1024, 1), (1024, 2), (4096, 1), (65536, 3)])
def test_collision_bound_grows_with_the_columns_from_their_count(L, l):
    """values_upper_by_collisions(k) is non-decreasing in k and at least k/l (k columns need k/l
    values): values_upper_certified returns its cap without searching where the first split's
    test fails at those, which is exact only with both."""
    for alpha in (1e-6, 1e-3, 0.05):
        k = np.unique(np.geomspace(1, L - 1, 60).astype(int))
        bound = np.array([occupancy.values_upper_by_collisions(int(x), L, l, alpha) for x in k])
        assert np.all(bound >= k / l)
        assert np.all(np.diff(bound) >= 0)


def test_binomial_upper_is_the_exact_quantile():
    """The windowed search gives the least k with Pr[X > k] <= α on random laws, including p = 0,
    p = 1, n = 0, the far tails and α far below the rounding of 1 − α (where a CDF >= 1 − α test
    gave 3,684,972 for the law below instead of 3,684,974, anti-conservative), warning nothing."""
    from scipy import special
    rng = np.random.default_rng(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for alpha in (0.05, 1e-3, 1e-9, 1e-14, 1e-17):
            for n in (0, 1, 5, 1024, 10 ** 6, 7_909_388):
                prob = np.concatenate([rng.random(100) ** 6, [0.0, 1.0, 1e-12, 0.5, 0.4645459029518415]])
                k = occupancy.binomial_upper(alpha, n, prob)
                assert np.all(special.bdtrc(k, n, prob) <= alpha)
                assert np.all((k == 0) | (special.bdtrc(k - 1, n, prob) > alpha))
        assert occupancy.binomial_upper(1.193491694200961e-14, 7_909_388, 0.4645459029518415) == 3_684_974


def test_slots_upper_stays_finite_where_one_minus_the_level_rounds_to_one():
    """Beyond MAX_SLOT_TERMS the fullest column's Poisson quantile at α/L falls back to Bernstein's
    bound where 1 − α/L rounds to 1 (scipy's pdtrik gave NaN there): finite, and at least the
    quantile at a larger level."""
    values, L, l = 4_277_780_232.6, 131_072, 4
    tiny, usual = bounds._slots_upper(values, 5, L, l, 5.4e-12), bounds._slots_upper(values, 5, L, l, 1e-3)
    assert math.isfinite(tiny) and tiny >= usual


@pytest.mark.parametrize("n, q", [(10 ** 4, 0.12), (10 ** 5, 0.0067), (10 ** 6, 3.4e-4)])
def test_selection_bias_window_is_conservative_at_every_threshold_of_the_bound(n, q):
    """The window estimate of B (columns within ⌈σ₀/2⌉ counts of τ, over the window's width,
    times the variance) has, on empty columns, an expectation at least the exact
    B = L·E[(c − nq)·1{c > τ}]/(p − q) at each threshold of THRESHOLDS: the null density is convex
    more than 1 sd above its mean, where the window's average exceeds the density at τ. At the
    median (concave, the density's peak) it falls short, which is why no threshold sits there."""
    p, L = 0.5, 4096
    law = stats.binom(n, q)
    sd0 = math.sqrt(n * q * (1 - q))
    w = math.ceil(sd0 / 2)

    def ratio(tau):
        near = law.cdf(tau + w) - law.cdf(tau - w - 1)
        expected = L * near * sd0 ** 2 / ((2 * w + 1) * (p - q))
        c = np.arange(int(tau) + 1, int(n * q + 40 * sd0 + 40))
        exact = L * float(np.sum((c - n * q) * law.pmf(c))) / (p - q)
        return expected / exact

    for share, tail in bounds.THRESHOLDS:
        tau = bounds.null_quantile(bounds.FALSE_POSITIVE * share * 0.025 / L if tail is None else tail(L), n, q)
        assert ratio(tau) >= 1
    assert ratio(bounds.null_quantile(0.5, n, q)) < 1


@pytest.mark.parametrize("n, eps", [(10 ** 4, 2.0), (10 ** 5, 4.0), (10 ** 6, 8.0)])
def test_empty_column_bias_is_the_exact_share(n, eps):
    """b₀ = E₀[e·1{c > τ}] by its closed form (τ + 1)(1 − q)Pr₀[c = τ + 1]/(p − q) equals the sum
    over the null law, and s₀ is the window estimate's expectation on an empty column, at every
    threshold of the bound."""
    mech = BFRRCE(epsilon=eps, L=4096)
    p, q = mech.p, mech.q
    law = stats.binom(n, q)
    sd0 = math.sqrt(n * q * (1 - q))
    w = math.ceil(sd0 / 2)
    for share, tail in bounds.THRESHOLDS:
        tau = bounds.null_quantile(bounds.FALSE_POSITIVE * share * 0.025 / 4096 if tail is None else tail(4096), n, q)
        b0, s0, _, _ = bounds.empty_column_terms(n, p, q, tau)
        c = np.arange(int(tau) + 1, int(n * q + 40 * sd0 + 40))
        assert b0 == pytest.approx(float(np.sum((c - n * q) * law.pmf(c))) / (p - q), rel=1e-9, abs=1e-300)
        x = np.arange(int(tau) - w, int(tau) + w + 1)
        t_hat = np.clip((x - n * q) / (p - q), 0, n)
        plug = t_hat * p * (1 - p) + (n - t_hat) * q * (1 - q)
        assert s0 == pytest.approx(float(np.sum(law.pmf(x) * plug)) / ((2 * w + 1) * (p - q)), rel=1e-9, abs=1e-300)
        kappa, rho = bounds.occupied_window_terms(n, p, q, tau)
        assert kappa >= 1 + w * w / (6 * sd0 * sd0) - 1e-12 and rho >= 0
    kappa, rho = bounds.occupied_window_terms(n, p, q, bounds.null_quantile(0.5, n, q))   # a window across nq
    b0, s0, _, _ = bounds.empty_column_terms(n, p, q, bounds.null_quantile(0.5, n, q))
    assert kappa * s0 >= b0 and rho >= 0             # the window is short at the null's mode: κ covers it


@pytest.mark.parametrize("tail", [None, 0.1])
@pytest.mark.parametrize("shape", ["at threshold", "at threshold and singletons"])
def test_users_outside_hold_where_values_sit_at_the_threshold(tail, shape):
    """U⁺ of users_outside_upper at α = 0.2, with the empty columns' share of the bias exact, over
    150 runs where values sit with their columns' mean at τ (the window's worst case, short at
    a mode) or beside 10⁵·½ singletons: the miss rate is at most α + 3 binomial sd (the window
    estimate alone, without the exact share and κ, misses far more often here: docs/estimation.md)."""
    from protocols.core.perturbation import simulate_column_sums
    n, L, alpha, runs = 10 ** 5, 4096, 0.2, 150
    mech = BFRRCE(epsilon=8.0, L=L)
    p, q = mech.p, mech.q
    tau = bounds.null_quantile(1e-7 if tail is None else tail, n, q)
    at = max(int(round((tau - n * q) / (p - q))), 1)
    heavy = np.full(L // 4 if shape == "at threshold" else L // 8, at)
    f = np.concatenate([heavy, np.ones(n - heavy.sum() if shape != "at threshold" else 0, dtype=np.int64)])
    rng = np.random.default_rng(11)
    missed = 0
    for _ in range(runs):
        t = np.bincount(rng.integers(0, L, f.size), weights=f, minlength=L)
        c = simulate_column_sums(t, int(f.sum()), p, q, rng)
        t_hat = (c - f.sum() * q) / (p - q)
        var = (np.clip(t_hat, 0, f.sum()) * p * (1 - p) + (f.sum() - np.clip(t_hat, 0, f.sum())) * q * (1 - q)) / (p - q) ** 2
        upper, _, _ = bounds.users_outside_upper(c, t_hat, var, n=int(f.sum()), p=p, q=q, tau=tau, total=f.sum(),
                                              alpha=alpha, L=L, l=1)
        upper = upper if callable(upper) else (lambda d, u=upper: u)
        missed += t[c <= tau].sum() > upper(f.size)
    assert missed / runs <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


def test_empty_column_cross_is_the_covariance_of_the_direct_reading_with_the_window():
    """For empty columns, Cov(e·1{c <= τ}, a(c)) (a: the column's share of the window estimate) by
    empty_column_terms equals the sample covariance of 400,000 simulated null columns within 5
    standard errors, at the 0.98 and 0.9 quantiles (positive: the window and the columns just under
    τ move together)."""
    n, mech = 10 ** 5, BFRRCE(epsilon=8.0, L=4096)
    p, q = mech.p, mech.q
    c = np.random.default_rng(5).binomial(n, q, 400_000)
    sd0 = math.sqrt(n * q * (1 - q))
    w = math.ceil(sd0 / 2)
    e = (c - n * q) / (p - q)
    for tail in (0.02, 0.1):
        tau = bounds.null_quantile(tail, n, q)
        b0, window, below, above = bounds.empty_column_terms(n, p, q, tau)
        t_hat = np.clip(e, 0, n)
        a = np.where(np.abs(c - tau) <= w, t_hat * p * (1 - p) + (n - t_hat) * q * (1 - q), 0.0) / ((2 * w + 1) * (p - q))
        xi = e * (c <= tau) + b0
        product = xi * a
        assert below + b0 * window > 0
        assert abs(product.mean() - (below + b0 * window)) <= 5 * product.std() / math.sqrt(c.size)
        assert abs(np.mean(e * (c > tau) * a) - above) <= 5 * np.std(e * (c > tau) * a) / math.sqrt(c.size)


def test_slots_excess_reads_the_quantiles_only_where_its_sign_needs_them():
    """slots_excess skips the slots' binomial quantiles where the range of the slots without them
    decides its sign: its sign is that of the full excess at every D, and its value lies between
    the full excess and 0."""
    for inside, L, l, users in ((300, 1024, 1, 200.0), (900, 1024, 1, 50.0), (150, 4096, 2, 4000.0),
                                (40, 65536, 3, 10.0), (1000, 1024, 1, lambda d: 0.1 * d)):
        excess = bounds.slots_excess(users, inside, L, l, 0.002)
        for d in np.geomspace(1, 2e6, 60):
            u = users(d) if callable(users) else users
            full = l * d - bounds._repeats_upper(d, L, l, 0.001) - bounds._slots_upper(d, inside, L, l, 0.001) - u
            got = excess(d)
            assert (got > 0) == (full > 0)
            assert 0 < got <= full if full > 0 else full <= got <= 0
