"""Histogram encoding: SHE (summation) and THE (thresholding), Wang et al. (USENIX Security 2017).

A user one-hot encodes v and adds Laplace noise of scale 2/ε to every coordinate (two
coordinates differ, each by 1: ε-LDP).

* SHE sums the noisy vectors; Var = n·Var(noise) = 8n/ε² for continuous Laplace. Here the noise is
  the discrete Laplace on the grid ``step``·ℤ (``step`` = 2^-k), immune to floating-point attacks
  (Mironov, CCS 2012) and summed exactly as integers; its variance 2a/(1 − a)²·step², with
  a = e^{−ε·step/2}, tends to 8/ε² as step → 0 and is what :meth:`SHE.variance` returns.
* THE reports, per coordinate, whether the noisy value exceeds θ: a unary encoding with
  p = 1 − F(θ − 1) = 1 − e^{(θ−1)ε/2}/2 and q = 1 − F(θ) = e^{−θε/2}/2 (F the Laplace(2/ε) CDF,
  θ in (1/2, 1)). The bits are drawn with these exact probabilities, which is the same
  distribution without handling real numbers. θ defaults to the value minimising q(1−q)/(p−q)².
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_array, check_epsilon, check_int, check_values
from protocols.core.calibration import optimal_theta, the_probabilities
from protocols.core.base import RNG, FrequencyOracle, SupportCounts
from protocols.errors import LDPValueError
from protocols.core.randomness import laplace_grid, source
from protocols.oracles.unary import UnaryEncoding


@dataclass(frozen=True, kw_only=True)
class SHE(FrequencyOracle):
    """Summation with histogram encoding, discrete Laplace noise on the grid 2^-step_bits·ℤ.

    Reports are int64 arrays (n, d) in units of ``step`` = 2^-step_bits.
    Exact ε: each coordinate's likelihood ratio is at most e^{ε/2} (tight), two coordinates differ.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size, >= 2.
    step_bits : int
        The noise grid is 2^-step_bits·ℤ, 0 <= step_bits <= 20.

    References
    ----------
    Wang et al., USENIX Security 2017 (SHE); I. Mironov, "On significance of the least
    significant bits for differential privacy", CCS 2012 (why a grid).
    """

    epsilon: float
    d: int
    step_bits: int = 6

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        d = check_int(self.d, "d", 2)
        bits_ = check_int(self.step_bits, "step_bits", 0, 20)
        self._set(epsilon=eps, d=d, step_bits=bits_)

    @property
    def step(self) -> float:
        """The grid step 2^-step_bits: a report's unit."""
        return 2.0 ** -self.step_bits

    @property
    def noise_variance(self) -> float:
        """Variance of one noisy coordinate: 2a/(1 − a)²·step², a = exp(−ε·step/2)."""
        a = math.exp(-self.epsilon * self.step / 2)
        return 2 * a / (1 - a) ** 2 * self.step ** 2

    def perturb(self, encoded: np.ndarray, rng: RNG = None) -> np.ndarray:
        """One-hot vectors plus discrete Laplace noise Pr[k·step] ∝ a^{|k|}, a = e^{−ε·step/2}.

        Parameters
        ----------
        encoded : numpy.ndarray
            int64 values in [0, d).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            int64 reports (n, d) in units of :attr:`step`.
        """
        values = check_values(encoded, self.d)
        n = values.size
        noise = laplace_grid(source(rng), 2 / self.epsilon, self.step, n * self.d).reshape(n, self.d)
        noise[np.arange(n), values] += 1 << self.step_bits
        return noise

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        return check_array(reports, np.int64, (self.d,))

    def _support(self, reports):
        return reports.sum(axis=0, dtype=np.int64)

    def estimate(self, aggregate: SupportCounts) -> np.ndarray:
        """Unbiased counts: the column sums in value units (the noise has mean zero).

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this oracle.

        Returns
        -------
        numpy.ndarray
            float counts (d,).
        """
        return self.check_aggregate(aggregate).counts * self.step

    def variance(self, n: int, f: float = 0.0) -> float:
        """Variance of one count estimate: n·:attr:`noise_variance`, whatever the frequency.

        Parameters
        ----------
        n : int
            Number of reports.
        f : float
            True frequency of the value (not used: the noise does not depend on it).

        Returns
        -------
        float
        """
        return check_int(n, "n", 0) * self.noise_variance

    def output_distribution(self, value: int, window: int = 2,
                            max_outputs: int = 1 << 16) -> dict[tuple[int, ...], float]:
        """Exact Pr[report | value] on the reports whose every coordinate lies in the window
        k ∈ [−window, 2^step_bits + window] (grid units; the report space is infinite).

        Parameters
        ----------
        value : int
            A value in [0, d).
        window : int
            Grid points enumerated beyond [0, 2^step_bits] on each side.
        max_outputs : int
            Refuse to enumerate more reports than this.

        Returns
        -------
        dict
            {report as a tuple of d grid units: probability}.

        Raises
        ------
        LDPValueError
            More than ``max_outputs`` reports in the window (use a small d and step_bits).

        Notes
        -----
        Coordinates are independent, Pr[k | bit b] = (1 − a)/(1 + a)·a^{|k − b·2^step_bits|},
        a = e^{−ε·step/2}, so the probabilities are exact; they sum to the window's mass, less
        than 1. Every likelihood ratio of the infinite space is already reached in the window
        (it is constant beyond it), so :func:`protocols.audit.exact_epsilon` on it is exact.
        """
        value = int(check_values([value], self.d)[0])
        one = 1 << self.step_bits
        k = np.arange(-int(window), one + int(window) + 1)
        if k.size ** self.d > max_outputs:
            raise LDPValueError(f"the window holds {k.size}^{self.d} reports (> {max_outputs}): "
                                f"use a smaller d, step_bits or window")
        a = math.exp(-self.epsilon * self.step / 2)
        pmf0 = (1 - a) / (1 + a) * a ** np.abs(k)
        pmf1 = (1 - a) / (1 + a) * a ** np.abs(k - one)
        grids = np.meshgrid(*([k] * self.d), indexing="ij")
        reports = np.stack([g.ravel() for g in grids], axis=1)
        index = reports - k[0]
        probs = np.prod([np.where(j == value, pmf1, pmf0)[index[:, j]] for j in range(self.d)], axis=0)
        return {tuple(r.tolist()): float(pr) for r, pr in zip(reports, probs)}


@dataclass(frozen=True, kw_only=True)
class THE(UnaryEncoding):
    """Thresholding with histogram encoding; ``theta=None`` picks the variance-optimal θ.

    Reports are packed bits. The nominal ε is that of the underlying SHE; the exact ε of the
    thresholded bits, ``tight_epsilon`` = ln(p(1 − q)/((1 − p)q)), is smaller.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 of the underlying SHE.
    d : int
        Domain size, >= 2.
    theta : float, optional
        Threshold in (1/2, 1); default :func:`protocols.core.calibration.optimal_theta`.

    References
    ----------
    Wang et al., USENIX Security 2017, Section 4.3.
    """

    epsilon: float
    theta: float | None = None
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        theta = optimal_theta(eps) if self.theta is None else self.theta
        if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 0.5 < theta < 1:
            raise LDPValueError(f"theta must be a number in (0.5, 1), got {self.theta!r}")
        p, q = the_probabilities(eps, float(theta))
        self._set(epsilon=eps, theta=float(theta), p=p, q=q)
        super().__post_init__()
