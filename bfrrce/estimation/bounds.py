"""Confidence bounds on the number of distinct values that hold for any frequency distribution.

Notation: n reports, L columns, l hashes, per-bit randomized response (p, q), column sums c_j,
t_j the users whose filter has bit j set, t̂_j = (c_j − nq)/(p − q) with plug-in variance V̂_j,
D the number of distinct values held by at least one user, N = Σ_v f_v their total count
(N = n with one value per user). Hashing is taken as random (values are chosen independently
of the hash seed); nothing is assumed about the frequencies. Each bound combines ingredients
by Bonferroni; the details name them. Derivations: docs/estimation.md.

lower
    max(1, occupancy, second moment): a lower confidence bound on the occupied columns turned
    into values by the collision law (:mod:`.occupancy`), and N²/S₂⁺ with S₂⁺ an upper
    confidence bound on Σ_j t_j² >= Σ_v f_v² (:mod:`.moments`).
upper
    Mass balance: with H = {j : c_j > τ} for a τ the empty columns rarely pass, a value whose l
    columns all lie in H is "heavy" (the collision law bounds how many |H| columns hold); any
    other value is "light" and has a user in a column outside H, so light values are bounded by
    an upper confidence bound on Σ_{j∉H} t_j (selection bias of the threshold added back) and
    the smallest-columns argument of :func:`light_values_upper`; D <= N always.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from protocols.core.lazy import optimize, special, stats
from protocols.core.perturbation import count_variance

from . import moments, occupancy

TAU_TAILS = (0.2, 0.02, 0.002)         # null tail probabilities of the mass-balance thresholds


def lower_bound(pvalues: np.ndarray, counts: np.ndarray, t_hat: np.ndarray, var_hat: np.ndarray, *,
                n: int, p: float, q: float, L: int, l: int, mass: float | None,
                alpha: float) -> tuple[float, dict]:
    """One-sided lower confidence bound on D at level 1 − α, and its ingredients.

    Parameters
    ----------
    pvalues : numpy.ndarray
        :func:`.occupancy.null_pvalues` of the columns.
    counts : numpy.ndarray
        Column sums c_j (L,).
    t_hat, var_hat : numpy.ndarray
        Debiased column sums and their plug-in variances.
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    L, l : int
        Filter size and hashes per value.
    mass : float or None
        A lower bound on N (n with one value per user, None if unknown).
    alpha : float
        Error probability.

    Returns
    -------
    (float, dict)
        The bound and {"occupied_columns_lower", "lower_by_occupancy", "lower_by_second_moment",
        "lower_stderr"}: the last is the standard error of the ingredient that gives the bound
        (the spread of a value pinned at it), by the delta method: for the occupancy,
        dD/dK·se(R(u)) at the threshold u of the bound (:func:`.occupancy.occupied_columns`
        at the same level); for the second moment, N²·se(Ŝ₂)/S₂⁺²; 0 for the floor 1.
    """
    k_lo = occupancy.occupied_columns_lower(pvalues, alpha / 4)
    by_occupancy = occupancy.values_lower(k_lo, L, l, alpha / 4)
    s2, se = moments.second_moment(t_hat, var_hat, n, p, q)
    s2_hi = moments.second_moment_upper(t_hat, var_hat, n, p, q, -float(special.ndtri(alpha / 2)))
    by_moment = mass ** 2 / s2_hi if mass and s2_hi > 0 else 0.0
    floor = 1.0 if n >= 1 and mass else 0.0
    bound = max(floor, by_occupancy, by_moment)
    if bound == floor:
        bound_se = 0.0
    elif bound == by_moment:
        bound_se = mass ** 2 * se / s2_hi ** 2
    else:
        k_se = occupancy.occupied_columns(pvalues, counts, n, q, p, alpha / 4)[1]
        bound_se = k_se * occupancy.values_slope(L - k_lo, L, l)
    return bound, {"occupied_columns_lower": k_lo, "lower_by_occupancy": by_occupancy,
                   "lower_by_second_moment": by_moment, "lower_stderr": bound_se}


@functools.lru_cache(maxsize=1024)
def _null_quantile(tail: float, n: int, q: float) -> float:
    """The count an empty column exceeds with probability ``tail``: isf of Binomial(n, q)."""
    return float(stats.binom.isf(tail, n, q))


def _truncation_bias(t, n, p, q, tau):
    """−E[(t̂ − t)·1{c <= τ}] >= 0 for a column holding t users (normal approximation of c):
    s/(p − q)·φ((τ + ½ − μ)/s), μ = tp + (n − t)q, s² = t p(1 − p) + (n − t) q(1 − q)."""
    mu = t * p + (n - t) * q
    s = np.sqrt(count_variance(t, n, p, q))
    z = (tau + 0.5 - mu) / s
    return s / (p - q) * np.exp(-z * z / 2) / math.sqrt(2 * math.pi)


def _poisson_cdf(m: int, lam: float) -> float:
    """F_λ(m) = Pr[Poisson(λ) <= m], 0 for m < 0."""
    return float(special.pdtr(m, lam)) if m >= 0 else 0.0


def light_values_upper(outside: int, users_out: float, L: int, alpha: float) -> float:
    """Upper bound on light values when ``outside`` columns hold at most ``users_out`` users.

    Light values hash independently of the data, so their numbers per column are (Poissonized)
    independent Poisson(λ). Any k columns hold at least as many as the k smallest of these,
    S_k = Σ_{m>=1} (k − N_{<m})⁺ with N_{<m} the columns holding fewer than m; by the
    Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant, N_{<m} <= L F_λ(m − 1) + δ for
    all m at once with probability 1 − α, δ = √(L ln(1/α)/2). Each light value outside brings a
    user there, so the largest λ whose bound on S_k stays <= ``users_out`` gives L·λ⁺.

    Parameters
    ----------
    outside : int
        Columns outside H.
    users_out : float
        Upper bound on the users in those columns.
    L : int
        Filter size.
    alpha : float
        Error probability.

    Returns
    -------
    float
        L·λ⁺ (∞ when too few columns are outside).

    References
    ----------
    P. Massart, "The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality", Ann. Probab.
    18(3), 1990.
    """
    k = outside
    delta = math.sqrt(L * math.log(1 / alpha) / 2)
    users_out = max(users_out, 0.0)
    if k <= delta:
        return math.inf

    target = (k - delta) / L

    def least(lam):
        # the terms k − δ − L·F_λ(j) are positive for j < m, m the smallest with F_λ(m) >= target,
        # and Σ_{j<m} F_λ(j) = m·F_λ(m − 1) − λ·F_λ(m − 2)
        m = max(math.ceil(special.pdtrik(target, lam)), 0) if lam > 0 else 0
        while m > 0 and _poisson_cdf(m - 1, lam) >= target:
            m -= 1
        while _poisson_cdf(m, lam) < target:
            m += 1
        return m * (k - delta) - L * (m * _poisson_cdf(m - 1, lam) - lam * _poisson_cdf(m - 2, lam)) - users_out

    if users_out == 0:                         # S_k(0) = 0: no light value fits
        return 0.0
    hi = 2 * users_out / (k - delta) + 2       # near the root: S_k grows about like (k − δ)λ
    while least(hi) <= 0:
        hi *= 2
        if hi > 1e12:
            return math.inf
    root = optimize.brentq(least, 0.0, hi, xtol=1e-6, rtol=1e-3)
    return L * (root * (1 + 1e-3) + 1e-6)              # the bracket's upper end: stays an upper bound


def upper_bound(counts: np.ndarray, t_hat: np.ndarray, var_hat: np.ndarray, *, n: int, p: float,
                q: float, L: int, l: int, cap: float, alpha: float) -> tuple[float, dict]:
    """One-sided upper confidence bound on D at level 1 − α (mass balance), and its ingredients.

    The smallest bound over the thresholds of ``TAU_TAILS`` is kept (Bonferroni).

    Parameters
    ----------
    counts : numpy.ndarray
        Column sums c_j (L,).
    t_hat, var_hat : numpy.ndarray
        Debiased column sums and their plug-in variances.
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    L, l : int
        Filter size and hashes per value.
    cap : float
        Always bounds D (n with one value per user; an upper confidence bound on Σ_j t_j for sets).
    alpha : float
        Error probability.

    Returns
    -------
    (float, dict)
        The bound and the ingredients of the threshold that gave it.
    """
    counts = np.asarray(counts)
    t_plus = np.clip(t_hat, 0, n)
    a = alpha / len(TAU_TAILS)
    z = -float(special.ndtri(a / 3))
    best, chosen = math.inf, {}
    for tail in TAU_TAILS:
        tau = _null_quantile(tail, n, q)
        inside = counts > tau
        heavy = occupancy.values_upper(int(inside.sum()), L, l, a / 3)
        out = ~inside
        bias = float(np.sum(_truncation_bias(t_plus, n, p, q, tau)))
        users_out = float(np.sum(t_hat[out])) + bias + z * math.sqrt(float(np.sum(var_hat[out])))
        light = light_values_upper(int(out.sum()), users_out, L, a / 3)
        if heavy + light < best:
            best = heavy + light
            chosen = {"tau": float(tau), "columns_in": int(inside.sum()), "heavy_values_upper": heavy,
                      "users_out_upper": users_out, "light_values_upper": light}
    return min(best, float(cap)), {"upper_by_mass_balance": best, **chosen}
