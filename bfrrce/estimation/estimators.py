"""Cardinality estimators on debiased column sums (docs/estimation.md).

Every estimate has two parts:

* the bounds of :mod:`.bounds`, a confidence interval for the true number of distinct values
  that holds for any frequency distribution (the same for every method);
* a point estimate, by method:

``fill`` (domain-free)
    The occupied columns counted against the exact null law (:func:`.occupancy.occupied_columns`)
    and inverted by the collision law: the *visible* count, the values the noise lets through.
    Values below the detection limit are seen only in aggregate, by the likelihood of all column
    sums under about equal frequencies (:mod:`.likelihood`), which counts them when they have
    about equal frequencies. The estimate moves smoothly from the visible count to that estimate
    as the latter exceeds the former beyond their noise (:func:`combine`); no pilot switches
    between them.
``corrected`` (candidates known)
    The visible count on the columns the candidates touch, inverted with their exact column
    multiplicities m_j (Σ_j (1 − x)^{m_j} = empty columns, x the fraction of candidates present),
    combined with the equal-frequency estimate as for ``fill``.
``paper``
    The paper's baseline: B″_j = [t̂_j > threshold], count the candidates whose l bits are set.
    Reported as the paper defines it (not moved into the bounds); its standard error is that of
    its own sampling noise.

Each estimator has the keyword signature
``estimate_X(debiased, *, counts, pvalues, p, q, L, l, mass, positions=None, multiplicity=None,
threshold=0.5) -> (value, std_error, visible, visible_se, details)``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from protocols.core.lazy import optimize, special, stats
from protocols.errors import LDPValueError

from . import bounds, likelihood, occupancy
from .detection import detection_limit, detection_probability
from .result import CardinalityEstimate, Count

if TYPE_CHECKING:
    from ..sums import Debiased

EstimatorResult = tuple[float, float, float, float, dict]   # value, se, visible, visible se, details

AGREE_Z = 2.0                  # S and V read the same occupied columns within this many sd
SATURATED_BELOW = 0.05         # fewer empty columns than this: the filter is (nearly) full
ASSUMPTION = ("all values have about equal frequencies or are above the detection limit "
              "(otherwise it undercounts the rare ones; the bounds hold regardless)")


def combine(visible: float, visible_se: float, equal: float, equal_se: float,
            columns_agree: bool = False) -> tuple[float, float, float]:
    """Smooth combination of the visible count V and the equal-frequency estimate S.

    With Δ = S − V, σ = √(se_V² + se_S²), d = Δ/σ and w₀ = se_V²/σ² (the precision weight of S),
    the estimate is V + Δ·ω(d):

    * ω(d) = Φ(d + Φ⁻¹(w₀)) for d >= 0 (S above V: hidden values, moving to S);
    * ω(d) = w₀ e^{−d²/2} for d < 0 (S below V: skewed frequencies, where S undercounts,
      staying at V);
    * ω(d) = w₀ for d < 0 with ``columns_agree``: S and V read the same occupied columns, so
      S below V is V's collision luck (its inversion of the occupied columns into values), not
      values that S misses.

    ω is continuous and equals w₀ where both agree, so the estimate is the precision-weighted
    mean there. Returns (value, se, g') with se by the delta method, g' = d(Δω)/dΔ = ω + d·ω'(d)
    and Var = (1 − g')² se_V² + g'² se_S² (V and S independent given the data).

    Parameters
    ----------
    visible, visible_se : float
        V and the standard error of its noise.
    equal, equal_se : float
        S and its standard error.
    columns_agree : bool
        S's model and V's test find the same number of occupied columns (:func:`_combined`).

    Returns
    -------
    (float, float, float)
        The estimate, its standard error and g'.
    """
    var = visible_se ** 2 + equal_se ** 2
    if var <= 0:
        return visible, 0.0, 0.0
    w0 = min(max(visible_se ** 2 / var, 1e-9), 1 - 1e-9)
    d = (equal - visible) / math.sqrt(var)
    if d >= 0:                              # scalar Φ, Φ⁻¹ from scipy.special: stats.norm is slow
        shift = d + float(special.ndtri(w0))
        omega = float(special.ndtr(shift))
        slope = omega + d * math.exp(-shift * shift / 2) / math.sqrt(2 * math.pi)
    else:
        omega = w0 if columns_agree else w0 * math.exp(-d * d / 2)
        slope = omega if columns_agree else omega * (1 - d * d)
    se = math.sqrt((1 - slope) ** 2 * visible_se ** 2 + slope ** 2 * equal_se ** 2)
    return visible + (equal - visible) * omega, se, slope


def _combined(debiased, counts, visible, visible_se, visible_hash_se, p, q, mass, L, l, details, columns):
    """:func:`combine` of the visible count V and the equal-frequency estimate S
    (:func:`.likelihood.equal_frequency_estimate`, whose spread already holds the luck of the
    hash draw; V's standard error adds it, which matters most when the filter fills up and V is
    only a floor). The standard error of the estimate is by the delta method on the data, with
    numerical derivatives in V and S that include how the weight moves with them and how se_S
    moves with S (in proportion), rather than the derivative of ω at one point, which overstates
    the spread where ω is steep. ``columns()`` gives (K̂, se) of the occupied columns of V's
    test over all L columns (asked only when S is below V); where the pinned model's Σ_j Pr[k_j >= 1 | c_j] is within :data:`AGREE_Z`
    joint sd of it, S keeps its precision weight below V: the two then read the same occupied
    columns, and V's excess is its collision luck. Where S misses occupied columns (values near
    the detection limit, or skew), they disagree and the estimate stays at V."""
    equal, equal_se, dispersion, fitted, occupied, occupied_se = likelihood.equal_frequency_estimate(
        counts, n=debiased.n, p=p, q=q, L=L, l=l, mass=mass)
    agree = False
    if equal < visible and not math.isnan(occupied):       # only S below V asks; NaN: not pinned
        found, found_se = columns()
        agree = abs(occupied - found) <= AGREE_Z * math.hypot(occupied_se, found_se)
    sv = math.hypot(visible_se, visible_hash_se)
    value, se, slope = combine(visible, sv, equal, equal_se, agree)
    if equal > 0 and sv > 0 and equal_se > 0:
        def estimate(v, s):
            return combine(v, sv, s, equal_se * s / equal, agree)[0]
        dv = (estimate(visible + sv / 10, equal) - estimate(visible - sv / 10, equal)) * 5
        ds = (estimate(visible, equal + equal_se / 10) - estimate(visible, equal - equal_se / 10)) * 5
        se = math.hypot(dv, ds)
    details.update(equal_frequency=equal, equal_frequency_stderr=equal_se, dispersion=dispersion,
                   dispersion_fit=fitted, columns_agree=agree, weight=slope)
    return value, se, visible, sv, details


def estimate_fill(debiased: Debiased, *, counts: np.ndarray, pvalues: np.ndarray, p: float,
                  q: float, L: int, l: int, mass: float, positions: np.ndarray | None = None,
                  multiplicity: np.ndarray | None = None, threshold: float = 0.5) -> EstimatorResult:
    """Domain-free estimate (module docstring); candidates and ``threshold`` are not used.

    Parameters
    ----------
    debiased : bfrrce.Debiased
        Debiased column sums.
    counts : numpy.ndarray
        Raw column sums c_j (L,).
    pvalues : numpy.ndarray
        :func:`.occupancy.null_pvalues` of the columns (L,).
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    L, l : int
        Filter size and hashes per value.
    mass : float
        N, the total count of the values (n with one value per user).
    positions : numpy.ndarray, optional
        int (M, l): the candidates' filter positions (not used here).
    multiplicity : numpy.ndarray, optional
        Candidates per column (not used here).
    threshold : float
        The paper's threshold (not used here).

    Returns
    -------
    (float, float, float, float, dict)
        Estimate, its standard error, the visible count, its standard error, and details.

    References
    ----------
    K.-Y. Whang, B. T. Vander-Zanden, H. M. Taylor, "A linear-time probabilistic counting
    algorithm for database applications", ACM TODS 15(2), 1990.
    """
    visible, noise_se, hash_se, details = _visible_count(debiased, counts, pvalues, p, q, L, l)
    return _combined(debiased, counts, visible, noise_se, hash_se, p, q, mass, L, l, details,
                     lambda: (details["occupied_columns"], details["occupied_columns_se"]))


def _visible_count(debiased, counts, pvalues, p, q, L, l):
    """The visible count V over all columns, the standard errors of its noise and of the hash
    draw, and details."""
    k, k_se = occupancy.occupied_columns(pvalues, counts, debiased.n, q, p)
    visible = occupancy.values_from_empty(max(L - k, 0.5) / L, L, l) + 0.0     # + 0.0: no −0.0
    slope = occupancy.values_slope(L - k, L, l)
    hash_se = math.sqrt(occupancy.occupancy_variance(visible, L, l)) * slope
    return visible, k_se * slope, hash_se, {"occupied_columns": k, "occupied_columns_se": k_se,
                                            "saturated": (L - k) / L < SATURATED_BELOW}


def _present_fraction(empty, m):
    """x in [0, 1] with Σ_j (1 − x)^{m_j} = empty (the left side decreases in x)."""
    empty = min(max(empty, 0.0), float(m.size))
    if empty >= m.size:
        return 0.0
    if empty <= 0:
        return 1.0
    return optimize.brentq(lambda x: np.sum((1 - x) ** m) - empty, 0.0, 1.0, xtol=1e-12)


def _empty_luck_variance(m, x, n_candidates):
    """Variance of the empty columns over which x·M of the M candidates are present (the
    counterpart of the hash luck of ``fill``): with each candidate present at rate x
    independently, Var E = Σ_j π_j(1 − π_j), π_j = (1 − x)^{m_j}, and Cov(E, P) = −x Σ_j m_j π_j
    with the number present P, Var P = M x(1 − x); given P (the estimand, fixed),
    Var(E | P) = Var E − Cov(E, P)²/Var P (normal regression)."""
    if not 0 < x < 1:
        return 0.0
    empty = (1 - x) ** m
    covariance = x * float(np.sum(m * empty))
    return max(float(np.sum(empty * (1 - empty))) - covariance ** 2 / (n_candidates * x * (1 - x)), 0.0)


def _need_candidates(method, positions):
    if positions is None or len(positions) == 0:
        raise LDPValueError(f"method {method!r} needs a non-empty list of candidates")
    return positions


def estimate_corrected(debiased: Debiased, *, counts: np.ndarray, pvalues: np.ndarray, p: float,
                       q: float, L: int, l: int, mass: float, positions: np.ndarray | None = None,
                       multiplicity: np.ndarray | None = None, threshold: float = 0.5) -> EstimatorResult:
    """Candidate-domain estimate with exact column multiplicities (module docstring).

    Parameters
    ----------
    debiased, counts, pvalues, p, q, L, l, mass
        As :func:`estimate_fill`.
    positions : numpy.ndarray
        int (M, l): the candidates' filter positions (required).
    multiplicity : numpy.ndarray
        m_j, the candidates hashed to each column (L,).
    threshold : float
        Not used.

    Returns
    -------
    (float, float, float, float, dict)
        As :func:`estimate_fill`.

    Raises
    ------
    LDPValueError
        No candidates.
    """
    n_candidates = len(_need_candidates("corrected", positions))
    touched = multiplicity > 0
    m = multiplicity[touched]
    k, k_se = occupancy.occupied_columns(pvalues[touched], np.asarray(counts)[touched], debiased.n, q, p)
    x = _present_fraction(m.size - k, m)
    slope = 1 / max(np.sum(m * (1 - x) ** np.maximum(m - 1, 0)), 1e-12)
    details = {"occupied_columns": k, "columns": int(m.size),
               "saturated": (m.size - k) / m.size < SATURATED_BELOW}
    luck_se = n_candidates * slope * math.sqrt(_empty_luck_variance(m, x, n_candidates))
    return _combined(debiased, counts, n_candidates * x, n_candidates * k_se * slope, luck_se, p, q, mass,
                     L, l, details, lambda: occupancy.occupied_columns(pvalues, counts, debiased.n, q, p))


def estimate_paper(debiased: Debiased, *, counts: np.ndarray, pvalues: np.ndarray, p: float,
                   q: float, L: int, l: int, mass: float, positions: np.ndarray | None = None,
                   multiplicity: np.ndarray | None = None, threshold: float = 0.5) -> EstimatorResult:
    """The paper's threshold estimator over the candidates (module docstring).

    Parameters
    ----------
    debiased, counts, pvalues, p, q, L, l, mass
        As :func:`estimate_fill`.
    positions : numpy.ndarray
        int (M, l): the candidates' filter positions (required).
    multiplicity : numpy.ndarray, optional
        Not used.
    threshold : float
        Users a bit's t̂ must exceed to count as set.

    Returns
    -------
    (float, float, float, float, dict)
        As :func:`estimate_fill`; the estimate is the number of candidates whose l bits pass.

    Raises
    ------
    LDPValueError
        No candidates, or a threshold that is not finite.
    """
    positions = _need_candidates("paper", positions)
    if not math.isfinite(threshold):
        raise LDPValueError(f"threshold must be a finite number of users, got {threshold!r}")
    hit = (debiased.t_hat > threshold)[positions].all(axis=1)
    sd = np.sqrt(np.maximum(debiased.variance, 1e-300))
    pi = stats.norm.cdf((debiased.t_hat - threshold) / sd)[positions].prod(axis=1)
    visible, noise_se, hash_se, details = _visible_count(debiased, counts, pvalues, p, q, L, l)
    details["threshold"] = threshold
    return (float(hit.sum()), float(np.sqrt(np.sum(pi * (1 - pi)))), visible,
            math.hypot(noise_se, hash_se), details)


ESTIMATORS = {"fill": estimate_fill, "corrected": estimate_corrected, "paper": estimate_paper}


def estimate_cardinality(debiased: Debiased, *, method: str, counts: np.ndarray, p: float, q: float,
                         L: int, l: int, unit: str, confidence: float, parameters: dict,
                         positions: np.ndarray | None = None, multiplicity: np.ndarray | None = None,
                         threshold: float = 0.5, degraded: dict | None = None) -> CardinalityEstimate:
    """Bounds, point estimate and detection curve of one method, as a
    :class:`~bfrrce.estimation.CardinalityEstimate`.

    The bounds are each one-sided at (1 − confidence)/2. With ``unit="value"`` the total count
    is N = n; with ``unit="item"`` it is unknown, and Σ_j t̂_j/l estimates it; the upper bound is
    then ∞: a party's items can share columns of its own filter (a party with many items sets
    nearly every bit), so no column sums bound the number of items. With ``unit="value"`` the lower bound is at most n
    (D <= n for sure, so a value pinned there has standard error 0; with a handful of users
    N²/S₂⁺ can exceed n). The lower bound is rounded down to an integer (D is one; a bound of
    1.006 on one value is a slight miss that the rounding absorbs), the upper one down too (D <= x
    means D <= ⌊x⌋: a sharper bound at the same level). An upper bound below the
    lower one (one of them failed, or column sums the model cannot produce) lowers the lower
    bound to it, so the interval is never empty and the upper bound keeps its own level, and
    ``details["bounds_crossed"]`` says so.

    Parameters
    ----------
    debiased : bfrrce.Debiased
        Debiased column sums.
    method : {"fill", "corrected", "paper"}
        The point estimator (:data:`ESTIMATORS`).
    counts : numpy.ndarray
        Raw column sums c_j (L,).
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    L, l : int
        Filter size and hashes per value.
    unit : {"value", "item"}
        What one user's ε protects.
    confidence : float
        Joint level of the two bounds, in (0, 1).
    parameters : dict
        Shown in the result (ε, L, l, ...).
    positions, multiplicity, threshold
        As the estimators take them.
    degraded : dict, optional
        {ε': (p', q')} of smaller ε at which the upper bound is also computed on the exactly
        degraded sums (:func:`.bounds.upper_bound_over_laws`).

    Returns
    -------
    CardinalityEstimate

    Raises
    ------
    LDPValueError
        ``confidence`` outside (0, 1), an unknown method, or no candidates for a method that
        needs them.
    """
    if not 0 < confidence < 1:
        raise LDPValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if method not in ESTIMATORS:
        raise LDPValueError(f"method must be one of {tuple(ESTIMATORS)}, got {method!r}")
    n = debiased.n
    alpha = (1 - confidence) / 2
    t_hat, var_hat = debiased.t_hat, debiased.variance
    if unit == "value":
        mass, mass_lower = n, n
    else:
        mass, mass_lower = max(float(np.sum(t_hat)) / l, 1.0), None
    pvalues = occupancy.null_pvalues(counts, n, q)               # once, for bounds and estimate
    lower, low = bounds.lower_bound(pvalues, counts, t_hat, var_hat, n=n, p=p, q=q, L=L, l=l,
                                    mass=mass_lower, alpha=alpha)
    if unit == "value":
        upper, up = bounds.upper_bound_over_laws(counts, t_hat, var_hat, n=n, p=p, q=q, laws=degraded or {},
                                                 L=L, l=l, total=l * n, cap=n, alpha=alpha)
    else:       # a party's items share its bits: no number of set bits bounds its items
        upper, up = math.inf, {"upper_by_mass_balance": math.inf}
    if unit == "value" and lower > n:             # D <= n for sure: the bound keeps its level
        lower, low["lower_stderr"] = float(n), 0.0
    lower = float(math.floor(lower + 1e-9))       # D is an integer: D >= x means D >= ⌊x⌋ too
    upper = float(math.floor(upper)) if math.isfinite(upper) else upper    # D <= x means D <= ⌊x⌋
    if unit == "value" and n >= 1:               # D >= 1 for sure: an upper bound below 1 only misses
        upper = max(upper, 1.0)
    crossed = upper < lower                       # a bound failed, or sums the model cannot give
    lower = min(lower, upper)                     # never raise an upper bound from a lower one
    value, se, visible, visible_se, details = ESTIMATORS[method](
        debiased, counts=counts, pvalues=pvalues, p=p, q=q, L=L, l=l, mass=mass, positions=positions,
        multiplicity=multiplicity, threshold=threshold)
    if method != "paper" and value <= lower:       # pinned at the bound: it has the bound's spread
        value, se = lower, low["lower_stderr"]
    elif method != "paper":
        value = min(value, upper)
    z = -float(special.ndtri((1 - confidence) / 2))
    shown = Count(visible, visible_se, (max(visible - z * visible_se, 0.0), visible + z * visible_se), confidence)
    limit = detection_limit(n, p, q, l)
    f50, f90 = limit[0.5], limit[0.9]
    curve = {} if math.isinf(f50) else {
        f: detection_probability(f, n, p, q, l) for f in (f50 / 4, f50 / 2, f50, f90) if math.isfinite(f)}
    return CardinalityEstimate(
        float(value), float(se), (float(lower), float(upper)), confidence,
        "the paper's threshold rule" if method == "paper" else ASSUMPTION, shown, limit, curve,
        method, dict(parameters, n=n), {**details, **low, **up, "bounds_crossed": crossed})
