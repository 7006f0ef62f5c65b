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

Each estimator reads the column sums as an :class:`.design.Observed` (their design, debiased
values, p-values and total count) and returns a :class:`.design.PointEstimate`; ``corrected`` and
``paper`` also take the :class:`.design.Candidates`, ``paper`` its threshold.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from protocols.core.lazy import optimize, special, stats
from protocols.errors import LDPValueError

from . import bounds, classes, occupancy
from .design import Candidates, Observed, PointEstimate
from .detection import detection_limit, detection_probability
from .result import CardinalityEstimate, Count

METHODS = ("fill", "corrected", "paper")

AGREE_Z = 2.0                  # S and V read the same occupied columns within this many sd
SATURATED_BELOW = 0.05         # fewer empty columns than this: the filter is (nearly) full
ASSUMPTION = ("all values have about equal frequencies or are above the detection limit "
              "(otherwise it undercounts the rare ones; the bounds hold regardless)")
CLASSES_REJECT = 1.92          # −Δℓ beyond which the frequency-class likelihood rejects an estimate (χ²₁(0.95)/2)
CLASSES_STRONG = 8.0           # −Δℓ from which the estimate is the class model's maximum (χ²₁ > 16: p = 6·10⁻⁵)
CLASSES_LAW_REJECT = 10.0      # −Δℓ of the best single frequency beyond which the class model's D̂ is the estimate
CLASSES_MIN_COLUMNS = 1024     # fewer columns than this: the class model's 24-46 rates overfit them
CLASSES_ASSUMPTION = ("nothing about the frequencies (the likelihood of every column sum over frequency classes, "
                      "each number of users at a free rate, rejected the equal-frequency reading {:,.0f})")


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


def _combined(observed, visible, visible_se, visible_hash_se, details, columns):
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
    equal, equal_se, dispersion, fitted, occupied, occupied_se = observed.equal_frequency
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
    return PointEstimate(value, se, visible, sv, details)


def estimate_fill(observed: Observed) -> PointEstimate:
    """Domain-free estimate (module docstring).

    Parameters
    ----------
    observed : Observed
        The column sums.

    Returns
    -------
    PointEstimate

    References
    ----------
    K.-Y. Whang, B. T. Vander-Zanden, H. M. Taylor, "A linear-time probabilistic counting
    algorithm for database applications", ACM TODS 15(2), 1990.
    """
    visible, noise_se, hash_se, details = _visible_count(observed)
    return _combined(observed, visible, noise_se, hash_se, details,
                     lambda: (details["occupied_columns"], details["occupied_columns_se"]))


def checked_by_classes(observed: Observed, point: PointEstimate,
                       bounds: tuple[float, float] = (0.0, math.inf)) -> PointEstimate:
    """The point estimate, or the frequency-class estimate where that model rejects it.

    With one value per user and l = 1, the likelihood of every column sum over frequency classes
    (:class:`.classes.FrequencyClasses`: values of each number of users at free rates, their
    users n in all, no assumption on the frequency law) is profiled over D. Where no sum reaches
    the model's cut (every value light) and the most likely single frequency falls more than
    :data:`CLASSES_LAW_REJECT` below its maximum (:meth:`.classes.FrequencyClasses.law_drop`), the
    equal-frequency law itself is rejected and the estimate is the class model's maximum D̂
    (within the bounds) whatever the reading: a wrong law's D can lie inside the class model's
    interval (pairs beside singletons: docs/estimation.md, "Frequency classes"). Beside
    heavy values the class model fits values of a few users to the empty columns' noise, so that
    ratio is not calibrated there and only the reading's D is tested. Where ℓ falls more
    than :data:`CLASSES_REJECT` below its maximum at ``point.value`` (outside its 95% interval),
    the equal-frequency reading is wrong for these sums (singletons and pairs read as one
    frequency, a skewed law read as equal) and the estimate moves towards the class model's
    maximum D̂ as far as the rejection is strong: from the nearest D the class model does not
    reject (the end e₁ of that interval on the reading's side) to D̂ where ℓ falls
    :data:`CLASSES_STRONG` or more, by the square of the reading's place between e₁ and the D
    e₈ where it does, D = e₁ + w²(D̂ − e₁), w = clip((reading − e₁)/(e₈ − e₁), 0, 1) (where ℓ
    falls less than :data:`CLASSES_STRONG` by the profile's end on the reading's side, its
    ``top`` (every light user alone: D = n where no sum reaches the cut) or its ``bottom`` (one
    value, or n/t_max), e₈ lies beyond it, placed by the drop Δ there: e₈ = e₁ + (end − e₁)(8 −
    1.92)/(Δ − 1.92)): continuous
    in the reading, and a reading just past e₁, as a right one rejected by chance is (χ²₁/2 >
    1.92 in 5% of runs, > 8 in 6·10⁻⁵), moves by a second-order amount (the class model's D̂
    wanders where it cannot tell 16 users from 15, while the reading is right). Its standard
    error is the half width of the profile's 68% interval and the distance D − D̂ (the bias it
    may carry) in quadrature (docs/estimation.md, "Frequency classes"); a profile that did not
    move from its maximum on a side where it can (a stalled search; at D̂ = n, every user alone,
    D cannot grow) leaves the reading, and a reading of n that it does not reject keeps a
    standard error at least the class model's (:func:`_kept_at_n`). A reading is kept, too,
    where the class model rejects every D within the bounds (its e₁ beyond the far bound): two
    95% statements that contradict each other, of which the bounds hold for any frequency law and
    the class model's χ²₁ calibration does not at the edge of its rates (values of a few users
    fitted to the noise of empty columns beside one value most users hold; docs/estimation.md).
    Not used where the sums do not resolve a few users (the model's ``usable``), with fewer than
    :data:`CLASSES_MIN_COLUMNS` columns or with l > 1.

    Parameters
    ----------
    observed : Observed
        The column sums and their design.
    point : PointEstimate
        The estimate to check (:func:`estimate_fill`).
    bounds : tuple of float
        The interval the estimate is reported within (lower, upper).

    Returns
    -------
    PointEstimate
        ``point`` with ``classes_users`` (t_max) and, where the quick check of
        :meth:`.classes.FrequencyClasses.within` did not settle it, ``classes_bound`` (the D on
        its side where the profile falls :data:`CLASSES_REJECT`) in its details, or the moved
        estimate with the reading it replaced (``equal_frequency_reading`` and its standard error),
        D̂ (``classes_estimate``), its 68% interval (``classes_interval``) and e₈
        (``classes_strong_bound``) or the law's rejection (``classes_law_drop``).
    """
    d = observed.design
    if not (d.one_value_each and d.l == 1 and d.L >= CLASSES_MIN_COLUMNS) or not point.value > 0:
        return point
    model = classes.FrequencyClasses(observed.counts, d.n, d.p, d.q)
    if not model.usable:
        return point
    model.fit()
    details = {**point.details, "classes_users": model.t_max}
    law = 0.0 if model.censored else model.law_drop()       # the equal-frequency law's own rejection
    if law > CLASSES_LAW_REJECT:
        details.update(classes_law_drop=law)
        spread = _profiled(model, details)
        if spread is None:
            return dataclasses.replace(point, details=details)
        return _moved(point, model, min(max(d.L * model.lam, bounds[0]), bounds[1]), spread, details)
    if model.within(point.value / d.L, CLASSES_REJECT):    # rates of that D fit within it: not rejected
        return dataclasses.replace(point, std_error=_kept_at_n(model, point, d.n), details=details)
    side = 1.0 if point.value > d.L * model.lam else -1.0
    end = d.L * model.crossing(CLASSES_REJECT, side)          # where the profile falls CLASSES_REJECT
    details.update(classes_bound=end)
    beyond = end > bounds[1] if side < 0 else end < bounds[0]     # every D within the bounds rejected
    if side * (point.value - end) <= 0 or beyond:
        return dataclasses.replace(point, details=details)
    spread = _profiled(model, details)
    if spread is None:
        return dataclasses.replace(point, details=details)
    strong = d.L * model.crossing(CLASSES_STRONG, side)
    bound = d.L * (model.top if side > 0 else model.bottom)   # the profile's end on the reading's side
    if abs(strong - bound) <= 1e-6 * bound:          # ℓ falls less than 8 by it: e₈ beyond it, by
        excess = max(model.end_drop(side) - CLASSES_REJECT, 1e-12)   # the drop there, linearly
        strong = end + (bound - end) * (CLASSES_STRONG - CLASSES_REJECT) / excess
    share = min(max((point.value - end) / (strong - end), 0.0), 1.0) ** 2 if side * (strong - end) > 0 else 1.0
    details.update(classes_strong_bound=strong)
    return _moved(point, model, end + share * (d.L * model.lam - end), spread, details)


def _profiled(model: classes.FrequencyClasses, details: dict) -> tuple[float, float] | None:
    """The class model's 68% interval of λ, with D̂ and that interval (in D) put in ``details``;
    None where the profile did not move from its maximum on a side where it can (a stalled
    search; at D̂ = n, every user alone, D cannot grow)."""
    low, high = model.interval()
    details.update(classes_estimate=model.L * model.lam, classes_interval=(model.L * low, model.L * high))
    at_cap = model.lam >= model.top * (1 - 1e-3)
    return (low, high) if low < model.lam * (1 - 1e-3) and (high > model.lam * (1 + 1e-3) or at_cap) else None


def _moved(point: PointEstimate, model: classes.FrequencyClasses, value: float, spread: tuple[float, float],
           details: dict) -> PointEstimate:
    """The estimate moved to ``value`` (:func:`checked_by_classes`), its standard error the half
    width of the class model's 68% interval ``spread`` and the distance from D̂ in quadrature."""
    details.update(equal_frequency_reading=point.value, equal_frequency_reading_stderr=point.std_error)
    se = math.hypot(model.L * (spread[1] - spread[0]) / 2, value - model.L * model.lam)
    return PointEstimate(value, se, point.visible, point.visible_se, details, CLASSES_ASSUMPTION.format(point.value))


def _kept_at_n(model: classes.FrequencyClasses, point: PointEstimate, n: int) -> float:
    """The standard error of a reading of D = n that the class model does not reject: where its
    maximum D̂ lies below n, at least the class model's own, hypot(s, n − D̂) with the local sd
    s = (n − D̂)/(2Δ_n)^{1/2} of its profile from the drop Δ_n at n (one evaluation: every user
    alone); the equal-frequency posterior, cut at n, knows nothing of values of two users that
    the class model weighs. A reading within a millionth of n is at n (the combination with the
    visible count leaves a weight 1 − 10⁻⁹ on it)."""
    gap = n - model.lam * model.L
    if point.value < n * (1 - 1e-6) or gap <= 0:
        return point.std_error
    drop = model.end_drop(1.0)
    if drop <= 0:
        return point.std_error
    return max(point.std_error, math.hypot(gap / math.sqrt(2 * drop), gap))


def _visible_count(observed):
    """The visible count V over all columns, the standard errors of its noise and of the hash
    draw, and details."""
    d = observed.design
    L, l = d.L, d.l
    k, k_se = occupancy.occupied_columns(observed.passing, observed.counts, d.n, d.q, d.p)
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


def estimate_corrected(observed: Observed, candidates: Candidates) -> PointEstimate:
    """Candidate-domain estimate with exact column multiplicities (module docstring).

    Parameters
    ----------
    observed : Observed
        The column sums.
    candidates : Candidates
        The candidates' positions and column multiplicities m_j.

    Returns
    -------
    PointEstimate
    """
    d = observed.design
    n_candidates = len(candidates.positions)
    touched = candidates.multiplicity > 0
    m = candidates.multiplicity[touched]
    k, k_se = occupancy.occupied_columns(occupancy.passing_columns(observed.counts[touched], d.n, d.q),
                                     observed.counts[touched], d.n, d.q, d.p)
    x = _present_fraction(m.size - k, m)
    slope = 1 / max(np.sum(m * (1 - x) ** np.maximum(m - 1, 0)), 1e-12)
    details = {"occupied_columns": k, "columns": int(m.size),
               "saturated": (m.size - k) / m.size < SATURATED_BELOW}
    luck_se = n_candidates * slope * math.sqrt(_empty_luck_variance(m, x, n_candidates))
    return _combined(observed, n_candidates * x, n_candidates * k_se * slope, luck_se, details,
                     lambda: occupancy.occupied_columns(observed.passing, observed.counts, d.n, d.q, d.p))


def estimate_paper(observed: Observed, candidates: Candidates, threshold: float = 0.5) -> PointEstimate:
    """The paper's threshold estimator over the candidates (module docstring).

    Parameters
    ----------
    observed : Observed
        The column sums.
    candidates : Candidates
        The candidates' filter positions.
    threshold : float
        Users a bit's t̂ must exceed to count as set.

    Returns
    -------
    PointEstimate
        The estimate is the number of candidates whose l bits pass.

    Raises
    ------
    LDPValueError
        A threshold that is not finite.
    """
    if not math.isfinite(threshold):
        raise LDPValueError(f"threshold must be a finite number of users, got {threshold!r}")
    positions = candidates.positions
    hit = (observed.t_hat > threshold)[positions].all(axis=1)
    sd = np.sqrt(np.maximum(observed.variance, 1e-300))
    pi = stats.norm.cdf((observed.t_hat - threshold) / sd)[positions].prod(axis=1)
    visible, noise_se, hash_se, details = _visible_count(observed)
    details["threshold"] = threshold
    return PointEstimate(float(hit.sum()), float(np.sqrt(np.sum(pi * (1 - pi)))), visible,
                         math.hypot(noise_se, hash_se), details)


def estimate_cardinality(observed: Observed, *, method: str, confidence: float, parameters: dict,
                         candidates: Candidates | None = None, threshold: float = 0.5,
                         degraded: dict | None = None) -> CardinalityEstimate:
    """Bounds, point estimate and detection curve of one method, as a
    :class:`~bfrrce.estimation.CardinalityEstimate`.

    The bounds are each one-sided at (1 − confidence)/2. With ``unit="value"`` the total count
    is N = n; with ``unit="item"`` it is unknown, and Σ_j t̂_j/l estimates it; the upper bound is
    then that of the occupied columns (:func:`bfrrce.set_bounds.items_upper`: a column any party
    sets holds at least one party's bit, and the distinct items' l·D slots occupy columns by the
    collision law whoever holds them), ∞ once the filter may be full. With ``unit="value"`` the lower bound is at most n
    (D <= n for sure, so a value pinned there has standard error 0; with a handful of users
    N²/S₂⁺ can exceed n). The lower bound is rounded down to an integer (D is one; a bound of
    1.006 on one value is a slight miss that the rounding absorbs), the upper one down too (D <= x
    means D <= ⌊x⌋: a sharper bound at the same level). An upper bound below the
    lower one (one of them failed, or column sums the model cannot produce) lowers the lower
    bound to it, so the interval is never empty and the upper bound keeps its own level, and
    ``details["bounds_crossed"]`` says so.

    Parameters
    ----------
    observed : Observed
        The column sums and their design.
    method : {"fill", "corrected", "paper"}
        The point estimator (:data:`METHODS`).
    confidence : float
        Joint level of the two bounds, in (0, 1).
    parameters : dict
        Shown in the result (ε, L, l, ...).
    candidates : Candidates, optional
        Needed by "corrected" and "paper".
    threshold : float
        The paper's threshold (users).
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
    return estimate_cardinalities(observed, [(method, threshold)], confidence=confidence, parameters=parameters,
                                  candidates=candidates, degraded=degraded)[0]


def estimate_cardinalities(observed: Observed, runs, *, confidence: float, parameters: dict,
                           candidates: Candidates | None = None,
                           degraded: dict | None = None) -> list[CardinalityEstimate]:
    """:func:`estimate_cardinality` of several methods on the same sums, the bounds (which depend
    on the sums alone) computed once.

    Parameters
    ----------
    observed : Observed
        The column sums and their design.
    runs : sequence of (str, float)
        (method, threshold) pairs.
    confidence, parameters, candidates, degraded
        As :func:`estimate_cardinality`.

    Returns
    -------
    list of CardinalityEstimate
        One per run, in order.

    Raises
    ------
    LDPValueError
        As :func:`estimate_cardinality`.
    """
    if not 0 < confidence < 1:
        raise LDPValueError(f"confidence must be in (0, 1), got {confidence!r}")
    for method, _ in runs:
        if method not in METHODS:
            raise LDPValueError(f"method must be one of {METHODS}, got {method!r}")
        if method != "fill" and (candidates is None or len(candidates.positions) == 0):
            raise LDPValueError(f"method {method!r} needs a non-empty list of candidates")
    design, n = observed.design, observed.design.n
    alpha = (1 - confidence) / 2
    lower, low, lower_stderr = bounds.lower_bound(observed, alpha)
    if design.one_value_each:
        upper, up = bounds.upper_bound_over_laws(observed, degraded or {}, alpha)
    else:       # sets: the occupied columns bound the distinct items, whoever holds them
        from ..set_bounds import UPPER_SHARES, items_upper          # (that module imports this package)
        cells = UPPER_SHARES[0] / (UPPER_SHARES[0] + UPPER_SHARES[1])
        upper = items_upper(observed, cells * alpha, (1 - cells) * alpha)
        up = {"upper_by_occupied_columns": upper}
    if design.one_value_each and lower > n:       # D <= n for sure: the bound keeps its level
        lower, lower_stderr = float(n), lambda: 0.0
    lower = float(math.floor(lower + 1e-9))       # D is an integer: D >= x means D >= ⌊x⌋ too
    upper = float(math.floor(upper)) if math.isfinite(upper) else upper    # D <= x means D <= ⌊x⌋
    if design.one_value_each and n >= 1:         # D >= 1 for sure: an upper bound below 1 only misses
        upper = max(upper, 1.0)
    crossed = upper < lower                       # a bound failed, or sums the model cannot give
    lower = min(lower, upper)                     # never raise an upper bound from a lower one
    p, q, l = design.p, design.q, design.l
    limit = detection_limit(n, p, q, l)
    f50, f90 = limit[0.5], limit[0.9]
    curve = {} if math.isinf(f50) else {
        f: detection_probability(f, n, p, q, l) for f in (f50 / 4, f50 / 2, f50, f90) if math.isfinite(f)}
    shared = _Shared((lower, upper), lower_stderr, {**low, **up, "bounds_crossed": crossed}, confidence,
                     limit, curve, dict(parameters, n=n))
    return [_assemble(observed, shared, method, threshold, candidates) for method, threshold in runs]


@dataclasses.dataclass(frozen=True)
class _Shared:
    """What the estimates of every method on the same sums share: the bounds, the lower bound's
    standard error (a function: computed only for a value pinned at it), the bounds' details, the
    level, the detection limit and curve, and the parameters shown."""

    interval: tuple[float, float]
    lower_stderr: Callable[[], float]
    details: dict
    confidence: float
    limit: dict
    curve: dict
    parameters: dict


def _assemble(observed: Observed, shared: _Shared, method: str, threshold: float,
              candidates: Candidates | None) -> CardinalityEstimate:
    """One method's :class:`CardinalityEstimate` within the bounds of :func:`estimate_cardinalities`."""
    lower, upper = shared.interval
    if method == "fill":
        point = checked_by_classes(observed, estimate_fill(observed), shared.interval)
    elif method == "corrected":
        point = estimate_corrected(observed, candidates)
    else:
        point = estimate_paper(observed, candidates, threshold)
    value, se, pinned = point.value, point.std_error, {}
    if method != "paper" and value <= lower:       # pinned at the bound: it has the bound's spread
        value, se = lower, shared.lower_stderr()
        pinned["lower_stderr"] = se
    elif method != "paper":
        value = min(value, upper)
    z = -float(special.ndtri((1 - shared.confidence) / 2))
    visible, visible_se = point.visible, point.visible_se
    shown = Count(visible, visible_se, (max(visible - z * visible_se, 0.0), visible + z * visible_se),
                  shared.confidence)
    return CardinalityEstimate(
        float(value), float(se), (float(lower), float(upper)), shared.confidence,
        "the paper's threshold rule" if method == "paper" else point.assumption or ASSUMPTION, shown, shared.limit, shared.curve,
        method, dict(shared.parameters), {**point.details, **shared.details, **pinned})
