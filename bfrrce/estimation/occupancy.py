"""Occupied columns and the values they hold: the collision law of the Bloom filter.

A column is *occupied* when at least one user's filter has its bit set (t_j > 0). The column
sum of an empty column follows the exact law c_j ~ Binomial(n, q), independently across columns
given the data, so p_j = Pr[Binomial(n, q) >= c_j] is a super-uniform p-value of "column j is
empty". With R(u) the number of p-values <= u and K the number of occupied columns, the empty
columns below u number at most Binomial(L − K, u); on a grid of thresholds u (Meinshausen &
Rice, Ann. Statist. 2006, bounding the number of false nulls from below) this gives

* a lower confidence bound on K (quantile 1 − α/|grid| of that law, simultaneously over the grid),
* and, with the median instead, a point estimate of K that needs no tuning to the signal.

D values hashed l times each occupy L(1 − π) columns in expectation, π = (1 − 1/L)^{lD}; the
inversion D = ln π/(l ln(1 − 1/L)) is linear counting (Whang, Vander-Zanden, Taylor, ACM TODS
1990) with l hashes (Swamidass & Baldi, J. Chem. Inf. Model. 2007). See docs/estimation.md.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.lazy import optimize, special, stats
from protocols.core.perturbation import debias_counts

P_GRID = np.geomspace(1e-7, 0.5, 30)    # p-value thresholds u
QUANTILE_WINDOW = 4                     # counts either side of the approximate binomial quantile
_WINDOW_STEPS = np.arange(-QUANTILE_WINDOW, QUANTILE_WINDOW + 1, dtype=float)
BESIDE_COUNTS = 256                     # blocks of counts at most in binomial_upper_beside_normal
WAITING_TERMS = 1024                    # geometric terms of the waiting time kept one by one (then blocks)


@functools.lru_cache(maxsize=256)
def critical_counts(n: int, q: float) -> np.ndarray:
    """The smallest column sum whose p-value Pr[Binomial(n, q) >= c] is at most u, for every u
    of :data:`P_GRID`: 1 + the inverse survival function of Binomial(n, q) (non-increasing in u).

    Parameters
    ----------
    n : int
        Number of reports.
    q : float
        Pr[report bit 1 | bit 0].

    Returns
    -------
    numpy.ndarray
        Read-only (cached: every level of a set sketch and every trial of an evaluation asks
        for the same (n, q)).
    """
    out = stats.binom.isf(P_GRID, n, q) + 1
    out.flags.writeable = False
    return out


def passing_columns(counts: ArrayLike, n: int, q: float) -> np.ndarray:
    """R(u), the number of columns whose p-value Pr[Binomial(n, q) >= c_j] is at most u, for
    every u of :data:`P_GRID`: the columns at or above :func:`critical_counts` (L·log|grid|
    comparisons, no p-value computed).

    Parameters
    ----------
    counts : array_like of int
        Column sums.
    n : int
        Number of reports.
    q : float
        Pr[report bit 1 | bit 0].

    Returns
    -------
    numpy.ndarray of int
        (|P_GRID|,), non-decreasing.
    """
    ascending = critical_counts(n, q)[::-1]
    met = np.searchsorted(ascending, np.asarray(counts), side="right")  # c_j passes the last `met` u
    return np.cumsum(np.bincount(met, minlength=P_GRID.size + 1)[::-1])[:P_GRID.size]


@functools.lru_cache(maxsize=4096)
def _empty_quantiles(level: float, size: int) -> np.ndarray:
    """The ``level`` quantile of Binomial(size, u) for every u of ``P_GRID`` (cached: estimates
    over many trials meet the same (level, L − K) again and again)."""
    out = stats.binom.ppf(level, size, P_GRID)
    out.flags.writeable = False
    return out


def _occupied(passing, L, level):
    """K with K = max_u R(u) − quantile_level(Binomial(L − K, u)), iterated up from K = 0.

    Each step is a lower bound on the true K whenever the quantiles bound the empty columns
    below every u (if K_i <= K then L − K_i >= L − K, so K_{i+1} <= K): the iteration
    increases to the largest K the inequalities imply and stops. Returns (K, u at the maximum,
    R(u)).
    """
    below = np.asarray(passing)
    k, best = 0, 0
    while True:
        gains = below - _empty_quantiles(level, L - k)
        best = int(np.argmax(gains))
        nxt = max(0, int(gains[best]))
        if nxt <= k:
            return k, float(P_GRID[best]), int(below[best])
        k = nxt


def occupied_columns_lower(passing: np.ndarray, L: int, alpha: float) -> int:
    """Lower confidence bound on the number of occupied columns, level 1 − α, any data.

    Parameters
    ----------
    passing : numpy.ndarray
        :func:`passing_columns` of the columns.
    L : int
        Number of columns.
    alpha : float
        Error probability.

    Returns
    -------
    int

    References
    ----------
    N. Meinshausen, J. Rice, "Estimating the proportion of false null hypotheses among a large
    number of independently tested hypotheses", Ann. Statist. 34(1), 2006.
    """
    return _occupied(passing, L, 1 - alpha / P_GRID.size)[0]


def occupied_columns(passing: np.ndarray, counts: ArrayLike, n: int, q: float, p: float,
                     alpha: float = 0.05) -> tuple[float, float]:
    """Estimate K̂ of the number of occupied columns and its standard error.

    The threshold u* is the one at which the lower confidence bound (level 1 − α per threshold)
    is attained: it trades detections against the noise of the empty columns without looking at
    the point estimate. At u*, E R(u*) = (detected occupied columns) + (L − K)u*, so
    K̂ = (R(u*) − L u*)/(1 − u*) counts the occupied columns that pass u*, without the upward bias
    of maximising over thresholds. Var K̂ = Var R(u*)/(1 − u*)², Var R(u*) = (L − K̂)u*(1 − u*)
    (the empty columns, exactly) + Σ_j P_j(1 − P_j), P_j = Pr[c_j >= c*] for the count c* that
    p-values <= u* need, estimated by Φ((c_j − c* + ½)/s_j),
    s_j² = Var(c_j) at t̂_j⁺ (:func:`protocols.core.perturbation.debias_counts`); about 0 on empty columns when u*
    is small.

    Parameters
    ----------
    passing : numpy.ndarray
        :func:`passing_columns` of the columns.
    counts : array_like of int
        Column sums.
    n : int
        Number of reports.
    q, p : float
        Pr[report bit 1 | bit 0] and Pr[report bit 1 | bit 1].
    alpha : float
        Level of the lower bound whose threshold is used.

    Returns
    -------
    (float, float)
        K̂ and its standard error.
    """
    counts = np.asarray(counts)
    L = counts.size
    _, u, r = _occupied(passing, L, 1 - alpha / P_GRID.size)
    k = min(max((r - L * u) / (1 - u), 0.0), float(L))
    cut = stats.binom.isf(u, n, q) + 1
    s = np.sqrt(debias_counts(counts, n, p, q)[1]) * (p - q)
    prob = special.ndtr((counts - cut + 0.5) / s)
    var_r = (L - k) * u * (1 - u) + float(np.sum(prob * (1 - prob)))
    return k, math.sqrt(var_r) / (1 - u)


def values_from_empty(empty_fraction: float, L: int, l: int) -> float:
    """D with (1 − 1/L)^{lD} = ``empty_fraction`` (∞ at 0): the fill-ratio inversion.

    Parameters
    ----------
    empty_fraction : float
        Fraction of empty columns.
    L, l : int
        Filter size and hashes per value.

    Returns
    -------
    float

    References
    ----------
    Whang, Vander-Zanden, Taylor, ACM TODS 1990; S. J. Swamidass, P. Baldi, J. Chem. Inf. Model.
    47(3), 2007.
    """
    if empty_fraction <= 0:
        return math.inf
    return math.log(empty_fraction) / (l * math.log1p(-1 / L))


def occupancy_variance(values: float, L: int, l: int) -> float:
    """Variance of the number of occupied columns after l·D uniform hashes (over hash draws):
    L(L − 1)(1 − 2/L)^m + Lπ − L²π², m = lD, π = (1 − 1/L)^m.

    Parameters
    ----------
    values : float
        D.
    L, l : int
        Filter size and hashes per value.

    Returns
    -------
    float
    """
    m = l * values
    pi = (1 - 1 / L) ** m
    return max(L * (L - 1) * (1 - 2 / L) ** m + L * pi - (L * pi) ** 2, 0.0)


def values_slope(empty: float, L: int, l: int) -> float:
    """dD/dK at ``empty`` = L − K empty columns (for the delta method).

    Parameters
    ----------
    empty : float
        Empty columns (floored at 1/2).
    L, l : int
        Filter size and hashes per value.

    Returns
    -------
    float
    """
    return 1 / (max(empty, 0.5) * l * -math.log1p(-1 / L))


def empty_fraction_bound(empty: float, L: int, alpha: float, upper: bool) -> float:
    """One-sided confidence bound on π, the chance that a column stays empty, from ``empty`` of
    L columns, by Chernoff's bound for the empty count: its indicators are negatively
    associated, so its moment generating function is at most that of Binomial(L, π)
    (Dubhashi & Ranjan 1998) and Pr[E <= e] <= exp(−L·KL(e/L ‖ π)) for π > e/L (and
    Pr[E >= e] likewise for π < e/L). The bound solves L·KL(e/L ‖ π) = ln(1/α). (The exact
    binomial tail, Clopper–Pearson, is not a bound here: negative association orders the
    generating functions, not the tails, and the empty count's far upper tail is heavier
    than the binomial's, by 2^{−2s} for L = 2.)

    Parameters
    ----------
    empty : float
        e, the empty columns.
    L : int
        Columns.
    alpha : float
        Error probability.
    upper : bool
        An upper bound on π (True) or a lower one.

    Returns
    -------
    float

    References
    ----------
    D. Dubhashi, D. Ranjan, "Balls and bins: a study in negative dependence", Random Structures
    & Algorithms 13(2), 1998.
    """
    share, level = min(max(empty / L, 0.0), 1.0), -math.log(alpha) / L

    def excess(pi):
        return float(special.rel_entr(share, pi) + special.rel_entr(1 - share, 1 - pi)) - level

    if upper:
        return 1.0 if share >= 1 or excess(1.0) <= 0 else optimize.brentq(excess, share, 1.0, xtol=1e-15)
    return 0.0 if share <= 0 or excess(0.0) <= 0 else optimize.brentq(excess, 0.0, share, xtol=1e-15)


def _waiting_rates(terms: int, L: int, upper: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rates x_i = i/L, i = 0 … ``terms`` − 1, of the geometric waiting times of the coupon
    collector and their multiplicities, in at most :data:`WAITING_TERMS` blocks read at each
    block's largest rate (``upper``: a stochastically larger sum) or its smallest."""
    if terms <= WAITING_TERMS:
        return np.arange(terms) / L, np.ones(terms)
    edges = np.unique(np.linspace(0, terms, WAITING_TERMS + 1).astype(np.int64))
    return (edges[1:] - 1 if upper else edges[:-1]) / L, np.diff(edges).astype(float)


@functools.lru_cache(maxsize=4096)
def slots_at_level(occupied: int, L: int, alpha: float, upper: bool) -> float:
    """Slots (hashes) at which ``occupied`` columns of L is an α-tail event, by the coupon
    collector's waiting time and Chernoff's bound.

    The s slots are uniform and independent, so the columns they take, K_s, pass k when the
    waiting time T_{k+1} = Σ_{i=0}^{k} G_i to the (k + 1)-th new column is at most s, with
    independent geometric G_i of success probability 1 − i/L: Pr[K_s <= k] = Pr[T_{k+1} > s]
    and Pr[K_s >= k] = Pr[T_k <= s]. Chernoff's bound Pr[T >= t(θ)] <= e^{−I(θ)} (θ > 0, and
    Pr[T <= t(θ)] <= e^{−I(θ)} for θ < 0), with Λ(θ) = Σ_i ln E e^{θG_i}, t = Λ′(θ) and
    I = θt − Λ, solved for I = ln(1/α): it has the variance of the exact occupancy law (a
    fraction of the binomial empty count's where the filter is dense). Beyond
    :data:`WAITING_TERMS` terms the rates are read in blocks at their largest (``upper``) or
    smallest, which only widens the bound.

    Parameters
    ----------
    occupied : int
        k, the columns taken.
    L : int
        Columns.
    alpha : float
        Error probability.
    upper : bool
        True: the t with Pr[K_s <= k] <= α for every s >= t (∞ if k >= L); False: the t with
        Pr[K_s >= k] <= α for every s <= t (or k, which every s that takes k columns reaches).

    Returns
    -------
    float
    """
    k = int(occupied)
    if k <= 0:
        return 0.0
    if upper and k >= L:
        return math.inf
    x, w = _waiting_rates(k + 1 if upper else k, L, upper)
    level = -math.log(alpha)

    def excess(theta):                    # I(θ) − ln(1/α), and t(θ)
        r = x * math.exp(theta)
        t = float(np.sum(w / (1 - r)))
        return theta * t - float(np.sum(w * (np.log1p(-x) + theta - np.log1p(-r)))) - level, t

    if upper:
        top = -math.log(x[-1]) + math.log1p(-1e-12)        # r < 1 - 1e-12 in every term
        if excess(top)[0] <= 0:
            return math.inf
        return excess(optimize.brentq(lambda th: excess(th)[0], 0.0, top, xtol=1e-12))[1]
    if -float(np.sum(w * np.log1p(-x))) <= level:          # Pr[T_k = k] >= α: every s >= k stays
        return float(k)
    low = -1.0
    while excess(low)[0] <= 0:
        low *= 2
    return excess(optimize.brentq(lambda th: excess(th)[0], low, 0.0, xtol=1e-12))[1]


def values_lower(occupied: float, L: int, l: int, alpha: float) -> float:
    """Fewest values that occupy ``occupied`` columns with probability >= α, and >= occupied/l.

    The larger of two bounds at α each: the empty count's Chernoff bound on π = (1 − 1/L)^{lD}
    (:func:`empty_fraction_bound`) and the coupon collector's waiting time
    (:func:`slots_at_level`, sharper where the filter is neither nearly empty nor nearly full).
    Both are non-decreasing functions of the one count K, so for every D the K they reject form
    a tail {K >= k_D} that one of them rejects alone: their maximum keeps the level α (no
    Bonferroni).

    Parameters
    ----------
    occupied : float
        Occupied columns.
    L, l : int
        Filter size and hashes per value.
    alpha : float
        Error probability.

    Returns
    -------
    float
    """
    if occupied <= 0:
        return 0.0
    empty = L - occupied
    pi_hi = empty_fraction_bound(empty, L, alpha, upper=True)
    waiting = slots_at_level(math.floor(occupied), L, alpha, False) / l
    return max(values_from_empty(pi_hi, L, l), waiting, occupied / l)


def values_upper(occupied: int, L: int, l: int, alpha: float) -> float:
    """Most values whose hashes all land in ``occupied`` columns, at level α (∞ if all are).

    The smaller of the empty count's Chernoff bound (:func:`empty_fraction_bound`) and the
    coupon collector's (:func:`slots_at_level`), each at α (:func:`values_lower` says why the
    minimum keeps α).

    Parameters
    ----------
    occupied : int
        Occupied columns.
    L, l : int
        Filter size and hashes per value.
    alpha : float
        Error probability.

    Returns
    -------
    float
    """
    empty = L - occupied
    if empty <= 0:
        return math.inf
    binomial = values_from_empty(empty_fraction_bound(empty, L, alpha, upper=False), L, l)
    return min(binomial, slots_at_level(int(occupied), L, alpha, True) / l)


def binomial_upper(alpha: float, trials: ArrayLike, prob: ArrayLike) -> np.ndarray:
    """The 1 − α quantile of Binomial(trials, prob), the least k with Pr[X > k] <= α
    (elementwise), exactly: the survival function (``scipy.special.bdtrc``, accurate where α is
    far below 1 − α's rounding) on :data:`QUANTILE_WINDOW` counts either side of the
    Cornish–Fisher approximation, and a bisection on the same survival function (:func:`_binomial_isf`,
    slower) where the window misses.

    Parameters
    ----------
    alpha : float
        Error probability.
    trials, prob : array_like
        The laws (integer trials).

    Returns
    -------
    numpy.ndarray
    """
    trials, prob = np.asarray(trials, dtype=float), np.asarray(prob, dtype=float)
    if trials.shape != prob.shape:
        trials, prob = np.broadcast_arrays(trials, prob)
    z = -float(special.ndtri(alpha))
    sd = np.sqrt(trials * prob * (1 - prob))
    skew_term = np.where(sd > 0, (1 - 2 * prob) * ((z * z - 1) / 6), 0.0)     # sd · skew · (z² − 1)/6
    guess = np.round(trials * prob + sd * z + skew_term - 0.5)
    k = np.clip(guess[..., None] + _WINDOW_STEPS, 0, trials[..., None])
    reached = special.bdtrc(k, trials.astype(np.int64)[..., None], prob[..., None]) <= alpha
    out = np.asarray(np.where(reached, k, np.inf).min(axis=-1))   # the least count reached
    # the window must hold the step: its first count reached (or 0) and its last count reached
    missed = ~reached[..., -1] | (reached[..., 0] & (k[..., 0] > 0))
    if missed.any():
        out[missed] = _binomial_isf(alpha, trials[missed], prob[missed])
    return out


def _binomial_isf(alpha: float, trials: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """The least k in [0, trials] with Pr[X > k] <= α (``scipy.special.bdtrc``), X ~ Binomial(trials,
    prob), by bisection on the integers (1-D arrays; at most log2(trials) + 1 vector steps)."""
    n = trials.astype(np.int64)
    low, high = np.full(trials.shape, -1.0), trials.copy()   # Pr[X > −1] = 1 > α, Pr[X > trials] = 0
    while np.any(high - low > 1):
        mid = np.floor((low + high) / 2)
        ok = special.bdtrc(mid, n, prob) <= alpha
        high, low = np.where(ok, mid, high), np.where(ok, low, mid)
    return high


@functools.lru_cache(maxsize=4096)
def binomial_upper_beside_normal(alpha: float, trials: int, prob: float, z: float, sd: float) -> float:
    """The least count t at which a Binomial(``trials``, ``prob``) count Y, added beyond t to the
    error of a normal reading bounded at z standard deviations, raises that bound's failure
    probability Φ(−z) by at most α.

    The reading's bound z·σ′ (σ′ >= ``sd``) fails when its normal error X exceeds it. Lowered by
    (Y − t)₊, with X independent of Y, it fails with probability at most E[Φ(−z + (Y − t)₊/sd)]
    = Φ(−z) + cost(t), cost(t) = E[Φ(z) − Φ(z − (Y − t)₊/sd)] = Σ_{y >= 1} Δh(y)·Pr[Y >= t + y],
    Δh(y) = Φ(z − (y − 1)/sd) − Φ(z − y/sd). The sum runs over blocks of y (at most
    :data:`BESIDE_COUNTS`, each at its first y's tail: an upper bound) up to k = mean + 10 sd of Y + 8;
    Pr[Y > k] is charged whole, as is y >= z·sd. Returned is the least block start, from about two sd of
    Y below its mean to k, with cost(t) <= α (all starts' costs in one correlation), or Y's 1 − α
    quantile (:func:`binomial_upper`; there cost <= Pr[Y > t] <= α) if that is less and the least is
    more than two sd of Y above its mean. When ``sd`` is much larger than Y's, t is close to Y's mean
    instead of its far quantile: the two errors add in quadrature, not as two Bonferroni terms.

    Parameters
    ----------
    alpha : float
        The failure probability added to the reading's.
    trials : int
        Y's trials.
    prob : float
        Y's probability.
    z : float
        The reading's bound in standard deviations.
    sd : float
        A lower bound on the sd in the reading's bound (cost only grows as it falls).

    Returns
    -------
    float
    """
    mean, spread = trials * prob, math.sqrt(trials * prob * (1 - prob))
    if not sd > 0 or spread == 0:
        return float(binomial_upper(alpha, trials, prob))
    low = max(math.floor(mean - 2 * spread) - 1, 0)
    last = min(math.ceil(mean + 10 * spread) + 8, trials)
    width = max(math.ceil((last - low + 1) / BESIDE_COUNTS), 1)      # y in blocks of this many
    counts = np.arange(low, last + width, width)
    above = special.bdtrc(np.minimum(counts, trials), trials, prob)  # Pr[Y > k] = Pr[Y >= k + 1]
    edges = width * np.arange(counts.size + 1) / sd                 # past y = z·sd the reading's bound
    rest = np.where(edges < z, special.ndtr(z - edges), 0.0)        # is charged whole (its sd may be less)
    steps = rest[:-1] - rest[1:]                                    # Δh summed over each block
    padded = np.concatenate([above, np.zeros(counts.size)])        # each block at its first y (S falls)
    cost = np.correlate(padded, steps, "valid")[:counts.size] + above[-1]   # beyond ``last``: whole
    feasible = np.flatnonzero(cost <= alpha)
    least = float(counts[feasible[0]]) if feasible.size else math.inf
    return least if least <= mean + 2 * spread else min(least, float(binomial_upper(alpha, trials, prob)))


def bernstein_deviation(variance: float, alpha: float) -> float:
    """t with Pr[S >= E S + t] <= α for a sum S of independent terms each at most 1 above its mean
    and of total variance ``variance`` (Bernstein: exp(−t²/(2(v + t/3))) = α at
    t = c/3 + √(c²/9 + 2vc), c = ln(1/α)); a Poisson count is such a sum in the limit.

    Parameters
    ----------
    variance : float
        The sum's variance.
    alpha : float
        Error probability.

    Returns
    -------
    float
    """
    c = -math.log(alpha)
    return c / 3 + math.sqrt(c * c / 9 + 2 * variance * c)


def beside_normal_range(alpha: float, trials: int, prob: float) -> tuple[float, float]:
    """(low, high) around :func:`binomial_upper_beside_normal` at any reading, without its sums:
    it is at least its first candidate ⌊μ − 2s⌋ − 1 (or Y's 1 − α quantile, at least the median
    ⌊μ⌋), and at most μ + 2s or that quantile, which Bernstein's inequality puts at most at
    ⌈μ + t_α⌉ (:func:`bernstein_deviation`; μ, s: Y's mean and sd).

    Parameters
    ----------
    alpha : float
        The level of :func:`binomial_upper_beside_normal`.
    trials : int
        Y's trials.
    prob : float
        Y's probability.

    Returns
    -------
    (float, float)
    """
    mean, var = trials * prob, trials * prob * (1 - prob)
    quantile = math.ceil(mean + bernstein_deviation(var, alpha))
    return float(max(math.floor(mean - 2 * math.sqrt(var)) - 1, 0)), float(max(mean + 2 * math.sqrt(var), quantile))


@functools.lru_cache(maxsize=4096)
def values_upper_by_collisions(occupied: int, L: int, l: int, alpha: float) -> float:
    """Most values whose hashes all land in ``occupied`` columns, at level α, by their collisions:
    sharper than :func:`values_upper` where the filter is sparse, which it falls back to.

    Hashing the s = lD slots one by one, slot i lands in a column already taken with probability
    at most π_i = min((i − 1)/L, 1) whatever came before, so the collisions C = s − (columns
    taken) are stochastically below a sum of independent Bernoulli(π_i), whose upper tail is below
    that of Binomial(s, μ/s) at the same mean μ = Σ_i π_i beyond μ + 1 (Hoeffding 1956). So
    s − C⁺(s) <= ``occupied`` with C⁺ that binomial's 1 − α quantile; s − C⁺ increases up to
    s = L and then stays near L/2 (μ = s − (L − 1)/2, sd at most (L/2)^{1/2}), above
    ``occupied`` when that is at most L/4 and L >= 1024: there the bound is the first D that
    fails. Where the empty count's binomial law (:func:`values_upper`) is loose by the factor
    (L/D)^{1/2} in standard deviation (D ≪ L), this one is not.

    Parameters
    ----------
    occupied : int
        Occupied columns.
    L, l : int
        Filter size and hashes per value.
    alpha : float
        Error probability.

    Returns
    -------
    float
        The smaller of this bound and :func:`values_upper`, each at α (both are non-decreasing in
        the occupied count, so the minimum keeps the level: :func:`values_lower`).

    References
    ----------
    W. Hoeffding, "On the distribution of the number of successes in independent trials",
    Ann. Math. Statist. 27(3), 1956.
    """
    fallback = values_upper(occupied, L, l, alpha)
    if occupied > L / 4 or L < 1024:
        return fallback

    def fails(s):                          # s − C⁺(s) > K at slot counts s (s <= L)
        return s - binomial_upper(alpha, s, np.maximum(s - 1, 0) / (2 * L)) > occupied

    lo, hi = float(occupied), float(math.ceil(min(fallback * l, L)))
    if hi <= lo or not fails(np.array([hi]))[0]:
        return fallback
    while hi - lo > 1:                     # the first failing s, on grids of 16 steps
        grid = np.unique(np.round(np.linspace(lo, hi, 17)))
        first = int(np.argmax(fails(grid)))
        lo, hi = (grid[first - 1], grid[first]) if first > 0 else (lo, grid[0])
    return min(hi / l, fallback)
