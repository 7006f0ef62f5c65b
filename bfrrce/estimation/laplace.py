"""A lower bound on the number of distinct values from the empirical Laplace transform of the column sums.

For z = e^θ, θ < 0, a column's sum c_j given the users t_j with its bit has
E[z^{c_j} | t_j] = (1 − q + qz)^n·ρ^{t_j}, ρ = (1 − p + pz)/(1 − q + qz) ∈ (0, 1), and with the
values hashed at random (each of a value's l hashes uniform, independently of the others), a value
of f users is in column j with probability P₁ = 1 − (1 − 1/L)^l, independently across values, so

    M(z) = E[(1/L)·Σ_j z^{c_j}] = (1 − q + qz)^n·Π_v (1 − P₁(1 − ρ^{f_v})),
    G(z) = −L·log(M(z)/(1 − q + qz)^n) = Σ_f h_f·g_z(f),  g_z(f) = −L·log(1 − P₁(1 − ρ^f)),

linear in the frequency histogram h (h_f values of f users): a value counts in G with a weight
g_z(f) that grows with f and saturates at −L·log(1 − P₁) ≈ l. The empirical M̂(z) is unbiased,
and its variance is at most Var(z^c)/L: the c_j are negatively associated (the t_j of a random
hashing are, and each c_j given t_j is an independent draw stochastically increasing in t_j;
Joag-Dev & Proschan 1983) and z^c is monotone in c. A normal band on each M(z) (the sample
variance plugged in; Bonferroni over the z) turns into a band on each G(z), and with the exact
mass Σ_f f·h_f = N (one value per user) the identified set of h is a polytope: the smallest
Σ_f h_f over it (a linear program, scipy.optimize.linprog) is a lower bound on D at the bands'
level. (The largest is an upper bound too, but its share of the upper side's α cost more in the
z-limited upper bounds than it gained: docs/estimation.md.)

The θ are s/σ₀ (σ₀ the sd of an empty column's sum) for the s of :data:`SCALES` at which the
mean of the L terms z^{c_j} is nearly normal: its skewness at most :data:`MAX_SKEW`, both for
empty columns (the terms lognormal of log-sd |s|: skewness (e^{s²} + 2)(e^{s²} − 1)^{1/2}/√L;
a sample skewness misses this tail, which rare low sums make) and by the terms' sample
skewness over √L (where heavy columns spread the sums far beyond σ₀ the terms are lopsided).
The z of the bands is that of all :data:`SCALES`, so keeping a subset costs nothing in level.
h lives on the frequencies of :func:`frequency_grid` (every f up to 32,
then steps of 5%); a value between grid points f₁ < f < f₂ is read as weights on both with its
count and users, which moves each G by at most the chord gap of g_z on that step, measured on
a subgrid with a 50% margin and charged to each side of the band per value (a linear term in
h). Where the constraints leave no h (a failed band) the bound is 1. The linear program is
needed only where its minimum can exceed the other ingredients' bound B: where a histogram of
equal frequencies on the grid with at most B values lies in the bands, its minimum is at most
B, and it is not solved (this holds in most estimates of moderately spread data).
See docs/estimation.md ("Lower bound", ingredient 5).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from protocols.core.lazy import optimize, special

from .design import Observed
from .likelihood import LOG_NEGLIGIBLE

SCALES = tuple(-2.0 * 2.0 ** (-k / 2) for k in range(10))   # θσ₀ tried: −2 … −0.088 (those with a normal mean kept)
MAX_SKEW = 0.1          # sample skewness of the mean of the z^c up to which a θ is kept
LP_TOLERANCE = 1e-6     # relative slack on the linear programs' optima (their feasibility tolerance is 1e-7)
EXACT_STEPS = 32        # frequencies 1 … this on the grid, then geometric steps of GRID_RATIO
GRID_RATIO = 1.05
CHORD_POINTS = 16       # points inside each grid step at which the chord gap is measured
CHORD_MARGIN = 1.5      # the measured gap times this (the subgrid can miss the step's largest)


def frequency_grid(mass: float) -> np.ndarray:
    """The frequencies f of the histogram h: 1 … :data:`EXACT_STEPS`, then steps of
    :data:`GRID_RATIO` up to N.

    Parameters
    ----------
    mass : float
        N, the total count of the values.

    Returns
    -------
    numpy.ndarray
        Increasing frequencies (float), the last N.
    """
    top = max(float(mass), 1.0)
    if top <= EXACT_STEPS:
        return np.arange(1.0, math.floor(top) + 1)
    steps = int(math.ceil(math.log(top / EXACT_STEPS) / math.log(GRID_RATIO)))
    return np.unique(np.round(np.concatenate([np.arange(1.0, EXACT_STEPS + 1),
                                              np.geomspace(EXACT_STEPS, top, steps + 1)])))


def laplace_lower(observed: Observed, alpha: float, needed_above: float = 0.0
                  ) -> tuple[float, int, Callable[[], float]]:
    """Lower confidence bound on D from the empirical Laplace transform of the column sums
    (module docstring): the fewest values of a frequency histogram whose transform lies in the
    bands, at level 1 − α.

    Parameters
    ----------
    observed : Observed
        The column sums; needs one value per user (N = n known).
    alpha : float
        Error probability of all the bands together (Bonferroni over the θ of :data:`SCALES`,
        whether or not each is kept).
    needed_above : float
        A bound already known (the other ingredients'): where a histogram of equal frequencies
        with at most this many values lies in the bands, the bound cannot exceed it and NaN is
        returned without solving the linear program.

    Returns
    -------
    (float, int, callable)
        The bound (1 where N is unknown, no θ is kept or the bands leave no histogram; NaN where
        it is at most ``needed_above``), the number of θ kept, and a function that gives the
        standard error of a value pinned at the bound: its change with the band's z (the bound
        at z/2 less that at z, over z/2; another linear program, solved only when asked).
    """
    d = observed.design
    mass = d.known_mass
    if mass is None or d.n < 1 or not 0 < d.q < d.p < 1:
        return 1.0, 0, lambda: 0.0
    f = frequency_grid(mass)
    bands = _bands(observed, f)
    z = -float(special.ndtri(alpha / (2 * len(SCALES))))
    rows, limits = _constraints(bands, z, d.L)
    if _equal_fits(rows, limits, f, mass, needed_above):
        return math.nan, len(bands), lambda: 0.0
    low = _fewest(rows, limits, f, mass)
    if not math.isfinite(low):
        return 1.0, len(bands), lambda: 0.0

    def stderr() -> float:
        return max(_fewest(*_constraints(bands, z / 2, d.L), f, mass) - low, 0.0) / (z / 2)

    return max(low * (1 - LP_TOLERANCE) - LP_TOLERANCE, 1.0), len(bands), stderr


def _bands(observed: Observed, f: np.ndarray) -> list:
    """For each θ of :data:`SCALES` whose mean of z^c is nearly normal (sample skewness of the mean
    at most :data:`MAX_SKEW`): (g_z on the grid f, the chord gap, M̂ and its sd scaled by e^{−top},
    log E_0 − top) with E_0 = E e^{θ(c − nq)} of an empty column and top the largest θ(c − nq)."""
    d = observed.design
    n, p, q, L, l = d.n, d.p, d.q, d.L, d.l
    sd0 = math.sqrt(n * q * (1 - q))
    frac = np.arange(1, CHORD_POINTS + 1) / (CHORD_POINTS + 1)         # inside each grid step
    share = -math.expm1(l * math.log1p(-1 / L))                          # P₁
    counts = observed.counts.astype(float) - n * q
    bands = []
    for s in SCALES:
        lognormal = math.exp(s * s)      # z^c of an empty column: lognormal of log-sd |s|, nearly
        if (lognormal + 2) * math.sqrt(lognormal - 1) > MAX_SKEW * math.sqrt(L):
            continue
        theta = s / sd0
        x = theta * counts
        top = float(x.max())
        x -= top
        np.maximum(x, LOG_NEGLIGIBLE, out=x)         # e^-700 changes no mean; exp is slow below
        terms = np.exp(x, out=x)
        mean = float(terms.mean())
        terms -= mean
        sd = math.sqrt(float(np.dot(terms, terms)) / L)
        if sd <= 0 or float(np.dot(terms * terms, terms)) / L / sd ** 3 > MAX_SKEW * math.sqrt(L):
            continue                       # the mean of the terms is too skewed for a normal band
        log_rho = math.log((1 - p + p * math.exp(theta)) / (1 - q + q * math.exp(theta)))

        def weight(freq, log_rho=log_rho):
            return -L * np.log1p(-share * -np.expm1(freq * log_rho))

        g = weight(f)
        between = f[:-1, None] + (f[1:] - f[:-1])[:, None] * frac
        chord = g[:-1, None] + (g[1:] - g[:-1])[:, None] * frac
        gap = CHORD_MARGIN * float(np.max(np.abs(weight(between) - chord))) if f.size > 1 else 0.0
        null = n * math.log1p(q * math.expm1(theta)) - theta * n * q - top
        bands.append((g, gap, mean, sd / math.sqrt(L - 1), null))
    return bands


def _constraints(bands: list, z: float, L: int) -> tuple[np.ndarray, np.ndarray]:
    """(A, b): the histograms h on the grid whose G lie in the bands M̂ ± z·sd are those with
    A·h <= b (one row per band end; none where there is no band)."""
    rows, limits = [], []
    for g, gap, mean, sd, null in bands:       # G = −L·log(M/E_0), decreasing in M
        rows.append(-(g + gap))                                        # Σ h(g + gap) >= G⁻
        limits.append(L * (math.log(mean + z * sd) - null))
        if mean > z * sd:
            rows.append(g - gap)                                       # Σ h(g − gap) <= G⁺
            limits.append(-L * (math.log(mean - z * sd) - null))
    return np.array(rows), np.array(limits)


def _equal_fits(rows: np.ndarray, limits: np.ndarray, f: np.ndarray, mass: float, values: float) -> bool:
    """Whether a histogram of N/f values of f users (f on the grid) with at most ``values`` values
    satisfies A·h <= b: then the least Σ_f h_f is at most ``values``."""
    few = mass / f <= values
    if not rows.size or not few.any():
        return False
    return bool(np.any(np.all(rows[:, few] * (mass / f[few]) <= limits[:, None], axis=0)))


def _fewest(rows: np.ndarray, limits: np.ndarray, f: np.ndarray, mass: float) -> float:
    """The least Σ_f h_f over the histograms h >= 0 on the grid f with Σ_f f·h_f = N and
    A·h <= b (:func:`_constraints`; NaN where none has, or there is no row)."""
    if not rows.size:
        return math.nan
    res = optimize.linprog(np.ones(f.size), A_ub=rows, b_ub=limits,
                           A_eq=f[None, :], b_eq=[mass], bounds=(0, None), method="highs")
    return res.fun if res.status == 0 else math.nan
