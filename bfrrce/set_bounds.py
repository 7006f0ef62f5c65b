"""Bounds on the size of a union of sets from set-sketch cell sums, whatever the overlap.

Level g of a :class:`bfrrce.SetSketch` receives each of the N union items independently with
probability π_g (its geometric level), so D_g, the items of level g, is Binomial(N, π_g); they
fall into the B buckets uniformly, and a cell's sum over k parties is
c ~ Binomial(m, p) + Binomial(k − m, q), m the parties holding an item of the cell. Nothing is
assumed about m (which parties hold which items, how many, how the sets overlap): per level,
the value bounds of :mod:`bfrrce.estimation.bounds` apply with parties for users and cells
for columns, except that a party holding several items of a cell counts once, so the parties
outside the visible cells bound the occupied cells there, not the items:

lower
    K_g⁻, a lower confidence bound on the occupied cells (any m: :func:`occupied_lower`), gives D_g >= the fewest items that occupy K_g⁻ cells
    (:func:`.estimation.occupancy.values_lower`), and N >= the Poisson lower bound of D_g over π_g.
upper
    An upper confidence bound on the occupied cells K_g (:func:`occupied_upper`: the visible cells
    and the parties outside them, or a weighted count of the cells E_0 φ = 0, E_m φ >= 1 where
    an empty cell's sum has sd below 5); then D_g <= the most items that leave that many cells empty
    (:func:`.estimation.occupancy.values_upper`) and N <= the Poisson upper bound of D_g over π_g.

The bound is the best over the levels, Bonferroni over them (docs/sets.md); a level whose lower
bound exceeds the upper bound is set aside (one of the two has failed).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from protocols.core.lazy import optimize, special
from protocols.core.perturbation import debias_counts

from .estimation import bounds, occupancy
from .estimation.design import Design, Observed

LOWER_SHARES = (0.5, 0.25, 0.25)   # occupied cells, items from cells, N from the level's items
UPPER_SHARES = (0.5, 0.25, 0.25)   # parties outside H, items from cells, N from the level's items
WEIGHT_BINS = 160                  # φ of occupied_weights is constant on this many runs of c ...
WEIGHT_HEAD = 80                   # ... and on each of the first this many sums alone
WEIGHTS_MAX_PARTIES = 1000         # beyond, φ = t̂ (the programme's (k + 1)² law would not fit)


def union_bounds(counts: np.ndarray, parties: int, p: float, q: float, pi: np.ndarray,
                 alpha: float) -> tuple[float, float, dict]:
    """One-sided lower and upper confidence bounds on the union's size N, each at level 1 − α,
    for any overlap of the parties' sets (module docstring).

    Parameters
    ----------
    counts : numpy.ndarray
        Cell sums, levels × buckets (int).
    parties : int
        k, the reports summed.
    p, q : float
        Pr[report bit 1 | cell set] and Pr[report bit 1 | cell not set].
    pi : numpy.ndarray
        π_g, the level probabilities.
    alpha : float
        Error probability of each bound.

    Returns
    -------
    (float, float, dict)
        Lower bound, upper bound (∞ where no level bounds N), and {"lower_level",
        "upper_level", "conflicting_levels"}: the levels that gave them, and those whose lower
        bound exceeded the upper bound (set aside: where every level's bounds hold no lower
        bound exceeds N, so this changes the answer only where one of them has failed, which
        a sparse level's false positive does most, its items multiplied by 1/π_g).
    """
    levels = np.flatnonzero(pi > 0)
    a = alpha / levels.size
    design = Design(parties, p, q, counts.shape[1], 1, "item")
    lows, highs = np.zeros(levels.size), np.zeros(levels.size)
    for i, g in enumerate(levels):
        observed = Observed(counts[g], design)
        lows[i] = _poisson_lower(_level_lower(observed, a), pi[g], a)
        highs[i] = _poisson_upper(_level_upper(observed, a), pi[g], a)
    failed_lows, failed_highs = _fewest_failures(lows, highs)
    lows[failed_lows], highs[failed_highs] = 0.0, math.inf
    hi, lo = int(np.argmin(highs)), int(np.argmax(lows))
    return float(lows[lo]), float(highs[hi]), {"lower_level": int(levels[lo]) if lows[lo] > 0 else None,
                                               "upper_level": int(levels[hi]) if math.isfinite(highs[hi]) else None,
                                               "conflicting_levels": [int(g) for g in levels[failed_lows]],
                                               "failed_upper_levels": [int(g) for g in levels[failed_highs]]}


def _fewest_failures(lows: np.ndarray, highs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the levels' lower and upper bounds to set aside where some lower bound exceeds
    some upper bound: where every bound holds none does, so one of each such pair has failed,
    and the fewest failures that explain every conflict are those of the bounds on the wrong side
    of one cut t, uppers below it and lowers above it, at the cut that sets aside fewest (the
    lowest such cut: a near-empty level's false positive, its items multiplied by 1/π_g, is the
    likelier failure, so on a tie the lower bounds go). Where no bound conflicts, none is set
    aside; the choice matters only where a bound has already failed, so the interval's level
    holds whatever it is (an upper bound fails too: a level's weighted count of occupied cells
    can fall far below them by chance; docs/sets.md)."""
    cuts = np.sort(highs)
    cost = [(int(np.sum(highs < t) + np.sum(lows > t)), i) for i, t in enumerate(cuts)]
    t = cuts[min(cost)[1]]
    return lows > t, highs < t


def _level_lower(observed: Observed, alpha: float) -> float:
    """A lower confidence bound on D_g (the items of one level), from one on its occupied cells
    (:func:`occupied_lower`)."""
    occupied = occupied_lower(observed, LOWER_SHARES[0] * alpha)
    return occupancy.values_lower(occupied, observed.design.L, 1, LOWER_SHARES[1] * alpha)


def occupied_lower(observed: Observed, alpha: float) -> float:
    """Lower confidence bound on the occupied cells of one level at 1 − α, for any holders: the
    larger of the cells that stand out of the null law
    (:func:`bfrrce.estimation.occupancy.occupied_columns_lower`, α/2) and, where an empty cell's
    sum has sd below 5, Σ_j ψ(c_j) − z·σ with ψ = φ/max_m E_m φ (:func:`occupied_weights`:
    E_0 ψ = 0 and E_m ψ <= 1, so E Σ_j ψ(c_j) <= K; σ of :func:`_weighted_bound`; α/2).

    Parameters
    ----------
    observed : Observed
        One level's cell sums.
    alpha : float
        Error probability.

    Returns
    -------
    float
    """
    d = observed.design
    visible = float(occupancy.occupied_columns_lower(observed.passing, d.L, alpha / 2))
    if not bounds.exact_regime(d.n, d.p, d.q) or d.n > WEIGHTS_MAX_PARTIES:
        return visible
    phi, empty_variance = _weights(d.n, d.p, d.q)
    top = float(np.max(_cell_laws(d.n, d.p, d.q)[1:] @ phi))
    z = -float(special.ndtri(alpha / 2))
    return max(visible, _weighted_bound(phi[observed.counts] / top, empty_variance / top ** 2, -z))


def _level_upper(observed: Observed, alpha: float) -> float:
    """An upper confidence bound on D_g (the items of one level), from an upper bound on its
    occupied cells K_g (:func:`items_upper` at the shares :data:`UPPER_SHARES` of α)."""
    return items_upper(observed, UPPER_SHARES[0] * alpha, UPPER_SHARES[1] * alpha)


def items_upper(observed: Observed, alpha_cells: float, alpha_items: float) -> float:
    """Upper confidence bound on the distinct items hashed into the columns of ``observed``, each
    at l of them (``design.l``), whatever the parties that hold them: K⁺ of
    :func:`occupied_upper` at level 1 − ``alpha_cells`` (an occupied column holds at least one
    party's bit), then the most items whose l·D slots leave L − K⁺ columns empty at level
    1 − ``alpha_items`` (:func:`.estimation.occupancy.values_upper`; ∞ where K⁺ reaches L).
    A party's own items share columns like anyone's: the occupancy law counts the distinct
    items, not who holds them. Level 1 − alpha_cells − alpha_items.

    Parameters
    ----------
    observed : Observed
        Column (cell) sums, n = the parties.
    alpha_cells, alpha_items : float
        Error probabilities of the two steps.

    Returns
    -------
    float
    """
    d = observed.design
    cells = occupied_upper(observed, alpha_cells)
    return occupancy.values_upper(min(math.floor(cells), d.L), d.L, d.l, alpha_items)


def occupied_upper(observed: Observed, alpha: float) -> float:
    """Upper confidence bound on the occupied cells of one level at 1 − α, for any holders.

    Where an empty cell's sum has sd σ₀ >= 5: K <= |H| + U⁺, H the cells above the null
    quantile τ that no empty cell passes but with probability :data:`bounds.FALSE_POSITIVE`·α,
    U⁺ an upper bound on the parties in the other cells (an occupied cell holds at least one,
    :func:`bfrrce.estimation.bounds.users_outside_upper`). Below (σ₀ < 5, where a selection bias
    estimated from the cells near τ fails): K <= Σ_j φ(c_j) + z·σ, with φ of
    :func:`occupied_weights` (E_0 φ = 0, E_m φ >= 1 for every m >= 1, so E Σ_j φ(c_j) >= K and
    E Σ_j φ(c_j)² >= its variance; σ of :func:`_weighted_bound`), or φ = t̂ for more than
    :data:`WEIGHTS_MAX_PARTIES` parties.

    Parameters
    ----------
    observed : Observed
        One level's cell sums (design: n = k parties, L = B buckets, l = 1).
    alpha : float
        Error probability.

    Returns
    -------
    float
    """
    d = observed.design
    counts = observed.counts
    if bounds.exact_regime(d.n, d.p, d.q):
        if d.n <= WEIGHTS_MAX_PARTIES:
            phi, empty_variance = _weights(d.n, d.p, d.q)
            weight = phi[counts]
        else:                                       # t̂: E_0 = 0 and E_m = m >= 1 too, no programme
            weight, empty_variance = observed.t_hat, d.n * d.q * (1 - d.q) / (d.p - d.q) ** 2
        return _weighted_bound(weight, empty_variance, -float(special.ndtri(alpha)))
    tau = bounds.null_quantile(bounds.FALSE_POSITIVE * alpha / d.L, d.n, d.q)
    outside = bounds.users_outside_upper(counts, observed.t_hat, observed.variance, n=d.n, p=d.p, q=d.q,
                                         tau=tau, total=None, alpha=(1 - bounds.FALSE_POSITIVE) * alpha)[0]
    return float(np.sum(counts > tau)) + max(outside, 0.0)


def _weighted_bound(weight: np.ndarray, empty_variance: float, z: float) -> float:
    """The bound x on K = the occupied cells from Σ_j w_j, w_j = w(c_j) with E_0 w = 0:
    x = Σ_j w_j + z·σ (z > 0: an upper bound where E_m w >= 1; z < 0: a lower one where E_m w <= 1),
    σ² = max(Σ_j w_j², (L − x)·Var_0 w), so x solves x = Σ w + z·σ(x). The empty cells' share of
    the variance is known exactly, (L − K)·Var_0 w, and the sample's Σ w² alone is not enough:
    where w is large on sums an empty cell rarely reaches, a sparse level short of those cells
    reads a variance too small and the upper bound fell below the occupied cells (1,000 parties,
    ε = 6: 2 of 40 runs)."""
    total, square, cells = float(weight.sum()), float(np.sum(weight * weight)), weight.size
    sample = total + z * math.sqrt(square)
    a = z * z * empty_variance / 2                    # (x − Σw)² = z²·Var_0·(L − x), on x's side of Σw
    exact = total - a + math.copysign(math.sqrt(a * a + 2 * a * max(cells - total, 0.0)), z)
    return max(sample, exact) if z > 0 else min(sample, exact)


@functools.lru_cache(maxsize=64)
def _weights(parties: int, p: float, q: float) -> tuple[np.ndarray, float]:
    """(φ of :func:`occupied_weights`, Var_0 φ: its variance in an empty cell)."""
    phi = occupied_weights(parties, p, q)
    return phi, float(_cell_laws(parties, p, q)[0] @ phi ** 2)


@functools.lru_cache(maxsize=64)
def occupied_weights(parties: int, p: float, q: float) -> np.ndarray:
    """φ(c), c = 0..k: the weights of least variance (averaged over an empty cell and cells of
    m = 1..k holders) with E_0 φ(c) = 0 and E_m φ(c) >= 1 for m = 1..k, c ~ Binomial(m, p) +
    Binomial(k − m, q), φ constant on the runs of c of :func:`_weight_runs`.

    A least-distance programme (min |g|² subject to G g >= h, g = φ scaled by the square root of
    the averaged law), solved exactly by non-negative least squares (C. L. Lawson, R. J. Hanson,
    "Solving least squares problems", 1974, ch. 23: u >= 0 minimising |[G h]ᵀu − e|, then
    g = −r/r_last with r the residual), the equality as two inequalities. The programme is
    always feasible (t̂ = (c − kq)/(p − q) has E_0 = 0, E_m = m); the solution is projected onto
    E_0 φ = 0 and scaled to min E_m φ = 1, and t̂ itself is returned should rounding leave no
    usable solution. Runs of sums that every law puts below rounding (sums near k where p and q
    are near ½) weigh nothing in any E_m φ and are left out of the programme, with φ = 0 there.

    Parameters
    ----------
    parties : int
        k.
    p, q : float
        Pr[report bit 1 | cell set] and Pr[report bit 1 | cell not set].

    Returns
    -------
    numpy.ndarray
        float (k + 1,).
    """
    k = parties
    law = _cell_laws(k, p, q)
    runs = _weight_runs(k)
    binned = np.zeros((k + 1, runs[-1] + 1))
    np.add.at(binned.T, runs, law.T)                      # Pr_m[c in run r]
    scale = np.sqrt(binned[0] + binned[1:].mean(axis=0))   # Σ_r spread_r φ_r² = |g|²
    reached = scale > 0              # runs of sums that every law puts below rounding: φ = 0 there
    empty, held, scale = binned[0, reached], binned[1:, reached], scale[reached]
    system = np.vstack([held, empty, -empty]).T / scale[:, None]       # Gᵀ, G g >= (1, …, 1, 0, 0)
    system = np.vstack([system, np.concatenate([np.ones(k), [0.0, 0.0]])])
    target = np.zeros(system.shape[0])
    target[-1] = 1.0
    residual = system @ optimize.nnls(system, target, maxiter=50 * system.shape[1])[0] - target
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = -residual[:-1] / residual[-1] / scale
    phi -= (empty @ phi) / (empty @ empty) * empty              # E_0 φ = 0 and E_m φ >= 1 to rounding
    least = float((held @ phi).min())
    if not (np.isfinite(phi).all() and least > 0):
        return debias_counts(np.arange(k + 1), k, p, q)[0]
    weights = np.zeros(reached.size)
    weights[reached] = phi / least
    return weights[runs]


def _weight_runs(k: int) -> np.ndarray:
    """The run of each c = 0..k on which φ is constant: :data:`WEIGHT_BINS` runs of equal length,
    the first :data:`WEIGHT_HEAD` sums each a run of its own (in the exact regime, where the
    weights serve, an empty cell's sums lie there, k·q < 26, and one holder's shift by about p
    must be told apart from none: on runs of several sums the two fall together and φ needs huge
    values elsewhere, so the bounds lose all width)."""
    c = np.arange(k + 1)
    runs = np.where(c < WEIGHT_HEAD, c, WEIGHT_HEAD + np.minimum(c * WEIGHT_BINS // (k + 1), WEIGHT_BINS - 1))
    return np.unique(runs, return_inverse=True)[1]


@functools.lru_cache(maxsize=64)
def _cell_laws(parties: int, p: float, q: float) -> np.ndarray:
    """Pr_m[c], m, c = 0..k: c ~ Binomial(m, p) + Binomial(k − m, q) (rows m; the law of a
    report's weight, :func:`bfrrce.poisoning.weight_pmf`, with k bits of which m are set).

    All rows at once from the generating function (1 − p + pz)^m (1 − q + qz)^{k−m} evaluated at
    the n >= k + 1 roots of unity and inverted by one real FFT per row (degree k < n: no
    wrap-around); absolute error below 1e-13 at k = 1,000 (tests), negatives of rounding cut to 0."""
    k = parties
    size = 1 << k.bit_length()                                   # a power of two above k
    z = np.exp(-2j * np.pi * np.arange(size // 2 + 1) / size)     # rfft's points
    m = np.arange(k + 1)[:, None]
    laws = np.fft.irfft(np.exp(m * np.log(1 - p + p * z) + (k - m) * np.log(1 - q + q * z)), size, axis=1)
    return np.maximum(laws[:, :k + 1], 0.0)


def _poisson_lower(items: float, pi: float, alpha: float) -> float:
    """N >= this when D_g >= ``items``: D_g ~ Binomial(N, π) is below a Poisson(Nπ) in spread, so
    the Garwood bound Γ⁻¹(items; α)/π is conservative."""
    if items <= 0:
        return 0.0
    return float(special.gammaincinv(items, LOWER_SHARES[2] * alpha)) / pi


def _poisson_upper(items: float, pi: float, alpha: float) -> float:
    """N <= this when D_g <= ``items`` (the Garwood bound Γ⁻¹(items + 1; 1 − α)/π)."""
    if not math.isfinite(items):
        return math.inf
    return float(special.gammaincinv(math.floor(items) + 1, 1 - UPPER_SHARES[2] * alpha)) / pi
