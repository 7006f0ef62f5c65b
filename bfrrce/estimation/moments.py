"""The second moment of the column masses and the inverse Simpson index.

E[t̂_j²] = t_j² + Var(t̂_j), and the plug-in variance V̂_j (linear in t̂_j) is unbiased, so
Σ_j (t̂_j² − V̂_j) is unbiased for S₂ = Σ_j t_j². Every value contributes its f_v² at least
once, so Σ_v f_v² <= S₂ for any data, and by Cauchy–Schwarz D >= (Σ_v f_v)²/Σ_v f_v²: an upper
confidence bound on S₂ is a lower confidence bound on D. With random hashing,
E S₂ ≈ l Σ_v f_v² + (N² − Σ_v f_v²) l²/L (N = Σ_v f_v), which gives an estimate of Σ_v f_v² and of
the inverse Simpson index N²/Σ_v f_v² (Simpson, Nature 1949), equal to D when values have equal
frequencies and below D otherwise. See docs/estimation.md.
"""

from __future__ import annotations

import math

import numpy as np


def second_moment(t_hat: np.ndarray, var_hat: np.ndarray) -> tuple[float, float]:
    """Unbiased estimate of S₂ = Σ_j t_j² and its standard error.

    Ŝ₂ = Σ_j (t̂_j² − V̂_j), Var(t̂_j²) ≈ 4 t_j² V_j + 2 V_j² (normal t̂_j).

    Parameters
    ----------
    t_hat, var_hat : numpy.ndarray
        Debiased column sums and their plug-in variances.

    Returns
    -------
    (float, float)
        Ŝ₂ and its standard error.
    """
    s2 = float(np.sum(t_hat ** 2 - var_hat))
    t2 = np.maximum(t_hat ** 2 - var_hat, 0.0)
    return s2, float(np.sqrt(np.sum(4 * t2 * var_hat + 2 * var_hat ** 2)))


def inverse_simpson(t_hat: np.ndarray, var_hat: np.ndarray, mass: float, L: int,
                    l: int) -> tuple[float, float]:
    """Estimate of N²/Σ_v f_v² (collision-corrected) and its delta-method standard error.

    Σ_v f_v² is estimated by (Ŝ₂ − N² l²/L)/(l − l²/L) and kept >= N (every f_v >= 1), so the
    estimate lies in [0, N]. The standard error adds to the noise of Ŝ₂ the spread of the
    collisions over hash draws: the cross term Σ_{v≠w} f_v f_w |h(v) ∩ h(w)| has pairwise
    independent summands, variance <= 2 l² (Σ_v f_v²)² (1/L)(1 − 1/L).

    Parameters
    ----------
    t_hat, var_hat : numpy.ndarray
        Debiased column sums and their plug-in variances.
    mass : float
        N, the total count of the values.
    L, l : int
        Filter size and hashes per value.

    Returns
    -------
    (float, float)
        The estimate and its standard error.

    References
    ----------
    E. H. Simpson, "Measurement of diversity", Nature 163, 1949.
    """
    s2, se = second_moment(t_hat, var_hat)
    scale = l - l * l / L
    squares = max((s2 - mass ** 2 * l * l / L) / scale, mass, 1e-12)
    collisions = 2 * (l * squares) ** 2 / L * (1 - 1 / L)
    value = mass ** 2 / squares
    return value, value * math.sqrt(se ** 2 + collisions) / scale / squares
