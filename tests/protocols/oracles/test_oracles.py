"""The contract of protocols.core.base.FrequencyOracle, checked on every oracle: statistical correctness,
privacy by enumeration, determinism and validation. Tests of one oracle's own formulas live in
that oracle's module (test_grr.py, test_lh.py, test_he.py, test_ss.py, test_hadamard.py, ...)."""

import math

import numpy as np
import pytest

from protocols import (BLH, GRR, OLH, OUE, SHE, SUE, HadamardResponse, IncompatibleError, LDPError,
                       LDPTypeError, LDPValueError, Mechanism, bits, exact_epsilon)

from tests.helpers import ORACLES, fixed_values, make_oracle, tolerance_mean

TIGHT = {"GRR", "RR", "SUE", "BasicRAPPOR", "OUE", "UE", "BLH", "OLH", "SS", "HR"}


def test_unbiased_with_analytic_variance(oracle_name):
    """Mean over trials within 5 standard errors of the truth; variance ratio within 5 standard
    errors of 1 (the sample variance of T normal draws has relative sd √(2/(T−1)))."""
    mech = make_oracle(oracle_name, eps=1.0, d=8)
    d, n, trials = mech.d, 2000, 300
    values = fixed_values(d, n)
    truth = np.bincount(values, minlength=d)
    all_reports = mech.privatize(np.tile(values, trials), rng=12345)
    chunks = np.split(all_reports, trials)
    estimates = np.array([mech.estimate(mech.aggregate(c)) for c in chunks])
    var = np.array([mech.variance(n, f) for f in truth / n])
    assert np.all(np.abs(estimates.mean(axis=0) - truth) <= tolerance_mean(np.sqrt(var), trials))
    ratio = estimates.var(axis=0, ddof=1) / var
    assert np.all(np.abs(ratio - 1) <= 5 * math.sqrt(2 / (trials - 1))), ratio
    # pooled over the d values (nearly independent): a tighter check of the variance formula
    assert abs(ratio.mean() - 1) <= 5 * math.sqrt(2 / (trials - 1)) / math.sqrt(d) * 2


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_exact_privacy_by_enumeration(oracle_name, eps):
    mech = make_oracle(oracle_name, eps=eps, d=4)
    if oracle_name == "SHE":        # an infinite report space: the window of a coarse grid, d = 2
        mech = SHE(epsilon=eps, d=2, step_bits=1)
    measured = exact_epsilon(mech.output_distribution, range(mech.d))
    assert measured <= mech.epsilon * (1 + 1e-9)
    if oracle_name in TIGHT | {"SHE"}:
        assert measured == pytest.approx(mech.epsilon, rel=1e-9)
    if oracle_name == "THE":
        assert measured == pytest.approx(mech.tight_epsilon, rel=1e-9)


def test_distributions_sum_to_one(oracle_name):
    mech = make_oracle(oracle_name, eps=1.0, d=5)
    if oracle_name == "SHE":
        pytest.skip("continuous-like output space")
    for v in range(mech.d):
        assert sum(mech.output_distribution(v).values()) == pytest.approx(1.0)


def test_same_seed_same_reports(oracle_name):
    mech = make_oracle(oracle_name, d=16)
    values = fixed_values(mech.d, 500)
    a, b = mech.privatize(values, rng=7), mech.privatize(values, rng=7)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, mech.privatize(values, rng=8))


def test_secure_default_rng_works(oracle_name):
    mech = make_oracle(oracle_name, d=16)
    agg = mech.aggregate(mech.privatize(fixed_values(mech.d, 300)))
    assert agg.n == 300


def test_merge_any_order_is_exact(oracle_name):
    mech = make_oracle(oracle_name, d=16)
    reports = mech.privatize(fixed_values(mech.d, 900), rng=3)
    parts = [mech.aggregate(reports[i:i + 300]) for i in (0, 300, 600)]
    whole = mech.aggregate(reports)
    assert parts[0].merge(parts[1]).merge(parts[2]) == whole
    assert parts[2] + (parts[0] + parts[1]) == whole
    assert mech.empty_aggregate() + whole == whole


def test_server_does_not_modify_reports(oracle_name):
    mech = make_oracle(oracle_name, d=16)
    reports = mech.privatize(fixed_values(mech.d, 200), rng=1)
    copy = reports.copy()
    mech.estimate(mech.aggregate(reports))
    np.testing.assert_array_equal(reports, copy)


@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf")])
def test_bad_epsilon_is_refused(oracle_name, eps):
    if oracle_name == "UE":
        pytest.skip("UE takes p and q")
    with pytest.raises(LDPValueError, match="epsilon"):
        ORACLES[oracle_name](eps, 8)


def test_epsilon_type_errors():
    with pytest.raises(LDPTypeError):
        GRR(epsilon="1", d=4)
    with pytest.raises(LDPTypeError):
        GRR(epsilon=1.0, d=4.0)
    with pytest.raises(TypeError):
        GRR(1.0, 4)                     # keyword-only


@pytest.mark.parametrize("name", sorted(set(ORACLES) - {"RR"}))
def test_small_domain_is_refused(name):
    with pytest.raises(LDPValueError, match="d must be >= 2"):
        ORACLES[name](1.0, 1)


@pytest.mark.parametrize("values, error", [
    ([0, 8], LDPValueError), ([-1], LDPValueError), ([0.0, 1.0], LDPTypeError),
    ([float("nan")], LDPTypeError), ([True, False], LDPTypeError), ([], LDPValueError),
    ([[0, 1]], LDPValueError), (["a"], LDPTypeError)])
def test_bad_values_are_refused(oracle_name, values, error):
    mech = make_oracle(oracle_name, d=8)
    if oracle_name == "RR" and values == [0, 8]:
        values = [0, 2]
    with pytest.raises(error):
        mech.privatize(np.array(values) if values else np.array([], dtype=np.int64), rng=0)


def test_out_of_domain_message_names_value():
    with pytest.raises(LDPValueError, match="found 9"):
        GRR(epsilon=1, d=8).privatize([1, 9], rng=0)


def test_reports_of_other_parameters_are_refused(oracle_name):
    mech = make_oracle(oracle_name, d=8)
    other = make_oracle(oracle_name, d=16 if oracle_name != "RR" else 2, eps=2.0)
    reports = other.privatize(fixed_values(other.d, 100), rng=0)
    if oracle_name in {"RR", "UE", "BLH"}:   # same report space: caught when merging aggregates
        with pytest.raises(IncompatibleError):
            mech.aggregate(reports).merge(other.aggregate(reports))
        return
    with pytest.raises(LDPError):
        mech.aggregate(reports)
    with pytest.raises(LDPError):
        mech.aggregate(np.zeros((3, 3, 3)))


def test_merging_different_mechanisms_is_refused():
    a = GRR(epsilon=1, d=4).aggregate(np.array([0, 1]))
    b = GRR(epsilon=2, d=4).aggregate(np.array([0, 1]))
    with pytest.raises(IncompatibleError):
        a.merge(b)
    with pytest.raises(LDPTypeError):
        a.merge(3)
    with pytest.raises(IncompatibleError):
        GRR(epsilon=2, d=4).estimate(a)


def test_bit_order_is_little_endian():
    """Bit j of a report is bit j % 8 of byte j // 8, as bitarray(endian='little') reads it."""
    from bitarray import bitarray
    mask = np.zeros((1, 12), dtype=bool)
    mask[0, [0, 9]] = True
    packed = bits.pack(mask)
    assert packed.tolist() == [[1, 2]]
    ba = bitarray(endian="little")
    ba.frombytes(packed[0].tobytes())
    assert ba[:12].tolist() == mask[0].tolist()
    mech = SUE(epsilon=60.0, d=12)
    rep = mech.privatize([9], rng=0)
    assert rep.tolist() == [[0, 2]]       # p ≈ 1 − e^-30, q ≈ e^-30: only the true bit is set


def test_padding_bits_mean_other_d():
    with pytest.raises(IncompatibleError, match="beyond bit"):
        SUE(epsilon=1, d=12).aggregate(np.array([[0, 0x80]], dtype=np.uint8))


# --- specific formulas ---------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_variances_match_the_literature(eps):
    n, d, e = 1000, 64, math.exp(eps)
    assert GRR(epsilon=eps, d=d).variance(n) == pytest.approx(n * (d - 2 + e) / (e - 1) ** 2)
    assert SUE(epsilon=eps, d=d).variance(n) == pytest.approx(
        n * math.exp(eps / 2) / (math.exp(eps / 2) - 1) ** 2)
    assert OUE(epsilon=eps, d=d).variance(n) == pytest.approx(4 * n * e / (e - 1) ** 2)
    assert HadamardResponse(epsilon=eps, d=d).variance(n) == pytest.approx(
        n * (e + 1) ** 2 / (e - 1) ** 2)
    assert BLH(epsilon=eps, d=d).variance(n) == pytest.approx(n * (e + 1) ** 2 / (e - 1) ** 2)
    assert SHE(epsilon=eps, d=d, step_bits=12).variance(n) == pytest.approx(8 * n / eps ** 2, rel=1e-3)
    olh = OLH(epsilon=eps, d=d)
    if olh.g == e + 1:
        assert olh.variance(n) == pytest.approx(4 * n * e / (e - 1) ** 2)


@pytest.mark.parametrize("name", ["GRR", "RR", "SUE", "OUE", "THE", "UE"])
def test_simulated_aggregates_match_the_analytic_law(name):
    """simulate() draws support counts exactly: estimates have the analytic mean and variance."""
    mech = make_oracle(name, eps=1.0, d=8)
    truth = np.bincount(fixed_values(mech.d, 2000), minlength=mech.d)
    trials = 400
    domain = np.arange(mech.d)
    est = np.array([mech.estimate(mech.simulate(domain, counts=truth, rng=s)) for s in range(trials)])
    var = np.array([mech.variance(2000, f) for f in truth / 2000])
    assert np.all(np.abs(est.mean(axis=0) - truth) <= tolerance_mean(np.sqrt(var), trials))
    assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) <= 5 * math.sqrt(2 / (trials - 1)))
    with pytest.raises(LDPValueError):
        mech.simulate(domain, counts=np.full(mech.d + 1, 3))
    with pytest.raises(LDPValueError):
        mech.simulate([mech.d], counts=[3])


def test_every_mechanism_has_the_one_interface(oracle_name):
    assert isinstance(make_oracle(oracle_name), Mechanism)


def test_estimate_with_error_covers_at_its_level():
    mech = GRR(epsilon=1.0, d=4)
    truth = np.array([500, 300, 150, 50])
    trials, hits = 200, 0
    for s in range(trials):
        est = mech.estimate_with_error(mech.simulate(np.arange(4), counts=truth, rng=s), confidence=0.9)
        hits += np.sum((est.interval[0] <= truth) & (truth <= est.interval[1]))
    rate, total = hits / (4 * trials), 4 * trials
    assert abs(rate - 0.9) <= 5 * math.sqrt(0.9 * 0.1 / total)
