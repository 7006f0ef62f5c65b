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
from numpy.typing import ArrayLike

from protocols.core.lazy import optimize
from protocols.core.perturbation import count_variance


def _cumulants(p: float, q: float, n: int) -> np.ndarray:
    """κ_r(t) = A_r + B_r·t, r = 2, 3, 4, of a column sum c ~ Binomial(t, p) + Binomial(n − t, q):
    rows (A_r, B_r), from the Bernoulli(π) cumulants π(1 − π), π(1 − π)(1 − 2π),
    π(1 − π)(1 − 6π(1 − π))."""
    def bernoulli(x):
        v = x * (1 - x)
        return np.array([v, v * (1 - 2 * x), v * (1 - 6 * v)])
    return np.stack([n * bernoulli(q), bernoulli(p) - bernoulli(q)], axis=1)


def square_variance(t: ArrayLike, n: int, p: float, q: float) -> np.ndarray:
    """Exact Var(t̂² − V̂) of one column holding t users (V̂ linear in t̂, so Ŝ₂'s terms).

    With X = c − E c, d = p − q and V̂ = V(t) + a·X/d (a = [p(1 − p) − q(1 − q)]/d²),
    t̂² − V̂ = t² − V(t) + (2t − a)X/d + X²/d², so
    Var = (2t − a)²κ₂/d² + 2(2t − a)κ₃/d³ + (κ₄ + 2κ₂²)/d⁴ with the cumulants κ_r of c
    (:func:`_cumulants`). The fourth cumulant matters where columns are nearly empty
    (κ₄ ≈ κ₂ ≈ nq when nq < 1: there the normal approximation 4t²V + 2V² misses it).

    Parameters
    ----------
    t : array_like
        Users in the column.
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

    Returns
    -------
    numpy.ndarray
    """
    t = np.asarray(t, dtype=float)
    d = p - q
    (a2, b2), (a3, b3), (a4, b4) = _cumulants(p, q, n)
    k2, k3, k4 = a2 + b2 * t, a3 + b3 * t, a4 + b4 * t
    lin = (2 * t - b2 / d ** 2) / d
    return lin ** 2 * k2 + 2 * lin * k3 / d ** 2 + (k4 + 2 * k2 ** 2) / d ** 4


def second_moment(t_hat: np.ndarray, var_hat: np.ndarray, n: int, p: float,
                  q: float) -> tuple[float, float]:
    """Unbiased estimate of S₂ = Σ_j t_j² and its standard error.

    Ŝ₂ = Σ_j (t̂_j² − V̂_j) with V̂_j = [t̂_j(p(1 − p) − q(1 − q)) + n q(1 − q)]/(p − q)², the
    variance at the unclipped t̂_j (linear in t̂_j, hence unbiased: a variance clipped at
    t̂_j >= 0 would bias Ŝ₂ down by about 0.4σ₀ per empty column). The standard error is the
    exact :func:`square_variance` at the plug-in t_j = (t̂_j² − V̂_j)⁺^{1/2}.

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
    t = np.sqrt(np.maximum(t_hat ** 2 - var_hat, 0.0))
    return s2, float(np.sqrt(np.sum(square_variance(t, n, p, q))))


def second_moment_upper(t_hat: np.ndarray, var_hat: np.ndarray, n: int, p: float, q: float,
                        z: float, moment: tuple[float, float] | None = None) -> float:
    """Upper confidence bound on S₂ = Σ_j t_j² at z standard errors, from the larger of two:
    the plug-in Ŝ₂ + z·se, and the score bound, the largest S with Ŝ₂ >= S − z·W(S)^{1/2},
    W(S) an upper bound on Var Ŝ₂ = Σ_j :func:`square_variance` (t_j) over every data with
    Σ_j t_j² = S: that variance is 4t²V(t) + r(t), r a quadratic r₀ + r₁t + r₂t², and
    Σ_j 4t_j²V(t_j) <= 4S·V(√S) (V(√S) bounds every V(t_j); the larger of V(0) and V(√S) if
    V falls with t), Σ_j r(t_j) <= L·r₀ + r₁⁺(L·S)^{1/2} + r₂⁺S (Cauchy–Schwarz). With few users
    the plug-in standard error is smallest exactly when Ŝ₂ has fallen short (a column's t̂ near
    0 also has a small plug-in variance); the score bound takes the variance at the S₂ it tests
    instead (Wilson's idea), which keeps the lower bound N²/S₂⁺ on D from missing with 4 to 20
    users, and with the fourth cumulant of the nearly empty columns at high ε.

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
    moment : (float, float), optional
        :func:`second_moment` of the same columns, when already computed.

    Returns
    -------
    float
    """
    s2, se = second_moment(t_hat, var_hat, n, p, q) if moment is None else moment
    plug_in = s2 + z * se
    columns = np.size(t_hat)
    slope, null = (p * (1 - p) - q * (1 - q)) / (p - q) ** 2, n * q * (1 - q) / (p - q) ** 2
    # r(t) = square_variance(t) − 4t²V(t), a quadratic: its coefficients from three points
    points = np.array([0.0, 1.0, 2.0])
    rest = square_variance(points, n, p, q) - 4 * points ** 2 * (null + slope * points)
    r0, r1, r2 = np.polynomial.polynomial.polyfit(points, rest, 2)

    def short(s):                        # > 0 once S is high enough that Ŝ₂ falls z sd below it
        variance = null + max(slope * math.sqrt(s), 0.0)             # V(√S), or V(0) if V falls
        spread = 4 * s * variance + columns * r0 + max(r1, 0.0) * math.sqrt(columns * s) + max(r2, 0.0) * s
        return s - z * math.sqrt(max(spread, 0.0)) - s2

    low = max(s2, 0.0)
    high = max(2 * plug_in, 1.0)
    for _ in range(1100):                 # doubling up to the float range
        if short(high) > 0:
            break
        high *= 2
    else:
        return math.inf
    score = optimize.brentq(short, low, high, rtol=1e-6) if short(low) < 0 else low
    return max(plug_in, score)
