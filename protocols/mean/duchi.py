"""Duchi, Jordan, Wainwright (JASA 2018) stochastic rounding for bounded means.

On t ∈ [−1, 1]: report ±C with C = (e^ε + 1)/(e^ε − 1), Pr[+C] = 1/2 + t/(2C); per-user
Var = C² − t². Interface and aggregate: :mod:`protocols.mean.base`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from protocols.core.randomness import uniform
from protocols.mean.base import MeanMechanism


@dataclass(frozen=True, kw_only=True)
class DuchiMean(MeanMechanism):
    """Reports ±C, C = (e^ε + 1)/(e^ε − 1), with Pr[+C] = 1/2 + t/(2C); Var = C² − t².

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 (ε-LDP, tight).
    low, high : float
        The interval of the values.

    References
    ----------
    J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally
    private estimation", JASA 113(521), 2018.
    """

    @property
    def C(self) -> float:
        """C = (e^ε + 1)/(e^ε − 1)."""
        return (math.exp(self.epsilon) + 1) / (math.exp(self.epsilon) - 1)

    @property
    def unit(self) -> float:
        """Reports are ±C: the sum is an integer number of C."""
        return self.C

    def _perturb(self, t, src):
        up = uniform(src, t.size) < 0.5 + t / (2 * self.C)
        return np.where(up, self.C, -self.C)

    def output_distribution(self, t: float) -> dict[float, float]:
        """Exact law of one report: ±C with probabilities 1/2 ± t/(2C).

        Parameters
        ----------
        t : float
            The value mapped to [−1, 1].

        Returns
        -------
        dict
            {C: Pr[+C], −C: Pr[−C]}.
        """
        return {self.C: 0.5 + t / (2 * self.C), -self.C: 0.5 - t / (2 * self.C)}

    def unit_variance(self, t: float | np.ndarray) -> float | np.ndarray:
        """Per-user variance at unit value t: C² − t².

        Parameters
        ----------
        t : float or numpy.ndarray
            Unit value(s) in [−1, 1].

        Returns
        -------
        float or numpy.ndarray
        """
        return self.C ** 2 - t ** 2
