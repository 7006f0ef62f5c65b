"""Regression tests of the bounds on D at the adversarial review's cases (fixed seeds).

Coverage over R runs must be at least 0.95 − 5·(0.05·0.95/R)^{1/2}: a valid 95% interval fails
that with probability far below 10^-6.
"""

import math

import numpy as np
import pytest

from bfrrce import BFRRCE


def coverage(counts, runs, **options):
    """Share of ``runs`` seeded runs whose interval holds D = len(counts)."""
    hits = 0
    for seed in range(runs):
        m = BFRRCE(seed=seed, **options)
        est = m.estimate(m.simulate(np.arange(len(counts)) + 10**9, counts=counts, rng=seed))
        hits += est.lower <= len(counts) <= est.upper
    return hits / runs


def floor_of(runs):
    return 0.95 - 5 * math.sqrt(0.05 * 0.95 / runs)


@pytest.mark.parametrize("counts, epsilon, L", [
    ([10] * 50 + [1] * 2500, 12, 8192),       # was 0/200
    ([5] * 3 + [1] * 400, 12, 1024),          # was 0.056
    ([2] * 50 + [1] * 300, 10, 1024),         # was 0.585
])
def test_upper_bound_covers_when_empty_columns_are_nearly_silent(counts, epsilon, L):
    """n·q < 0.02: the selection bias of the threshold is bounded exactly, not by the plug-in."""
    runs = 20
    assert coverage(counts, runs, epsilon=epsilon, L=L, l=1) >= floor_of(runs)
