import math

import numpy as np
import pytest

from protocols import (DuchiMean, LDPTypeError, LDPValueError, LaplaceMean, PiecewiseMean,
                       exact_epsilon)

MECHS = [LaplaceMean, DuchiMean, PiecewiseMean]


@pytest.mark.parametrize("cls", MECHS)
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_unbiased_with_analytic_variance(cls, eps):
    mech = cls(epsilon=eps, low=0.0, high=10.0)
    x = np.linspace(0, 10, 500)
    trials = 400
    reports = mech.privatize(np.tile(x, trials), rng=11).reshape(trials, -1)
    est = np.array([mech.estimate(mech.aggregate(r)) for r in reports])
    t = 2 * x / 10 - 1
    var = np.mean([mech.unit_variance(ti) for ti in t]) / x.size * 25
    assert abs(est.mean() - x.mean()) <= 5 * math.sqrt(var / trials)
    assert abs(est.var(ddof=1) / var - 1) <= 5 * math.sqrt(2 / (trials - 1))


def test_variance_formulas():
    e = math.exp(1.0)
    assert DuchiMean(epsilon=1.0).unit_variance(0.0) == pytest.approx(((e + 1) / (e - 1)) ** 2)
    s = math.exp(0.5)
    assert PiecewiseMean(epsilon=1.0).unit_variance(0.0) == pytest.approx((s + 3) / (3 * (s - 1) ** 2))
    assert LaplaceMean(epsilon=1.0).unit_variance(0.0) == pytest.approx(8.0, rel=1e-4)


def test_duchi_is_exactly_epsilon_ldp():
    mech = DuchiMean(epsilon=1.3)
    assert exact_epsilon(mech.output_distribution, [-1.0, 0.3, 1.0]) == pytest.approx(1.3)


def test_piecewise_density_is_exact_and_epsilon_ldp():
    """The density ratio between any inputs is at most e^ε, reached at t = ±1; the sampler's bin
    frequencies match the integrated density within 5 binomial standard errors per bin."""
    mech = PiecewiseMean(epsilon=1.0)
    C = mech.C
    grid = np.linspace(-C, C, 4001)
    dens = {t: mech.density(grid, t) for t in (-1.0, -0.2, 0.5, 1.0)}
    worst = max(np.max(np.log(dens[a] / dens[b])) for a in dens for b in dens)
    assert worst == pytest.approx(1.0)
    n = 400_000
    edges = np.linspace(-C, C, 41)
    counts = np.histogram(mech.privatize(np.full(n, -1.0), rng=1), edges)[0]
    fine = np.linspace(-C, C, 40 * 2000 + 1)
    mids = (fine[:-1] + fine[1:]) / 2
    probs = (mech.density(mids, -1.0) * np.diff(fine)).reshape(40, -1).sum(axis=1)
    assert probs.sum() == pytest.approx(1.0, abs=1e-3)
    assert np.all(np.abs(counts - n * probs) <= 5 * np.sqrt(n * probs * (1 - probs)))


def test_validation():
    with pytest.raises(LDPValueError):
        DuchiMean(epsilon=1.0, low=1, high=0)
    with pytest.raises(LDPValueError, match="found 2.0"):
        DuchiMean(epsilon=1.0).privatize([0.5, 2.0])
    with pytest.raises(LDPTypeError):
        DuchiMean(epsilon=1.0).privatize(["a"])
    with pytest.raises(LDPValueError):
        DuchiMean(epsilon=0).privatize([0.5])


@pytest.mark.parametrize("cls", [LaplaceMean, PiecewiseMean])
def test_real_outputs_lie_on_the_grid(cls):
    out = cls(epsilon=1.0).privatize(np.linspace(-1, 1, 1000), rng=0)
    np.testing.assert_array_equal(out * 2 ** 20, np.round(out * 2 ** 20))


@pytest.mark.parametrize("cls", MECHS)
def test_aggregates_merge_exactly_in_any_order(cls):
    mech = cls(epsilon=1.0, low=0.0, high=3.0)
    rng = np.random.default_rng(5)
    parts = [mech.aggregate(mech.privatize(rng.uniform(0, 3, size), rng=i))
             for i, size in enumerate((7, 300, 1, 55))]
    forward = parts[0] + parts[1] + parts[2] + parts[3]
    backward = parts[3] + (parts[2] + (parts[1] + parts[0]))
    shuffled = (parts[2] + parts[0]) + (parts[3] + parts[1])
    assert forward == backward == shuffled
    assert mech.estimate(forward) == mech.estimate(backward)       # bit for bit
    assert isinstance(forward.units, int) and forward.n == 363
    with pytest.raises(LDPValueError, match="multiples"):
        mech.aggregate(np.array([mech.unit / 3]))


@pytest.mark.parametrize("cls", MECHS)
def test_estimate_with_error_is_conservative(cls):
    mech = cls(epsilon=2.0, low=0.0, high=10.0)
    agg = mech.aggregate(mech.privatize(np.full(1000, 7.0), rng=3))
    est = mech.estimate_with_error(agg)
    assert est.value == mech.estimate(agg)
    assert est.std_error ** 2 >= mech.variance(1000, 0.4) * (1 - 1e-12)
    assert est.interval[0] < est.value < est.interval[1]


def test_grid_output_distributions_are_exact():
    """Piecewise: 1000 grid points around each breakpoint (all of the likelihood ratios) and a
    window inside the central piece, whose mass is its density times its length."""
    pw, g = PiecewiseMean(epsilon=1.0), 2.0 ** -20
    near = np.concatenate([np.round(b / g) + np.arange(-500, 500) for b in (-pw.C, -1.0, 1.0, pw.C)]) * g
    dist = lambda t: pw.output_distribution(t, near)  # noqa: E731
    assert exact_epsilon(dist, [-1.0, 0.2, 1.0]) == pytest.approx(1.0, rel=1e-9)
    inside = (np.round(0.1 / g) + np.arange(1000)) * g
    s = math.exp(0.5)
    assert sum(pw.output_distribution(0.3, inside).values()) == pytest.approx(
        1000 * g * s / (s + 1) / (pw.C - 1), rel=1e-9)
    lap = LaplaceMean(epsilon=1.0)
    grid = np.arange(-8 * 2 ** 20, 8 * 2 ** 20, 2 ** 12) * 2.0 ** -20          # ±8: the window
    dist = lambda t: lap.output_distribution(t, grid)  # noqa: E731
    assert exact_epsilon(dist, [-1.0, 1.0]) == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(LDPValueError, match="outputs"):
        lap.output_distribution(0.0)
