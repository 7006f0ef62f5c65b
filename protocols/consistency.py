"""Consistency post-processing of frequency estimates (Wang, Lopuhaä-Zwakenberg, Li,
Škorić, Li, "Locally differentially private frequency estimation with consistency", NDSS 2020).

Each function takes a vector of (unbiased, noisy) estimates and returns a new vector; inputs are
never modified. ``total`` is the sum the result must have (n for counts, 1 for frequencies).

* ``base_pos``: negatives → 0.
* ``base_cut``: estimates below a threshold → 0 (threshold = z-score for a Bonferroni α over d
  values times the standard deviation ``sigma``).
* ``norm``: add one constant δ to all so they sum to ``total`` (keeps unbiasedness of the sum).
* ``norm_mul``: negatives → 0, then scale to sum to ``total``.
* ``norm_sub``: find δ with Σ max(x + δ, 0) = total, return max(x + δ, 0) (projection onto the
  simplex; the paper's best general-purpose method).
* ``norm_cut``: negatives → 0; if the sum exceeds ``total``, find the smallest θ with
  Σ_{x ≥ θ} x ≤ total and zero every value below θ (a prefix of the values sorted downwards).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from protocols.errors import LDPValueError


def _vector(estimates):
    x = np.array(estimates, dtype=float, copy=True)
    if x.ndim != 1 or x.size == 0 or not np.isfinite(x).all():
        raise LDPValueError("estimates must be a non-empty 1-d vector of finite numbers")
    return x


def _total(total):
    total = float(total)
    if not np.isfinite(total) or total <= 0:
        raise LDPValueError(f"total must be finite and > 0, got {total!r}")
    return total


def base_pos(estimates: ArrayLike) -> np.ndarray:
    """Base-Pos: every negative estimate → 0.

    Parameters
    ----------
    estimates : array_like of float
        Non-empty 1-d vector of finite estimates.

    Returns
    -------
    numpy.ndarray
        max(x, 0).

    Raises
    ------
    LDPValueError
        Not a non-empty 1-d vector of finite numbers.

    References
    ----------
    Wang, Lopuhaä-Zwakenberg, Li, Škorić, Li, NDSS 2020.
    """
    return np.maximum(_vector(estimates), 0.0)


def base_cut(estimates: ArrayLike, sigma: float, alpha: float = 0.05) -> np.ndarray:
    """Base-Cut: zero every estimate below Φ⁻¹(1 − α/d)·σ (a Bonferroni test over d values).

    Parameters
    ----------
    estimates : array_like of float
        Non-empty 1-d vector of finite estimates.
    sigma : float
        Standard deviation of one estimate.
    alpha : float
        Family-wise false-positive rate.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    LDPValueError
        Not a non-empty 1-d vector of finite numbers.

    References
    ----------
    Wang, Lopuhaä-Zwakenberg, Li, Škorić, Li, NDSS 2020.
    """
    x = _vector(estimates)
    threshold = NormalDist().inv_cdf(1 - alpha / x.size) * float(sigma)
    return np.where(x >= threshold, x, 0.0)


def norm(estimates: ArrayLike, total: float) -> np.ndarray:
    """Norm: add one constant δ to every estimate so that they sum to ``total``.

    Parameters
    ----------
    estimates : array_like of float
        Non-empty 1-d vector of finite estimates.
    total : float
        The sum the result must have (n for counts, 1 for frequencies), > 0.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    LDPValueError
        Bad estimates or ``total``.

    References
    ----------
    Wang, Lopuhaä-Zwakenberg, Li, Škorić, Li, NDSS 2020.
    """
    x = _vector(estimates)
    return x + (_total(total) - x.sum()) / x.size


def norm_mul(estimates: ArrayLike, total: float) -> np.ndarray:
    """Norm-Mul: negatives → 0, then scale to sum to ``total`` (uniform if all are 0).

    Parameters
    ----------
    estimates : array_like of float
        Non-empty 1-d vector of finite estimates.
    total : float
        The sum the result must have, > 0.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    LDPValueError
        Bad estimates or ``total``.

    References
    ----------
    Wang, Lopuhaä-Zwakenberg, Li, Škorić, Li, NDSS 2020.
    """
    x = np.maximum(_vector(estimates), 0.0)
    if x.sum() == 0:
        return np.full(x.size, _total(total) / x.size)
    return x * (_total(total) / x.sum())


def norm_sub(estimates: ArrayLike, total: float) -> np.ndarray:
    """Norm-Sub: max(x + δ, 0) with δ such that the result sums to ``total`` (exact, by sorting).

    The Euclidean projection onto the scaled simplex, the paper's best general-purpose method.

    Parameters
    ----------
    estimates : array_like of float
        Non-empty 1-d vector of finite estimates.
    total : float
        The sum the result must have, > 0.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    LDPValueError
        Bad estimates or ``total``.

    References
    ----------
    Wang, Lopuhaä-Zwakenberg, Li, Škorić, Li, NDSS 2020.
    """
    x = _vector(estimates)
    total = _total(total)
    s = np.sort(x)[::-1]
    cums = np.cumsum(s)
    k = np.arange(1, x.size + 1)
    deltas = (total - cums) / k
    valid = s + deltas > 0                      # the k largest stay positive
    k_star = np.flatnonzero(valid)[-1]
    return np.maximum(x + deltas[k_star], 0.0)


def norm_cut(estimates: ArrayLike, total: float) -> np.ndarray:
    """Norm-Cut: negatives → 0; above ``total``, keep the largest values while they fit.

    Parameters
    ----------
    estimates : array_like of float
        Non-empty 1-d vector of finite estimates.
    total : float
        The largest sum the result may have, > 0.

    Returns
    -------
    numpy.ndarray
        x⁺ if it sums to at most ``total``; else the values >= θ for the smallest θ with
        Σ_{x >= θ} x <= total, zeros elsewhere.

    Raises
    ------
    LDPValueError
        Bad estimates or ``total``.

    References
    ----------
    Wang, Lopuhaä-Zwakenberg, Li, Škorić, Li, NDSS 2020.
    """
    x = np.maximum(_vector(estimates), 0.0)
    total = _total(total)
    if x.sum() <= total:
        return x
    order = np.argsort(x)[::-1]
    keep = np.cumsum(x[order]) <= total
    out = np.zeros_like(x)
    out[order[keep]] = x[order[keep]]
    return out
