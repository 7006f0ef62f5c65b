"""Parameter advice: choose L, l and the perturbation before collecting (docs/estimation.md).

The user gives n, ε and a plausible range of the number of distinct values D; the advisor
scores every configuration (L, l, perturbation) on data with D equally frequent values (n/D
users each, the most favourable spread: a skewed one only hides more values) for D on a
logarithmic grid of the range, and keeps the configuration with the smallest score, the
mean over the grid (the expected score when D is log-uniform over the range). Two objectives:

``"aare"`` (the default)
    the expected |value − D|/D of the point estimate;
``"width"``
    the expected log-ratio ln(upper/lower) of the confidence bounds of ``estimate()``, which
    hold for any data: the narrowest interval.

Two ways to score them:

``"analytic"`` (``"aare"`` only, the default: microseconds a configuration)
    a model of the point estimate from the noise and the detection probability of a column
    (:func:`predicted_aare`): the visible count K̂ = K·(π(u) − u)/(1 − u) maximised over the
    p-value thresholds u of the occupancy estimator (π(u) the power of the test of one occupied
    column), its binomial variance and the collision variance of the filter; the equal-frequency
    estimate S scored with the variance of the inverse Simpson index, Var Ŝ₂ ≈ 4V₀S₂ + 2LV₀² plus
    the collision term (a moment estimator under the same model: the likelihood estimate that
    ``estimate()`` uses is asymptotically at least as precise, so this errs on the safe side);
    and the estimator's own combination of the two (:func:`bfrrce.estimation.combine`), whose
    bias and standard error give e² = bias² + se². AARE ≈ √(2/π)·e.
``"simulate"`` (only when asked, or for ``"width"``)
    the estimator itself on exactly simulated column sums (:meth:`BFRRCE.simulate`), all
    configurations on the same data and random streams (paired trials), in rounds of
    ``trials`` until the best is ahead of every other configuration by more than 2 standard
    errors of the paired difference, or ``max_trials`` is reached. The configurations
    simulated are the ``screen`` best of the analytic ranking.

The :class:`Suggestion` says which objective and method chose, the margin over the runner-up
and how sure the choice is (Φ(margin/se) of the paired difference when simulated).

A central target: with ``central_epsilon=`` and ``delta=`` (and no ``epsilon``) the reports are
meant to pass a trusted shuffler, and the advisor first picks the largest local ε0 whose n
shuffled reports are (central_epsilon, δ)-DP (:func:`protocols.shuffle.largest_local_epsilon`,
FMT21's numerical bound), then the configuration for that ε0; the explanation shows the
predicted AARE it buys against reports at ε = central_epsilon without a shuffler.

Why l = 1 usually wins: each extra hash splits the budget, and the signal-to-noise ratio per
value falls like 1/√l (docs/estimation.md, "Detection limit").
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from protocols.core.lazy import special, stats
from protocols.core.validation import check_epsilon, check_int
from protocols.errors import LDPTypeError, LDPValueError
from protocols.core.perturbation import count_variance, simulate_column_sums
from protocols.shuffle import largest_local_epsilon

from .calibration import PERTURBATIONS
from .estimation import combine
from .estimation.bounds import FALSE_POSITIVE, MASS_SHARE, THRESHOLDS, slots_excess, values_upper_by_slots
from .estimation.occupancy import P_GRID
from .mechanism import BFRRCE
from .sums import ColumnSums, null_variance

OBJECTIVES = ("width", "aare")
METHODS = ("analytic", "simulate")
GRID_POINTS = 9                 # values of D on the logarithmic grid of the range
Z_GRID = np.array([-NormalDist().inv_cdf(u) for u in P_GRID])     # stats.norm.isf(P_GRID), without importing scipy.stats


@dataclass(frozen=True)
class Suggestion:
    """The advised parameters, the score they won with and the table they were chosen from.

    Attributes
    ----------
    L, l, perturbation
        The configuration to use.
    objective : {"width", "aare"}
        What was minimised.
    method : {"analytic", "simulate"}
        How it was scored.
    score : float
        The winner's score: mean over the grid of D of ln(upper/lower) or of AARE.
    confidence : float
        How sure the choice is when simulated: the probability that the winner's expected score
        is below the runner-up's (normal approximation of the paired difference). NaN when
        analytic: the model has no sampling error, and ``margin`` says how close the runner-up is
        (the model's ranking agrees with the simulation's, Spearman 0.78–0.94 in
        docs/evaluation.md).
    margin : float
        Relative margin of the runner-up over the winner, (score₂ − score₁)/score₁.
    trials : int
        Simulated trials per value of D (0 when analytic).
    grid : tuple of int
        The values of D scored.
    detection_limit : dict
        {probability: users a value needs to be detected with that probability} of the winner.
    table : list of dict
        Every configuration scored: L, l, perturbation, score (and its standard error when
        simulated), sorted by score.
    explanation : str
    epsilon : float
        The local ε the configuration was chosen for.
    shuffled : dict or None
        With a central target: {"central_epsilon", "delta", "epsilon0", "aare", "aare_unshuffled"},
        the predicted AARE (analytic model) of the best configuration at ε0 and at
        ε = central_epsilon.
    """

    L: int
    l: int
    perturbation: str
    objective: str
    method: str
    score: float
    confidence: float
    margin: float
    trials: int
    grid: tuple
    detection_limit: dict
    table: list
    explanation: str
    epsilon: float = math.nan
    shuffled: dict | None = None

    def __str__(self):
        return self.explanation

    @property
    def parameters(self) -> dict:
        """Keyword arguments for :class:`BFRRCE` (with ``epsilon``)."""
        return {"L": self.L, "l": self.l, "perturbation": self.perturbation}


def cardinality_grid(low: int, high: int, points: int = GRID_POINTS) -> np.ndarray:
    """Distinct integers on a logarithmic grid from ``low`` to ``high``.

    Parameters
    ----------
    low, high : int
        Ends of the grid, 1 <= low <= high.
    points : int
        Grid points before rounding and removing repeats.

    Returns
    -------
    numpy.ndarray
        int64, increasing.
    """
    return np.unique(np.geomspace(low, high, points).round().astype(np.int64))


def _power(t, n, p, q):
    """Pr[p-value of a column holding t users <= u] for u in P_GRID (normal approximation of the column sum)."""
    s0 = np.sqrt(count_variance(0, n, p, q))
    st = np.sqrt(count_variance(t, n, p, q))
    return special.ndtr((t * (p - q) - Z_GRID * s0) / st)


def predicted_aare(n: int, D, p: float, q: float, L: int, l: int, columns: float | None = None):
    """Analytic AARE of ``value`` on D equally frequent values (module docstring).

    Parameters
    ----------
    n : int
        Users.
    D : array_like of int
        Numbers of distinct values, each held by n/D users.
    p, q : float
        Flip probabilities of a set and an unset bit.
    L, l : int
        Filter size and hashes.
    columns : float, optional
        Columns the visible count looks at (those the candidates touch); default L.

    Returns
    -------
    numpy.ndarray
        √(2/π)·e with e² = (bias² + se²)/D² of the estimator's combination
        (:func:`bfrrce.estimation.combine`) of the expected visible count and the equal-frequency
        estimate (scored by the inverse Simpson index's variance), capped at (n − D)/D + 1.
    """
    D = np.asarray(D, dtype=float)[:, None]
    cols = float(L if columns is None else columns)
    f = n / D
    empty = (1 - 1 / L) ** (l * D)                       # fraction of empty columns
    occupied = cols * (1 - empty)
    # occupied columns hold k >= 1 values (zero-truncated Poisson, mean λ = lD/L)
    lam = l * D / L
    k = np.arange(1, min(int(lam.max() + 6 * math.sqrt(lam.max()) + 4), 40))     # beyond: saturated
    w = stats.poisson.pmf(k, lam) / -np.expm1(-lam)
    w = w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
    t = np.minimum(k[None, :, None] * f[:, :, None], n)                 # D × k × 1
    power = np.clip(np.einsum("dk,dku->du", w, _power(t, n, p, q)), 0.0, 1.0)     # rounding can pass 1
    gain = occupied * (power - P_GRID) / (1 - P_GRID)
    sd = np.sqrt(occupied * power * (1 - power) + (cols - occupied) * P_GRID * (1 - P_GRID)) / (1 - P_GRID)
    best = np.argmax(gain, axis=1)
    rows = np.arange(D.shape[0])
    k_hat = np.maximum(gain[rows, best], 0.0)
    var_k = sd[rows, best] ** 2
    m = l * D[:, 0]
    pi = (1 - 1 / L) ** m
    hash_var = np.maximum(L * (L - 1) * (1 - 2 / L) ** m + L * pi - (L * pi) ** 2, 0.0)
    empty_hat = np.maximum(cols - k_hat, 0.5) * L / cols
    visible = np.log(empty_hat / L) / (l * math.log1p(-1 / L))
    slope = 1 / (empty_hat * l * -math.log1p(-1 / L))
    se_v = slope * np.sqrt(var_k * (L / cols) ** 2 + hash_var)
    # inverse Simpson index: Σ_v f_v² = n²/D, S₂ = l Σ f² + (n² − Σ f²) l²/L
    squares = n * n / D[:, 0]
    s2 = l * squares + (n * n - squares) * l * l / L
    v0 = null_variance(n, p, q)
    var_s2 = 4 * v0 * s2 + 2 * L * v0 ** 2 + 2 * (l * squares) ** 2 / L
    se_s = D[:, 0] * np.sqrt(var_s2) / ((l - l * l / L) * squares)
    # the estimator's own combination of the two, at their expected values
    err = np.empty(D.shape[0])
    for i, truth in enumerate(D[:, 0]):
        value, se, _ = combine(float(visible[i]), float(se_v[i]), float(truth), float(se_s[i]))
        err[i] = math.hypot(value - truth, se) / truth
    return np.minimum(math.sqrt(2 / math.pi) * err, (n - D[:, 0]) / D[:, 0] + 1)


def predicted_upper(n: int, D: float, p: float, q: float, L: int, l: int) -> float:
    """The upper bound's mass balance at the truth on D equally frequent values, all visible: the
    users outside their columns are known to z·σ (z at the share of the level that the bound
    gives them below 4·L/l, 0.025·0.85·0.9), σ⁻² = σ_in⁻² + σ_out⁻² with
    σ_in² = l·D·Var(t̂ | t = n/D) over the occupied columns and σ_out² over the others
    (Var(t̂ | 0) each), turned into values by :func:`.estimation.bounds.values_upper_by_slots`
    (the oracle of ``benchmarks/coverage.py``; docs/estimation.md, "Named cases").

    Parameters
    ----------
    n : int
        Users.
    D : float
        Distinct values, each held by n/D users.
    p, q : float
        Flip probabilities of a set and an unset bit.
    L, l : int
        Filter size and hashes.

    Returns
    -------
    float
        The predicted upper bound on D (values).
    """
    return values_upper_by_slots(*_predicted_balance(n, D, p, q, L, l))


def predicted_within(n: int, D: float, p: float, q: float, L: int, l: int, target: float) -> bool:
    """Whether :func:`predicted_upper` is at most ``target``, by one evaluation of the slots'
    inequality at the target (:func:`.estimation.bounds.slots_excess`) instead of its search.

    Parameters
    ----------
    n, D, p, q, L, l
        As :func:`predicted_upper`.
    target : float
        Values.

    Returns
    -------
    bool
    """
    users_out, occupied, L, l, level = _predicted_balance(n, D, p, q, L, l)
    return slots_excess(users_out, occupied, L, l, level)(target) > 0


def _predicted_balance(n, D, p, q, L, l):
    """(U⁺, occupied columns, L, l, the slots' level) of :func:`predicted_upper`."""
    occupied = L * -math.expm1(l * D * math.log1p(-1 / L))
    inner = l * D * float(count_variance(min(n / D, n), n, p, q))
    outer = max(L - occupied, 0.0) * float(count_variance(0, n, p, q))
    sigma = math.sqrt(1 / (1 / inner + 1 / outer)) if inner > 0 and outer > 0 else math.sqrt(inner)
    share = 0.025 * THRESHOLDS[0][0]
    z = -float(special.ndtri(MASS_SHARE * share))
    return z * sigma / (p - q), min(round(occupied), L - 1), L, l, (1 - MASS_SHARE - FALSE_POSITIVE) * share


def _configurations(Ls, ls, perturbations):
    return [(L, l, pert) for L in Ls for l in ls if l <= L for pert in perturbations]


def _default_Ls(low, high):
    """Powers of two from low/4 to 16·high (at least 16, at most 2^16): the loads D/L at which
    the fill ratio can be inverted."""
    return [2 ** k for k in range(4, 17) if low / 4 <= 2 ** k <= 16 * high] or [16]


def _analytic(n, epsilon, grid, configs, columns_of):
    scores = []
    for L, l, pert in configs:
        mech = BFRRCE(epsilon=epsilon, L=L, l=l, perturbation=pert)
        scores.append(float(np.mean(predicted_aare(n, grid, mech.p, mech.q, L, l, columns_of(L, l)))))
    return np.array(scores)


def _trial_scores(n, epsilon, grid, configs, candidates, objective, seed, trials, start):
    """Per-trial scores (configs × trials): mean over the grid of the objective."""
    out = np.empty((len(configs), trials))
    for t in range(trials):
        total = np.zeros(len(configs))
        for g, D in enumerate(grid):
            rng = np.random.default_rng([seed, g, start + t])
            per_value = np.diff(np.linspace(0, n, D + 1).round().astype(np.int64))
            drawn = candidates is not None and D <= len(candidates)
            if drawn:
                values = np.asarray(candidates)[rng.choice(len(candidates), size=D, replace=False)]
            state = rng.bit_generator.state
            for c, (L, l, pert) in enumerate(configs):
                rng.bit_generator.state = state                  # common random numbers
                mech = BFRRCE(epsilon=epsilon, L=L, l=l, perturbation=pert)
                if drawn:
                    agg = mech.simulate(values, counts=per_value, rng=rng)
                else:        # random values hash to uniform positions: draw those, not the values
                    t_users = mech.bloom.column_counts(rng.integers(0, L, (D, l)), per_value)
                    agg = ColumnSums(mech, simulate_column_sums(t_users, n, mech.p, mech.q, rng), n)
                est = mech.estimate(agg, candidates=candidates if drawn else None)
                if objective == "width":
                    lo, hi = est.interval
                    total[c] += math.log(max(hi, 1.0) / max(lo, 1.0))
                else:
                    total[c] += abs(est.value - D) / D
        out[:, t] = total / len(grid)
    return out


def suggest_parameters(n: int, epsilon: float | None = None, cardinality_range: tuple | None = None,
                       candidates=None, *, objective: str = "aare", method: str | None = None, Ls=None,
                       ls=(1, 2, 3), perturbations=PERTURBATIONS, trials: int = 10, max_trials: int = 100,
                       screen: int = 6, rng: int = 0, central_epsilon: float | None = None,
                       delta: float | None = None) -> Suggestion:
    """Suggest (L, l, perturbation) for the narrowest interval or the lowest AARE.

    Parameters
    ----------
    n : int
        Number of users.
    epsilon : float, optional
        User-level budget of each report (required unless ``central_epsilon`` is given).
    cardinality_range : (int, int), optional
        Smallest and largest plausible number of distinct values (default 1..n: nothing known).
    candidates : sequence, optional
        The candidate domain: the columns it touches are the ones the visible count looks at,
        and the simulation draws the values from it.
    objective : {"aare", "width"}
        Minimise the AARE of ``value`` (the default), or the expected ln(upper/lower) of the
        bounds (simulated: seconds to a minute).
    method : {"analytic", "simulate"}, optional
        Default: "analytic" for "aare" (a tenth of a second for the 78 default configurations,
        once scipy is imported), "simulate" for "width" (which has no analytic model).
    Ls, ls, perturbations : sequences, optional
        Configurations to consider (default L: powers of two from low/4 to 16·high).
    trials, max_trials : int
        Simulated trials per round and in all, per value of D.
    screen : int
        Configurations simulated: the best of the analytic ranking.
    rng : int
        Seed of the simulation.
    central_epsilon, delta : float, optional
        A central (ε, δ) target for reports that pass a trusted shuffler, instead of
        ``epsilon``: the local ε is the largest whose n shuffled reports meet it (module
        docstring; docs/privacy.md, "Shuffling").

    Returns
    -------
    Suggestion

    Raises
    ------
    LDPValueError
        A range outside 1..n or reversed, an unknown objective or method, "analytic" with
        "width", both or neither of ``epsilon`` and ``central_epsilon``, or ``central_epsilon``
        without ``delta``.

    References
    ----------
    Whang, Vander-Zanden, Taylor, "A linear-time probabilistic counting algorithm for database
    applications", ACM TODS 1990 (the fill-ratio inversion and its variance).
    """
    n = check_int(n, "n", 1)
    if (epsilon is None) == (central_epsilon is None):
        raise LDPValueError("give either epsilon (local) or central_epsilon with delta (shuffled), "
                            f"got epsilon={epsilon!r}, central_epsilon={central_epsilon!r}")
    if central_epsilon is not None:
        if delta is None:
            raise LDPValueError("central_epsilon needs delta, the δ of the central guarantee")
        epsilon = largest_local_epsilon(central_epsilon, n, delta)
        shuffled = {"central_epsilon": float(central_epsilon), "delta": float(delta), "epsilon0": epsilon}
    epsilon = check_epsilon(epsilon)
    cardinality_range = (1, n) if cardinality_range is None else cardinality_range
    if not isinstance(cardinality_range, (tuple, list)) or len(cardinality_range) != 2:
        raise LDPTypeError(f"cardinality_range must be (low, high), got {cardinality_range!r}")
    lo, hi = (check_int(c, "cardinality_range", 1, n) for c in cardinality_range)
    if lo > hi:
        raise LDPValueError(f"cardinality_range must be (low, high) with low <= high, got {cardinality_range}")
    if objective not in OBJECTIVES:
        raise LDPValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    method = method or ("analytic" if objective == "aare" else "simulate")
    if method not in METHODS:
        raise LDPValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "analytic" and objective != "aare":
        raise LDPValueError("the analytic score exists for objective='aare' only")
    trials, max_trials = check_int(trials, "trials", 1), check_int(max_trials, "max_trials", 1)
    Ls = tuple(Ls) if Ls is not None else tuple(_default_Ls(lo, hi))
    count = None if candidates is None else len(candidates)
    args = (n, float(epsilon), lo, hi, count, objective, method, Ls, tuple(ls), tuple(perturbations),
            trials, max_trials, screen, rng)
    if method == "analytic" or candidates is None:        # the analytic score needs only the count
        suggestion = _cached(*args)
    else:
        suggestion = _suggest(*args, candidates=candidates)
    if central_epsilon is None:
        return suggestion
    # the accuracy the shuffled ε0 buys: the analytic AARE of the best configuration at ε0 and at
    # ε = central_epsilon (what the same target costs without a shuffler)
    aare = {key: _cached(n, eps, *args[2:5], "aare", "analytic", *args[7:]).score
            for key, eps in (("aare", epsilon), ("aare_unshuffled", float(central_epsilon)))}
    shuffled.update(aare)
    line = (f"central target (ε, δ) = ({central_epsilon:g}, {delta:g}) for {n:,} shuffled reports: "
            f"local ε0 = {epsilon:.3g} (FMT21 numerical bound); predicted AARE {aare['aare']:.3g}, "
            f"against {aare['aare_unshuffled']:.3g} at local ε = {central_epsilon:g} without a shuffler "
            "(analytic model, best configuration at each ε; needs a shuffler trusted not to collude "
            "and one report per user).")
    return dataclasses.replace(suggestion, explanation=line + "\n" + suggestion.explanation, shuffled=shuffled)


@lru_cache(maxsize=256)
def _cached(*args):
    return _suggest(*args)


def _suggest(n, epsilon, lo, hi, count, objective, method, Ls, ls, perturbations, trials,
             max_trials, screen, rng, candidates=None):
    grid = cardinality_grid(lo, hi)
    configs = _configurations(Ls, ls, perturbations)
    if count is not None:
        columns_of = lambda L, l: L * (1 - (1 - 1 / L) ** (l * count))      # noqa: E731
    else:
        columns_of = lambda L, l: None                                     # noqa: E731
    analytic = _analytic(n, epsilon, grid, configs, columns_of)
    order = np.argsort(analytic, kind="stable")
    if method == "analytic":
        table = [dict(zip(("L", "l", "perturbation"), configs[i]), score=float(analytic[i])) for i in order]
        best, second = table[0], table[1] if len(table) > 1 else table[0]
        confidence, done = math.nan, 0
    else:
        kept = [configs[i] for i in order[:max(screen, 1)]]
        runs = np.empty((len(kept), 0))
        while True:
            runs = np.hstack([runs, _trial_scores(n, epsilon, grid, kept, candidates, objective, rng,
                                                  trials, runs.shape[1])])
            mean = runs.mean(axis=1)
            lead = int(np.argmin(mean))
            diff = runs - runs[lead]
            se = diff.std(axis=1, ddof=1) / math.sqrt(runs.shape[1]) if runs.shape[1] > 1 else np.full(len(kept), np.inf)
            z = np.where(np.arange(len(kept)) == lead, np.inf, diff.mean(axis=1) / np.maximum(se, 1e-300))
            if np.all(z > 2) or runs.shape[1] + trials > max_trials:
                break
        sort = np.argsort(mean, kind="stable")
        se_mean = runs.std(axis=1, ddof=1) / math.sqrt(runs.shape[1])
        table = [dict(zip(("L", "l", "perturbation"), kept[i]), score=float(mean[i]),
                      std_error=float(se_mean[i]), z_vs_best=float(z[i])) for i in sort]
        best, second = table[0], table[1] if len(table) > 1 else table[0]
        confidence = float(stats.norm.cdf(second.get("z_vs_best", np.inf))) if len(table) > 1 else 1.0
        done = runs.shape[1]
    margin = (second["score"] - best["score"]) / best["score"] if best["score"] > 0 else 0.0
    mech = BFRRCE(epsilon=epsilon, L=best["L"], l=best["l"], perturbation=best["perturbation"])
    limit = mech.detection_limit(n)
    what = "ln(upper/lower) of the bounds" if objective == "width" else "AARE of the estimate"
    how = ("analytic model" if method == "analytic" else
           f"simulation, {done} paired trials per D, the {len(table)} best of the analytic ranking")
    by_l = {l: min(r["score"] for r in table if r["l"] == l) for l in ls if any(r["l"] == l for r in table)}
    lines = [f"L={best['L']}, l={best['l']}, perturbation={best['perturbation']}: smallest {what} "
             f"({best['score']:.3g}, mean over D = {', '.join(map(str, grid))}; "
             f"n={n:,}, ε={epsilon:g}; {how}).",
             f"runner-up L={second['L']}, l={second['l']}, {second['perturbation']}: {second['score']:.3g} "
             f"({100 * margin:.1f}% worse)" + (
                 "; a model: method='simulate' measures the choice" if method == "analytic" else
                 f"; probability that the choice is right {confidence:.3f}") + ".",
             "best score by number of hashes: " + ", ".join(f"l={l}: {s:.3g}" for l, s in by_l.items()),
             f"values held by fewer than {limit[0.5]:,.0f} users are detected with probability < 50%."]
    if n / hi < limit[0.5]:
        lines.append(f"with {hi:,} equally frequent values each has {n / hi:,.0f} users, below that "
                     "limit: the bounds will be wide there.")
    return Suggestion(best["L"], best["l"], best["perturbation"], objective, method, best["score"],
                      confidence, margin, done, tuple(int(d) for d in grid), limit, table, "\n".join(lines),
                      epsilon)
