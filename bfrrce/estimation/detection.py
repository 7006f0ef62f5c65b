"""What can be estimated: the detection limit of a value and the per-candidate test.

A value held by few users is invisible under the noise (Chen, Ghazi, Kumar, Manurangsi, ITCS
2021), so every estimate states its detection limit: the number of users a value needs so that
all its bits pass the per-bit test (at which an absent value on empty columns passes with
probability α = 5%) with probability 50% (and 90%). See docs/estimation.md.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from scipy.optimize import brentq

_NORMAL = NormalDist()
DETECTION_ALPHA = 0.05


def per_column_threshold(null_variance, alpha=DETECTION_ALPHA):
    """t̂ threshold of a one-sided test at false-positive rate α: z_{1−α}·σ₀."""
    return _NORMAL.inv_cdf(1 - alpha) * math.sqrt(null_variance)


def detected_candidates(debiased, positions, alpha):
    """Candidates whose every bit has t̂ above the per-bit threshold at rate α^{1/l}
    (so an absent candidate on empty columns passes with probability α)."""
    l = positions.shape[1]
    tau = per_column_threshold(debiased.null_variance, alpha ** (1 / l))
    return (debiased.t_hat[positions] > tau).all(axis=1)


def detection_probability(f, n, p, q, l, alpha=DETECTION_ALPHA):
    """Probability that a value held by f of the n users passes the detection test (normal
    approximation): Φ((f − τ)/σ(f))^l, σ(f)² = [f p(1−p) + (n − f) q(1−q)]/(p − q)², with the
    per-bit threshold τ = z_{1−α^{1/l}}·σ(0) of :func:`detected_candidates` (an absent value on
    empty columns passes with probability α)."""
    sigma0 = math.sqrt(n * q * (1 - q)) / (p - q)
    tau = _NORMAL.inv_cdf(1 - alpha ** (1 / l)) * sigma0
    sigma = math.sqrt(f * p * (1 - p) + (n - f) * q * (1 - q)) / (p - q)
    return _NORMAL.cdf((f - tau) / sigma) ** l


def detection_limit(n, p, q, l, levels=(0.5, 0.9), alpha=DETECTION_ALPHA):
    """Users f a value needs to be detected with each probability: the root of
    :func:`detection_probability` = level (Brent's method; ∞ if even n users do not reach it)."""
    out = {}
    for level in levels:
        gap = lambda f: detection_probability(f, n, p, q, l, alpha) - level  # noqa: E731
        if gap(float(n)) < 0:
            out[level] = math.inf
        elif gap(0.0) >= 0:
            out[level] = 0.0
        else:
            out[level] = brentq(gap, 0.0, float(n), xtol=1e-9 * max(n, 1))
    return out
