"""The named cases of the upper bound (docs/estimation.md, "Upper bound"): medians over seeded
runs (new values and hash seed each run) against the bound's own theory.

At the truth, the bound is the slot inversion (:func:`bounds.values_upper_by_slots`) of
U⁺ = l·n − Σ_{j∈H} t̂_j + z·σ_H, σ_H² = Σ_{j∈H} Var(t̂_j) over the occupied columns; l·n − Σ_H t̂_j
has median about 0 and its median over ``RUNS`` runs an sd of about 1.25·σ_H/√RUNS, so the median
bound stays below the inversion of (z + 3·1.25/√RUNS)·σ_H (3 sd of the median).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import special

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.estimation import bounds
from protocols.core.perturbation import count_variance

RUNS = 5


def _runs(D, f, eps, L, l):
    out = []
    for s in range(RUNS):
        rng = np.random.default_rng(s)
        mech = BFRRCE(epsilon=eps, L=L, l=l, seed=int(rng.integers(2 ** 31)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            est = mech.estimate(mech.simulate(np.arange(D), counts=np.full(D, f), rng=rng))
        t = np.zeros(L)
        for k in range(l):
            np.add.at(t, mech.bloom.positions(np.arange(D))[:, k], f)
        out.append((est.lower, est.upper, t, mech))
    return out


def _theory(t, mech, n, alpha=0.025 / 2):    # the sums as reported get half the level
    share, _ = bounds.THRESHOLDS[0]
    a = share * alpha
    z = -float(special.ndtri(bounds.MASS_SHARE * a))
    occupied = t > 0
    sigma = math.sqrt(float(np.sum(count_variance(t[occupied], n, mech.p, mech.q)))) / (mech.p - mech.q)
    slack = 3 * 1.25 / math.sqrt(RUNS)
    return bounds.values_upper_by_slots((z + slack) * sigma, int(occupied.sum()), mech.L, mech.l,
                                        (1 - bounds.MASS_SHARE - bounds.FALSE_POSITIVE) * a)


@pytest.mark.parametrize("D, f, eps, L, l, target", [
    (1, 10 ** 6, 1, 65536, 1, 10_000),      # one value held by all: the users outside its column
    (1, 10 ** 6, 4, 1024, 1, None),
    (500, 200, 8, 1024, 1, None),
    (200, 5000, 8, 4096, 1, None),
    (200, 5000, 8, 4096, 2, None),
])
def test_upper_bound_is_the_mass_balance_of_the_visible_columns(D, f, eps, L, l, target):
    runs = _runs(D, f, eps, L, l)
    upper = float(np.median([r[1] for r in runs]))
    predicted = float(np.median([_theory(r[2], r[3], D * f) for r in runs]))
    assert upper <= predicted
    if target is not None:
        assert upper <= target
    assert all(r[0] <= D <= r[1] for r in runs)


def test_visible_values_give_a_lower_bound_near_D():
    """500 values × 200 users, ε = 8, L = 1024: every value far above the detection limit, so
    the occupancy bound reads D to within its collision law (median lower >= 0.8·D)."""
    lower = np.median([r[0] for r in _runs(500, 200, 8, 1024, 1)])
    assert lower >= 0.8 * 500
