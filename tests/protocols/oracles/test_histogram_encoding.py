"""protocols.oracles.histogram_encoding: THE's threshold and probabilities (the shared oracle contract is in test_oracles.py)."""

import math

import numpy as np
import pytest

from protocols import THE, LDPValueError
from protocols.core.calibration import optimal_theta, the_probabilities


@pytest.mark.parametrize("eps", [0.5, 1, 2, 4])
def test_the_theta_is_optimal(eps):
    theta = optimal_theta(eps)
    assert 0.5 < theta < 1
    def cost(t):
        p, q = the_probabilities(eps, t)
        return q * (1 - q) / (p - q) ** 2
    grid = np.linspace(0.501, 0.999, 499)
    assert cost(theta) <= min(cost(t) for t in grid) + 1e-12
    mech = THE(epsilon=eps, d=4)
    p, q = the_probabilities(eps, mech.theta)
    # Laplace(2/ε) tails: Pr[1 + Lap > θ] and Pr[Lap > θ]
    b = 2 / eps
    assert p == pytest.approx(1 - 0.5 * math.exp(-(1 - mech.theta) / b))
    assert q == pytest.approx(0.5 * math.exp(-mech.theta / b))
    with pytest.raises(LDPValueError):
        THE(epsilon=1, d=4, theta=0.3)
