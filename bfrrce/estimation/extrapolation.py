"""An optional, model-based extrapolation of the number of distinct values: a power law of the
frequencies, fitted to the values above the detection limit and to the users below it.

Not the default and not inside the bounds' guarantee: the bounds of
:func:`.estimators.estimate_cardinality` hold for any frequencies; this reads the unseen values
*if* the frequency histogram follows a discrete power law, Pr[f] = f^−a/ζ(a) for f = 1, 2, …
(the law of the frequencies of a Zipf-ranked population, a = 1 + 1/s). With one value per user
and one hash (l = 1):

* the tail: the m columns whose sum passes the clean threshold τ (no empty column above it but
  with probability 5%) and whose debiased users t̂_j are at least f₀ hold the values of at least
  f₀ users, one each (f₀ where such a value is detected almost surely and t̂ is within 20% of f);
  a power law gives m ≈ D·ζ(a, f₀)/ζ(a) (Hurwitz ζ);
* the mass below: the users of the values below f₀ are U = n − Σ_tail t̂_j; a power law gives
  U ≈ D·Σ_{f<f₀} f^{1−a}/ζ(a);
* so a solves m·Σ_{f<f₀} f^{1−a} = U·ζ(a, f₀) (one root: the left side over the right increases
  in a), and D̂ = m·ζ(a)/ζ(a, f₀);
* the selection: t̂_j of a value of f users is f plus the light users that share its column
  (mean μ = U/L) plus noise of sd σ_f (the column's binomial noise and the light users'
  spread), so more values just below f₀ enter the tail than leave it (the power law falls), and
  those that enter bring their noise: E[m̂] − m = Σ_f N(f)(Φ(z_f) − 1{f >= f₀}) and
  E[Σ_tail t̂] − Σ_{f>=f₀} f·N(f) = Σ_f N(f)((f + μ)Φ(z_f) + σ_f·φ(z_f) − f·1{f >= f₀}),
  z_f = (f + μ − f₀)/σ_f, N(f) = D·f^−a/ζ(a) (normal noise; the terms beyond eight σ of f₀ are
  exact: μ per value above), a column counted once, at its largest value (weight
  e^{−N(>f)/L}·(1 − e^{−λ_f})/λ_f, λ_f = N(f)/L: where D ≫ L many light values share each
  column). m and U are corrected by these at the fitted law and refitted,
  :data:`SELECTION_ROUNDS` times.

The check that refuses: the tail alone gives its own exponent, the maximum likelihood
â = 1 + m/Σ ln(t̂_j/(f₀ − ½)) (Clauset, Shalizi & Newman 2009) with standard error (â − 1)/√m;
where it differs from a by more than :data:`MAX_DISAGREEMENT` standard errors, where no a fits,
where fewer than :data:`MIN_TAIL` values are in the tail, where more than :data:`MAX_TAIL_SHARE`
of the columns are in it (a crowded filter: not one value a tail column), or where D̂ falls
outside the bounds, the extrapolation is refused with the reason. The check cannot see values
below f₀ that a power law would not have (a power law plus a block of equal light values is
accepted, too high): it tests the law's consistency, not the law. Its standard error is the
delta method over m (Poisson) and U (the noise of the tail's sums and the model's own spread of
the mass below); it says nothing of a wrong model. docs/estimation.md ("Model-based extrapolation") has the measurements.

References
----------
A. Clauset, C. R. Shalizi, M. E. J. Newman, "Power-law distributions in empirical data",
SIAM Review 51(4), 2009.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from protocols.core.lazy import optimize, special, stats
from protocols.core.perturbation import count_variance

from .bounds import null_quantile
from .design import Observed
from .detection import detection_limit

MIN_TAIL = 20              # values above f₀ needed to fit
MAX_TAIL_SHARE = 0.1       # share of the columns in the tail beyond which the filter is too crowded
MAX_DISAGREEMENT = 3.0     # standard errors of the tail's exponent beyond which the fit is refused
TAIL_FACTOR = 2.0          # f₀ at least this times the 90% detection limit
MAX_NOISE = 0.2            # ... and at least the t̂ noise of an empty column over this
EXPONENTS = (1.0 + 1e-6, 20.0)   # the range searched for a
CLEAN_TAIL = 0.05          # Pr[some empty column passes τ]
SELECTION_ROUNDS = 4       # refits with the selection corrected at the last fit
WINDOW = 8.0               # σ either side of f₀ where the selection is summed value by value


@dataclass
class Extrapolation:
    """The result of :func:`power_law_extrapolation`.

    Attributes
    ----------
    value, std_error : float
        D̂ and its standard error (NaN where refused).
    exponent : float
        a, from the tail's count and the mass below (NaN where none fits).
    tail_exponent : float
        â, the tail's own maximum-likelihood exponent.
    disagreement : float
        (â − a)/se(â).
    tail_values : int
        m, the values of at least ``f0`` users.
    f0 : float
        The frequency from which values are read one by one.
    users_below : float
        U, the users of the values below f₀.
    refused : str or None
        Why the model does not fit (None: it does).
    """

    value: float
    std_error: float
    exponent: float
    tail_exponent: float
    disagreement: float
    tail_values: int
    f0: float
    users_below: float
    refused: str | None = None

    def __str__(self):
        head = "model-based extrapolation (power law of the frequencies; not covered by the bounds)"
        if self.refused:
            return f"{head}: refused — {self.refused}"
        return (f"{head}: about {self.value:,.0f} distinct values if the frequencies follow "
                f"Pr[f] ∝ f^−{self.exponent:.2f} (the {self.tail_values:,} values of {self.f0:,.0f} users or "
                f"more give f^−{self.tail_exponent:.2f}; the rest hold {self.users_below:,.0f} users); "
                f"its sampling error {self.std_error:,.0f} holds only under that law (how far skewed and "
                "real data fall from it: docs/extrapolation.md)")

    def to_dict(self) -> dict:
        """The fields, NaN as None (JSON)."""
        out = dict(vars(self))
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()}


def tail_start(observed: Observed) -> float:
    """f₀: :data:`TAIL_FACTOR` times the 90% detection limit, and at least the sd of an empty
    column's t̂ over :data:`MAX_NOISE` (so t̂ of a tail value is within about 20% of f).

    Parameters
    ----------
    observed : Observed
        The column sums (their design is read).

    Returns
    -------
    float
        f₀ (∞ where no value is detected at this ε and n).
    """
    d = observed.design
    f90 = detection_limit(d.n, d.p, d.q, d.l)[0.9]
    noise = math.sqrt(count_variance(0, d.n, d.p, d.q)) / (d.p - d.q)
    start = max(TAIL_FACTOR * f90, noise / MAX_NOISE, 2.0)
    return float(math.ceil(start)) if math.isfinite(start) else math.inf


def _below(power: float, f0: float) -> float:
    """Σ_{f<f₀} f^power over the whole frequencies below f₀."""
    return float(np.sum(np.arange(1.0, f0) ** power))


def _mass_ratio(a: float, f0: float) -> float:
    """Σ_{f<f₀} f^{1−a} / ζ(a, f₀): the users below f₀ per value at or above it."""
    return _below(1 - a, f0) / float(special.zeta(a, f0))


def _exponent(tail: float, below: float, f0: float) -> float:
    """a with tail·Σ_{f<f₀} f^{1−a} = below·ζ(a, f₀) (NaN where no a in :data:`EXPONENTS`)."""
    lo, hi = EXPONENTS
    gap = [tail * _mass_ratio(a, f0) - below for a in (lo, hi)]
    if not gap[0] < 0 < gap[1]:
        return math.nan
    return float(optimize.brentq(lambda a: tail * _mass_ratio(a, f0) - below, lo, hi, xtol=1e-10))


def _count_at(tail: float, a: float, f0: float) -> float:
    """D = m·ζ(a)/ζ(a, f₀) (NaN where a is)."""
    return tail * float(special.zeta(a, 1.0) / special.zeta(a, f0)) if math.isfinite(a) else math.nan


def _values(tail: float, below: float, f0: float) -> float:
    """D̂ at the a of :func:`_exponent` (NaN where none)."""
    return _count_at(tail, _exponent(tail, below, f0), f0)


def _selection(a: float, values: float, below: float, f0: float, design) -> tuple[float, float]:
    """(E[m̂] − m, E[Σ_tail t̂] − Σ_{f>=f₀} f·N(f)) under the power law (a, D = ``values``) with
    ``below`` users below f₀ (module docstring, "the selection")."""
    n, p, q, L = design.n, design.p, design.q, design.L
    zeta = float(special.zeta(a, 1.0))
    mu = below / L
    light_var = values / zeta * _below(2 - a, f0) / L
    spread = math.sqrt(count_variance(f0, n, p, q) / (p - q) ** 2 + light_var)
    lo, hi = max(1.0, math.floor(f0 - mu - WINDOW * spread)), math.ceil(f0 + WINDOW * spread)
    f = np.arange(lo, hi + 1)
    count = values / zeta * f ** -a
    sd = np.sqrt(count_variance(f, n, p, q) / (p - q) ** 2 + light_var)
    z = (f + mu - f0) / sd
    above = f >= f0
    # a column passes once, however many values it holds: count it at its largest value (the
    # values sharing a value's column are Poisson, N(g)/L of each g), so the light values, many
    # to a column where D >> L, do not each count the column's pass
    lam = count / L
    larger = values / zeta * float(special.zeta(a, hi + 1)) + np.cumsum(count[::-1])[::-1] - count
    first = np.exp(-larger / L) * np.where(lam > 1e-12, -np.expm1(-lam) / np.maximum(lam, 1e-300), 1.0)
    enter = special.ndtr(z) * first
    excess_count = float(np.sum(count * (enter - above)))
    excess_users = float(np.sum(count * ((f + mu) * enter + first * sd * stats.norm.pdf(z) - f * above)))
    return excess_count, excess_users + mu * values * float(special.zeta(a, hi + 1) / zeta)


def _corrected(tail: int, below: float, f0: float, design) -> tuple[float, float]:
    """(m, U) read from the sums, less the selection's excess at the law fitted to them
    (:data:`SELECTION_ROUNDS` refits; as read where no law fits)."""
    m, u = float(tail), below
    for _ in range(SELECTION_ROUNDS):
        a = _exponent(m, u, f0)
        if not math.isfinite(a):
            break
        excess_count, excess_users = _selection(a, _count_at(m, a, f0), u, f0, design)
        m, u = max(tail - excess_count, 1.0), below + excess_users
    return m, u


def power_law_extrapolation(observed: Observed, interval: tuple[float, float],
                            f0: float | None = None) -> Extrapolation:
    """D̂ under a power law of the frequencies (module docstring), or the reason it is refused.

    Parameters
    ----------
    observed : Observed
        Column sums with one value per user and l = 1.
    interval : (float, float)
        The bounds on D (an estimate outside them is refused).
    f0 : float, optional
        The frequency from which values are read one by one (default :func:`tail_start`).

    Returns
    -------
    Extrapolation
    """
    d = observed.design
    # frequencies are whole numbers: f >= f0 is f >= ceil(f0), and ζ(a, f0) sums f^-a from f0 on
    # only at a whole f0
    f0 = tail_start(observed) if f0 is None else float(math.ceil(f0)) if math.isfinite(f0) else float(f0)
    nan = math.nan
    if not math.isfinite(f0):
        return Extrapolation(nan, nan, nan, nan, nan, 0, f0, nan, "no value is detected at this ε and n")
    if f0 > d.n:
        return Extrapolation(nan, nan, nan, nan, nan, 0, f0, nan, f"f0 = {f0:,.0f} is above the {d.n:,} users")
    tau = null_quantile(CLEAN_TAIL / d.L, d.n, d.q)
    t_hat = observed.t_hat
    in_tail = (observed.counts > tau) & (t_hat >= f0)
    tail = t_hat[in_tail]
    m = int(tail.size)
    read_below = max(d.n - float(tail.sum()), 0.0)
    result = Extrapolation(nan, nan, nan, nan, nan, m, f0, read_below)
    if m < MIN_TAIL:
        result.refused = f"only {m} values of {f0:,.0f} users or more are seen (at least {MIN_TAIL} needed)"
        return result
    if m > MAX_TAIL_SHARE * d.L:
        result.refused = (f"{m:,} of the {d.L:,} columns hold {f0:,.0f} users or more: too crowded to read "
                          "one value a column (a larger L)")
        return result
    result.tail_exponent = 1 + m / float(np.sum(np.log(tail / (f0 - 0.5))))
    count, below = _corrected(m, read_below, f0, d)
    result.users_below = below
    a = result.exponent = _exponent(count, below, f0)
    if not math.isfinite(a):
        result.refused = "no power law gives both the values seen and the users below them"
        return result
    result.disagreement = (result.tail_exponent - a) / ((result.tail_exponent - 1) / math.sqrt(m))
    value = _count_at(count, a, f0)
    # delta method: m Poisson; U from the tail's noise and the model's own spread of the mass below
    zeta = float(special.zeta(a, 1.0))
    below_var = float(np.sum(observed.variance[in_tail])) + value / zeta * _below(2 - a, f0)
    dm = max(math.sqrt(count), 1.0)
    du = max(math.sqrt(below_var), 1.0)
    m_lo, u_lo = max(count - dm, 1.0), max(below - du, 0.0)
    slope_m = (_values(count + dm, below, f0) - _values(m_lo, below, f0)) / (count + dm - m_lo)
    slope_u = (_values(count, below + du, f0) - _values(count, u_lo, f0)) / (below + du - u_lo)
    result.value, result.std_error = value, math.sqrt((slope_m * dm) ** 2 + (slope_u * du) ** 2)
    lower, upper = interval
    if abs(result.disagreement) > MAX_DISAGREEMENT:
        result.refused = (f"the values seen follow f^−{result.tail_exponent:.2f}, the users below them "
                          f"need f^−{a:.2f} ({result.disagreement:+.1f} standard errors): not a power law")
    elif not lower <= value <= upper:
        result.refused = f"the power law's {value:,.0f} lies outside the bounds [{lower:,.0f}, {upper:,.0f}]"
    return result
