"""The optional power-law extrapolation (bfrrce.estimation.extrapolation)."""

import math
import warnings

import numpy as np
import pytest
from scipy import special

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.estimation import extrapolation
from protocols.errors import LDPValueError


def simulate(mech, counts, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)       # seeded simulations on purpose
        return mech.simulate(rng.integers(0, 2 ** 62, counts.size), counts=counts, rng=rng)


def test_the_exponent_solves_the_mass_balance_of_a_power_law():
    """For the exact expected counts of a power law (m values at or above f₀, U users below),
    the fit returns the law's exponent and its D."""
    for a, f0, D in ((1.7, 50.0, 10 ** 4), (2.0, 100.0, 3 * 10 ** 4), (2.6, 20.0, 5 * 10 ** 4)):
        zeta = special.zeta(a, 1.0)
        tail = D * special.zeta(a, f0) / zeta
        below = D * np.sum(np.arange(1.0, f0) ** (1 - a)) / zeta
        assert extrapolation._exponent(tail, below, f0) == pytest.approx(a, rel=1e-8)
        assert extrapolation._values(tail, below, f0) == pytest.approx(D, rel=1e-8)
    assert math.isnan(extrapolation._exponent(10.0, 0.0, 50.0))       # no users below: no power law


@pytest.mark.parametrize("a, L", [(2.0, 65536), (2.4, 16384)])
def test_power_law_frequencies_are_read_within_their_standard_error(a, L):
    """Frequencies drawn from the model itself (Pr[f] = f^-a/ζ(a), 30,000 values) at ε = 8: the
    estimate is accepted and z = (D̂ − D)/se is standard normal if the standard error and the
    selection's correction are right: over 12 seeded runs at least 11 within 3 (99.7% each) and
    the mean z within ±1 (3.5 of its standard errors, 1/√12): the selection's correction is what
    keeps the mean near 0."""
    mech = BFRRCE(epsilon=8, L=L)
    rng = np.random.default_rng(5)
    z = []
    for _ in range(12):
        counts = rng.zipf(a, 30_000)
        result = mech.extrapolate(simulate(mech, counts, rng))
        assert result.refused is None and result.std_error > 0
        z.append((result.value - counts.size) / result.std_error)
    assert np.sum(np.abs(z) <= 3) >= 11 and abs(np.mean(z)) <= 1


@pytest.mark.parametrize("name, counts, reason", [
    ("equal frequencies", np.full(2000, 50), "not a power law"),
    ("lognormal frequencies", np.maximum(1, np.round(np.random.default_rng(3).lognormal(2, 1.5, 20_000))).astype(int),
     "not a power law"),
    ("few values seen", np.full(10, 5000), "values of"),
])
def test_the_model_is_refused_where_it_does_not_fit(name, counts, reason):
    mech = BFRRCE(epsilon=8, L=16384)
    result = mech.extrapolate(simulate(mech, counts, np.random.default_rng(9)))
    assert result.refused is not None and reason in result.refused
    assert "refused" in str(result) and "not covered by the bounds" in str(result)


def test_an_extrapolation_outside_the_bounds_is_refused():
    mech = BFRRCE(epsilon=8, L=65536)
    agg = simulate(mech, np.random.default_rng(1).zipf(2.0, 30_000), np.random.default_rng(2))
    fitted = mech.extrapolate(agg)
    assert fitted.refused is None
    result = mech.extrapolate(agg, interval=(1.0, fitted.value / 2))
    assert "outside the bounds" in result.refused and result.value == pytest.approx(fitted.value)


def test_the_printout_says_it_is_a_model():
    mech = BFRRCE(epsilon=8, L=65536)
    result = mech.extrapolate(simulate(mech, np.random.default_rng(1).zipf(2.0, 30_000), np.random.default_rng(2)))
    text = str(result)
    assert text.startswith("model-based extrapolation") and "if the frequencies follow" in text
    assert result.to_dict()["refused"] is None and result.to_dict()["tail_values"] == result.tail_values


@pytest.mark.parametrize("kwargs", [{"l": 2}, {"unit": "item"}])
def test_extrapolate_needs_one_value_per_user_hashed_once(kwargs):
    mech = BFRRCE(epsilon=8, L=1024, **kwargs)
    with pytest.raises(LDPValueError, match="l=1"):
        mech.extrapolate(mech.empty_aggregate())


def test_f0_must_be_above_one():
    mech = BFRRCE(epsilon=8, L=1024)
    agg = simulate(mech, np.full(100, 100), np.random.default_rng(0))
    with pytest.raises(LDPValueError, match="f0"):
        mech.extrapolate(agg, f0=1)


def test_nothing_detectable_is_refused_not_an_overflow():
    """n = 100 at ε = 0.5: the 90% detection limit is infinite; refused, and JSON-safe."""
    import json
    mech = BFRRCE(epsilon=0.5, L=64)
    result = mech.extrapolate(simulate(mech, np.ones(100, dtype=int), np.random.default_rng(0)))
    assert result.refused and "no value is detected" in result.refused
    json.dumps(result.to_dict(), allow_nan=False)


def test_a_fractional_f0_is_read_as_the_next_whole_frequency():
    for a, f0 in ((2.0, 2.5), (2.5, 1.5)):
        k = math.ceil(f0)
        zeta = special.zeta(a, 1.0)
        tail, below = 1e4 * special.zeta(a, k) / zeta, 1e4 * np.sum(np.arange(1.0, k) ** (1 - a)) / zeta
        mech = BFRRCE(epsilon=8, L=16384)
        assert extrapolation._exponent(tail, below, k) == pytest.approx(a, rel=1e-8)
    agg = simulate(mech, np.random.default_rng(1).zipf(2.0, 30_000), np.random.default_rng(2))
    assert mech.extrapolate(agg, f0=120.5).f0 == 121.0


@pytest.mark.parametrize("perturbation", ["optimized", "symmetric"])
def test_many_light_values_a_column_count_each_column_once(perturbation):
    """10⁶ values drawn from the law (a = 2) at ε = 1, L = 1024: about 1,000 light values share each
    column; counting a column's pass once per value runs the selection's correction away. Counted
    once per column, D̂ is within 3 se of D."""
    counts = np.random.default_rng([1, 77]).zipf(2.0, 10 ** 6)
    mech = BFRRCE(epsilon=1, L=1024, perturbation=perturbation)
    result = mech.extrapolate(simulate(mech, counts, np.random.default_rng(0)))
    assert result.refused is None and abs(result.value - counts.size) <= 3 * result.std_error


def test_a_crowded_filter_is_refused():
    """30,000 values (a = 2) in L = 64 columns at ε = 8: every column holds a tail's worth of light
    users, so a tail column does not hold one value."""
    mech = BFRRCE(epsilon=8, L=64)
    result = mech.extrapolate(simulate(mech, np.random.default_rng(3).zipf(2.0, 30_000), np.random.default_rng(0)))
    assert "too crowded" in result.refused
