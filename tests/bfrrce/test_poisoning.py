import math

import numpy as np
import pytest

from bfrrce import BFRRCE
from bfrrce.poisoning import (ATTACKS, _column_bits, concentrated_bound, concentrated_fakes, cooccurrence_test,
                           plausible_weight, report_weights, screen_concentrated, screen_reports,
                           weight_bounds, weight_excess, weight_pmf, fake_reports, shift_bound)
from protocols import LDPValueError
from protocols.bits import packing as bits


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


# -- concentrated fakes: the co-occurrence test ---------------------------------------------------

def _synthetic(n, D, rng):
    return np.repeat(np.arange(D), np.diff(np.linspace(0, n, D + 1).round().astype(int)))


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_cooccurrence_false_alarm_rate_on_honest_batches(eps):
    """Honest batches (equal and skewed frequencies) are flagged at most at rate α (Bonferroni
    over nearly independent pairs): flagged <= α + 5·√(α(1 − α)/trials)."""
    mech = BFRRCE(epsilon=eps, L=256)
    alpha, trials = 0.1, 100
    rng = np.random.default_rng(5)
    skewed = rng.zipf(1.5, 2000) % 500
    flagged = [cooccurrence_test(mech, mech.privatize(_synthetic(2000, 60, rng) if t % 2 else skewed,
                                                      rng=t), alpha=alpha).flagged
               for t in range(trials)]
    assert np.mean(flagged) <= alpha + 5 * math.sqrt(alpha * (1 - alpha) / trials)


def test_concentrated_bound_rejects_honest_reports_at_most_report_alpha():
    mech = BFRRCE(epsilon=2.0, L=128)
    n, report_alpha = 40000, 0.01
    columns = np.arange(0, 40)
    reports = mech.privatize(np.arange(n) % 64, rng=3)        # many users hold values in the set
    ones = _column_bits(reports, columns).sum(axis=1)
    rate = np.mean(ones > concentrated_bound(mech, columns.size, report_alpha))
    assert rate <= report_alpha + 5 * math.sqrt(report_alpha * (1 - report_alpha) / n)


@pytest.mark.parametrize("width", ["honest", "max"])
def test_concentrated_fakes_are_found_and_removed(width):
    mech = BFRRCE(epsilon=4.0, L=1024)
    rng = np.random.default_rng(7)
    honest = mech.privatize(_synthetic(10000, 122, rng), rng=8)
    w = int(round(report_weights(honest).mean())) if width == "honest" else weight_bounds(mech)[1]
    mask = np.zeros((100, 1024), dtype=bool)                  # 1% fakes on the same w columns
    mask[:, rng.choice(1024, w, replace=False)] = True
    reports = np.concatenate([honest, bits.pack(mask)])
    kept, rejected, test = screen_concentrated(mech, reports)
    chosen = np.flatnonzero(mask[0])
    assert test.flagged and np.isin(test.suspicious, chosen).all()
    assert test.suspicious.size >= min(chosen.size, test.columns.size) // 2
    keep, _ = concentrated_fakes(mech, reports)
    assert not keep[10000:].any()                             # every fake removed
    assert (~keep[:10000]).sum() <= 10000 * 1e-3 + 5 * math.sqrt(10000 * 1e-3)
    clean = mech.estimate(mech.aggregate(honest))
    defended = mech.estimate(mech.aggregate(kept))
    assert abs(defended.value - clean.value) <= 3 * clean.std_error
    assert not screen_concentrated(mech, honest)[2].flagged


def test_cooccurrence_refusals():
    with pytest.raises(LDPValueError, match="l = 1"):
        cooccurrence_test(BFRRCE(epsilon=4.0, L=64, l=2), np.zeros((5, 8), dtype=np.uint8))
    mech = BFRRCE(epsilon=4.0, L=64)
    with pytest.raises(LDPValueError):
        cooccurrence_test(mech, np.zeros((1, 8), dtype=np.uint8))
    with pytest.raises(LDPValueError):
        cooccurrence_test(mech, np.zeros((5, 8), dtype=np.uint8), columns=65)


def test_fake_shift_never_exceeds_the_bound():
    """docs/manipulation.md: m fake reports move any t̂_j by at most m·max(q, 1 − q)/(p − q)."""
    mech = BFRRCE(epsilon=4.0, L=256)
    rng = np.random.default_rng(2)
    honest = mech.privatize(_synthetic(3000, 40, rng), rng=2)
    clean = mech.debias(mech.aggregate(honest)).t_hat
    for kind in ATTACKS:
        fakes = fake_reports(kind, 60, 256, report_weights(honest).mean(), weight_bounds(mech)[1], rng)
        attacked = mech.debias(mech.aggregate(np.concatenate([honest, fakes]))).t_hat
        assert np.abs(attacked - clean).max() <= shift_bound(mech, 60) * (1 + 1e-12)


def test_weight_excess_false_alarms_and_detection():
    """Honest batches: flagged at rate <= α + 5√(α(1 − α)/trials); 5% spread fakes of maximal
    accepted weight (which the co-occurrence test cannot see) are flagged."""
    mech = BFRRCE(epsilon=4.0, L=256)
    alpha, trials = 0.1, 200
    rng = np.random.default_rng(4)
    flagged = [weight_excess(mech, mech.privatize(_synthetic(1000, 30, rng), rng=t), alpha)[1]
               for t in range(trials)]
    assert np.mean(flagged) <= alpha + 5 * math.sqrt(alpha * (1 - alpha) / trials)
    honest = mech.privatize(_synthetic(10000, 100, rng), rng=1)
    fakes = fake_reports("spread-max", 500, 256, 0.0, weight_bounds(mech)[1], rng)
    reports = np.concatenate([honest, fakes])
    assert plausible_weight(mech, reports).all() or plausible_weight(mech, fakes).all()
    assert not concentrated_fakes(mech, reports)[1].flagged
    assert weight_excess(mech, reports, 1e-3)[1]
    with pytest.raises(LDPValueError, match="l = 1"):
        weight_excess(BFRRCE(epsilon=4.0, L=64, l=2), np.zeros((5, 8), dtype=np.uint8))
