"""The number of values when they have about equal frequencies: a likelihood estimate.

Model: D values held by N/D users each on average (N the total count, n with one value per
user), each hashed to l columns at random. Poissonized, the number of values in a column is
k ~ Poisson(λ), λ = mD/L with m = L(1 − (1 − 1/L)^l) <= l the mean number of a value's distinct
columns (its l hashes may repeat one), independently across columns; a column holding k values
has t users with mean kN/D and variance φ·kN/D, and its sum is
c = Binomial(t, p) + Binomial(n − t, q). φ is the dispersion: 0 for exactly equal frequencies,
1 for values that users pick at random; :data:`DISPERSION` = 0.5 where the noise hides the
spread of a value's users, else the profile-likelihood fit where that is smaller (a φ above
the data's overcounts and overstates the spread; a fit above 0.5 says the frequencies are
skewed, where no φ makes the model right). The log-likelihood of the column sums is
Σ_j log Σ_k Pois(k; λ)·Pr[c_j | k]. Empty columns (k = 0) use the exact Binomial(n, q) law;
k >= 1 an Edgeworth-corrected normal with the first three cumulants of c, since the right
tail of the empty columns, which a plain normal law misses when nq is small, is where they
meet the rarest values. The model uses every column's sum, not only whether it passes a
threshold, and knows that a column holding two values holds twice the users: it counts
collisions instead of correcting for them on average. De-Poissonized (:meth:`_Likelihood.
_depoissonize`), it also knows that the columns' counts of values add up to the D values'
distinct columns, which pins D where the sums tell those counts apart.

The estimate is the posterior median of D under a flat prior on log D over [0, log N],
computed on grids of log D that zoom in on the highest peak (the grids also hold simple
estimates of D, since with values far above the noise the likelihood is a comb of narrow
peaks, D and aliases such as 2D, that a grid can step over): first of the Poissonized model,
then of the de-Poissonized one around it (:func:`_pin`) where the sums tell a column's count
of values apart and the frequencies are not skewed. Where the posterior's mode is D = N (every
user alone) and its spread below :data:`AT_MASS_SPREAD`·N, the estimate is N instead: a median
is pulled below a boundary its mode sits on, by most of its spread in every draw, and the
spread is the posterior's root mean square distance from N (docs/estimation.md, "Posterior"). Its
spread is the half distance between the posterior's 15.9% and 84.1% quantiles: where the
data locate D, the maximum likelihood estimate and its standard error (Bernstein–von Mises);
where the likelihood is nearly flat, as at low ε or with a full filter, a value inside the
range instead of one of its ends, and a spread that says the data do not know. See
docs/estimation.md.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from protocols.core.lazy import special, stats
from protocols.core.perturbation import debias_counts

from . import moments

if TYPE_CHECKING:
    from .design import Design

BIN_SIGMAS = 8          # counts are grouped in bins of an eighth of a one-value column's sd there
BINCOUNT_RANGE = 4      # bins counted directly while their range is below this many per column
TAIL_SIGMAS = 6         # components k <= λ + 6√λ + 3 (the rest weigh < e^{-18} at λ <= 8)
MIN_CORRECTION = 1e-3   # floor of the Edgeworth factor (it turns negative far in the tails)
COLLAPSE_ABOVE = 8.0    # values per column beyond which the Poisson mixture is one component
GRID_POINTS = 16        # log D points per zooming grid
FINAL_POINTS = 48       # log D points of the last grid, on the part that holds the posterior
ZOOMS = 4               # grids at most
DISPERSION = 0.5        # variance of a value's users over their mean: 0 equal, 1 Poisson
RANDOM_PICKS = 1.0      # φ of values that users pick at random; a larger fit means skew
DISPERSIONS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)   # the φ the profile likelihood chooses from
FIT_DISPERSION_ABOVE = 0.25   # fit φ where (p − q)²f exceeds this share of a column's noise variance
FIT_DISPERSION_USERS = 10     # ... and values have at least this many users each on average
PROFILE_POINTS = 8      # log D points of the last grid at which each φ is scored
POSTERIOR_QUANTILES = (0.158655, 0.5, 0.841345)   # median ± one normal standard deviation
DETECTED_TAIL = 0.05    # columns above the null's 1 − this/L quantile set the anchors f̂
LATTICE_VARIANCE = 1 / 12   # Sheppard's correction: an integer count read as a continuous one
PIN_SEPARATION = 3.0    # pin where a column's sum separates k values from k + 1 by this many sd
ANCHOR_STEPS = 6        # fixed-point steps from each simple estimate (most settle in one or two)
PIN_WINDOW = 3          # the pinned posterior is sought this many Poissonized widths around
IMPLIED_SETTLED = 1e-4  # a fixed-point step that moves log D by less than this has settled
IMPLIED_STEPS = 2       # fixed-point steps from each anchor to the D the column sums imply
LOG_NEGLIGIBLE = -700.0  # log-terms below this are raised to it before exp: e^-700 < 10^-304 of the
                         # largest term changes no sum
AT_MASS_SPREAD = 0.1   # a posterior whose mode is D = N and whose spread is below this share of N
                       # reads N (module docstring)
KEEP_WITHIN = 15.0      # −log-likelihood above its minimum by more than this has weight < 1e-6


def column_law_parts(c: np.ndarray, t: np.ndarray, n: int, p: float, q: float,
                     dispersion: float = DISPERSION) -> tuple[np.ndarray, np.ndarray]:
    """log Pr[c | t] for c = Binomial(t, p) + Binomial(n − t, q), t having mean t and variance
    φt, every c against every t > 0, in two parts whose logarithms add up to it: the log of the
    normal density and the Edgeworth factor (a caller that exponentiates saves the logarithm of
    the factor).

    The normal density with the Edgeworth term of the third cumulant,
    φ(z)(1 + κ₃/(6σ³)(z³ − 3z))/σ, the factor floored at :data:`MIN_CORRECTION`;
    κ₁ = tp + (n − t)q, κ₂ = tp(1 − p) + (n − t)q(1 − q) + φ(p − q)²t,
    κ₃ = tp(1 − p)(1 − 2p) + (n − t)q(1 − q)(1 − 2q) + φ(p − q)³t. (For t = 0 the law is
    Binomial(n, q), which the likelihood uses exactly.)

    Parameters
    ----------
    c : numpy.ndarray
        Column sums (U,).
    t : numpy.ndarray
        Users in the column (K,), in (0, n].
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    dispersion : float
        φ, the variance of a value's users over their mean.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        (U, K) log φ(z)/σ and (U, K) factors.

    References
    ----------
    W. Feller, *An Introduction to Probability Theory and Its Applications* II, ch. XVI
    (Edgeworth expansion).
    """
    t = np.asarray(t, dtype=float)
    mean = t * p + (n - t) * q
    var = t * p * (1 - p) + (n - t) * q * (1 - q) + dispersion * (p - q) ** 2 * t
    third = (t * p * (1 - p) * (1 - 2 * p) + (n - t) * q * (1 - q) * (1 - 2 * q)
             + dispersion * (p - q) ** 3 * t)
    return _edgeworth_parts(c, mean, var, third)


def _edgeworth_log_density(c, mean, var, third):
    """log[φ(z)(1 + κ₃/(6σ³)(z³ − 3z))/σ], the correction floored at :data:`MIN_CORRECTION`, for
    every c (U,) against every law with mean, variance σ² and third cumulant κ₃ (K,): (U, K)."""
    out, factor = _edgeworth_parts(c, mean, var, third)
    out += np.log(factor, out=factor)
    return out


def _edgeworth_parts(c, mean, var, third):
    """log[φ(z)/σ] and the floored correction 1 + κ₃/(6σ³)(z³ − 3z) apart, (U, K) each (a
    caller that exponentiates saves the logarithm of the correction)."""
    z = np.asarray(c, dtype=float)[:, None] - mean
    z *= 1 / np.sqrt(var)
    z2 = z * z
    factor = z2 - 3                           # in place from here: this is the estimate's hot loop
    factor *= z
    factor *= third / var ** 1.5 / 6
    factor += 1
    np.maximum(factor, MIN_CORRECTION, out=factor)
    z2 *= -0.5
    z2 -= 0.5 * np.log(2 * math.pi * var)
    return z2, factor


class EqualFrequency(NamedTuple):
    """The result of :func:`equal_frequency_estimate`."""

    value: float
    """Posterior median of D (N where the posterior's mode is N and its spread small)."""
    spread: float
    """Half the distance between the posterior's 15.9% and 84.1% quantiles (the standard
    deviation when the posterior is normal; the posterior of D has a long right tail where the
    data say little, which would swamp its moments); where ``value`` is N, the posterior's root
    mean square distance from N."""
    dispersion: float
    """The φ used: the fitted one where it is below :data:`DISPERSION`, else that."""
    fitted: float
    """φ of :data:`DISPERSIONS` with the highest profile likelihood where the data tell it
    (values with at least :data:`FIT_DISPERSION_USERS` users each on average, far enough above
    the noise that (p − q)²f > :data:`FIT_DISPERSION_ABOVE` times a column's noise variance),
    else NaN."""
    occupied: float
    """Σ_j Pr[k_j >= 1 | c_j] at the median, the occupied columns the pinned model reads
    (NaN where it was not pinned, or in the collapsed branch)."""
    occupied_se: float
    """Its standard deviation, (Σ_j Pr[k_j >= 1 | c_j](1 − Pr[k_j >= 1 | c_j]))^{1/2}."""


def _count_bins(counts: np.ndarray, n: int, p: float, q: float) -> np.ndarray:
    """The bin of each column sum: bins of width w(c) = max(s(c)/:data:`BIN_SIGMAS`, 1), s(c)
    the sd of a column's sum at c when it holds t = (c − nq)/(p − q) users,
    s² = nq(1 − q) + B·(c − nq)⁺ with B = (p(1 − p) − q(1 − q))/(p − q) (taken >= 0): the
    integer part of g(c) = ∫ dc/w(c), which is 8u/s₁ up to u* = (c − nq at s = s₁) and
    8u*/s₁ + 16(s(c) − s₁)/B above, u = c − nq, s₁ = max(s₀, 8). A bin spans an eighth of
    the sd of the laws that meet there (σ₀/8 among the empty columns, wider among heavy
    ones, one count where s < 8), so reading it at its mean count changes the log-likelihood
    by O(1/128) of a count's curvature. The square-root term is computed as
    16(u − u*)/(s(c) + s₁), which does not divide by B: symmetric flips have B = 0, and p and q
    computed in floating point leave B of order 10⁻¹⁷ instead, where (s(c) − s₁)/B cancels."""
    a, b = n * q * (1 - q), max((p * (1 - p) - q * (1 - q)) / (p - q), 0.0)
    low = max(math.sqrt(a), BIN_SIGMAS)
    u = counts - n * q
    knee = 0.0 if math.sqrt(a) >= BIN_SIGMAS else (low * low - a) / b if b > 0 else math.inf
    if knee == math.inf:
        return np.floor(BIN_SIGMAS * u / low)
    over = np.maximum(u, knee)
    above = BIN_SIGMAS * knee / low + 2 * BIN_SIGMAS * (over - knee) / (np.sqrt(a + b * over) + low)
    return np.floor(np.where(u <= knee, BIN_SIGMAS * u / low, above))


class _Likelihood:
    """−log-likelihood of the model at many values of log D at once, for one set of column sums:
    the counts grouped in bins (:func:`_count_bins`) read at their mean, the exact law of the
    empty columns computed once. Where λ > :data:`COLLAPSE_ABOVE`, the column mass (k values of f = N/D users
    each, k ~ Poisson(λ)) is taken as one component with its first three cumulants, λf,
    λ(f² + φf) and λ(f³ + 3φf² + φf), instead of a mixture over k."""

    def __init__(self, counts, design, mass, *, pinned=False, dispersion=None):
        n, p, q, L, l = design.n, design.p, design.q, design.L, design.l
        counts = np.asarray(counts)
        bins = _count_bins(counts, n, p, q).astype(np.int64)
        bins -= bins.min()
        if bins.max() > BINCOUNT_RANGE * bins.size:    # sparse bins (symmetric flips: B = 0)
            _, bins = np.unique(bins, return_inverse=True)
            bins = bins.reshape(-1)
        weights = np.bincount(bins)
        used = weights > 0
        self.weights = weights[used]
        self.values = np.bincount(bins, weights=counts.astype(float))[used] / self.weights
        self.empty = stats.binom.logpmf(np.round(self.values), n, q)
        self.n, self.p, self.q, self.L, self.l, self.mass = n, p, q, L, l, mass
        # a value's l hashes may repeat a column: X = its distinct columns has mean L·P₁ and
        # variance L·P₁ + L(L − 1)·P₂ − (L·P₁)², P₁ = 1 − (1 − 1/L)^l, P₂ = 1 − 2(1 − 1/L)^l + (1 − 2/L)^l
        miss, miss2 = (1 - 1 / L) ** l, (1 - 2 / L) ** l if L > 1 else 0.0
        self.columns = L * (1 - miss)
        self.columns_var = max(self.columns + L * (L - 1) * (1 - 2 * miss + miss2) - self.columns ** 2, 0.0)
        self.dispersion = DISPERSION if dispersion is None else dispersion     # read when called
        self.pinned = pinned            # add the step to the true occupancy (_depoissonize)

    def mode(self, *, pinned: bool | None = None, dispersion: float | None = None) -> _Likelihood:
        """The same likelihood (sharing the grouped sums) with the de-Poissonized step on or off
        (``pinned``) or another φ (``dispersion``); None keeps the present one."""
        out = copy.copy(self)
        out.pinned = self.pinned if pinned is None else pinned
        out.dispersion = self.dispersion if dispersion is None else dispersion
        return out

    def __call__(self, log_d: np.ndarray) -> np.ndarray:
        D = np.exp(np.asarray(log_d, dtype=float))
        lam, f = self.columns * D / self.L, self.mass / D
        out, self.implied = np.empty(D.size), np.empty(D.size)
        self.occupied = np.full((2, D.size), np.nan)     # Σ_j Pr[k_j >= 1 | c] and its variance
        mixed = lam <= COLLAPSE_ABOVE
        if mixed.any():
            out[mixed], self.implied[mixed], self.occupied[:, mixed] = self._mixture(lam[mixed], f[mixed])
        if (~mixed).any():
            out[~mixed], self.implied[~mixed] = self._collapsed(lam[~mixed], f[~mixed])
        return out

    def _mixture(self, lam, f):
        """Σ_k over k = 0 … λ + 6√λ + 3: k = 0 by the exact law of an empty column, k >= 1 as
        (k, grid point) pairs laid end to end."""
        sizes = (lam + TAIL_SIGMAS * np.sqrt(lam) + 3).astype(int)          # k = 1 … this
        point = np.repeat(np.arange(lam.size), sizes)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        k = np.arange(1, point.size + 1) - starts[point]
        log_prior = k * np.log(lam[point]) - special.gammaln(k + 1)         # e^{−λ} taken out
        # log φ(z)/σ and the Edgeworth factor of every (count, k) pair
        law, factor = column_law_parts(self.values, np.minimum(k * f[point], self.n),
                                        self.n, self.p, self.q, self.dispersion)
        law += log_prior
        empty = self.empty[:, None]
        top = np.maximum(np.maximum.reduceat(law, starts, axis=1), empty)  # the factor is >= 10^-3
        law -= top[:, point]
        none = empty - top
        for part in (law, none):        # raised to LOG_NEGLIGIBLE: exp is ~10x slower where it underflows
            np.maximum(part, LOG_NEGLIGIBLE, out=part)
            np.exp(part, out=part)
        law *= factor
        total = np.add.reduceat(law, starts, axis=1) + none
        out = -(self.weights @ (top + np.log(total))) + self.weights.sum() * lam
        if not self.pinned:
            return out, np.full(lam.size, np.nan), np.full((2, lam.size), np.nan)
        law /= total[:, point]                                               # Pr[k | c_j], k >= 1
        first = np.add.reduceat(law * k, starts, axis=1)
        spread = np.add.reduceat(law * (k * k), starts, axis=1) - first * first
        first = self.weights @ first
        occupied = 1 - none / total                                          # Pr[k >= 1 | c_j]
        return (out + self._depoissonize(lam, first, self.weights @ spread), first / self.columns,
                np.stack([self.weights @ occupied, self.weights @ (occupied * (1 - occupied))]))

    def _collapsed(self, lam, f):
        n, p, q = self.n, self.p, self.q
        mass = f * lam
        mean = n * q + (p - q) * mass
        phi = self.dispersion
        var = mass * p * (1 - p) + (n - mass) * q * (1 - q) + (p - q) ** 2 * lam * (f * f + phi * f)
        k3 = (mass * p * (1 - p) * (1 - 2 * p) + (n - mass) * q * (1 - q) * (1 - 2 * q)
              + (p - q) ** 3 * lam * (f ** 3 + 3 * phi * f * f + phi * f))
        out = -(self.weights @ _edgeworth_log_density(self.values, mean, var, k3))
        if not self.pinned:
            return out, np.full(lam.size, np.nan)
        # Pr[k | c_j] by the normal prior N(λ, λ) and the slope a = (p − q)f of c in k, with the
        # variance of c less the part k brings, a²λ
        a = (p - q) * f
        noise = np.maximum(var - a * a * lam, 1e-12)
        shrink = 1 / (1 / lam + a * a / noise)
        first = self.L * lam + shrink * a / noise * (self.weights @ (self.values[:, None] - mean))
        return out + self._depoissonize(lam, first, self.L * shrink), first / self.columns

    def separated(self, log_d: float) -> bool:
        """Whether a column's sum tells k values from k + 1 at D: the step (p − q)N/D is at least
        :data:`PIN_SEPARATION` standard deviations of a one-value column's sum (with
        :data:`DISPERSION`). Below, the de-Poissonized model changes S by less than its noise
        (10,000 users, 122 values of 82, ε = 4: separation 2.8; with it, 100 hash draws gave mean
        124.0 and sd 7.0, without 124.2 and 7.1) and is not sought."""
        n, p, q = self.n, self.p, self.q
        f = self.mass / math.exp(log_d)
        var = f * p * (1 - p) + (n - f) * q * (1 - q) + DISPERSION * (p - q) ** 2 * f
        return bool((p - q) * f >= PIN_SEPARATION * math.sqrt(max(var, 1e-300)))

    def _depoissonize(self, lam, first, spread):
        """−log of Pr[Σ_j k_j = mD | c]/Pr[Σ_j k_j = mD], the step from the Poissonized model (k_j
        independent, Σ_j k_j ~ Poisson(mD)) to the true one (D values, Σ_j k_j the sum of the D
        values' numbers of distinct columns, mean mD and variance vD with m = L(1 − (1 − 1/L)^l)
        since a value's l hashes may repeat a column), with Σ_j k_j given the sums normal with the
        summed posterior moments of the k_j (``first``, ``spread``), widened by vD, and both
        laws widened by 1/12 for the integer steps of Σ_j k_j. Where the sums
        tell the k_j of the columns apart, this pins D to Σ_j k_j/m; the Poisson law alone would
        leave it the spread √(mD) of a Poisson count."""
        total = self.L * lam
        var = spread + LATTICE_VARIANCE + total / self.columns * self.columns_var
        return 0.5 * np.log(var / (total + LATTICE_VARIANCE)) + (total - first) ** 2 / (2 * var)


def _anchors(counts, design, mass, s2=None):
    """log D of three simple estimates under equal frequencies, where they exist, kept in
    [0, log N]: N/f̂ with f̂ the median t̂_j of the columns that pass the Bonferroni test of
    emptiness (above the 1 − :data:`DETECTED_TAIL`/L quantile of Binomial(n, q); in a sparse
    filter most hold one value), N/f̂ with f̂ the mean t̂_j of the lightest of them (within 1.5 times the lightest;
    in a full filter these hold one value), and the moment estimate
    N²(l − l²/L)/(Ŝ₂ − N² l²/L), from E Ŝ₂ = l N f + (N² − N f) l²/L with f = N/D
    (:func:`.moments.second_moment`)."""
    n, p, q, L, l = design.n, design.p, design.q, design.L, design.l
    t_hat, var_hat = debias_counts(counts, n, p, q)
    detected = t_hat[np.asarray(counts) > stats.binom.isf(DETECTED_TAIL / L, n, q)]
    if s2 is None:
        s2 = moments.second_moment(t_hat, var_hat, n, p, q)[0]
    excess, scale = s2 - mass * mass * l * l / L, l - l * l / L
    light = detected[detected <= 1.5 * detected.min()] if detected.size else detected
    found = [mass / np.median(detected), mass / light.mean()] if detected.size else []
    found += [mass * mass * scale / excess] if excess > 0 and scale > 0 else []
    return [min(max(math.log(d), 0.0), math.log(mass)) for d in found]


def _implied(nll, anchors, top, steps=IMPLIED_STEPS):
    """The anchors (log D) and, from each, :data:`IMPLIED_STEPS` steps of D ← Σ_j E[k_j | c]/m,
    the number of values the column sums imply at D (``nll.implied``, of the pinned model):
    where the sums tell the k_j apart the pinned likelihood peaks where D equals it, in a peak
    narrower than a grid step, and from within a few percent of D one step lands in it."""
    found, step = list(anchors), np.asarray(anchors, dtype=float)
    for _ in range(steps if step.size else 0):
        nll(step)
        moved = np.clip(np.log(np.maximum(nll.implied, 1.0)), 0.0, top)
        keep = np.abs(moved - step) > IMPLIED_SETTLED                 # the rest have settled
        found += moved[keep].tolist()
        step = moved[keep]
        if not step.size:
            break
    return found


def _zoom(nll, lo, hi, anchors=()):
    """The run of grid points around the minimum of −log-likelihood where it stays within
    :data:`KEEP_WITHIN` of it (one grid step wider each side), found on grids of
    :data:`GRID_POINTS` that zoom in until the run covers half of the grid; then
    :data:`FINAL_POINTS` on it, with their values (a coarse last grid would smear the posterior
    quantiles).

    Every grid also holds the ``anchors`` (:func:`_anchors`) that lie inside it. Where values
    are far above the noise, the likelihood is a comb of peaks narrower than a grid step (D,
    and aliases such as 2D, two values of half the users in every occupied column): a grid
    that steps over the highest peak zooms in on an alias (100,000 users, 30 values, ε = 4,
    L = 1024: 60.1 ± 0.37 without the anchors), and one that keeps every point within
    :data:`KEEP_WITHIN`, peaks of the comb apart, stops zooming before it resolves any (10^7
    users, 3 values, ε = 8, L = 16, l = 2: 6.02 ± 0.07, the alias 12 nats below). A point
    more can only lower the grid's minimum; a peak apart from the run of the highest is left
    out (the alias above, with e^{−12} of its density)."""
    for _ in range(ZOOMS):
        grid = np.union1d(np.linspace(lo, hi, GRID_POINTS), [a for a in anchors if lo < a < hi])
        values = nll(grid)
        best = int(np.argmin(values))
        far = np.flatnonzero(values - values[best] > KEEP_WITHIN)
        cut = np.searchsorted(far, best)
        first = far[cut - 1] + 1 if cut > 0 else 0
        last = far[cut] - 1 if cut < far.size else grid.size - 1
        lo, hi = grid[max(first - 1, 0)], grid[min(last + 1, grid.size - 1)]
        if last - first >= GRID_POINTS // 2 or hi <= lo:
            break
    grid = np.linspace(lo, hi, FINAL_POINTS) if hi > lo else grid
    return grid, nll(grid)


def _fit_dispersion(nll, grid, values, anchors):
    """The φ of :data:`DISPERSIONS` with the highest profile likelihood, scored at
    :data:`PROFILE_POINTS` points of the last grid; where it is below :data:`DISPERSION`, the
    last grid and −log-likelihood at that φ (zoomed anew inside the old one); and the
    likelihood at the φ kept (min(φ, :data:`DISPERSION`)). Where values are far above the
    noise, the spread of the sums of the columns that hold one value measures φ: a φ above the data's overstates the spread of the estimate and
    overcounts exactly equal frequencies. A fit above :data:`DISPERSION` says the frequencies
    are skewed, where the model is wrong whatever φ; the estimate keeps φ = 0.5 there (with the
    fitted φ, up to 8, it undercounted more: frequencies 1..100, ε = 8, L = 4096: 260 for 300
    values against 298, 20 runs in tests/bfrrce/estimation/test_likelihood.py)."""
    at = np.linspace(0, grid.size - 1, PROFILE_POINTS).round().astype(int)
    points = grid[at]
    best, best_value = nll.dispersion, values[at].min()
    for phi in DISPERSIONS:
        if phi != best:
            value = nll.mode(dispersion=phi)(points).min()
            if value < best_value:
                best, best_value = phi, value
    kept = nll.mode(dispersion=min(best, DISPERSION))
    if best >= DISPERSION:
        return grid, values, best, kept
    return (*_zoom(kept, grid[0], grid[-1], anchors), best, kept)


def equal_frequency_estimate(counts: np.ndarray, design: Design, mass: float,
                             second_moment: float | None = None) -> EqualFrequency:
    """Posterior median of D under about equal frequencies, its spread and the dispersion φ
    used (module docstring).

    Parameters
    ----------
    counts : numpy.ndarray
        Column sums c_j (L,).
    design : Design
        Their parameters.
    mass : float
        N, the total count of the values (n with one value per user); D ranges over [1, N].
    second_moment : float, optional
        Ŝ₂ of the same sums (:func:`.moments.second_moment`), when already computed.

    Returns
    -------
    EqualFrequency
        (value, spread, dispersion, fitted).
    """
    top = math.log(max(mass, 1.0))
    if top <= 0:
        return EqualFrequency(1.0, 0.0, DISPERSION, math.nan, math.nan, math.nan)
    n, p, q, L = design.n, design.p, design.q, design.L
    nll = _Likelihood(counts, design, mass)
    anchors = _anchors(counts, design, mass, second_moment)
    edge = min(math.log(COLLAPSE_ABOVE * L / nll.columns) - 1e-3, top)     # the mixture's last λ
    starts = [a for a in anchors + [edge] if nll.separated(a)]
    if starts:                             # and the D the sums imply from them, pinned
        anchors += _implied(nll.mode(pinned=True), starts, top, steps=ANCHOR_STEPS)[len(starts):]
    grid, values = _zoom(nll, 0.0, top, anchors)                 # Poissonized
    f = mass / math.exp(grid[np.argmin(values)])
    fit = math.nan
    if (f >= FIT_DISPERSION_USERS and
            (p - q) ** 2 * f > FIT_DISPERSION_ABOVE * (f * p * (1 - p) + (n - f) * q * (1 - q))):
        grid, values, fit, nll = _fit_dispersion(nll, grid, values, anchors)
    if nll.separated(grid[np.argmin(values)]) and not fit > RANDOM_PICKS:    # NaN: not fitted
        nll = nll.mode(pinned=True)
        grid, values = _pin(nll, grid, values, top)
    low, median, high = _quantiles(grid, values)
    spread = float(high - low) / 2
    if grid[np.argmin(values)] >= top - 1e-9 and spread <= AT_MASS_SPREAD * mass:
        median, spread = mass, _distance_from_top(grid, values)
    occupied, occupied_var = math.nan, math.nan
    if nll.pinned:                         # the last call was the pinned search's last grid
        occupied, occupied_var = (float(np.interp(math.log(median), grid, row)) for row in nll.occupied)
    return EqualFrequency(float(median), spread, nll.dispersion, fit, occupied,
                          math.sqrt(max(occupied_var, 0.0)) if not math.isnan(occupied_var) else math.nan)


def search_deficit(counts: np.ndarray, estimate: EqualFrequency, D: float, design: Design,
                   mass: float) -> float:
    """−log-likelihood of the de-Poissonized model at ``estimate.value`` minus at D (with the
    estimate's φ): above :data:`KEEP_WITHIN` the search missed the peak at a known true D
    (tests/bfrrce/estimation/test_likelihood.py, benchmarks/likelihood_search.py).

    Parameters
    ----------
    counts : numpy.ndarray
        As for :func:`equal_frequency_estimate`.
    estimate : EqualFrequency
        Its result on ``counts``.
    D : float
        The true number of values.
    design, mass
        As for :func:`equal_frequency_estimate`.

    Returns
    -------
    float
        The deficit in nats (negative where S is likelier than D).
    """
    nll = _Likelihood(counts, design, mass, pinned=True, dispersion=estimate.dispersion)
    at_s, at_d = nll(np.log([estimate.value, D]))
    return float(at_s - at_d)


def _distance_from_top(grid, values):
    """(E[(N − D)²])^{1/2} under the posterior on the grid of log D whose last point is log N (the
    last grid is even in log D, as :func:`_quantiles` takes it)."""
    weight = np.exp(values.min() - values)
    d = np.exp(grid)
    return float(math.sqrt(np.sum(weight * (d[-1] - d) ** 2) / np.sum(weight)))


def _quantiles(grid, values):
    """The posterior's :data:`POSTERIOR_QUANTILES` of D from −log-likelihood on a grid of log D."""
    weight = np.exp(values.min() - values)
    cdf = np.concatenate([[0.0], np.cumsum(weight[1:] + weight[:-1])])     # trapezoids
    cdf /= cdf[-1]
    return np.exp(np.interp(POSTERIOR_QUANTILES, cdf, grid))


def _pin(nll, grid, values, top):
    """The last grid and −log-likelihood of the de-Poissonized model (``nll``, pinned), zoomed
    within :data:`PIN_WINDOW` posterior widths of the Poissonized posterior, from its median
    and the D the sums imply there (:func:`_implied`). The pinned peak can be narrower than any
    grid step (±0.3 values at D = 8,000), which a search over the whole range misses."""
    low, median, high = np.log(_quantiles(grid, values))
    width = max(high - low, 1e-6)
    return _zoom(nll, max(low - PIN_WINDOW * width, 0.0), min(high + PIN_WINDOW * width, top),
                 _implied(nll, [median], top))
