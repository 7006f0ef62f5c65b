"""Piecewise mechanism for bounded means (Wang et al., ICDE 2019).

With s = e^{ε/2}, C = (s + 1)/(s − 1), ℓ(t) = (C + 1)t/2 − (C − 1)/2, r(t) = ℓ(t) + C − 1: report
uniform on [ℓ, r] w.p. s/(s + 1), else uniform on [−C, ℓ) ∪ (r, C]; per-user
Var = t²/(s − 1) + (s + 3)/(3(s − 1)²). The output is stochastically rounded to 2^-20·ℤ.
Interface and aggregate: :mod:`protocols.mean.base`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.randomness import bernoulli, uniform
from protocols.mean.base import GRID, MeanMechanism, snap


@dataclass(frozen=True, kw_only=True)
class PiecewiseMean(MeanMechanism):
    """The piecewise mechanism, stochastically rounded to 2^-20.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    low, high : float
        The interval of the values.

    References
    ----------
    N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu, "Collecting and
    analyzing multidimensional data with local differential privacy", ICDE 2019.
    """

    @property
    def C(self) -> float:
        """C = (s + 1)/(s − 1), s = e^{ε/2}."""
        s = math.exp(self.epsilon / 2)
        return (s + 1) / (s - 1)

    def _perturb(self, t, src):
        s, C = math.exp(self.epsilon / 2), self.C
        left = (C + 1) / 2 * t - (C - 1) / 2
        right = left + C - 1
        centre = bernoulli(src, s / (s + 1), t.size)
        u = uniform(src, t.size)
        inner = left + u * (C - 1)
        # outside: a point of [−C, ℓ) ∪ (r, C], total length C + 1, mapped from u·(C + 1)
        w = u * (C + 1)
        outer = np.where(w < left + C, -C + w, right + (w - (left + C)))
        return snap(np.where(centre, inner, outer), src)

    def density(self, y: ArrayLike, t: float) -> np.ndarray:
        """Exact output density before the 2^-20 rounding.

        s/(s + 1)/(C − 1) on [ℓ(t), r(t)], 1/((s + 1)(C + 1)) elsewhere on [−C, C], 0 outside.

        Parameters
        ----------
        y : array_like of float
            Output points.
        t : float
            The value mapped to [−1, 1].

        Returns
        -------
        numpy.ndarray
        """
        s, C = math.exp(self.epsilon / 2), self.C
        left = (C + 1) / 2 * t - (C - 1) / 2
        y = np.asarray(y, dtype=float)
        inside = (y >= left) & (y <= left + C - 1)
        out = np.where(inside, s / (s + 1) / (C - 1), 1 / ((s + 1) * (C + 1)))
        return np.where(np.abs(y) <= C, out, 0.0)

    def output_distribution(self, t: float, outputs: ArrayLike | None = None) -> dict[float, float]:
        """Exact Pr[report = y | t] at the grid points y of ``outputs`` (default: every grid point
        of [−C − g, C + g], about 2C·2^20 of them), for the ideal sampler (uniforms with 53 bits).

        Parameters
        ----------
        t : float
            The value mapped to [−1, 1].
        outputs : array_like of float, optional
            Grid points (multiples of 2^-20).

        Returns
        -------
        dict
            {y: Pr[report = y | t]}.

        Notes
        -----
        Stochastic rounding sends Y to k·g with weight hat(Y/g − k) = max(0, 1 − |Y/g − k|), so
        Pr[k·g] = g·Σ_pieces h·(H(b/g − k) − H(a/g − k)) over the pieces [a, b] of the
        piecewise-constant density (:meth:`density`), with H(u) = ∫_{−1}^{clip(u, −1, 1)} hat.
        """
        s, C = math.exp(self.epsilon / 2), self.C
        left = (C + 1) / 2 * t - (C - 1) / 2
        h_in, h_out = s / (s + 1) / (C - 1), 1 / ((s + 1) * (C + 1))
        if outputs is None:
            k = np.arange(math.floor(-C / GRID) - 1, math.ceil(C / GRID) + 2).astype(float)
        else:
            k = np.round(np.asarray(outputs, dtype=float) / GRID)

        def H(u):
            u = np.clip(u, -1.0, 1.0)
            return np.where(u <= 0, (u + 1) ** 2 / 2, 1 - (1 - u) ** 2 / 2)

        def piece(a, b):
            return H(b / GRID - k) - H(a / GRID - k)

        probs = GRID * (h_out * piece(-C, C) + (h_in - h_out) * piece(left, left + C - 1))
        return {float(v): float(pr) for v, pr in zip(k * GRID, probs)}

    def unit_variance(self, t: float | np.ndarray) -> float | np.ndarray:
        """Per-user variance at unit value t: t²/(s − 1) + (s + 3)/(3(s − 1)²), s = e^{ε/2}.

        Parameters
        ----------
        t : float or numpy.ndarray
            Unit value(s) in [−1, 1].

        Returns
        -------
        float or numpy.ndarray
        """
        s = math.exp(self.epsilon / 2)
        return t ** 2 / (s - 1) + (s + 3) / (3 * (s - 1) ** 2)
