"""The result objects of the cardinality estimators (field names shared with
:class:`protocols.core.base.Estimate`: ``value``, ``std_error``, ``interval``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from protocols.core.base import Estimate


class Interval(NamedTuple):
    """Lower and upper confidence bounds; a tuple ``(lower, upper)`` with names."""

    lower: float
    upper: float


def _number(x):
    """A float for JSON: None for ∞ or NaN (JSON has neither)."""
    x = float(x)
    return x if math.isfinite(x) else None


Count = Estimate
"""The visible count's value, standard error and interval: :class:`protocols.Estimate` (one result
type for value/std_error/interval across the project; the name is kept for existing callers)."""


IDENTIFIED_RATIO = 2.0      # upper/lower at most this: D is located and value gets a ±
EXTRAPOLATION_HINT = ("a model-based count, if the frequencies follow a power law (checked; outside these "
                      "bounds' guarantee): extrapolate(), or bfrrce estimate --extrapolate")   # printed where not located


def _fmt(x):
    return "∞" if math.isinf(x) else f"{x:,.0f}"


def identified(interval: tuple[float, float]) -> bool:
    """Whether the bounds locate D: upper <= :data:`IDENTIFIED_RATIO`·lower.

    Parameters
    ----------
    interval : (float, float)
        The lower and upper bounds on D.

    Returns
    -------
    bool
        True when lower > 0 and upper <= :data:`IDENTIFIED_RATIO`·lower.
    """
    lo, hi = interval
    return lo > 0 and hi <= IDENTIFIED_RATIO * lo


@dataclass(frozen=True)
class CardinalityEstimate:
    """The number of distinct values: bounds that hold for any data, and a point estimate.

    Attributes
    ----------
    value : float
        Point estimate of D, inside ``interval`` (except for the ``paper`` baseline, reported as
        the paper defines it); ``assumption`` says what it rests on.
    std_error : float
        Its standard error (delta method; see docs/estimation.md).
    interval : (float, float)
        Lower and upper confidence bounds on the true number of distinct values, jointly at level
        ``confidence`` for any frequency distribution (docs/estimation.md).
    confidence : float
        Level of ``interval``.
    assumption : str
        What ``value`` assumes beyond the bounds.
    visible : Count
        The visible count: occupied columns that stand out of the noise, inverted by the
        collision law (docs/estimation.md). Values well above the detection limit are all in it,
        values near the limit in part; its interval is value ± z·std_error and is not a
        confidence interval for the number of values held by at least f50 users (measured by
        ``benchmarks/coverage.py``).
    detection_limit : dict
        {probability: users a value needs to be detected with that probability}.
    detection : dict
        {users: detection probability} at a quarter, half, one and the 90% point of the limit.
    method : str
        The estimator: ``"fill"``, ``"corrected"`` or ``"paper"``.
    parameters : dict
        ε (user level), L, l, n, perturbation, unit.
    details : dict
        Intermediate results of the bounds and the estimator.
    """

    value: float
    std_error: float
    interval: tuple[float, float]
    confidence: float
    assumption: str
    visible: Count
    detection_limit: dict[float, float]
    detection: dict[float, float]
    method: str
    parameters: dict[str, object]
    details: dict[str, object] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "interval", Interval(*self.interval))
        object.__setattr__(self, "visible", replace(self.visible, interval=Interval(*self.visible.interval)))

    @property
    def status(self) -> str:
        """What ``value`` is: ``"estimate"``, ``"lower bound"`` (the point estimate fell below the
        lower bound and was raised to it: quote the bounds), ``"not identified"`` (the bounds are
        more than 2× apart: the value rests on its assumption, with no ±) or ``"paper baseline"``."""
        if self.method == "paper":
            return "paper baseline"
        if self.value == self.interval[0]:
            return "lower bound"
        return "estimate" if identified(self.interval) else "not identified"

    @property
    def warnings(self) -> list[str]:
        """Conditions that weaken the result, one sentence each (empty when none)."""
        out = []
        if self.details.get("saturated"):
            L = self.parameters.get("L")
            out.append("fewer than 5% of the columns look empty: the filter is nearly full, so the "
                       "estimate rests on few empty columns; use a larger L"
                       + (f" (at least {4 * L:,}, or let the advisor choose: --L auto)" if isinstance(L, int) else ""))
        return out

    def to_dict(self) -> dict:
        """The whole result as JSON-ready values (the schema is in docs/cli.md).

        Returns
        -------
        dict
            ``distinct`` (bounds), ``estimate`` (value, std_error, status, method, assumption),
            ``visible``, ``detection_limit``, ``detection``, ``parameters``, ``warnings``; None
            (JSON ``null``) stands for an unbounded upper bound or an undefined number.
        """
        return {
            "distinct": {"lower": _number(self.interval[0]), "upper": _number(self.interval[1]),
                         "confidence": self.confidence},
            "estimate": {"value": _number(self.value), "std_error": _number(self.std_error),
                         "status": self.status, "method": self.method, "assumption": self.assumption},
            "visible": {"value": _number(self.visible.value), "std_error": _number(self.visible.std_error)},
            "detection_limit": {str(pr): _number(users) for pr, users in self.detection_limit.items()},
            "detection": [{"users": _number(users), "probability": _number(pr)}
                          for users, pr in self.detection.items()],
            "parameters": dict(self.parameters),
            "warnings": self.warnings,
        }

    @property
    def lower(self) -> float:
        """Lower confidence bound on the number of distinct values."""
        return self.interval[0]

    @property
    def upper(self) -> float:
        """Upper confidence bound on the number of distinct values."""
        return self.interval[1]

    def __str__(self):
        lo, hi = self.interval
        level = f"{100 * self.confidence:g}%"
        curve = ", ".join(f"{_fmt(f)}: {100 * pr:.0f}%" for f, pr in self.detection.items())
        vis = self.visible
        params = ", ".join(f"{k}={v}" for k, v in self.parameters.items())
        located = identified(self.interval) or self.method == "paper"
        at_lower = (f"estimate {_fmt(self.value)} [{self.method}]: the lower bound (the point estimate "
                    "fell below it; quote the bounds)")
        if located:
            at_n = self.parameters.get("unit") == "value" and self.value >= self.parameters.get("n", math.inf)
            spread = (f"(+0 / −{self.std_error:,.1f}) [{self.method}]: every user alone, the most D can be, so "
                      "its error is one-sided" if at_n and self.method != "paper" else
                      f"± {self.std_error:,.1f} [{self.method}]")
            head = [f"distinct values: between {_fmt(lo)} and {_fmt(hi)} ({level}, whatever the frequencies)",
                    (at_lower if self.value == lo and self.method != "paper" else
                     f"estimate {self.value:,.1f} {spread}, assuming {self.assumption}")]
        else:
            where = self.details.get("identified_at") or {}
            hint = " or ".join(f"{k} ≈ {v:,.3g}" for k, v in where.items() if v is not None)
            head = [(f"distinct values: between {_fmt(lo)} and {_fmt(hi)} ({level}, whatever the "
                     "frequencies): the reports do not locate it closer; values held by few users are "
                     "too rare to see at this ε, and most of the range is such values"),
                    (at_lower if self.value == lo else
                     f"estimate {self.value:,.0f} [{self.method}], not a measurement (no ±: the data do "
                     f"not support one), assuming {self.assumption}")]
            model = f"the advisor's model (about {self.value:,.0f} values of equal frequency)"
            if hint:
                head.append(f"to locate it within {IDENTIFIED_RATIO:g}×, {model} needs {hint}")
            elif where:
                head.append(f"no ε up to 8× this one and no n up to 1,024× would locate it within "
                            f"{IDENTIFIED_RATIO:g}× by {model}: the users outside the visible columns "
                            "stay uncertain by the noise of the visible columns themselves")
            if self.parameters.get("unit") == "value" and self.parameters.get("l") == 1:
                head.append(EXTRAPOLATION_HINT)
        lines = [
            *head,
            f"detection limit: {_fmt(self.detection_limit.get(0.5, math.nan))} users (50%); chance that a "
            f"value passes the per-value test (5% false positives), by its users: "
            f"{curve or 'none at this n'}",
            f"visible values (occupied columns that stand out of the noise, inverted by the collision "
            f"law; values near the detection limit are counted in part): {vis.value:,.1f} ± "
            f"{vis.std_error:,.1f}",
        ]
        if self.parameters.get("unit") == "item":
            lines.append(f"privacy: ε = {self.parameters.get('epsilon')} per item; a party holding "
                         "k items gets k·ε")
        shuffled = self.details.get("shuffled")
        if shuffled:
            lines.append(f"if these {shuffled['n']:,} reports were shuffled: central (ε, δ) = "
                         f"({shuffled['epsilon']:.4g}, {shuffled['delta']:g}) from local ε = "
                         f"{shuffled['epsilon0']:g} (FMT21 bound; needs a shuffler trusted not to collude "
                         "and one report per user)")
        lines.append(f"parameters: {params}")
        return "\n".join(lines + [f"warning: {w}" for w in self.warnings])
