"""Parameter advice: objectives, methods, confidence, cache, and that the analytic model ranks
configurations like the simulation."""

import math

import numpy as np
import pytest
from scipy import stats

from bfrrce import BFRRCE, suggest_parameters
from bfrrce.advice import cardinality_grid, predicted_aare
from protocols import LDPValueError


def test_analytic_prefers_one_hash_and_is_cached():
    s = suggest_parameters(10_000, 4.0, (100, 150), Ls=[128, 256], objective="aare")
    assert s.l == 1 and s.method == "analytic" and s.trials == 0 and math.isnan(s.confidence)
    assert {row["l"] for row in s.table} == {1, 2, 3}
    assert [r["score"] for r in s.table] == sorted(r["score"] for r in s.table)
    assert "l=1" in s.explanation and "analytic" in s.explanation
    assert suggest_parameters(10_000, 4.0, (100, 150), Ls=[128, 256], objective="aare") is s


def test_simulated_width_says_how_sure():
    s = suggest_parameters(5_000, 4.0, (50, 200), Ls=[128, 512], ls=(1, 2), perturbations=("optimized",),
                           objective="width", trials=4, max_trials=8, screen=3)
    assert s.objective == "width" and s.method == "simulate" and s.trials in (4, 8)
    assert 0.5 <= s.confidence <= 1 and s.margin >= 0
    assert len(s.table) == 3 and "probability that the choice is right" in s.explanation
    assert all(r["std_error"] >= 0 for r in s.table)


def test_the_default_is_the_analytic_model_over_1_to_n():
    """No range, no objective: the analytic AARE model over D in 1..n (no simulation)."""
    s = suggest_parameters(200_000, 8.0)
    assert (s.objective, s.method, s.trials) == ("aare", "analytic", 0)
    assert s.grid[0] == 1 and s.grid[-1] == 200_000


def test_analytic_ranks_like_the_simulation():
    """Spearman correlation between predicted and simulated AARE over 12 configurations
    (10,000 users, 122 values, ε = 4, 12 trials each; fixed seeds)."""
    n, D, eps = 10_000, 122, 4.0
    values, counts = np.arange(D), np.full(D, n // D)
    counts[: n - counts.sum()] += 1
    predicted, simulated = [], []
    for L in (64, 256, 1024, 4096):
        for l in (1, 2, 3):
            mech = BFRRCE(epsilon=eps, L=L, l=l)
            predicted.append(predicted_aare(n, [D], mech.p, mech.q, L, l)[0])
            rel = [abs(mech.estimate(mech.simulate(values, counts=counts, rng=t)).value - D) / D for t in range(12)]
            simulated.append(np.mean(rel))
    assert stats.spearmanr(predicted, simulated)[0] >= 0.7


def test_grid_and_errors():
    assert list(cardinality_grid(1, 100, 3)) == [1, 10, 100]
    with pytest.raises(LDPValueError, match="low <= high"):
        suggest_parameters(100, 1.0, (50, 10))
    with pytest.raises(LDPValueError, match="objective"):
        suggest_parameters(100, 1.0, (1, 10), objective="speed")
    with pytest.raises(LDPValueError, match="analytic"):
        suggest_parameters(100, 1.0, (1, 10), objective="width", method="analytic")


@pytest.mark.benchmark
@pytest.mark.parametrize("n, D, eps", [(10_000, 122, 2.0), (10_000, 122, 4.0), (10_000, 122, 8.0),
                                       (2_000, 122, 4.0), (2_000, 122, 8.0)])
def test_analytic_ranking_against_simulation(n, D, eps, capsys):
    """24 configurations (L 64..4096, l 1..3, both perturbations), 16 trials each with a fresh hash
    draw per trial: Spearman correlation of predicted and simulated AARE, and the simulated AARE of
    the analytic choice against the simulated best (``python -m pytest -m benchmark -s
    tests/bfrrce/test_advice.py``)."""
    counts = np.diff(np.linspace(0, n, D + 1).round().astype(np.int64))
    rows = []
    for L in (64, 256, 1024, 4096):
        for l in (1, 2, 3):
            for pert in ("optimized", "symmetric"):
                mech = BFRRCE(epsilon=eps, L=L, l=l, perturbation=pert)
                rel = []
                for t in range(16):
                    rng = np.random.default_rng([t, L, l])
                    values = rng.integers(0, 2 ** 62, D)
                    rel.append(abs(mech.estimate(mech.simulate(values, counts=counts, rng=rng)).value - D) / D)
                rows.append(((L, l, pert), predicted_aare(n, [D], mech.p, mech.q, L, l)[0], np.mean(rel)))
    rho = stats.spearmanr([r[1] for r in rows], [r[2] for r in rows])[0]
    chosen, best = min(rows, key=lambda r: r[1]), min(rows, key=lambda r: r[2])
    with capsys.disabled():
        print(f"\nn={n:,} D={D} ε={eps:g}: Spearman {rho:.2f}; analytic choice {chosen[0]} simulated AARE "
              f"{chosen[2]:.3f}; simulated best {best[0]} {best[2]:.3f}")
    assert rho >= 0.75          # at eps = 8 most configurations read D exactly and tie near 0
