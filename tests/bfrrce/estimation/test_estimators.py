"""Estimators on the paper's synthetic setting: coverage, detection limit, validation."""

import dataclasses
import math

import numpy as np
import pytest

from bfrrce import BFRRCE, CardinalityEstimate, ColumnSums, estimate_distinct
from bfrrce.estimation import combine, detected_candidates, detection_probability
from protocols.core.perturbation import simulate_column_sums
from protocols import LDPValueError

N, D = 10_000, 122
CANDIDATES = np.arange(1, 1001)


def synthetic(seed=0):
    """n = 10,000 users, 122 distinct values of 1..1000, frequencies as equal as possible."""
    rng = np.random.default_rng(seed)
    values = rng.choice(CANDIDATES, D, replace=False)
    return values, np.diff(np.linspace(0, N, D + 1).round().astype(np.int64))


@pytest.mark.parametrize("method", ["fill", "corrected", "paper"])
@pytest.mark.parametrize("eps", [1.0, 4.0, 8.0])
def test_bounds_cover_for_every_method(method, eps):
    """Coverage of the 95% bounds over 100 seeded runs on the synthetic-2 shape, whether values
    are invisible (ε = 1) or not; the bounds do not depend on the method. The binomial standard
    error of a 95% coverage over 100 runs is 2.2%: allow 5 of them."""
    mech = BFRRCE(epsilon=eps, L=1024)
    values, counts = synthetic()
    runs = 100
    hits = 0
    for s in range(runs):
        est = mech.estimate(mech.simulate(values, rng=s, counts=counts), CANDIDATES, method=method)
        hits += est.interval[0] <= D <= est.interval[1]
    assert hits / runs >= 0.95 - 5 * math.sqrt(0.95 * 0.05 / runs)


@pytest.mark.parametrize("eps, L, target", [(2.0, 256, 0.35), (4.0, 256, 0.06), (8.0, 1024, 0.01)])
def test_value_accuracy(eps, L, target):
    """AARE of ``value`` over 50 seeded runs with new random values each run (hash collisions
    vary), synthetic-2 shape, meets the accuracy target of the paper's evaluation at that ε
    (docs/evaluation.md): a better estimator passes too."""
    mech = BFRRCE(epsilon=eps, L=L)
    rng = np.random.default_rng(5)
    counts = synthetic()[1]
    errors = np.array([abs(mech.estimate(mech.simulate(rng.integers(0, 2 ** 62, D), rng=rng,
                                                       counts=counts)).value - D) / D
                       for _ in range(50)])
    assert errors.mean() <= target


def test_standard_error_matches_spread():
    """Reported se against the measured sd of ``value`` over 200 runs (ε = 8, every value
    visible; 2,000 users, 16 a value, so that some columns' counts of values are in doubt):
    within 0.8–1.25. With the synthetic-2 shape, 82 users a value, D is read
    exactly: sd 0.09 against the integer step's √(1/12) = 0.29, tested in
    tests/bfrrce/estimation/test_bounds.py."""
    mech = BFRRCE(epsilon=8.0, L=1024)
    rng = np.random.default_rng(6)
    counts = np.diff(np.linspace(0, 2000, D + 1).round().astype(np.int64))
    draws = [mech.estimate(mech.simulate(rng.integers(0, 2 ** 62, D), rng=rng, counts=counts))
             for _ in range(200)]
    ratio = np.median([e.std_error for e in draws]) / np.std([e.value for e in draws])
    assert 0.8 <= ratio <= 1.25


def test_value_pinned_at_the_lower_bound_has_the_bound_spread():
    """Where rare values hide (uniform, n = 10^6, D = 12,500, ε = 0.5), ``value`` is the lower
    bound in most runs; its standard error is then the bound's (``details["lower_stderr"]``),
    not the near-zero one of the noise of the visible count, and is within a factor 2 of the
    measured spread of ``value`` over 100 runs."""
    n, D = 10 ** 6, 12_500
    mech = BFRRCE(epsilon=0.5, L=1024)
    rng = np.random.default_rng(7)
    counts = np.diff(np.linspace(0, n, D + 1).round().astype(np.int64))
    draws = [mech.estimate(mech.simulate(rng.integers(0, 2 ** 62, D), rng=rng, counts=counts))
             for _ in range(100)]
    pinned = [e for e in draws if e.value == e.interval[0]]
    assert len(pinned) >= 50
    assert all(e.std_error == e.details["lower_stderr"] > 0 for e in pinned)
    assert all("lower_stderr" not in e.details for e in draws if e.value > e.interval[0])    # not computed
    ratio = np.median([e.std_error for e in draws]) / np.std([e.value for e in draws])
    assert 0.5 <= ratio <= 2


def test_combination_is_continuous_and_moves_between_its_parts():
    """ω is continuous at d = 0 and takes the precision weight there; far above, the
    equal-frequency estimate wins; far below, the visible count."""
    v, s = 100.0, 10.0
    below = combine(v, 5.0, v - 1e-9, s)[0]
    above = combine(v, 5.0, v + 1e-9, s)[0]
    assert below == pytest.approx(above)
    assert combine(v, 5.0, 400.0, s)[0] == pytest.approx(400.0, rel=1e-3)
    assert combine(v, 5.0, 1.0, s)[0] == pytest.approx(v, rel=1e-3)


def test_combination_keeps_the_precision_weight_where_the_columns_agree():
    """S below V: where S and V read the same occupied columns the estimate is the
    precision-weighted mean however far below (V's excess is collision luck); otherwise
    ω = w₀e^{−d²/2} falls to V."""
    v, sv, ss = 100.0, 3.0, 4.0
    sigma, w0 = 5.0, 9 / 25
    for d in (-0.5, -2.0, -6.0):
        s = v + d * sigma
        assert combine(v, sv, s, ss, True)[0] == pytest.approx(v + (s - v) * w0)
        assert combine(v, sv, s, ss)[0] == pytest.approx(v + (s - v) * w0 * math.exp(-d * d / 2))
    assert combine(v, sv, v - 1e-9, ss, True)[0] == pytest.approx(combine(v, sv, v + 1e-9, ss, True)[0])


@pytest.mark.parametrize("zipf, fit, used", [(None, (0.0, 0.25), (0.0, 0.25)), (1.1, (2.0, 4.0, 8.0), (0.5,)),
                                              (0.5, (2.0, 4.0, 8.0), (0.5,))])
def test_the_dispersion_is_fitted_where_the_data_tell(zipf, fit, used):
    """At ε = 8 the spread of the sums of one-value columns measures φ: exactly equal
    frequencies (synthetic-2) fit φ <= 0.25, which S uses; values that users pick with Zipf
    weights fit φ > 1, more spread than random picks, and S keeps φ = 0.5. At ε = 1 the noise
    hides the spread: no fit, φ = 0.5."""
    mech = BFRRCE(epsilon=8.0, L=4096)
    rng = np.random.default_rng(3)
    if zipf is None:
        counts = synthetic()[1]
    else:
        w = np.arange(1, 501) ** -zipf
        counts = rng.multinomial(10_000, w / w.sum())
        counts = counts[counts > 0]
    for _ in range(5):
        est = mech.estimate(mech.simulate(rng.integers(0, 2 ** 62, counts.size), rng=rng, counts=counts))
        assert est.details["dispersion_fit"] in fit and est.details["dispersion"] in used
    low = BFRRCE(epsilon=1.0, L=1024)
    details = low.estimate(low.simulate(np.arange(D), rng=1, counts=synthetic()[1])).details
    assert details["dispersion"] == 0.5 and math.isnan(details["dispersion_fit"])


def test_accuracy_at_high_epsilon():
    """AARE over 50 runs at ε = 8 meets the 5% target."""
    mech = BFRRCE(epsilon=8.0, L=256)
    values, counts = synthetic()
    errors = [abs(mech.estimate(mech.simulate(values, rng=s, counts=counts)).value - D) / D
              for s in range(50)]
    assert np.mean(errors) <= 0.05


def test_low_epsilon_says_values_are_invisible():
    mech = BFRRCE(epsilon=1.0, L=256)
    values, counts = synthetic()
    est = mech.estimate(mech.simulate(values, rng=0, counts=counts))
    assert est.detection_limit[0.5] > N / D        # each value's 82 users are below the limit
    assert "detection limit" in str(est)


@pytest.mark.parametrize("l", [1, 2])
def test_detection_limit_is_right(l):
    """Detection rates over 400 seeded runs match the predicted probability (5 binomial standard
    errors) for a value at the 90% and 50% limits and at a quarter of the 50% limit (predicted
    about 0.11, near the 0.05 of an absent value)."""
    mech = BFRRCE(epsilon=4.0, L=128, l=l)
    n, trials = 5000, 400
    pos = mech.bloom.positions([0])
    other = next(v for v in range(1, 1000)
                 if not set(mech.bloom.positions([v])[0]) & set(pos[0]))   # no shared bit
    limit = mech.detection_limit(n)
    for f in (limit[0.9], limit[0.5], limit[0.5] / 4):
        f = int(round(f))
        hits = sum(detected_candidates(mech.debias(mech.simulate([0, other], rng=s, counts=[f, n - f])),
                                       pos, 0.05)[0] for s in range(trials))
        expected = detection_probability(f, n, mech.p, mech.q, l)
        assert abs(hits / trials - expected) <= 5 * math.sqrt(expected * (1 - expected) / trials)


def test_paper_method_counts_candidates():
    """Almost noiseless (q ≈ 2e-9): the count is the candidates inside the true filter's union,
    the present values plus the absent ones that filter collisions cover."""
    mech = BFRRCE(epsilon=80.0, L=4096, l=2, perturbation="symmetric")
    values, counts = synthetic()
    est = mech.estimate(mech.simulate(values, rng=1, counts=counts), CANDIDATES, method="paper",
                        threshold=0.5)
    union = mech.bloom.bits(values).any(axis=0)
    assert est.method == "paper"
    assert est.value == union[mech.bloom.positions(CANDIDATES)].all(axis=1).sum() > D


def test_estimate_object_and_methods():
    values = np.repeat(np.arange(20), 200)
    est = estimate_distinct(values, epsilon=8.0, rng=0, L=256)
    assert isinstance(est, CardinalityEstimate)
    assert est.method == "fill" and est.parameters["n"] == 4000
    assert est.interval[0] <= est.value <= est.interval[1]
    assert abs(est.value - 20) <= 5 * est.std_error + 1
    est = estimate_distinct(values, epsilon=8.0, rng=0, L=256, candidates=list(range(100)))
    assert est.method == "corrected" and est.details["detected"][:20].all()
    text = str(est)
    assert text.startswith("distinct values: between") and "95%" in text and "assuming" in text
    mech = BFRRCE(epsilon=1.0, L=64)
    agg = mech.aggregate(mech.privatize(values, rng=0))
    with pytest.raises(LDPValueError):
        mech.estimate(agg, method="magic")
    with pytest.raises(LDPValueError):
        mech.estimate(agg, method="paper")
    with pytest.raises(LDPValueError):
        mech.estimate(agg, confidence=1.5)
    with pytest.raises(LDPValueError):
        mech.estimate(agg, alpha=2)
    with pytest.raises(LDPValueError):
        mech.estimate(agg, candidates=[1, 2], method="paper", threshold=float("nan"))


def test_saturated_filter_is_flagged():
    mech = BFRRCE(epsilon=8.0, L=64)
    est = mech.estimate(mech.simulate(np.arange(2000), rng=0, counts=np.full(2000, 5)))
    assert est.details["saturated"] and "nearly full" in str(est)


def test_fill_is_unbiased_when_many_values_collide():
    """n = 10^6, ε = 4, D = 0.8·L: columns hold 1, 2, 3… values. Mean within 5 standard errors of
    the mean over the runs; coverage of the bounds at least nominal − 5 binomial se."""
    mech = BFRRCE(epsilon=4.0, L=1024, l=1)
    D, n, runs = 800, 10 ** 6, 40
    estimates, covered = [], 0
    for run in range(runs):
        rng = np.random.default_rng([run, 800])
        values = rng.choice(np.arange(5000), D, replace=False)
        est = mech.estimate(mech.simulate(values, rng=rng, counts=np.full(D, n // D)))
        estimates.append(est.value)
        covered += est.interval[0] <= D <= est.interval[1]
    estimates = np.array(estimates)
    assert abs(estimates.mean() - D) <= 5 * estimates.std(ddof=1) / np.sqrt(runs)
    assert covered / runs >= 0.95 - 5 * np.sqrt(0.95 * 0.05 / runs)


def test_the_issue_example_prints_possible_bounds():
    """synthetic-2, ε = 2, L = 1024: the printed line used to be an impossible interval
    (-0.0 – 0.8). Now it leads with bounds that contain 122 and never fall below 1."""
    mech = BFRRCE(epsilon=2.0, L=1024)
    values, counts = synthetic()
    est = mech.estimate(mech.simulate(values, rng=0, counts=counts))
    assert 1 <= est.lower <= D <= est.upper <= N
    first = str(est).splitlines()[0]
    assert first.startswith("distinct values: between") and "95%" in first


def test_corrected_visible_count_reports_which_candidates_happen_to_collide():
    """Noise-free reports (ε = 30) of 300 of 1,000 candidates, a new random subset each run: the
    corrected visible count varies only with which present candidates share columns; its
    reported standard error matches that spread within 0.8–1.25, give or take 5 standard errors
    of a sample sd."""
    mech = BFRRCE(epsilon=30.0, L=1024)
    rng = np.random.default_rng(4)
    runs = 100
    draws = []
    for _ in range(runs):
        present = rng.choice(1000, 300, replace=False)
        est = mech.estimate(mech.simulate(present, counts=np.full(300, 20), rng=rng), np.arange(1000),
                            method="corrected")
        draws.append((est.visible.value, est.visible.std_error))
    value, se = np.array(draws).T
    slack = 5 * math.sqrt(1 / (2 * (runs - 1)))
    assert 0.8 - slack <= np.median(se) / value.std(ddof=1) <= 1.25 + slack


def test_a_value_on_its_lower_bound_prints_no_false_precision():
    """12 values of 83 users at ε = 0.5 (far below the detection limit): the estimate is the lower
    bound, 1, whose spread is 0; the printout says it is the bound instead of "1.0 ± 0.0", and the
    visible count prints as 0.0, not −0.0."""
    mech = BFRRCE(epsilon=0.5, L=1024)
    est = mech.estimate(mech.simulate(np.arange(12), counts=np.full(12, 83), rng=3))
    assert est.value == est.lower == 1 and est.std_error == 0
    text = str(est)
    assert "estimate 1 [fill]: the lower bound" in text and "± 0.0 [" not in text
    assert math.copysign(1, est.visible.value) == 1 and "-0.0" not in text


def test_a_value_on_its_upper_bound_prints_a_one_sided_error():
    """5,105 users each holding a value of their own at ε = 10, L = 4,096 (a located cell of
    docs/calibration.md): ``value`` is n, the upper bound; D cannot exceed it, so the printout gives
    the standard error below it only, "(+0 / −se)", not "± se". A value clipped to an upper bound
    below n (a 95% bound, which D may exceed) keeps its ±."""
    mech = BFRRCE(epsilon=10.0, L=4096)
    est = mech.estimate(mech.simulate(np.arange(5105), rng=3))
    assert est.value == est.upper == 5105 and est.upper <= 2 * est.lower and est.std_error > 0
    line = str(est).splitlines()[1]
    assert line.startswith(f"estimate 5,105.0 (+0 / −{est.std_error:,.1f}) [") and " ± " not in line
    below_n = dataclasses.replace(est, interval=(est.lower, 5000.0), value=5000.0)
    assert " ± " in str(below_n).splitlines()[1]


def test_set_valued_users_print_the_per_item_budget():
    mech = BFRRCE(epsilon=4.0, L=256, unit="item")
    est = mech.estimate(mech.simulate(np.arange(50), rng=0, counts=np.full(50, 40)))
    assert "per item" in str(est) and est.lower <= 50 <= est.upper


def test_few_users_never_give_a_lower_bound_above_n():
    """1 to 3 users, each a distinct value (D = n), ε = 4, L = 16: N²/S₂⁺ with the plug-in
    variance of a few columns ran above n in a third of the runs (up to 2.7 for one user), so
    the interval was empty and missed D; D <= n holds for sure."""
    mech = BFRRCE(epsilon=4.0, L=16)
    rng = np.random.default_rng(3)
    for n in (1, 2, 3):
        for _ in range(30):
            est = mech.estimate(mech.simulate(rng.integers(0, 2 ** 62, n), rng=rng))
            assert 1 <= est.lower <= est.value <= est.upper <= n
            assert math.isfinite(est.std_error) and est.std_error >= 0


@pytest.mark.parametrize("fill", [0, 1])
def test_item_estimate_stays_in_its_interval_on_impossible_sums(fill):
    """Sets (unit="item"), column sums all 0 or all n: the cap Σ t̂_j + z·se was negative
    (value −5,937 for 5 parties and zero sums at L = 65536) or below the occupancy bound
    (value 611,972 above the upper 333,971 for full sums): the interval is never empty and
    holds the value, which is finite and >= 0."""
    mech = BFRRCE(epsilon=4.0, L=65536, unit="item")
    n = 5
    est = mech.estimate(ColumnSums(mech, np.full(mech.L, fill * n), n))
    assert 0 <= est.lower <= est.value <= est.upper
    assert math.isfinite(est.value) and math.isfinite(est.std_error) and est.std_error >= 0


def _item_sums(mech, sets, rng):
    """Column sums of parties holding ``sets`` (arrays of item indices) of fresh random items,
    exactly in distribution: t_j = the parties whose filter (the OR of their items' bits) has j."""
    keys = rng.integers(0, 2 ** 62, 1 + max(int(s.max()) for s in sets))
    pos = mech.bloom.positions(keys)
    t = np.zeros(mech.L, np.int64)
    for items in sets:
        t[np.unique(pos[items].ravel())] += 1
    return ColumnSums(mech, simulate_column_sums(t, len(sets), mech.p, mech.q, rng), len(sets))


@pytest.mark.parametrize("eps, L, l, sets, tight", [
    (8.0, 8192, 1, [np.arange(j * 10, j * 10 + 10) for j in range(50)], 2.0),       # 50 × 10 disjoint
    (8.0, 4096, 2, [np.arange(300)] * 20, 2.0),                                    # 20 identical sets
    (4.0, 4096, 1, [np.arange(3000)], 2.0),                  # one party: its own items collide
    (4.0, 1024, 1, [np.arange(j * 1000, j * 1000 + 500 + 20 * j) for j in range(50)], "full"),
    (1.0, 2048, 3, [np.concatenate([np.arange(50), 50 + np.arange(j * 20, j * 20 + 20)]) for j in range(10)],
     None),                                          # ε = 1: 250 items, half in common
])
def test_item_upper_bound_covers_whatever_the_sets(eps, L, l, sets, tight):
    """Sets (unit="item"): the occupied columns bound the distinct items whoever holds them (a
    party's own items collide like anyone's), so the upper bound is finite until the filter
    fills and covers D at its level (one-sided α = 2.5%: at most 6 misses in 60 runs has
    probability above 0.99 at that rate); where the filter is far from full at ε = 8 (or
    one party at ε = 4) it is within 2·D in median."""
    mech = BFRRCE(epsilon=eps, L=L, l=l, unit="item")
    D = len(np.unique(np.concatenate(sets)))
    rng = np.random.default_rng(17)
    lows, ups = [], []
    for _ in range(60):
        est = mech.estimate(_item_sums(mech, sets, rng))
        lows.append(est.lower)
        ups.append(est.upper)
    lows, ups = np.array(lows), np.array(ups)
    assert np.sum((lows > D) | (ups < D)) <= 6
    if tight == "full":                  # 49,000 items in 1,024 columns: nothing bounds them
        assert np.all(np.isinf(ups))
    elif tight is not None:
        assert np.median(ups) <= tight * D


def test_several_methods_on_the_same_sums_read_one_set_of_bounds():
    """estimate_cardinalities gives each method what estimate_cardinality gives it alone (a value
    pinned at the lower bound included), with the bounds computed once."""
    from bfrrce.estimation import Observed, estimate_cardinalities, estimate_cardinality

    values = np.repeat(np.arange(400), 5)
    pinned = []
    for eps, l in ((1.0, 1), (4.0, 2)):
        mech = BFRRCE(epsilon=eps, L=512, l=l)
        agg = mech.simulate(values, rng=np.random.default_rng(11))
        candidates = mech.hash_candidates(np.arange(600))
        runs = [("corrected", 0.5), ("fill", 0.5), ("paper", 3.0), ("paper", 0.0)]
        kwargs = dict(confidence=0.9, parameters=mech.parameters, candidates=candidates,
                      degraded=mech.degraded_laws(agg.n))
        together = estimate_cardinalities(Observed(agg.counts, mech.design(agg.n)), runs, **kwargs)
        for (method, threshold), got in zip(runs, together):
            alone = estimate_cardinality(Observed(agg.counts, mech.design(agg.n)), method=method,
                                         threshold=threshold, **kwargs)
            assert (got.value, got.std_error, got.interval, got.method) == \
                (alone.value, alone.std_error, alone.interval, alone.method)
            assert got.details.keys() == alone.details.keys()
            pinned.append("lower_stderr" in got.details)
    assert any(pinned) and not all(pinned)          # both branches of the pinning are compared
    with pytest.raises(LDPValueError, match="candidates"):
        estimate_cardinalities(Observed(agg.counts, mech.design(agg.n)), [("fill", 0.5), ("corrected", 0.5)],
                               confidence=0.9, parameters={})
