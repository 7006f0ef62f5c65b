"""Exact privacy of BFRRCE by enumerating every report of small filters (docs/privacy.md)."""

import dataclasses
import math
import warnings

import pytest

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.calibration import flip_probabilities, user_epsilon
from protocols import LDPValueError, audit_mechanism, exact_epsilon


def disjoint_pair(mech):
    """Two values whose filters share no bit and have l distinct bits each (the worst case)."""
    filters = {v: set(mech.bloom.positions([v])[0].tolist()) for v in range(200)}
    good = [v for v, f in filters.items() if len(f) == mech.l]
    for a in good:
        for b in good:
            if not filters[a] & filters[b]:
                return a, b
    raise AssertionError("no disjoint pair")


@pytest.mark.parametrize("perturbation", ["symmetric", "optimized"])
@pytest.mark.parametrize("l", [1, 2, 3])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_value_unit_is_exact_and_tight(perturbation, l, eps):
    mech = BFRRCE(epsilon=eps, L=8, l=l, perturbation=perturbation)
    pair = disjoint_pair(mech)
    assert exact_epsilon(mech.output_distribution, pair) == pytest.approx(eps, rel=1e-9)
    assert exact_epsilon(mech.output_distribution, range(12)) <= eps * (1 + 1e-9)


@pytest.mark.parametrize("perturbation", ["symmetric", "optimized"])
@pytest.mark.parametrize("l", [1, 2])
def test_item_unit_is_exact_and_tight(perturbation, l):
    eps = 1.5
    mech = BFRRCE(epsilon=eps, L=8, l=l, unit="item", perturbation=perturbation)
    a, b = disjoint_pair(mech)
    worst = 0.0
    for base in ([], [a], [a, 50]):
        pair = [tuple(base), tuple(base) + (b,)]
        measured = exact_epsilon(mech.set_output_distribution, pair)
        assert measured <= eps * (1 + 1e-9)
        worst = max(worst, measured)
    assert worst == pytest.approx(eps, rel=1e-9)     # b's l bits all new when added to []


def test_item_optimum_is_symmetric():
    """On the item budget's boundary no (p, q) beats the symmetric point's variance factor."""
    for a in (0.5, 1.0, 3.0):
        p0, q0 = flip_probabilities(a, 1, "optimized", "item")
        best = q0 * (1 - q0) / (p0 - q0) ** 2
        for i in range(1, 1000):
            p = i / 1000
            q = max(p * math.exp(-a), 1 - (1 - p) * math.exp(a))
            if q < p:
                assert q * (1 - q) / (p - q) ** 2 >= best * (1 - 1e-9)


def test_flip_probabilities_formulas():
    p, q = flip_probabilities(2.0, 2, "symmetric", "value")
    assert p == pytest.approx(math.exp(0.5) / (1 + math.exp(0.5))) and q == pytest.approx(1 - p)
    p, q = flip_probabilities(2.0, 2, "optimized", "value")
    assert (p, q) == (0.5, pytest.approx(1 / (math.e + 1)))
    assert user_epsilon(p, q, 2, "value") == pytest.approx(2.0)


def test_paper_per_bit_budget_reports_true_epsilon():
    with pytest.warns(PrivacyWarning, match="user-level guarantee is ε = 2.4"):
        mech = BFRRCE(per_bit_epsilon=0.4, L=8, l=3)
    assert mech.epsilon == pytest.approx(2.4)
    assert mech.p == pytest.approx(math.exp(0.4) / (1 + math.exp(0.4)))      # RR_P ≈ 0.6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        assert exact_epsilon(mech.output_distribution, disjoint_pair(mech)) == pytest.approx(2.4)
        assert BFRRCE(per_bit_epsilon=0.4, L=8, l=3, unit="item").epsilon == pytest.approx(1.2)


def test_replace_works_in_every_mode():
    mech = BFRRCE(epsilon=2.0, L=64, l=2)
    assert dataclasses.replace(mech, L=128) == BFRRCE(epsilon=2.0, L=128, l=2)
    with pytest.warns(PrivacyWarning):
        perbit = BFRRCE(per_bit_epsilon=0.5)
    with pytest.warns(PrivacyWarning):
        wider = dataclasses.replace(perbit, L=128)
    assert (wider.L, wider.per_bit_epsilon, wider.epsilon) == (128, 0.5, pytest.approx(1.0))
    with pytest.warns(PrivacyWarning, match="ε = 3"):
        more = dataclasses.replace(perbit, l=3)                      # ε recomputed: 2·3·0.5
    assert more.epsilon == pytest.approx(3.0) and more.p == perbit.p
    with pytest.raises(LDPValueError, match="exactly one"):
        BFRRCE(epsilon=1.0, per_bit_epsilon=0.5)                  # a given ε is not derived


def test_public_epsilon_is_what_the_audit_measures():
    """The exact audit runs on the object users hold: its ε is the user-level one."""
    mech = BFRRCE(epsilon=4.0, L=8, l=2)
    assert not hasattr(mech, "oracle")
    result = audit_mechanism(mech, inputs=disjoint_pair(mech))
    assert result.claimed == 4.0 and result.tight
