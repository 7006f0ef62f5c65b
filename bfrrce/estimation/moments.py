"""The second moment of the column masses, for the lower bound on D.

E[t̂_j²] = t_j² + Var(t̂_j), and the plug-in variance V̂_j at the unclipped t̂_j (linear in t̂_j) is
unbiased, so
Σ_j (t̂_j² − V̂_j) is unbiased for S₂ = Σ_j t_j². Every value contributes its f_v² at least
once, so Σ_v f_v² <= S₂ for any data, and by Cauchy–Schwarz D >= (Σ_v f_v)²/Σ_v f_v²: an upper
confidence bound on S₂ is a lower confidence bound on D (N²/S₂ is at most the inverse Simpson
index N²/Σ_v f_v², Simpson, Nature 1949). See docs/estimation.md.
"""

from __future__ import annotations

import math

import numpy as np

from protocols.core.lazy import optimize
from protocols.core.perturbation import count_variance


def second_moment(t_hat: np.ndarray, var_hat: np.ndarray, n: int, p: float,
                  q: float) -> tuple[float, float]:
    """Unbiased estimate of S₂ = Σ_j t_j² and its standard error.

    Ŝ₂ = Σ_j (t̂_j² − V̂_j) with V̂_j = [t̂_j(p(1 − p) − q(1 − q)) + n q(1 − q)]/(p − q)², the
    variance at the unclipped t̂_j (linear in t̂_j, hence unbiased: a variance clipped at
    t̂_j >= 0 would bias Ŝ₂ down by about 0.4σ₀ per empty column). The standard error uses the
    non-negative ``var_hat``: Var(t̂_j²) ≈ 4 t_j² V_j + 2 V_j² (normal t̂_j).

    Parameters
    ----------
    t_hat, var_hat : numpy.ndarray
        Debiased column sums and their (non-negative) plug-in variances.
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

    Returns
    -------
    (float, float)
        Ŝ₂ and its standard error.
    """
    linear = count_variance(t_hat, n, p, q) / (p - q) ** 2
    s2 = float(np.sum(t_hat ** 2 - linear))
    t2 = np.maximum(t_hat ** 2 - var_hat, 0.0)
    return s2, float(np.sqrt(np.sum(4 * t2 * var_hat + 2 * var_hat ** 2)))


def second_moment_upper(t_hat: np.ndarray, var_hat: np.ndarray, n: int, p: float, q: float,
                        z: float) -> float:
    """Upper confidence bound on S₂ = Σ_j t_j² at z standard errors, from the larger of two:
    the plug-in Ŝ₂ + z·se, and the score bound, the largest S with
    Ŝ₂ >= S − z·(4 S V(√S) + 2 Σ_j V̂_j²)^{1/2}, where V(t) is the variance of t̂ at t users
    (V(√S) bounds every V(t_j) when Σ_j t_j² = S; the larger of V(0) and V(√S) if V falls with
    t). With few users the plug-in standard error is smallest exactly when Ŝ₂ has fallen
    short (a column's t̂ near 0 also has a small plug-in variance); the score bound takes the
    variance at the S₂ it tests instead (Wilson's idea), which keeps the lower bound N²/S₂⁺ on
    D from missing with 4 to 20 users.

    Parameters
    ----------
    t_hat, var_hat : numpy.ndarray
        Debiased column sums and their (non-negative) plug-in variances.
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    z : float
        Standard normal quantile of the bound.

    Returns
    -------
    float
    """
    s2, se = second_moment(t_hat, var_hat, n, p, q)
    plug_in = s2 + z * se
    empties = 2 * float(np.sum(var_hat ** 2))

    slope, null = (p * (1 - p) - q * (1 - q)) / (p - q) ** 2, n * q * (1 - q) / (p - q) ** 2

    def short(s):                        # > 0 once S is high enough that Ŝ₂ falls z sd below it
        variance = null + max(slope * math.sqrt(s), 0.0)             # V(√S), or V(0) if V falls
        return s - z * math.sqrt(4 * s * variance + empties) - s2

    low = max(s2, 0.0)
    high = max(2 * plug_in, 1.0)
    while short(high) <= 0:
        high *= 2
    score = optimize.brentq(short, low, high, rtol=1e-6) if short(low) < 0 else low
    return max(plug_in, score)
