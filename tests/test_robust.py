import math

import numpy as np
import pytest

from bfrrce import BFRRCE
from bfrrce.robust import report_weights, screen_reports, weight_bounds, weight_pmf


def test_weight_pmf_matches_reports():
    mech = BFRRCE(epsilon=3.0, L=64, l=1)
    n = 20000
    w = report_weights(mech.privatize(np.zeros(n, dtype=np.int64), rng=0))
    pmf = weight_pmf(64, 1, mech.p, mech.q)
    assert pmf.sum() == pytest.approx(1.0)
    mean = np.sum(np.arange(pmf.size) * pmf)
    var = np.sum((np.arange(pmf.size) - mean) ** 2 * pmf)
    assert abs(w.mean() - mean) <= 5 * math.sqrt(var / n)


@pytest.mark.parametrize("l", [1, 3])
def test_honest_rejection_rate_is_at_most_alpha(l):
    mech = BFRRCE(epsilon=4.0, L=256, l=l)
    alpha, n = 0.01, 50000
    _, rejected = screen_reports(mech, mech.privatize(np.arange(n), rng=1), alpha)
    assert rejected / n <= alpha + 5 * math.sqrt(alpha * (1 - alpha) / n)
    lo, hi = weight_bounds(mech, alpha)
    assert 0 <= lo <= hi <= 256


def test_crafted_reports_are_rejected():
    mech = BFRRCE(epsilon=4.0, L=256)
    honest = mech.privatize(np.arange(1000) % 50, rng=2)
    all_ones = np.full((50, 32), 255, dtype=np.uint8)
    chosen = np.zeros((50, 32), dtype=np.uint8)
    chosen[:, :12] = 255                                      # 96 chosen bits
    alpha = 1e-3
    assert screen_reports(mech, np.concatenate([all_ones, chosen]), alpha)[1] == 100
    honest_rejected = screen_reports(mech, honest, alpha)[1]
    assert honest_rejected <= 1000 * alpha + 5 * math.sqrt(1000 * alpha)     # at most α, binomial
    kept, _ = screen_reports(mech, np.concatenate([honest, all_ones, chosen]), alpha)
    # the defended estimate is close to the clean one; the undefended one is not
    clean = mech.estimate(mech.aggregate(honest))
    attacked = mech.estimate(mech.aggregate(np.concatenate([honest, all_ones, chosen])))
    defended = mech.estimate(mech.aggregate(kept))
    assert abs(defended.value - clean.value) <= 3 * clean.std_error
    assert abs(attacked.value - clean.value) > 3 * clean.std_error
