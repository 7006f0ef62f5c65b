"""Confidence bounds on the number of distinct values that hold for any frequency distribution.

Notation: n reports, L columns, l hashes, per-bit randomized response (p, q), column sums c_j,
t_j the users whose filter has bit j set, t̂_j = (c_j − nq)/(p − q) with plug-in variance V̂_j,
D the number of distinct values held by at least one user, N = Σ_v f_v their total count
(N = n with one value per user). Hashing is taken as random (values are chosen independently
of the hash seed); nothing is assumed about the frequencies. Each bound combines ingredients
by Bonferroni; the details name them. Derivations: docs/estimation.md.

lower
    max(1, occupancy, second moment, light moment, Laplace): a lower confidence bound on the
    occupied columns turned into values by the collision law (:mod:`.occupancy`), N²/S₂⁺ with
    S₂⁺ an upper confidence bound on Σ_j t_j² >= Σ_v f_v² (:mod:`.moments`), the same for the
    columns that are not visible (:func:`light_moment_lower`), and the fewest values of any
    frequency histogram that the empirical Laplace transform of the sums allows (:mod:`.laplace`).
upper
    Mass balance: with H = {j : c_j > τ}, the users outside H are at most l·n − Σ_{j∈H} t_j
    (Σ_j t_j <= l·n exactly with one value per user), known to within the noise of the columns
    in H alone (the selection bias of the threshold added back, :func:`users_outside_upper`);
    each value puts a user in each of its distinct columns and, hashed at random, can be
    crowded into H only as far as the fullest |H| columns of a random hashing hold
    (:func:`values_upper_by_slots`), or, where the columns of H hold many times the users a
    column needs to pass, only at the rate |H|/L beside the values that fill them
    (:func:`values_upper_certified`); D <= N always.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable

import numpy as np

from protocols.core.calibration import log_ratio
from protocols.core.lazy import special, stats
from protocols.core.perturbation import count_variance

from . import laplace, moments, occupancy
from .design import Design, Observed

THRESHOLDS = (  # (share of α, null tail of τ given L); None: no empty column passes (FALSE_POSITIVE)
    (0.85, None),
    (0.05, lambda L: 1 / L),      # about one empty column above τ
    (0.05, lambda L: 0.02),       # the 0.98 quantile of an empty column's sum
    (0.05, lambda L: 0.1),        # the 0.9 quantile: values just under the others (selection_bias)
)
FALSE_POSITIVE = 0.05  # share of a threshold's α for an empty column above it (tail None)
MASS_SHARE = 0.9       # ... for the users outside (the rest for the values' slots)
LIGHT_SHARE = 0.25     # share of the lower bound's α for the light moment with l = 1 (α/2 − this: Laplace)
CERTIFY_MASSES = (1 / 16, 0.25, 1.0)  # F of values_upper_certified, shares of the users at the threshold
CERTIFY_SHARE = 0.5    # share of the slots' level for values_upper_certified outside the exact regime
CERTIFY_SPLITS = 8     # intervals of the heavy values' share of the users outside H
CERTIFY_REFINE = 6     # halvings of the interval that gives the largest (values_upper_certified)
RESCUE_BELOW = 0.9     # ... and of one at or above the best so far, where its end points read below this share of it
CERTIFY_TERMS = 256    # r = 1 … this at most in light_only_columns
MAX_SLOT_TERMS = 10_000   # beyond, the slots of H are bounded by |H| times the fullest column
EXACT_BELOW = 5.0      # sd of an empty column's sum below which the selection bias is bounded exactly
OWN_SHARE = 0.75       # share of α for the sums as reported when degraded laws are also tried
EXACT_OWN_SHARE = 0.3  # ... when they are in the exact regime and the first law is not (law_shares)
EXACT_LAW_SHARE = 0.6  # ... and that first law's share
LAWS_ABOVE = 0.5       # the laws are tried only above this share of visible columns (or exact, or at the cap)
CLOSE_LAW = 0.8       # ε′/ε from which D <= d* is read on the first law's sums in the exact regime
LAWS_CROWDED = 1.05     # ... or where the bound exceeds (|H| + U⁺)/l by this factor
NULL_FLOOR = 0.1       # nq below which the thresholds are those at nq = this (law_threshold)
LAWS_FROM = 4.0        # slots a column (l·D/L) below which D is tested on the sums as reported alone


def lower_bound(observed: Observed, alpha: float) -> tuple[float, dict, Callable[[], float]]:
    """One-sided lower confidence bound on D at level 1 − α, and its ingredients.

    Parameters
    ----------
    observed : Observed
        The column sums; N is used where it is known (``design.known_mass``).
    alpha : float
        Error probability.

    Returns
    -------
    (float, dict, callable)
        The bound; {"occupied_columns_lower", "lower_by_occupancy", "lower_by_second_moment",
        "lower_by_light_moment", "lower_by_laplace" (NaN where it cannot exceed the others:
        :func:`.laplace.laplace_lower`), "laplace_scales"}; and a function that gives
        the standard error of the ingredient that gives the bound (the spread of a value pinned at
        it; called only for such a value, as the Laplace ingredient's needs a second linear
        program), by the delta method: for the occupancy, dD/dK·se(R(u)) at the threshold u of the
        bound (:func:`.occupancy.occupied_columns` at the same level); for the second moment,
        N²·se(Ŝ₂)/S₂⁺²; for the light moment and the Laplace transform, their own; 0 for the
        floor 1.
    """
    d = observed.design
    n, p, q, L, l, mass = d.n, d.p, d.q, d.L, d.l, d.known_mass
    passing, counts, t_hat, var_hat = observed.passing, observed.counts, observed.t_hat, observed.variance
    k_lo = occupancy.occupied_columns_lower(passing, L, alpha / 8)
    by_occupancy = occupancy.values_lower(k_lo, L, l, alpha / 8)
    s2, se = observed.second_moment
    s2_hi = moments.second_moment_upper(t_hat, var_hat, n, p, q, -float(special.ndtri(alpha / 4)),
                                        moment=(s2, se))
    by_moment = mass ** 2 / s2_hi if mass and s2_hi > 0 else 0.0
    light_share = LIGHT_SHARE if l == 1 else 0.0          # the light moment is for l = 1
    by_light, light_se = (light_moment_lower(counts, t_hat, var_hat, n=n, p=p, q=q, L=L, alpha=light_share * alpha)
                          if mass and l == 1 else (0.0, 0.0))
    floor = 1.0 if n >= 1 and mass else 0.0
    others = max(floor, by_occupancy, by_moment, by_light)
    by_laplace, scales, laplace_se = laplace.laplace_lower(observed, (0.5 - light_share) * alpha, others)
    bound = others if math.isnan(by_laplace) else max(others, by_laplace)

    def stderr() -> float:
        if bound == floor:
            return 0.0
        if bound == by_moment:
            return mass ** 2 * se / s2_hi ** 2
        if bound == by_light:
            return light_se
        if bound == by_laplace:
            return laplace_se()
        k_se = occupancy.occupied_columns(passing, counts, n, q, p, alpha / 8)[1]
        return k_se * occupancy.values_slope(L - k_lo, L, l)

    return bound, {"occupied_columns_lower": k_lo, "lower_by_occupancy": by_occupancy,
                   "lower_by_second_moment": by_moment, "lower_by_light_moment": by_light,
                   "lower_by_laplace": by_laplace, "laplace_scales": scales}, stderr


def light_moment_lower(counts: np.ndarray, t_hat: np.ndarray, var_hat: np.ndarray, *, n: int,
                       p: float, q: float, L: int, alpha: float) -> tuple[float, float]:
    """Lower confidence bound on D with one hash a value (l = 1), by the second moment of the
    columns that are not visible, and its standard error.

    With H = {j : c_j > τ} for a τ that no empty column passes (with probability 1 − α/20,
    charged), the values split into those in H, at least |H| (every column of H is occupied),
    and those outside, which hold U = n − Σ_{j∈H} t_j users with Σ f_v² <= Σ_{j∉H} t_j², so at
    least U²/Σ_{j∉H} t_j² of them (Cauchy–Schwarz). U >= n − Σ_{j∈H} t̂_j − z·σ − |H|/(2(p − q))
    (the selection bias only lowers Σ_{j∈H} t_j; σ² the variance at t̂_j + z√V̂_j, a continuity
    correction of half a count a column); Σ_{j∉H} (t̂_j² − V̂_j) falls short of
    Σ_{j∉H} t_j² by Σ_j (t_j + τ')·E[e_j1{c_j > τ}] <= (2τ' + 3σ_τ)·B (:func:`selection_bias`),
    added back to the upper bound of :func:`.moments.second_moment_upper`. Where the heavy values
    are visible this reads the light ones without their weight: N²/S₂ counts a Zipf head
    and tail as about the head alone.

    Parameters
    ----------
    counts, t_hat, var_hat : numpy.ndarray
        Column sums, debiased sums and their plug-in variances.
    n : int
        Number of reports (= N).
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    L : int
        Filter size.
    alpha : float
        Error probability.

    Returns
    -------
    (float, float)
        The bound and its standard error (delta method in U).
    """
    counts = np.asarray(counts)
    tau = null_quantile(FALSE_POSITIVE * alpha / L, n, q)
    inside = counts > tau
    z = -float(special.ndtri((1 - FALSE_POSITIVE) * alpha / 2))
    # the variance at the upper end t̂_j + z·√V̂_j: the plug-in one is smallest exactly where
    # t̂_j has fallen short (with p = 1/2 the variance grows with t), as for the second moment
    upper_end = np.clip(t_hat[inside] + z * np.sqrt(var_hat[inside]), 0, n)
    users_se = math.sqrt(float(np.sum(np.maximum(count_variance(upper_end, n, p, q), 0.0)))) / (p - q)
    users = n - float(np.sum(t_hat[inside])) - z * users_se - 0.5 * float(np.sum(inside)) / (p - q)
    if users <= 0:
        return float(inside.sum()), 0.0
    bias = selection_bias(counts, t_hat, n=n, p=p, q=q, tau=tau)[0]
    reach = max((tau - n * q) / (p - q), 0.0)
    sd = math.sqrt(count_variance(0, n, p, q)) / (p - q)
    out = ~inside
    s2 = moments.second_moment_upper(t_hat[out], var_hat[out], n, p, q, z) + (2 * reach + 3 * sd) * bias
    if s2 <= 0:
        return float(inside.sum()), 0.0
    return float(inside.sum()) + users ** 2 / s2, 2 * users * users_se / s2


@functools.lru_cache(maxsize=1024)
def null_quantile(tail: float, n: int, q: float) -> float:
    """The count an empty column exceeds with probability ``tail``: isf of Binomial(n, q).

    Parameters
    ----------
    tail : float
        The probability.
    n : int
        Number of reports.
    q : float
        Pr[report bit 1 | bit 0].

    Returns
    -------
    float
    """
    return float(stats.binom.isf(tail, n, q))


def selection_bias(counts: np.ndarray, t_hat: np.ndarray, *, n: int, p: float, q: float,
                   tau: float) -> tuple[float, float, float]:
    """B = Σ_j E[e_j·1{c_j > τ}] (e_j = t̂_j − t_j), the bias that selecting the columns above τ
    gives Σ_{c_j > τ} t̂_j, whatever the t_j: an estimate, its variance, and the excess of
    Σ_j E[e_j²·1{c_j > τ}] over the plug-in Σ_{c_j > τ} V̂_j.

    For c = Σ_i β_i a sum of independent Bernoulli(π_i) and any k,
    E[(c − E c)·1{c >= k}] = Σ_i π_i(1 − π_i)·Pr[c − β_i = k − 1] ≈ Var(c)·Pr[c = k − 1]
    (exactly k(1 − q)Pr[c = k] for Binomial(n, q)). So B ≈ Σ_j Var(c_j)·Pr[c_j = τ]/(p − q):
    the expected number of columns at τ, estimated by the N_w columns within w = ⌈σ₀/2⌉ counts of
    τ (σ₀ the sd of an empty column's sum) over the 2w + 1 counts of the window, each at its
    Var(c_j) at t̂_j⁺; its variance is taken as (N_w + 1) times the square of one window column's
    share. A column selected at τ has e at most τ' = (τ − nq)/(p − q) above its mean, so
    E[e²1{c > τ}] <= Var·Pr[c > τ] + τ'·E[e1{c > τ}]: the excess is at most τ'·B.

    Parameters
    ----------
    counts, t_hat : numpy.ndarray
        Column sums and their debiased values.
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    tau : float
        The threshold (an integer count).

    Returns
    -------
    (float, float, float)
        B̂, Var(B̂) and the excess second moment.
    """
    sd0 = math.sqrt(count_variance(0, n, p, q))
    w = window_half_width(n, p, q)
    near = np.abs(counts - tau) <= w
    found = int(near.sum())
    var = count_variance(np.clip(t_hat[near], 0, n), n, p, q)
    share = (float(var.mean()) if found else sd0 ** 2) / ((2 * w + 1) * (p - q))
    bias = found * share
    return bias, (found + 1) * share ** 2, max((tau - n * q) / (p - q), 0.0) * bias


@functools.lru_cache(maxsize=256)
def _truncated_moments(n: int, p: float, q: float, tau: float) -> tuple:
    """Exact g(t) = E_t[−e·1{c <= τ}] and v(t) = E_t[e²·1{c <= τ}] for a column of t users
    (c ~ Binomial(t, p) + Binomial(n − t, q), e = (c − E c)/(p − q)), as (g(0), v(0), and the
    tables M(λ) = max_{t>=1} (h(t) − λt)⁺ of h = (g − g(0))⁺ and of (v − v(0))⁺ over the grid
    :data:`_LAMBDAS` of λ, and of v(0) − v(t) (v = 0 beyond the t searched), the part of
    E_t[e²·1{c > τ}] − E_0[e²·1{c > τ}] beyond its slope in t), and for the count bound of :func:`users_outside_exact`
    Pr_0[c = τ], a grid of levels M of E c, max_{t>=1} (E_t c − M)⁺·Pr_t[c = τ], κ and
    Pr_0[|c − τ| <= w]. Beyond the t where E c >= τ + 12·(E c)^{1/2} + 12, Pr[c <= τ] is
    below e^{-30} (Bernstein) and both vanish, so t = 0 … that t is searched."""
    k = int(tau)
    if k < 0:
        return (0.0, 0.0, np.zeros(_LAMBDAS.size), np.zeros(_LAMBDAS.size), 0.0, np.zeros(1), np.zeros(1),
                1.0, 0.0, np.zeros(_LAMBDAS.size))
    w = _window(k)
    reach = (6 + math.sqrt(48 + k + w)) ** 2                # the E c beyond which c <= τ + w is negligible
    top = int(min(n, max(math.ceil((reach - n * q) / (p - q)), 1)))
    t = np.arange(top + 1)[:, None]
    x = np.arange(k + w + 1)[None, :]
    ones, zeros = stats.binom.pmf(x, t, p), stats.binom.pmf(x, n - t, q)
    law = np.zeros((top + 1, k + w + 1))
    for a in range(k + w + 1):                            # Pr_t[c = x], x <= τ + w: the convolution
        law[:, a:] += ones[:, a:a + 1] * zeros[:, :k + w + 1 - a]
    window = law[:, max(k - w, 0):].sum(axis=1)           # Pr_t[|c − τ| <= w]
    law, x = law[:, :k + 1], x[:, :k + 1]
    gap = (t * p + (n - t) * q - x) / (p - q)
    g, v = np.sum(gap * law, axis=1), np.sum(gap ** 2 * law, axis=1)
    users = np.arange(1, top + 1)[None, :]

    def table(h):
        return np.max(np.maximum(np.maximum(h[1:] - h[0], 0.0)[None, :] - _LAMBDAS[:, None] * users, 0.0), axis=1)

    above = np.append(v[0] - v[1:], v[0])[None, :] - _LAMBDAS[:, None] * np.arange(1, top + 2)[None, :]

    # Stein: E[(c − E c)1{c > τ}] <= E c·Pr[c = τ]; the excess of E c over M weighs Pr[c = τ]
    mean, at = t[1:, 0] * p + (n - t[1:, 0]) * q, law[1:, k]
    levels = np.quantile(mean, np.linspace(0, 1, 33)) if mean.size else np.zeros(1)
    excess = np.max(np.maximum(mean[None, :] - levels[:, None], 0.0) * at[None, :], axis=1, initial=0.0)
    # Pr_t[c = τ] <= κ·Pr_t[|c − τ| <= w] for every t >= 1: the columns at τ read from the window's
    ratio = np.divide(at, window[1:], out=np.zeros_like(at), where=window[1:] > 0)
    kappa = float(min(ratio.max(initial=0.0), 1.0))
    return (float(g[0]), float(v[0]), table(g), table(v), float(law[0, k]), levels, excess, kappa, float(window[0]),
            np.max(np.maximum(above, 0.0), axis=1))


def _window(k: int) -> int:
    """w, the half width in counts of the window around τ = k whose columns bound those at τ."""
    return max(1, math.ceil(math.sqrt(max(k, 1))))


_LAMBDAS = np.concatenate([[0.0], np.geomspace(1e-6, 10.0, 71)])
COUNT_SHARE = 0.1      # share of the users' level for the columns found at the threshold
SELF_LAMBDA_BELOW = 0.95   # λ of the self-bounded form, (1 − λ)U on the left (users_outside_exact)
_SLOPES = np.append(_LAMBDAS, 0.0)[None, :]   # λ′ of its variance terms, 0 for the λ′T form


def users_outside_exact(counts: np.ndarray, t_hat: np.ndarray, *, n: int, p: float, q: float,
                        tau: float, L: int, l: int, total: float, alpha: float):
    """Upper confidence bound on U = Σ_{j : c_j <= τ} t_j as a function of D, with the selection
    bias bounded exactly (used where an empty column's sum has sd below :data:`EXACT_BELOW`,
    where :func:`selection_bias`'s plug-in fails).

    U = Σ_{j∉H} t̂_j + Σ_j Y_j, Y_j = −e_j·1{c_j <= τ}, independent over columns, of mean g(t_j)
    and second moment v(t_j) (:func:`_truncated_moments`, exact). At most K = min(L, l·D)
    columns are occupied and they hold Σ_j t_j <= T = ``total`` users, so for every λ >= 0
    Σ_j g(t_j) <= L·g(0) + Σ_{occupied} [h(t_j) − λt_j] + λT <= L·g(0) + K·M(λ) + λT with
    h = (g − g(0))⁺ and M(λ) = max_{t>=1} (h(t) − λt)⁺ (the smallest over a grid of λ is kept),
    and the same for v: U⁺(D) = Σ_{j∉H} t̂_j + B(D) + z·V(D)^{1/2} (normal approximation).
    With T finite the complement U <= T − Σ_{j∈H} t̂_j + Σ_j e_j1{c_j > τ} has the same mean
    term and variance at most Σ_j E[e_j²1{c_j > τ}] <= L(V(0) − v(0)) + K·v(0) + V′⁺·T (V(t) the
    variance of t̂ at t users, linear of slope V′); the two are combined with the weights of
    :func:`combined_weight` at the two variance bounds (functions of D alone). The mean term is also at most
    Σ_j E_j c·Pr_j[c = τ]/(p − q) (Stein: E[(c − E c)1{c > τ}] = Σ_i π_i(1 − π_i)Pr[c − β_i = τ]
    and Pr[c = τ] >= (1 − π_i)Pr[c − β_i = τ]), at most [M·κ(N⁺ − (L − K)π_W) + K·R(M)
    + (L − K)π₀·nq]/(p − q) for every level M, with κ = max_{t>=1} Pr_t[c = τ]/Pr_t[|c − τ| <= w]
    (w of :func:`_window`) and N⁺ the Clopper–Pearson upper bound on E N_W (N_W the columns
    within w of τ, a Poisson-binomial count, whose lower tail is lighter than the binomial's,
    Hoeffding 1956; :data:`COUNT_SHARE` of the level), π₀ = Pr_0[c = τ], π_W = Pr_0[|c − τ| <= w]
    and R(M) = max_{t>=1} (E_t c − M)⁺Pr_t[c = τ]: the smaller of the two mean bounds is kept.
    Self-bounded form: the occupied columns outside H hold U users and the min(|H|, K) occupied
    ones of H at most max_t h(t) each, so Σ_j g(t_j) <= L·g(0) + min(|H|, K)·max_t h(t) + K·M(λ)
    + λU, the same for v with λ′, and U⁺(D) is the largest U with (1 − λ)U − a <= z·(b + (1 −
    w)²λ′U)^{1/2} (:func:`_self_bounded`), the smallest over λ < :data:`SELF_LAMBDA_BELOW`, λ′ and
    the forms above; the complement's variance likewise, L·u(0) + min(|H|, K)·v(0) + V′⁺T +
    K·M_u(μ) + μU (u = V − v, M_u(μ) = max_{t>=1} (v(0) − v(t) − μt)⁺, μ the grid's best at the
    bound so far) instead of L·u(0) + K·v(0) + V′⁺T: all read one event, so the minimum spends
    no level (docs/estimation.md).

    Parameters
    ----------
    counts : numpy.ndarray
        c_j, the reports with bit j set (int, L).
    t_hat : numpy.ndarray
        t̂_j, the debiased counts (float, L, users).
    n : int
        The number of reports.
    p, q : float
        The probabilities that a report has bit j when the filter has it, and when it has not.
    tau : float
        τ, the count threshold of H = {j : c_j > τ}.
    L : int
        The number of columns (filter bits).
    l : int
        The most bits one value sets.
    total : float
        T, an upper bound on Σ_j t_j (users; ``math.inf`` when unknown).
    alpha : float
        The one-sided level of the bound.

    Returns
    -------
    callable
        D ↦ U⁺(D). It may dip by a fraction of a user where the combination's weight moves with D;
        the search (:func:`values_upper_by_slots`) needs only the slots' excess l·D − … − U⁺(D)
        non-decreasing, which a dip keeps.
    """
    g0, v0, g_table, v_table, null_at, levels, excess, kappa, null_window, u_table = _truncated_moments(n, p, q, tau)
    base = float(np.sum(t_hat[counts <= tau]))
    rest = total - float(np.sum(t_hat[counts > tau]))
    z = -float(special.ndtri((1 - COUNT_SHARE) * alpha))
    found = int(np.sum(np.abs(counts - int(tau)) <= _window(int(tau))))    # columns near the threshold
    at_most = L * float(special.betaincinv(found + 1, max(L - found, 1), 1 - COUNT_SHARE * alpha))
    null_var = float(count_variance(0, n, p, q)) / (p - q) ** 2
    slope = max(p * (1 - p) - q * (1 - q), 0.0) / (p - q) ** 2
    spent = _LAMBDAS * total if math.isfinite(total) else np.where(_LAMBDAS > 0, math.inf, 0.0)   # λT
    held = int(np.sum(counts > tau))                             # |H|
    own = _LAMBDAS < SELF_LAMBDA_BELOW                          # the λ of the self-bounded form
    kept = np.append(1 - _LAMBDAS[own], 1.0)[:, None]            # 1 − λ, and 1 for the λT form
    mean_terms = np.append(g_table[own], 0.0)[:, None]           # M(λ) per row, 0 for the λT form
    second_terms = np.append(v_table, 0.0)[None, :]              # M_v(λ′) per column, last: λ′T's

    def users_out(values: float) -> float:
        k = min(float(L), l * values)
        bias = L * g0 + float(np.min(k * g_table + spent))
        idle = (L - k) * null_window                  # the empty columns' share of E N_W
        by_count = (float(np.min(levels * kappa * max(at_most - idle, 0.0) + k * excess))
                    + (L - k) * null_at * n * q) / (p - q)
        bias = min(bias, by_count)
        spread = L * v0 + float(np.min(k * v_table + spent))
        inner = L * max(null_var - v0, 0.0) + k * v0 + slope * total    # Σ_j E[e_j²1{c_j > τ}] at most
        w = combined_weight(inner, spread) if math.isfinite(inner) else 0.0   # a function of D only
        read = (w * rest if w > 0 else 0.0) + (1 - w) * base
        # the self-bounded form: the occupied columns outside H hold U users, those in H at most |H|;
        # the last row and column are the λT and λ′T forms (their root is read + bias + z·σ)
        heads = min(held, k)
        mean = read + L * g0 + heads * g_table[0] + k * mean_terms                # + λU
        mean[-1] = read + bias
        second = L * v0 + heads * v_table[0] + k * second_terms                   # + λ′U
        second[0, -1] = spread
        best = float(np.min(_self_bounded(mean, kept, (w * w * inner if w > 0 else 0.0) + (1 - w) ** 2 * second,
                                          (1 - w) ** 2 * _SLOPES, z)))
        if w > 0:       # the complement's variance, self-bounded too: + μU, μ the best at the bound so far
            outer = inner - k * v0 + heads * v0 + k * u_table                       # over μ of _LAMBDAS
            for _ in range(2):
                pick = int(np.argmin(outer + _LAMBDAS * best))
                best = min(best, float(np.min(_self_bounded(
                    mean, kept, w * w * outer[pick] + (1 - w) ** 2 * second,
                    w * w * _LAMBDAS[pick] + (1 - w) ** 2 * _SLOPES, z))))
        return best

    return users_out


def _self_bounded(a, r, fixed, slope, z):
    """The largest U with r·U − a <= z·(fixed + slope·U)^{1/2} (r > 0): the larger root of
    (rU − a)² = z²(fixed + slope·U), (a/r)⁺ where the noise bound is 0 (broadcast over the arrays)."""
    b = 2 * r * a + z * z * slope
    disc = np.maximum(b * b - 4 * r * r * (a * a - z * z * fixed), 0.0)
    return (b + np.sqrt(disc)) / (2 * r * r)


def window_half_width(n: int, p: float, q: float) -> int:
    """w = ⌈σ₀/2⌉ counts, σ₀ the sd of an empty column's sum: the half width of the window around τ
    that :func:`selection_bias` reads.

    Parameters
    ----------
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

    Returns
    -------
    int
    """
    return math.ceil(math.sqrt(count_variance(0, n, p, q)) / 2)


@functools.lru_cache(maxsize=256)
def empty_column_terms(n: int, p: float, q: float, tau: float) -> tuple[float, float, float, float]:
    """An empty column's exact share of the selection bias of τ, its expected share of
    :func:`selection_bias`'s estimate, and that share's products with the column's noise on
    either side of τ.

    For c ~ Binomial(n, q), E[(c − nq)·1{c >= k}] = k(1 − q)·Pr[c = k], so
    b₀ = E₀[e·1{c > τ}] = (τ + 1)(1 − q)·Pr₀[c = τ + 1]/(p − q) exactly. The estimate charges a
    column a(c) = Var(c | t̂(c))/((2w + 1)(p − q)) within w (:func:`window_half_width`) of τ and 0
    elsewhere (the variance at the column's own t̂ clipped to [0, n], as :func:`selection_bias`
    reads it): s₀ = E₀[a(c)]. Where the window is conservative for empty columns (s₀ > b₀; the
    null density is convex more than 1 sd above its mean,
    `test_selection_bias_window_is_conservative_at_every_threshold_of_the_bound`) the estimate's
    excess over the exact share is (L − K)·(s₀ − b₀) for L − K empty columns. E₀[e·1{c <= τ}·a(c)]
    and E₀[e·1{c > τ}·a(c)] give the covariance of the two readings' noise with the estimate
    (the window and the columns just under τ move together), which :func:`users_outside_upper`
    adds to the spread.

    Parameters
    ----------
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    tau : float
        The threshold (an integer count).

    Returns
    -------
    (float, float, float, float)
        b₀ and s₀ (users), E₀[e·1{c <= τ}·a(c)] and E₀[e·1{c > τ}·a(c)] (users²).
    """
    k = math.floor(tau)
    w = window_half_width(n, p, q)
    b0 = (k + 1) * (1 - q) * float(stats.binom.pmf(k + 1, n, q)) / (p - q)
    x = np.arange(max(k - w, 0), k + w + 1)
    e = (x - n * q) / (p - q)
    share = stats.binom.pmf(x, n, q) * count_variance(np.clip(e, 0, n), n, p, q) / ((2 * w + 1) * (p - q))
    below = x <= k
    return b0, float(np.sum(share)), float(np.sum((e * share)[below])), float(np.sum((e * share)[~below]))


def users_outside_upper(counts: np.ndarray, t_hat: np.ndarray, var_hat: np.ndarray, *, n: int,
                        p: float, q: float, tau: float, total: float | None,
                        alpha: float, L: int | None = None, l: int = 1):
    """Upper confidence bound on U = Σ_{j : c_j <= τ} t_j, the users in the columns outside
    H = {j : c_j > τ}, and which of two ways gave it (normal approximation, z at α).

    * **Complement** (``total`` known, Σ_j t_j <= ``total``, l·n with one value per user):
      U <= total − Σ_{j∈H} t_j = total − Σ_{j∈H} t̂_j + Σ_j e_j1{c_j > τ}, whose last term has
      mean B and variance at most Σ_j E[e_j²1{c_j > τ}] (:func:`selection_bias`): only the
      noise of the columns in H.
    * **Direct**: U = Σ_{j∉H} t̂_j − Σ_j e_j1{c_j <= τ}, the last term of mean −B and variance
      at most Σ_{j∉H} V_j.

    Both are combined with :func:`combined_weight` (weights from the two variance bounds, which
    the data fix through the columns' counts on either side of τ): the variance of the
    combination is below either's. With ``L`` given, the empty columns' share of B̂ is taken at
    its exact value b₀ (:func:`empty_column_terms`) and the window's reading of the occupied
    columns is raised by κ (:func:`occupied_window_terms`): B̂′ = κB̂ − (L − K′)·(κs₀ − b₀), with
    K′ = min(l·D, |H| + ρU) (the occupied columns that the window reads unlike empty ones: all
    of H at most, and ρ per user outside), taken at the largest fixed point of U⁺ in U, so the
    bound is a non-decreasing function of D (the weight of the two ways is fixed at the
    uncorrected B̂; where κs₀ <= b₀, K′ = 0). The spread then also holds the empty columns' covariance
    of the combined reading's noise with B̂ (:func:`empty_column_terms`), at L columns where positive:
    2κ·L·E₀[ξ·a], ξ = e·((1 − w)1{c <= τ} − w·1{c > τ}) + b₀ (that of the occupied columns is left
    out, as before).

    Parameters
    ----------
    counts : numpy.ndarray
        c_j, the reports with bit j set (int, L).
    t_hat : numpy.ndarray
        t̂_j, the debiased counts (float, L, users).
    var_hat : numpy.ndarray
        V_j, the plug-in variances of t̂_j (float, L, users²).
    n : int
        The number of reports.
    p, q : float
        The probabilities that a report has bit j when the filter has it, and when it has not.
    tau : float
        τ, the count threshold of H.
    total : float or None
        An upper bound on Σ_j t_j (users), or None when unknown (then only the direct way).
    alpha : float
        The one-sided level of the bound.
    L : int, optional
        The number of columns: the empty columns' share of the bias is then exact.
    l : int
        The most columns one value occupies.

    Returns
    -------
    (float or callable, str, (float, float))
        The bound (D ↦ the bound with ``L``), "combined" (or "direct" when ``total`` is None), and
        (z, σ): the bound is the reading plus z·σ′ with σ′ >= σ, the sd of the spread at B̂ = 0
        (:func:`values_upper_certified` adds another count's error to the reading's).
    """
    inside = counts > tau
    bias, bias_var, excess = selection_bias(counts, t_hat, n=n, p=p, q=q, tau=tau)
    z = -float(special.ndtri(alpha))
    direct_var = float(np.sum(var_hat[~inside]))
    direct = float(np.sum(t_hat[~inside]))
    inner_var = float(np.sum(var_hat[inside]))
    reach = max((tau - n * q) / (p - q), 0.0)            # excess = reach·B (selection_bias)
    w = 0.0 if total is None else combined_weight(inner_var + excess, direct_var)
    mean = (1 - w) * direct + (0.0 if total is None else w * (total - float(np.sum(t_hat[inside]))))
    way = "direct" if total is None else "combined"

    cross = 0.0                  # the empty columns' covariance of the readings with B̂ (L given)

    def spread(b: float) -> float:
        return w * w * (inner_var + reach * b) + (1 - w) ** 2 * direct_var + bias_var + cross   # B̂ once

    def bound(b: float) -> float:
        return mean + b + z * math.sqrt(spread(b))

    if L is None:
        return bound(bias), way, (z, math.sqrt(max(spread(min(bias, 0.0)), 0.0)))
    kappa, rho = occupied_window_terms(n, p, q, tau)
    b0, s0, below, above = empty_column_terms(n, p, q, tau)
    cross = 2 * L * kappa * max((1 - w) * below - w * above + b0 * s0, 0.0)   # at most L empty columns
    over, inside_count = kappa * s0 - b0, float(np.sum(inside))
    bias_var *= kappa ** 2
    reading = (z, math.sqrt(spread(0.0)))      # every bound below is at B̂′ >= 0
    if over <= 0:                 # the window reads an empty column short: all L columns empty at worst
        return bound(max(kappa * bias - L * over, 0.0)), way, reading

    def at_most(columns: float) -> float:        # U⁺ with Σ_j ω(t_j) at most ``columns``
        return bound(max(kappa * bias - max(L - columns, 0.0) * over, 0.0))

    users = at_most(L)          # Σ_j ω(t_j) <= |H| + ρU: the largest fixed point of U⁺
    for _ in range(60):
        fewer = max(at_most(inside_count + rho * users), 0.0)
        if fewer >= users - 1e-9 * (1 + abs(users)):
            break
        users = fewer
    return (lambda values: min(users, at_most(l * values))), way, reading


@functools.lru_cache(maxsize=256)
def occupied_window_terms(n: int, p: float, q: float, tau: float) -> tuple[float, float]:
    """(κ, ρ) that let :func:`users_outside_upper` take the empty columns' share of the
    selection bias exactly.

    With s(t) a column's expected share of :func:`selection_bias`'s estimate and b(t) its share
    of B (t users), the estimate κ·Σ s − (L − K′)·(κs₀ − b₀) has mean at least B when every
    d(t) = κs(t) − b(t) >= 0 and K′ >= Σ_{occupied} ω(t_j), ω = 1 − d/d₀: κ is the largest
    b/s over t, with a margin of 2%, and at least 1 + w²/(6σ₀²) (a window around a mode reads
    its density short by about w²/(6σ²), σ >= σ₀), and ω(t) <= 1 on the columns of H while
    ω(t) <= ρt outside, ρ = 2·max_t ω⁺(t)/t (a light column is read like an empty one), so
    K′ = |H| + ρU. Both are computed on a grid
    of t with the normal approximation of c (mean nq + t(p − q), the exact variance) and a
    continuity correction: b(t) = σ_tφ(a_t)/(p − q), a_t = (τ + ½ − μ_t)/σ_t, and the window's
    plug-in variance (linear in c above nq, the null's below) integrated against the normal
    density in closed form.

    Parameters
    ----------
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    tau : float
        The threshold (an integer count).

    Returns
    -------
    (float, float)
    """
    sd0 = math.sqrt(count_variance(0, n, p, q))
    w = window_half_width(n, p, q)
    d = p - q
    slope = p * (1 - p) - q * (1 - q)                    # Var(c) = n q(1 − q) + t·slope
    top = max((tau + w - n * q) / d, 1.0)
    top = top + 12 * math.sqrt(count_variance(min(top, n), n, p, q)) / d + 10
    t = np.unique(np.concatenate([[0.0], np.round(np.geomspace(1, min(top, n), 400))]))
    mean, sd = n * q + t * d, np.sqrt(count_variance(t, n, p, q))
    lo, hi = (tau - w - 0.5 - mean) / sd, (tau + w + 0.5 - mean) / sd
    split = np.clip((n * q - mean) / sd, lo, hi)         # t̂(c) < 0 below nq: its variance is the null's
    # the plug-in Var(c) at t̂(c) = (c − nq)/d is n q(1 − q) + slope·(c − nq)/d above nq, linear in c
    a0 = n * q * (1 - q) - slope * n * q / d
    share = ((a0 + slope * mean / d) * (special.ndtr(hi) - special.ndtr(split))
             - slope * sd / d * (stats.norm.pdf(hi) - stats.norm.pdf(split))
             + n * q * (1 - q) * (special.ndtr(split) - special.ndtr(lo))) / ((2 * w + 1) * d)
    bias = sd * stats.norm.pdf((tau + 0.5 - mean) / sd) / d
    ratio = np.divide(bias, share, out=np.zeros_like(bias), where=share > 1e-300)
    kappa = max(1 + w * w / (6 * sd0 * sd0), 1.02 * float(ratio.max()))
    gap = kappa * share - bias
    if gap[0] <= 0:
        return kappa, 0.0
    with np.errstate(over="ignore"):     # gap[0] can be ~1e-300: those ω are −∞, read as 0
        omega = np.maximum(1 - gap / gap[0], 0.0)
    return kappa, 2 * float(np.max(omega[1:] / t[1:]))


def combined_weight(inner_var: float, direct_var: float) -> float:
    """The weight w of the complement in w·(complement) + (1 − w)·(direct) that minimises the
    bound on the variance w²·inner + (1 − w)²·direct: w = direct/(inner + direct).

    Both ways read U plus a noise term of mean B (Σ_j E[e_j1{c_j > τ}] = −Σ_j E[e_j1{c_j <= τ}]
    since E e_j = 0), and column j enters the combination as e_j·(w·1{c_j > τ} − (1 − w)·1{c_j <= τ}),
    so the cross terms vanish: the variance is at most w²·Σ_j E[e_j²1{c_j > τ}] +
    (1 − w)²·Σ_j E[e_j²1{c_j <= τ}].

    Parameters
    ----------
    inner_var, direct_var : float
        The bounds on the variances of the complement's and the direct way's noise.

    Returns
    -------
    float
        w in [0, 1] (1 if both are 0).
    """
    total = inner_var + direct_var
    return direct_var / total if total > 0 else 1.0


@functools.lru_cache(maxsize=4096)            # the searches over laws and splits repeat their reads of D
def _slot_tails(values: float, L: int, l: int, alpha: float) -> tuple[np.ndarray | None, float]:
    """The terms of :func:`_slots_upper` before their quantiles: (Pr[N >= m] for the m kept, the
    Bonferroni count top), or (None, the fullest column's bound) beyond :data:`MAX_SLOT_TERMS`."""
    lam = l * values / L
    top = int(lam + 10 * math.sqrt(lam) + 10)
    if top > MAX_SLOT_TERMS:              # the fullest column, by a union bound over the L columns
        fullest = float(special.pdtrik(1 - alpha / L, lam))
        if not math.isfinite(fullest):    # 1 − α/L rounds to 1: Bernstein's bound on the Poisson tail
            fullest = lam + occupancy.bernstein_deviation(lam, alpha / L)
        return None, fullest + 1
    tail = special.pdtrc(np.arange(top), lam)                  # Pr[N >= m], m = 1 … top
    kept = tail[L * tail > alpha / top]   # Pr[C_m >= 1] <= L·Pr[N >= m] <= α/top: C_m⁺ = 0
    kept.flags.writeable = False          # shared by the cache
    return kept, top


@functools.lru_cache(maxsize=4096)
def _slots_upper(values: float, inside: int, L: int, l: int, alpha: float) -> float:
    """Upper confidence bound on the value slots (a value in a column) that ``inside`` columns
    can hold when D = ``values`` values are hashed l times each: Σ_{m>=1} min(|H|, C_m⁺), C_m
    the columns holding at least m slots, whose indicators are negatively associated
    (Joag-Dev & Proschan 1983), so a binomial quantile bounds C_m (Bonferroni over m)."""
    tail, top = _slot_tails(values, L, l, alpha)
    if tail is None:
        return inside * top
    full = L * tail >= inside             # the quantile is at least the mean: min(|H|, ·) = |H|
    quantile = occupancy.binomial_upper(alpha / top, L, tail[~full])
    return float(inside * np.count_nonzero(full) + np.sum(np.minimum(inside, quantile)))


def _slots_range(values: float, inside: int, L: int, l: int, alpha: float) -> tuple[float, float]:
    """(low, high) around :func:`_slots_upper` without its quantiles: |H| for each term whose mean
    is at least |H|, and |H| for each term kept."""
    tail, top = _slot_tails(values, L, l, alpha)
    if tail is None:
        return inside * top, inside * top
    return float(inside * np.count_nonzero(L * tail >= inside)), float(inside * tail.size)


def _less_slots(total: Callable[[float], float], values: float, inside: int, L: int, l: int, alpha: float) -> float:
    """``total`` (non-increasing) at S = :func:`_slots_upper`, or a number between that and 0 of
    the same sign where S's range without quantiles (:func:`_slots_range`) decides the sign:
    the searches read only the sign, and most of them end there."""
    low, high = _slots_range(values, inside, L, l, alpha)
    at_low = total(low)
    if at_low <= 0:                       # IEEE subtraction is monotone: total(S) is at most this
        return at_low
    at_high = total(high)
    return at_high if at_high > 0 else total(_slots_upper(values, inside, L, l, alpha))


def values_upper_by_slots(users_out: float, inside: int, L: int, l: int, alpha: float,
                          cap: float = math.inf) -> float:
    """Most values whose slots outside |H| = ``inside`` columns number at most ``users_out``.

    Each value has X_v >= 1 distinct columns, l·D − R of them in all with R the repeats
    (Poisson, mean D·l(l − 1)/(2L), bounded above at α/2); at most :func:`_slots_upper` of
    them (at α/2) lie in the columns of H however H was chosen, and each slot outside holds a user
    of its own. So l·D − R⁺ − top⁺(D) <= U, which increases in D: the largest D that satisfies it
    (bisection) is the bound (∞ if no D in [0, 2^50] fails it).

    Parameters
    ----------
    users_out : float or callable
        Upper bound on the users (user-column pairs) outside H, or D ↦ that bound (non-decreasing,
        :func:`users_outside_exact`).
    inside : int
        |H|.
    L, l : int
        Filter size and hashes per value.
    alpha : float
        Error probability.
    cap : float
        A sure bound on D: returned when it satisfies the inequality (no search beyond it).

    Returns
    -------
    float

    References
    ----------
    K. Joag-Dev, F. Proschan, "Negative association of random variables, with applications",
    Ann. Statist. 11(1), 1983.
    """
    if inside >= L:
        return math.inf
    excess = slots_excess(users_out, inside, L, l, alpha)
    low = users_out(0.0) if callable(users_out) else users_out
    return _largest_satisfying(excess, min(max(low, 0.0) / l, cap), inside + 1.0, cap)


def slots_excess(users_out, inside: int, L: int, l: int, alpha: float) -> Callable[[float], float]:
    """D ↦ l·D − R⁺ − top⁺(D) − U⁺(D) of :func:`values_upper_by_slots`, non-decreasing: where it
    is positive at D, that bound is at most D (one evaluation instead of the search).

    Parameters
    ----------
    users_out : float or callable
        U⁺, or D ↦ U⁺ (as :func:`values_upper_by_slots`).
    inside : int
        |H|.
    L, l : int
        Filter size and hashes per value.
    alpha : float
        Error probability of the slots' bound.

    Returns
    -------
    callable
        D ↦ the excess, or a number between it and 0 where the slots' terms that need no
        quantile decide its sign (:func:`_less_slots`: the sign, all that the searches read, is
        exact).
    """
    bound = users_out if callable(users_out) else (lambda d, u=users_out: u)

    def excess(d):
        repeats, users = _repeats_upper(d, L, l, alpha / 2), max(bound(d), 0.0)
        return _less_slots(lambda slots: l * d - repeats - slots - users, d, inside, L, l, alpha / 2)

    return excess


def _repeats_upper(values: float, L: int, l: int, alpha: float) -> float:
    """Upper confidence bound on R, the hashes of ``values`` values that repeat one of the same
    value's columns (Poisson, mean D·l(l − 1)/(2L); 0 for l = 1)."""
    return float(stats.poisson.isf(alpha, values * l * (l - 1) / (2 * L))) if l > 1 else 0.0


def _largest_satisfying(excess: Callable[[float], float], lo: float, step: float, cap: float) -> float:
    """The least D found to fail ``excess(D) <= 0`` above ``lo`` (which satisfies it): doubling
    from lo + ``step`` to a failing D, then bisection to 0.3% (``cap`` if it satisfies it; ∞ if
    no D up to 2^50 fails). ``excess`` is non-decreasing."""
    if math.isfinite(cap) and excess(cap) <= 0:
        return cap
    lo = min(lo, cap)
    hi = min(lo + step, cap)
    for _ in range(64):                   # doubling stops at the cap (excess(cap) > 0 there)
        if excess(hi) > 0:
            break
        if hi >= min(cap, 2.0 ** 50):
            return math.inf
        lo, hi = hi, min(2 * hi, cap)
    else:
        return math.inf
    for _ in range(64):                   # bisection, each step halves hi − lo
        if hi - lo <= max(3e-3 * hi, 0.5):
            break
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) <= 0 else (lo, mid)
    return hi


def light_only_columns(inside_counts: np.ndarray, light: float, values: float, *, n: int, p: float,
                       q: float, L: int, l: int, alpha: float) -> float:
    """Upper confidence bound on the columns of H that hold no value of ``light`` = F users or
    more, with at most ``values`` values of fewer.

    Such a column with at most r − 1 of those values holds t < (r − 1)F users, so its sum passes
    κ_r = nq + (p − q)(r − 1)F + z·Var(c | t = (r − 1)F)^{1/2} (z at α/(2RL), normal
    approximation) in none of the L columns but with probability α/(2R); one with r or more is
    among the C_r columns that r of the light values' slots share, C_r⁺ its binomial quantile
    at α/(2R) as in :func:`_slots_upper`. So for every r: at most #{j ∈ H : c_j <= κ_r} + C_r⁺,
    and the bound is the least over r = 1 … R, R = :data:`CERTIFY_TERMS` (Bonferroni over r;
    it is sought only up to the first r with C_r⁺ = 0 and the first κ_r above every sum,
    beyond which the bound cannot fall).

    Parameters
    ----------
    inside_counts : numpy.ndarray
        The sums of the columns of H.
    light : float
        F, the users below which a value is light.
    values : float
        An upper bound on the number of light values.
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    L, l : int
        Filter size and hashes per value.
    alpha : float
        Error probability.

    Returns
    -------
    float
    """
    inside = np.sort(np.asarray(inside_counts))
    if not inside.size:
        return 0.0
    a = alpha / (2 * CERTIFY_TERMS)                                  # each κ_r and each C_r⁺
    r = np.arange(1, CERTIFY_TERMS + 1)
    tail = special.pdtrc(r - 1, l * values / L)                      # Pr[a column has >= r slots]
    none = np.flatnonzero(L * tail <= a)       # C_r⁺ = 0 from here: larger r only certify fewer
    r = r[:none[0] + 1] if none.size else r
    r = r[:max(int((inside[-1] - n * q) / ((p - q) * light)) + 2, 1)]  # κ_r beyond the fullest sum
    users = (r - 1) * light
    kappa = n * q + (p - q) * users - float(special.ndtri(a / L)) * np.sqrt(count_variance(np.minimum(users, n), n, p, q))
    uncertified = np.searchsorted(inside, kappa, side="right")
    shared = np.where(L * tail[:r.size] > a, occupancy.binomial_upper(a, L, tail[:r.size]), 0.0)
    return float(np.min(np.minimum(uncertified + shared, inside.size)))


def values_upper_certified(users_out: float, inside_counts: np.ndarray, *, n: int, p: float, q: float,
                           L: int, l: int, tau: float, alpha: float, cap: float,
                           reading: tuple[float, float] | None = None) -> float:
    """Most values when the columns of H are mostly certified to hold a value of many users.

    For F of :data:`CERTIFY_MASSES` (shares of the users (τ − nq)/(p − q) at the threshold;
    Bonferroni over them), split the values at F users and the users outside H into u of the
    heavy values (F users or more) and U − u of the light ones. The heavy values occupy the
    columns A at random, A within H but for at most ⌊u/F⌋ columns outside (each holds F users
    outside H), so they number at most the collision law's bound for |H| + ⌊u/F⌋ occupied
    columns (:func:`.occupancy.values_upper_by_collisions`). The light ones are hashed
    independently of A: their slots in A are at most a binomial quantile of l·D_L slots at rate
    (|H| + ⌊u/F⌋)/L; those in the columns of H without a heavy value are at most
    :func:`_slots_upper` of those columns (:func:`light_only_columns`, at D_L <= ``cap``); the
    rest, outside H, hold a user each. So l·D_L − R⁺ − Bin⁺ − top⁺ <= U − u bounds D_L. With
    the ``reading`` (z, σ) of U⁺, Bin⁺ is the count beyond which the slots in A, added to the
    reading's error, cost its level (:func:`.occupancy.binomial_upper_beside_normal`: near
    their mean where σ is much larger than their sd). Each F's
    level a is spent a/4 on the heavy values' collisions, a/4 on the columns of H without a heavy
    value, 3a/8 on Bin⁺, a/16 on top⁺ and a/16 on R⁺. The
    split u is unknown: the bound is the largest over u in [0, U], taken on a partition into
    intervals [u₀, u₁] (:func:`_largest_over_splits`), each with the heavy bound at u₁ and the
    light one at u₀ (both monotone; the events are those of the true split, so no level is spent
    on it).
    Where every column of H holds many more users than F, the light values enter H only at its
    rate |H|/L instead of crowding into its columns (:func:`values_upper_by_slots`), and a small F
    (1/16) leaves no column of H to light values alone while the heavy values outside H cost F
    users each of U only for the share of U they hold. Not in the exact regime (the
    certification reads sums by their normal approximation).

    Parameters
    ----------
    users_out : float
        U⁺, the upper bound on the users outside H.
    inside_counts : numpy.ndarray
        The sums of the columns of H.
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    L, l : int
        Filter size and hashes per value.
    tau : float
        τ, the threshold of H.
    alpha : float
        Error probability.
    cap : float
        A bound on D that holds at its own level (the slots' bound): the search stops there.
    reading : (float, float), optional
        (z, σ) of U⁺'s normal reading (:func:`users_outside_upper`); None: Bin⁺ is the slots'
        binomial quantile at its level.

    Returns
    -------
    float
    """
    inside = int(np.size(inside_counts))
    at_threshold = max((tau - n * q) / (p - q), 1.0)
    best, a = cap, alpha / len(CERTIFY_MASSES)
    if inside >= L or not math.isfinite(cap) or users_out < 0:
        return best
    # every split's heavy bound is at least that of |H| columns (>= |H|/l), its rate at least |H|/L: where
    # the first split's test below fails at those, it fails for every F (the result is the cap)
    spread = users_out / (l * (1 - inside / L))
    if (inside + users_out) / l >= best or inside / l + spread - 1 >= best:
        return best
    fewest = float(occupancy.values_upper_by_collisions(inside, L, l, a / 4))
    for share in CERTIFY_MASSES:
        light = max(share * at_threshold, 1.0)
        if (inside + users_out) / l >= best or fewest + spread - 1 >= best:
            continue
        crowded = int(light_only_columns(inside_counts, light, cap, n=n, p=p, q=q, L=L, l=l, alpha=a / 4))

        def split_bound(low, high, floor_only=False, light=light, crowded=crowded, best=best):
            occupied = inside + math.floor(high / light)       # the heavy values' users outside H in [low, high]
            rate, light_out = occupied / L, users_out - low
            if occupied >= L:
                return math.inf
            heavy = fewest if occupied == inside else float(occupancy.values_upper_by_collisions(occupied, L, l, a / 4))
            floor = heavy + light_out / (l * (1 - rate)) - 1      # the light ones alone, at their rate
            if floor_only:
                return floor
            if floor >= best:
                return math.inf

            def excess(d):              # the sign exact, the value between the excess and 0
                slots, repeats = l * d, _repeats_upper(d, L, l, a / 16)

                def total(in_a, in_rest):
                    return slots - repeats - in_a - in_rest - light_out

                if reading is None:
                    in_a = float(occupancy.binomial_upper(3 * a / 8, math.ceil(slots), rate))
                else:                   # the ranges of both slot counts first (no quantiles)
                    a_low, a_high = occupancy.beside_normal_range(3 * a / 8, math.ceil(slots), rate)
                    r_low, r_high = _slots_range(d, crowded, L, l, a / 16) if crowded else (0.0, 0.0)
                    if (at := total(a_low, r_low)) <= 0 or (at := total(a_high, r_high)) > 0:
                        return at
                    in_a = occupancy.binomial_upper_beside_normal(3 * a / 8, math.ceil(slots), rate, *reading)
                return _less_slots(lambda s: total(in_a, s), d, crowded, L, l, a / 16) if crowded else total(in_a, 0.0)

            return heavy + _largest_satisfying(excess, light_out / l, crowded + 1.0, best - heavy)

        best = min(best, _largest_over_splits(split_bound, users_out, best))
    return best


def _largest_over_splits(split_bound: Callable[..., float], users_out: float, best: float) -> float:
    """max over a partition of [0, U⁺] of ``split_bound(u₀, u₁)`` (non-increasing as [u₀, u₁] shrinks;
    any partition is valid: the true split lies in one of its intervals). :data:`CERTIFY_SPLITS`
    equal intervals; one at or above ``best`` is refined at once (its largest piece halved up to
    :data:`CERTIFY_REFINE` times, unless ``split_bound(u, u, True)``, a cheap lower bound at an end
    point u and so on every refinement, reads above :data:`RESCUE_BELOW` of ``best``) and the
    search stops if it stays there; at the end the interval that gives the largest is halved
    :data:`CERTIFY_REFINE` times. In a nearly full filter the light values' rate |A|/L is close
    to 1, so the light bound of the last interval alone can exceed ``best`` (the cap handed to a
    degraded law) while its halves fall well below it."""
    def refine(parts):
        worst, low, high = max(parts)
        if high <= low:                 # U⁺ = 0: nothing to halve
            return
        mid = (low + high) / 2
        parts.remove((worst, low, high))
        parts += [(split_bound(low, mid), low, mid), (split_bound(mid, high), mid, high)]

    edges = np.linspace(0.0, users_out, CERTIFY_SPLITS + 1 if users_out > 0 else 2)
    parts = []
    for low, high in zip(edges[:-1], edges[1:]):
        pieces = [(split_bound(low, high), low, high)]
        if pieces[0][0] >= best:        # no refinement falls below the bound at either end point
            ends = max(split_bound(low, low, True), split_bound(high, high, True))
            for _ in range(CERTIFY_REFINE if ends < RESCUE_BELOW * best else 0):
                refine(pieces)
            if max(pieces)[0] >= best:
                return max(pieces)[0]
        parts += pieces
    for _ in range(CERTIFY_REFINE):
        refine(parts)
    return max(parts)[0]


def upper_bound(observed: Observed, alpha: float, cap: float | None = None,
                shift: Callable[[int], float] | None = None, parts: list | None = None,
                law: tuple[float, float] | None = None) -> tuple[float, dict]:
    """One-sided upper confidence bound on D at level 1 − α (mass balance), and its ingredients.

    For each threshold τ of :data:`THRESHOLDS` (Bonferroni over them: the null quantile that no
    empty column passes but with probability :data:`FALSE_POSITIVE` of the share, the 1 − 1/L
    quantile, the 0.98 and the 0.9 quantiles), H = {j : c_j > τ}; U⁺ bounds the users outside H (:func:`users_outside_upper`,
    or :func:`users_outside_exact` where an empty column's sum has sd below
    :data:`EXACT_BELOW`; :data:`MASS_SHARE` of the share), and :func:`values_upper_by_slots`
    turns it into values (the rest). The smallest bound over the thresholds is kept, and D is
    at most the design's cap (n with one value per user).

    Parameters
    ----------
    observed : Observed
        The column sums (with one value per user: Σ_j t_j <= l·n and D <= n are sure).
    alpha : float
        Error probability.
    cap : float, optional
        A sure bound on D below the design's (no search beyond it).
    shift : callable, optional
        |H| ↦ users added to U⁺ (the most that fake reports can have hidden,
        :func:`bfrrce.manipulation.robust_interval`).
    parts : list, optional
        ``list(_threshold_parts(observed, alpha, shift))`` if already computed.
    law : (float, float), optional
        (p′, q′) of a smaller ε: the thresholds are that law's, read at their users
        (:func:`law_threshold`).

    Returns
    -------
    (float, dict)
        The bound and the ingredients of the threshold that gave it.
    """
    design = observed.design
    n, p, q, L, l = design.n, design.p, design.q, design.L, design.l
    cap = design.cap if cap is None else min(cap, design.cap)
    best, chosen = math.inf, {}
    for tau, visible, users_out, way, reading, slots in parts or _threshold_parts(observed, alpha, shift, law):
        inside = int(np.sum(visible))
        certify = way != "exact"                # not in the exact regime: a choice by (n, p, q)
        values = values_upper_by_slots(users_out, inside, L, l, (1 - CERTIFY_SHARE * certify) * slots,
                                       cap=min(float(cap), best))       # no search past the best
        if callable(users_out):     # on the slots' event D <= values, so U <= U⁺(values)
            users_out = users_out(min(values, float(cap)))
        if certify:
            values = values_upper_certified(users_out, observed.counts[visible], n=n, p=p, q=q, L=L, l=l,
                                            tau=tau, alpha=CERTIFY_SHARE * slots, cap=values, reading=reading)
        if values < best:
            best, chosen = values, {"tau": float(tau), "columns_in": inside,
                                    "users_out_upper": users_out, "users_out_by": way}
    return min(best, float(cap)), {"upper_by_mass_balance": best, **chosen}


def law_threshold(tail: float, design: Design, law: tuple[float, float] | None = None) -> float:
    """The count threshold of null tail ``tail``: τ = isf of an empty column's Binomial(n, q); with
    ``law`` = (p′, q′), that law's threshold τ′ read at the same users,
    ⌈nq + (p − q)(τ′ − nq′)/(p′ − q′)⌉. On sums as reported (less noisy than the law's), this
    selects the columns the sums degraded to that law would select in expectation, without the
    degradation's noise; an empty column, whose sum is less noisy at the same users, passes it
    with a probability below ``tail`` (rounded up, never below the users' level).

    Parameters
    ----------
    tail : float
        The null tail at the law.
    design : Design
        The reports' design.
    law : (float, float), optional
        (p′, q′) of a smaller ε (None: the design's own).

    Returns
    -------
    float
    """
    n, p, q = design.n, design.p, design.q
    if law is None:
        return null_quantile(tail, n, max(q, NULL_FLOOR / max(n, 1)))
    p2, q2 = law
    return float(math.ceil(n * q + (p - q) * (null_quantile(tail, n, q2) - n * q2) / (p2 - q2)))


def _threshold_parts(observed: Observed, alpha: float, shift: Callable[[int], float] | None = None,
                     law: tuple[float, float] | None = None):
    """For each threshold of :data:`THRESHOLDS` at its share of α (:func:`law_threshold`), in
    :func:`upper_bound`'s order: (τ, the visible mask, U⁺ (D ↦ U⁺ in the exact regime), how U⁺
    was read, (z, σ) of its normal reading (None in the exact regime), the level left for the
    slots)."""
    design = observed.design
    n, p, q, L, l, total = design.n, design.p, design.q, design.L, design.l, design.total
    counts, t_hat, var_hat = observed.counts, observed.t_hat, observed.variance
    for share, tail in THRESHOLDS:
        a = share * alpha
        clean = tail is None                    # no empty column above τ, but with probability
        tau = law_threshold(FALSE_POSITIVE * a / L if clean else tail(L), design, law)
        visible = counts > tau
        if exact_regime(n, p, q):
            users_out = users_outside_exact(counts, t_hat, n=n, p=p, q=q, tau=tau, L=L, l=l,
                                            total=math.inf if total is None else total,
                                            alpha=MASS_SHARE * a)
            way, reading = "exact", None
        else:
            users_out, way, reading = users_outside_upper(counts, t_hat, var_hat, n=n, p=p, q=q, tau=tau,
                                                          total=total, alpha=MASS_SHARE * a, L=L, l=l)
        if shift is not None:
            extra = shift(int(np.sum(visible)))
            users_out = ((lambda v, f=users_out, x=extra: f(v) + x) if callable(users_out)
                         else users_out + extra)
        yield tau, visible, users_out, way, reading, (1 - MASS_SHARE - FALSE_POSITIVE) * a


def upper_bound_at_most(observed: Observed, parts: list, d: float) -> bool:
    """Whether :func:`upper_bound` with the threshold ingredients ``parts`` is sure to be at most
    ``d`` without computing it: some threshold's slot inequality already fails at D = d
    (:func:`values_upper_by_slots` then stops at or below d, and the certified step only lowers
    it). False says nothing.

    Parameters
    ----------
    observed : Observed
        The column sums.
    parts : list
        ``list(_threshold_parts(observed, alpha))``.
    d : float
        The value to compare with.

    Returns
    -------
    bool
    """
    design = observed.design
    if d >= design.cap:
        return True
    for _, visible, users_out, way, _, slots in parts:
        inside = int(np.sum(visible))
        level = (1 - CERTIFY_SHARE * (way != "exact")) * slots
        if inside >= design.L:
            continue
        if slots_excess(users_out, inside, design.L, design.l, level)(d) > 0:
            return True
    return False


def thinning(p: float, q: float, p2: float, q2: float) -> tuple[float, float] | None:
    """(a, b) such that passing every report bit through a second randomized response (a 1 stays
    1 with probability a, a 0 becomes 1 with probability b) turns the law (p, q) into (p2, q2):
    a − b = (p2 − q2)/(p − q), b = q2 − q(a − b); None if that is not a channel (0 <= b <= a <= 1).

    Parameters
    ----------
    p, q : float
        The reports' Pr[bit 1 | bit 1] and Pr[bit 1 | bit 0].
    p2, q2 : float
        The target law.

    Returns
    -------
    (float, float) or None
    """
    r = (p2 - q2) / (p - q)
    b = q2 - q * r
    a = b + r
    return (a, b) if 0 <= b <= a <= 1 and r > 0 else None


def degrade_counts(counts: np.ndarray, n: int, a: float, b: float) -> np.ndarray:
    """Column sums of the reports after :func:`thinning`'s channel, drawn exactly in law:
    c' ~ Binomial(c, a) + Binomial(n − c, b), independently over columns, from a generator seeded
    by the sums themselves (the same sums give the same bound).

    Parameters
    ----------
    counts : numpy.ndarray
        Column sums c_j.
    n : int
        Number of reports.
    a, b : float
        The channel.

    Returns
    -------
    numpy.ndarray
    """
    counts = np.asarray(counts, dtype=np.int64)
    seed = int.from_bytes(hashlib.blake2b(counts.tobytes() + str((n, a, b)).encode(), digest_size=8).digest(),
                          "little")
    rng = np.random.default_rng(seed)
    return rng.binomial(counts, a) + rng.binomial(n - counts, b)


def exact_regime(n: int, p: float, q: float) -> bool:
    """Whether an empty column's sum has sd below :data:`EXACT_BELOW`, where the selection bias
    is bounded exactly (:func:`users_outside_exact`) rather than estimated.

    Parameters
    ----------
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

    Returns
    -------
    bool
    """
    return math.sqrt(count_variance(0, n, p, q)) < EXACT_BELOW


def law_shares(design: Design, laws: dict) -> list[float]:
    """The shares of α of the sums as reported and of each degraded law, from the design alone.

    :data:`OWN_SHARE` for the sums as reported and the rest split evenly, except where the sums
    as reported are in the exact regime (:data:`EXACT_BELOW`) and the first law is not: the exact
    bias bound is looser than the plug-in one, so that law gets :data:`EXACT_LAW_SHARE` and the
    sums as reported :data:`EXACT_OWN_SHARE` (the first law is then the least noisy one outside
    the exact regime, :meth:`bfrrce.BFRRCE.degraded_laws`), the other laws the rest.

    Parameters
    ----------
    design : Design
        The reports' design.
    laws : dict
        {ε′: (p′, q′)}, highest first.

    Returns
    -------
    list of float
        One share per law after the first entry, the sums as reported; they sum to 1.
    """
    if not laws:
        return [1.0]
    first = next(iter(laws.values()))
    if exact_regime(design.n, design.p, design.q) and not exact_regime(design.n, *first):
        rest = (1 - EXACT_OWN_SHARE - EXACT_LAW_SHARE) / max(len(laws) - 1, 1)
        return [EXACT_OWN_SHARE, EXACT_LAW_SHARE] + [rest] * (len(laws) - 1)
    return [OWN_SHARE] + [(1 - OWN_SHARE) / len(laws)] * len(laws)


def upper_bound_over_laws(observed: Observed, laws: dict, alpha: float) -> tuple[float, dict]:
    """:func:`upper_bound` on the sums and at the ``laws`` of smaller ε, the smallest kept,
    Bonferroni over them: at ε the server may apply any procedure valid at ε' < ε to the sums
    degraded to the law at ε' (:func:`degrade_counts`), so a bound that takes the smallest over
    a fixed grid of ε' gets no worse with more ε. Outside the exact regime a law is read by its
    thresholds on the sums as reported (:func:`law_threshold`, less noisy than degraded sums);
    in it the sums are degraded, and from the first law outside it on, the laws are read by
    their thresholds on those degraded sums.

    The sums as reported and each law get the shares of :func:`law_shares` (a function of the
    design, not of the sums) whether or not the law is computed, so the level of a law does not
    depend on the sums (:meth:`bfrrce.BFRRCE.degraded_laws` always gives three). The laws are
    tried only where the bound on the sums as reported is of the kinds that loosen with ε: in
    the exact regime, with more than :data:`LAWS_ABOVE` of the columns visible, at the cap, or
    where the bound exceeds (|H| + U⁺)/l by :data:`LAWS_CROWDED` (light values crowd the columns
    of H just above τ and their slots add to the bound, while at a lower ε fewer of them pass)
    (elsewhere the sums as reported give the bound; docs/estimation.md has the measurements).
    They are tried from the highest ε' down and the search
    stops at the first that does not improve on the best so far (below the cap; not at a law in
    the exact regime when the last law is outside it, :meth:`bfrrce.BFRRCE.degraded_laws`): the minimum
    over any data-chosen subset of bounds, each valid at its share, is valid at the sum of
    the shares; stopping only saves time where the bound is unimodal in ε'.

    The bound inverts one test of level α for each D, and the test may depend on D: for D at
    most d* = :func:`laws_below` (filters with at most four slots a column, where the laws
    did not help) it is the bound at the whole α on the sums as reported (on the sums degraded
    to the first law where those are in the exact regime and the law is close,
    :func:`_small_d_sums`; d* is then that law's), above d* the minimum just described. The
    confidence set {D <= d* : D <= B(α)} ∪ {D > d* : D <= M} has the upper end M where M > d*,
    and min(d*, B(α)) otherwise (docs/estimation.md, "Monotone in ε").
    B(α) is computed with cap d*, which :func:`values_upper_certified` takes as a premise on the
    light values: true for every D that this test decides.

    Parameters
    ----------
    observed : Observed
        The column sums.
    laws : dict
        {ε': (p', q')} of smaller ε, highest first (those that are not a channel from (p, q) are
        skipped).
    alpha : float
        Error probability.

    Returns
    -------
    (float, dict)
        The bound and the ingredients of the law that gave it, with ``"upper_epsilon"`` (None:
        the sums as reported).
    """
    design = observed.design
    shares, (low, low_eps) = law_shares(design, laws), _small_d_sums(observed, laws)
    below = laws_below(low.design)
    parts = list(_threshold_parts(observed, shares[0] * alpha))
    if shares[0] < 1 and below > 0 and upper_bound_at_most(observed, parts, below):
        best, info = upper_bound(low, alpha, cap=below)    # M <= d*: only the tests of D <= d*
        info["upper_epsilon"] = low_eps
        return best, info
    best, info = upper_bound(observed, shares[0] * alpha, parts=parts)
    info["upper_epsilon"] = None
    base = observed
    crowded = best > LAWS_CROWDED * (info.get("users_out_upper", 0.0) + info.get("columns_in", 0)) / design.l
    if (exact_regime(design.n, design.p, design.q) or info.get("columns_in", design.L) > LAWS_ABOVE * design.L
            or best >= design.cap or crowded):  # where a bound loosens with ε: exact regime, full filter, the
        # cap, or where the slots of H's columns add much to |H| + U⁺ (light values crowding columns near τ)
        leaves = bool(laws) and not exact_regime(design.n, *list(laws.values())[-1])   # the last law is outside it
        for (eps, (p2, q2)), share in zip(laws.items(), shares[1:]):
            if exact_regime(design.n, base.design.p, base.design.q):   # degrade: the law's plug-in bias
                channel = thinning(base.design.p, base.design.q, p2, q2)
                if channel is None:
                    continue
                degraded = low if eps == low_eps else Observed(degrade_counts(base.counts, design.n, *channel),
                                                               design.at(p2, q2))
                value, got = upper_bound(degraded, share * alpha, cap=best)
                if not exact_regime(design.n, p2, q2):
                    base = degraded              # the least noisy sums outside the exact regime
            else:           # the law's thresholds on the sums, less noisy than degraded ones
                value, got = upper_bound(base, share * alpha, cap=best, law=(p2, q2))
            if value < best:
                best, info = value, {**got, "upper_epsilon": eps}
            elif best < design.cap and not (leaves and exact_regime(design.n, p2, q2)):
                break                         # no better than the best below the cap: stop (speed)
    if best <= below and shares[0] < 1:   # no D above `below` is left; its tests take all of α
        best, info = upper_bound(low, alpha, cap=below)
        info["upper_epsilon"] = low_eps
    return best, info


def _small_d_sums(observed: Observed, laws: dict) -> tuple[Observed, float | None]:
    """The sums that the tests of D <= d* read (:func:`upper_bound_over_laws`) and their ε′ (None:
    as reported): the sums as reported, except where they are in the exact regime and the first
    law is not and has at least :data:`CLOSE_LAW` of their per-bit ε
    (:func:`protocols.core.calibration.log_ratio`, proportional to ε within a family): there the sums degraded to the first law, whose plug-in selection bias beats
    the exact bound at a small loss of information (docs/estimation.md, "Monotone in ε")."""
    design = observed.design
    first = next(iter(laws.items()), None)
    if first is None or not exact_regime(design.n, design.p, design.q) or exact_regime(design.n, *first[1]):
        return observed, None
    channel = thinning(design.p, design.q, *first[1])
    if channel is None or log_ratio(*first[1]) < CLOSE_LAW * log_ratio(design.p, design.q):
        return observed, None
    return Observed(degrade_counts(observed.counts, design.n, *channel), design.at(*first[1])), first[0]



def laws_below(design: Design) -> float:
    """The D up to which :func:`upper_bound_over_laws` tests on the sums as reported alone, at the
    whole level: :data:`LAWS_FROM`·L/l, the D whose l·D slots fill all but e^{−4} ≈ 2% of the
    columns in expectation (0 in the exact regime, where the first law serves every D): the laws
    serve full filters, and below this D the filter is not full (docs/estimation.md, "Monotone
    in ε", has the measurement).

    Parameters
    ----------
    design : Design
        The reports' design.

    Returns
    -------
    float
    """
    if exact_regime(design.n, design.p, design.q):
        return 0.0
    return LAWS_FROM * design.L / design.l
