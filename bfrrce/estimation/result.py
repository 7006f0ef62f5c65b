"""The result object of every cardinality estimator (field names shared with
:class:`protocols.base.Estimate`: ``value``, ``std_error``, ``interval``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CardinalityEstimate:
    """An estimate of the number of distinct values, with its uncertainty and visibility.

    Attributes
    ----------
    value, std_error : float
    interval : (float, float)
        Confidence interval at level ``confidence``.
    detection_limit : dict
        {probability: users needed for a value to be detected with that probability}.
    method : str
    parameters : dict
        ε (user level), L, l, n, perturbation, unit, and method options.
    details : dict
        Method-specific intermediate results (π̂₀, γ, detected candidates, ...).
    """

    value: float
    std_error: float
    interval: tuple
    confidence: float
    detection_limit: dict
    method: str
    parameters: dict
    details: dict = field(default_factory=dict, repr=False)

    def __str__(self):
        lo, hi = self.interval
        limit = ", ".join(f"{int(100 * k)}%: {v:,.0f} users" for k, v in self.detection_limit.items())
        params = ", ".join(f"{k}={v}" for k, v in self.parameters.items())
        text = (f"distinct values ≈ {self.value:,.1f} ± {self.std_error:,.1f} "
                f"({100 * self.confidence:g}% CI {lo:,.1f} – {hi:,.1f}) [{self.method}"
                + (f", {self.details['null_estimator']}" if "null_estimator" in self.details else "")
                + "]\n"
                f"detection limit: {limit}; values held by fewer users are not counted\n"
                f"parameters: {params}")
        if self.details.get("saturated"):
            text += ("\nwarning: fewer than 5% of the columns look empty: the filter is nearly full "
                     "and the count is unreliable; use a larger L")
        return text


