"""Simple reference estimators of D from column sums, beside ``value`` in benchmarks/coverage.py.

Each takes the column sums c_j of n reports of a BFRRCE configuration (p, q, L, l) and assumes
one value per user (N = n):

``linear``
    thresholded linear counting: K̂ = (R − L·u)/(1 − u) occupied columns from the R columns
    whose exact null p-value Pr[Binomial(n, q) >= c_j] is at most u = 0.01 (the expected empty
    ones removed), inverted by D = ln(1 − K̂/L)/(l·ln(1 − 1/L)) (Whang, Vander-Zanden, Taylor,
    ACM TODS 1990);
``storey``
    Storey's π̂₀ = #{p_j > λ}/(L(1 − λ)), λ = 1/2, on randomized exact p-values
    p_j = Pr[X > c_j] + U·Pr[X = c_j] (X ~ Binomial(n, q), U uniform), as the empty fraction
    of linear counting (J. D. Storey, J. R. Stat. Soc. B 64(3), 2002);
``simpson``
    the inverse Simpson index with the collision term: Ŝ₂ = Σ_j (t̂_j² − V̂_j) has mean
    l·Σ_v f_v² + (n² − Σ_v f_v²)·l²/L, so Σ f² = (Ŝ₂ − n²l²/L)/(l − l²/L) and D = n²/Σ f²
    (E. H. Simpson, Nature 163, 1949).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from protocols.core.perturbation import debias_counts

THRESHOLD_P = 0.01
STOREY_LAMBDA = 0.5


def _invert(empty_fraction, L, l, n):
    if empty_fraction <= 0:
        return float(n)
    return min(max(math.log(min(empty_fraction, 1.0)) / (l * math.log1p(-1 / L)), 0.0), float(n))


def linear(counts, n, p, q, L, l, rng=None):
    """Thresholded linear counting (module docstring)."""
    pv = stats.binom.sf(np.asarray(counts) - 1, n, q)
    r = np.count_nonzero(pv <= THRESHOLD_P)
    k = min(max((r - L * THRESHOLD_P) / (1 - THRESHOLD_P), 0.0), L)
    return _invert((L - k) / L, L, l, n)


def storey(counts, n, p, q, L, l, rng):
    """Storey's π₀ on randomized p-values as the empty fraction (module docstring)."""
    c = np.asarray(counts)
    pv = stats.binom.sf(c, n, q) + rng.random(c.size) * stats.binom.pmf(c, n, q)
    pi0 = np.count_nonzero(pv > STOREY_LAMBDA) / (L * (1 - STOREY_LAMBDA))
    return _invert(pi0, L, l, n)


def simpson(counts, n, p, q, L, l, rng=None):
    """The inverse Simpson index with the collision correction (module docstring)."""
    t_hat, _ = debias_counts(counts, n, p, q)
    linear_var = (t_hat * p * (1 - p) + (n - t_hat) * q * (1 - q)) / (p - q) ** 2
    s2 = float(np.sum(t_hat ** 2 - linear_var))
    squares = (s2 - n * n * l * l / L) / (l - l * l / L)
    return float(n) if squares <= 0 else min(max(n * n / squares, 1.0), float(n))


BASELINES = {"linear": linear, "storey": storey, "simpson": simpson}
