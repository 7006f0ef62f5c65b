"""What can be estimated: the detection limit of a value and the per-candidate test.

A value held by few users is invisible under the noise (Chen, Ghazi, Kumar, Manurangsi, ITCS
2021), so every estimate states its detection limit: the number of users a value needs so that
all its bits pass the per-bit test (at which an absent value on empty columns passes with
probability α = 5%) with probability 50% (and 90%). See docs/estimation.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from protocols.core.lazy import optimize
from protocols.core.perturbation import count_variance

if TYPE_CHECKING:
    from ..sums import Debiased

_NORMAL = NormalDist()
DETECTION_ALPHA = 0.05


def per_column_threshold(null_variance: float, alpha: float = DETECTION_ALPHA) -> float:
    """t̂ threshold of a one-sided test at false-positive rate α: z_{1−α}·σ₀.

    Parameters
    ----------
    null_variance : float
        σ₀², the variance of t̂ on a column no user touched.
    alpha : float
        False-positive rate of one column.

    Returns
    -------
    float
    """
    return _NORMAL.inv_cdf(1 - alpha) * math.sqrt(null_variance)


def detected_candidates(debiased: Debiased, positions: np.ndarray, alpha: float) -> np.ndarray:
    """Candidates whose every bit has t̂ above the per-bit threshold at rate α^{1/l}
    (so an absent candidate on empty columns passes with probability α).

    Parameters
    ----------
    debiased : bfrrce.Debiased
        Debiased column sums.
    positions : numpy.ndarray
        int (M, l): the filter positions of the M candidates.
    alpha : float
        False-positive rate of an absent candidate.

    Returns
    -------
    numpy.ndarray
        bool (M,).
    """
    l = positions.shape[1]
    tau = per_column_threshold(debiased.null_variance, alpha ** (1 / l))
    return (debiased.t_hat[positions] > tau).all(axis=1)


def detection_probability(f: float, n: int, p: float, q: float, l: int,
                          alpha: float = DETECTION_ALPHA) -> float:
    """Probability that a value held by f of the n users passes the detection test (normal
    approximation): Φ((f − τ)/σ(f))^l, σ(f)² = [f p(1−p) + (n − f) q(1−q)]/(p − q)², with the
    per-bit threshold τ = z_{1−α^{1/l}}·σ(0) of :func:`detected_candidates` (an absent value on
    empty columns passes with probability α).

    Parameters
    ----------
    f : float
        Users holding the value.
    n : int
        Users in all.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    l : int
        Hashes per value.
    alpha : float
        False-positive rate of an absent value.

    Returns
    -------
    float

    References
    ----------
    L. Chen, B. Ghazi, R. Kumar, P. Manurangsi, "On distributed differential privacy and
    counting distinct elements", ITCS 2021 (why a detection limit is unavoidable).
    """
    sigma0 = math.sqrt(count_variance(0, n, p, q)) / (p - q)
    tau = _NORMAL.inv_cdf(1 - alpha ** (1 / l)) * sigma0
    sigma = math.sqrt(count_variance(f, n, p, q)) / (p - q)
    return _NORMAL.cdf((f - tau) / sigma) ** l


def detection_limit(n: int, p: float, q: float, l: int, levels: Sequence[float] = (0.5, 0.9),
                    alpha: float = DETECTION_ALPHA) -> dict[float, float]:
    """Users f a value needs to be detected with each probability: the root of
    :func:`detection_probability` = level (Brent's method; ∞ if even n users do not reach it).

    Parameters
    ----------
    n : int
        Users in all.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    l : int
        Hashes per value.
    levels : sequence of float
        Detection probabilities.
    alpha : float
        False-positive rate of an absent value.

    Returns
    -------
    dict
        {level: users}.
    """
    return dict(zip(levels, _users_needed(n, p, q, l, tuple(levels), alpha)))


@functools.lru_cache(maxsize=1024)
def _users_needed(n, p, q, l, levels, alpha):
    """The roots of :func:`detection_limit` (cached: every estimate of a run asks again)."""
    out = []
    for level in levels:
        def gap(f, level=level):
            return detection_probability(f, n, p, q, l, alpha) - level
        if gap(float(n)) < 0:
            out.append(math.inf)
        elif gap(0.0) >= 0:
            out.append(0.0)
        else:
            out.append(optimize.brentq(gap, 0.0, float(n), xtol=1e-9 * max(n, 1)))
    return tuple(out)
