"""Laplace mean mechanism: t + Lap(2/ε) on the grid 2^-20·ℤ; per-user Var = 8/ε².

Values in [low, high] are mapped to t ∈ [−1, 1], stochastically rounded to the grid, and get exact
discrete Laplace noise (Canonne, Kamath, Steinke 2020), so no float artefact reveals the input
(Mironov, CCS 2012). Interface and aggregate: :mod:`protocols.mean.base`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from protocols.errors import LDPValueError
from protocols.core.randomness import laplace_grid
from protocols.mean.base import GRID, MeanMechanism, snap


@dataclass(frozen=True, kw_only=True)
class LaplaceMean(MeanMechanism):
    """t stochastically rounded to the grid g = 2^-20 plus discrete Laplace noise on the grid,
    Pr[k·g] ∝ a^{|k|} with a = e^{−ε·g/2} (the discrete analogue of Laplace(2/ε)).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    low, high : float
        The interval of the values.

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim, A. Smith, TCC 2006 (Laplace mechanism); I. Mironov,
    CCS 2012 (why a grid).
    """

    def _perturb(self, t, src):
        noise = laplace_grid(src, 2 / self.epsilon, GRID, t.size) * GRID
        return snap(t, src) + noise

    def output_distribution(self, t: float, outputs: ArrayLike | None = None) -> dict[float, float]:
        """Exact Pr[report = y | t] at each grid point y of ``outputs`` (the space is infinite).

        Parameters
        ----------
        t : float
            The value mapped to [−1, 1].
        outputs : array_like of float
            Grid points (multiples of 2^-20).

        Returns
        -------
        dict
            {y: Pr[report = y | t]}.

        Raises
        ------
        LDPValueError
            ``outputs`` not given (the report space is infinite).

        Notes
        -----
        With s = ⌊t/g⌋ and φ = t/g − s, the rounding gives s + 1 w.p. φ and s otherwise, so
        Pr[k·g] = (1 − φ)·D(k − s) + φ·D(k − s − 1), D(j) = (1 − a)/(1 + a)·a^{|j|}.
        """
        if outputs is None:
            raise LDPValueError("LaplaceMean's reports range over the whole grid: pass outputs=[...]")
        a = math.exp(-self.epsilon * GRID / 2)
        s = math.floor(t / GRID)
        phi = t / GRID - s
        k = np.round(np.asarray(outputs, dtype=float) / GRID)
        dl = lambda j: (1 - a) / (1 + a) * a ** np.abs(j)  # noqa: E731
        probs = (1 - phi) * dl(k - s) + phi * dl(k - s - 1)
        return {float(y): float(pr) for y, pr in zip(k * GRID, probs)}

    def unit_variance(self, t: float | np.ndarray) -> float:
        """Per-user variance in unit scale: the discrete Laplace's 2a/(1 − a)²·g² (whatever t).

        Parameters
        ----------
        t : float or numpy.ndarray
            Unit value (not used).

        Returns
        -------
        float
        """
        a = math.exp(-self.epsilon * GRID / 2)
        return 2 * a / (1 - a) ** 2 * GRID ** 2
