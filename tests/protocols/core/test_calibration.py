"""protocols.core.calibration: each (p, q) spends exactly its ε (the oracles' audits check the mechanisms)."""

import math

import pytest
from scipy import stats

from protocols.core.calibration import (grr_probabilities, log_ratio, oue_probabilities, subset_probabilities,
                                  sue_probabilities, the_probabilities)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_randomized_response_and_unary_encodings(eps):
    for k in (2, 7, 1000):
        p, q = grr_probabilities(eps, k)
        assert p / q == pytest.approx(math.exp(eps)) and p + (k - 1) * q == pytest.approx(1.0)
    p, q = sue_probabilities(eps)
    assert log_ratio(p, q) == pytest.approx(eps) and p + q == pytest.approx(1.0)
    p, q = oue_probabilities(eps)
    assert p == 0.5 and log_ratio(p, q) == pytest.approx(eps)


@pytest.mark.parametrize("d, k", [(5, 1), (6, 2), (10, 4)])
def test_subset_selection_by_counting_subsets(d, k):
    """Subsets holding v weigh e^ε, the others 1: p* and q* from the counts of each kind."""
    e = math.exp(1.3)
    z = math.comb(d - 1, k - 1) * e + math.comb(d - 1, k)
    p_star = math.comb(d - 1, k - 1) * e / z
    # v' ≠ v is in the subset: with v (C(d−2, k−2) of them, weight e) or without (C(d−2, k−1), weight 1)
    q_star = ((math.comb(d - 2, k - 2) if k >= 2 else 0) * e + math.comb(d - 2, k - 1)) / z
    assert subset_probabilities(1.3, d, k) == pytest.approx((p_star, q_star))


def test_the_probabilities_are_laplace_tails():
    eps, theta = 1.7, 0.7
    noise = stats.laplace(scale=2 / eps)
    assert the_probabilities(eps, theta) == pytest.approx((noise.sf(theta - 1), noise.sf(theta)))
