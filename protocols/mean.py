"""Mean estimation of bounded numeric values under ε-LDP.

Values lie in [low, high]; they are mapped to t in [−1, 1], privatized, and the mean of the
reports (unbiased for the mean of t) is mapped back. Per-user variances, for t in [−1, 1]:

* Laplace: t + Lap(2/ε); Var = 8/ε².
* Duchi et al. (JASA 2018), stochastic rounding: ±C with C = (e^ε + 1)/(e^ε − 1),
  Pr[+C] = 1/2 + t/(2C); Var = C² − t².
* Piecewise (Wang et al., ICDE 2019): with s = e^{ε/2}, C = (s + 1)/(s − 1),
  ℓ(t) = (C + 1)t/2 − (C − 1)/2, r(t) = ℓ(t) + C − 1: uniform on [ℓ, r] w.p. s/(s + 1), else
  uniform on [−C, ℓ) ∪ (r, C]; Var = t²/(s − 1) + (s + 3)/(3(s − 1)²).

The aggregate (:class:`MeanAggregate`) is the report sum and n; ``variance(n, t)`` is the
variance of the estimated mean (in units of t, times ((high − low)/2)² in value units).
Outputs of the real-valued mechanisms lie on the grid 2^-20·ℤ, with no float artefacts to read
(the attack of Mironov, CCS 2012): Laplace adds discrete Laplace noise to t stochastically
rounded to the grid; Piecewise stochastically rounds its output. Stochastic rounding
(x → g·⌊x/g + U⌋) keeps every estimate unbiased; its variance (at most g²/4) is negligible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validate import check_epsilon, check_int
from .base import RNG, Estimate, Mechanism
from .errors import IncompatibleError, LDPTypeError, LDPValueError
from .randomness import SystemRandom, bernoulli, laplace_grid, source, uniform

_GRID = 2.0 ** -20


def snap(x: np.ndarray, src: np.random.Generator | SystemRandom) -> np.ndarray:
    """Stochastic rounding to the grid g = 2^-20: g·⌊x/g + U⌋, unbiased.

    Parameters
    ----------
    x : numpy.ndarray
        Real numbers.
    src : numpy.random.Generator or SystemRandom
        Random source.

    Returns
    -------
    numpy.ndarray
        Multiples of 2^-20 with mean ``x``.
    """
    return np.floor(x / _GRID + uniform(src, x.size)) * _GRID


@dataclass(frozen=True, eq=False)
class MeanAggregate:
    """The sum of reports, held exactly as an integer number of the mechanism's ``unit``, and n.

    Every report is an integer multiple of ``mechanism.unit`` (the grid 2^-20 for Laplace and
    Piecewise, C for Duchi), so the sum is an exact integer and ``merge`` is integer addition:
    the same result in any order of merges.

    Parameters
    ----------
    mechanism : Mechanism
        The mean mechanism whose reports were summed.
    units : int
        The sum of the reports in multiples of ``mechanism.unit``.
    n : int
        The number of reports.
    """

    mechanism: Mechanism
    units: int
    n: int

    @property
    def total(self) -> float:
        """The sum of the reports (units × unit)."""
        return self.units * self.mechanism.unit

    def merge(self, other: MeanAggregate) -> MeanAggregate:
        """The aggregate of both batches' reports (exact).

        Parameters
        ----------
        other : MeanAggregate
            An aggregate of the same mechanism.

        Returns
        -------
        MeanAggregate

        Raises
        ------
        IncompatibleError
            Not a mean aggregate of the same mechanism.
        """
        if not isinstance(other, MeanAggregate) or other.mechanism != self.mechanism:
            raise IncompatibleError(f"cannot merge mean aggregates of {self.mechanism!r} and "
                                    f"{getattr(other, 'mechanism', other)!r}")
        return MeanAggregate(self.mechanism, self.units + other.units, self.n + other.n)

    __add__ = merge

    def __eq__(self, other):
        return (isinstance(other, MeanAggregate) and other.mechanism == self.mechanism
                and other.units == self.units and other.n == self.n)

    __hash__ = None


@dataclass(frozen=True, kw_only=True)
class _MeanMechanism(Mechanism):
    """Common parameters and server side of the mean mechanisms.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    low, high : float
        The interval of the values, low < high.
    """

    epsilon: float
    low: float = -1.0
    high: float = 1.0

    unit = _GRID                      # reports are integer multiples of this

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        low, high = float(self.low), float(self.high)
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise LDPValueError(f"need finite low < high, got low={self.low!r}, high={self.high!r}")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def to_unit(self, values: ArrayLike) -> np.ndarray:
        """Values mapped from [low, high] to t = 2(x − low)/(high − low) − 1 in [−1, 1].

        Parameters
        ----------
        values : array_like of float
            Values in [low, high].

        Returns
        -------
        numpy.ndarray
            float t (n,).

        Raises
        ------
        LDPTypeError
            Not numbers.
        LDPValueError
            Empty, not finite, or outside [low, high].
        """
        x = np.asarray(values)
        if x.dtype == bool or not (np.issubdtype(x.dtype, np.number)):
            raise LDPTypeError(f"values must be numbers, got dtype {x.dtype}")
        x = x.astype(float).ravel()
        if x.size == 0:
            raise LDPValueError("values is empty")
        bad = ~np.isfinite(x) | (x < self.low) | (x > self.high)
        if bad.any():
            raise LDPValueError(f"values must be in [{self.low}, {self.high}]; found {x[bad][0].item()!r}")
        return 2 * (x - self.low) / (self.high - self.low) - 1

    def privatize(self, values: ArrayLike, rng: RNG = None) -> np.ndarray:
        """One report per value (floats, integer multiples of :attr:`unit`).

        Parameters
        ----------
        values : array_like of float
            Values in [low, high].
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            float reports (n,).

        Raises
        ------
        LDPTypeError, LDPValueError
            As :meth:`to_unit`.
        """
        return self._perturb(self.to_unit(values), source(rng))

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        """``reports`` if they are a 1-d float array of integer multiples of :attr:`unit`.

        Parameters
        ----------
        reports : array_like of float

        Returns
        -------
        numpy.ndarray
            The reports as floats.

        Raises
        ------
        LDPValueError
            Another shape, a non-finite report, or one off this mechanism's grid.
        """
        r = np.asarray(reports, dtype=float)
        if r.ndim != 1 or not np.isfinite(r).all():
            raise LDPValueError(f"reports must be a 1-d array of finite numbers, got shape {r.shape}")
        off = r / self.unit != np.round(r / self.unit)
        if off.any():
            raise LDPValueError(f"reports must be multiples of {self.unit!r}; found {r[off][0].item()!r}")
        return r

    def aggregate(self, reports: ArrayLike) -> MeanAggregate:
        """The exact sum of the reports (in :attr:`unit`) and their number.

        Parameters
        ----------
        reports : array_like of float
            Reports of this mechanism.

        Returns
        -------
        MeanAggregate

        Raises
        ------
        LDPValueError
            As :meth:`check_reports`.
        """
        r = self.check_reports(reports)
        return MeanAggregate(self, int(np.round(r / self.unit).astype(np.int64).sum()), r.size)

    def check_aggregate(self, aggregate: MeanAggregate) -> MeanAggregate:
        """``aggregate`` if it is a non-empty :class:`MeanAggregate` of this mechanism.

        Parameters
        ----------
        aggregate : MeanAggregate

        Returns
        -------
        MeanAggregate
            The same aggregate.

        Raises
        ------
        IncompatibleError
            Another type or mechanism.
        LDPValueError
            No reports.
        """
        if not isinstance(aggregate, MeanAggregate) or aggregate.mechanism != self:
            raise IncompatibleError(f"aggregate does not come from {self!r}")
        if aggregate.n == 0:
            raise LDPValueError("cannot estimate a mean from zero reports")
        return aggregate

    def estimate(self, aggregate: MeanAggregate) -> float:
        """Unbiased estimate of the mean of the original values: low + (Σ/n + 1)(high − low)/2.

        Parameters
        ----------
        aggregate : MeanAggregate
            A non-empty aggregate of this mechanism.

        Returns
        -------
        float

        Raises
        ------
        IncompatibleError, LDPValueError
            As :meth:`check_aggregate`.
        """
        agg = self.check_aggregate(aggregate)
        return self.low + (agg.total / agg.n + 1) * (self.high - self.low) / 2

    def estimate_with_error(self, aggregate: MeanAggregate, confidence: float = 0.95) -> Estimate:
        """:meth:`estimate` with a conservative standard error and a normal interval.

        The standard error uses the largest per-user variance over t ∈ [−1, 1]
        (:attr:`worst_variance`).

        Parameters
        ----------
        aggregate : MeanAggregate
            A non-empty aggregate of this mechanism.
        confidence : float
            Level of the interval.

        Returns
        -------
        Estimate
        """
        value = self.estimate(aggregate)
        se = math.sqrt(self.worst_variance / aggregate.n) * (self.high - self.low) / 2
        return Estimate.normal(value, se, confidence)

    @property
    def worst_variance(self) -> float:
        """max over t ∈ [−1, 1] of the per-user variance (at t = 0 or t = ±1)."""
        return max(self.unit_variance(0.0), self.unit_variance(1.0))

    def variance(self, n: int, t: float = 0.0) -> float:
        """Variance of the estimated mean of n users all at unit value t, in value units.

        Parameters
        ----------
        n : int
            Number of users, >= 1.
        t : float
            Their value mapped to [−1, 1] (:meth:`to_unit`).

        Returns
        -------
        float
            unit_variance(t)/n·((high − low)/2)².
        """
        n = check_int(n, "n", 1)
        return self.unit_variance(float(t)) / n * ((self.high - self.low) / 2) ** 2


@dataclass(frozen=True, kw_only=True)
class LaplaceMean(_MeanMechanism):
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
        noise = laplace_grid(src, 2 / self.epsilon, _GRID, t.size) * _GRID
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
        a = math.exp(-self.epsilon * _GRID / 2)
        s = math.floor(t / _GRID)
        phi = t / _GRID - s
        k = np.round(np.asarray(outputs, dtype=float) / _GRID)
        dl = lambda j: (1 - a) / (1 + a) * a ** np.abs(j)  # noqa: E731
        probs = (1 - phi) * dl(k - s) + phi * dl(k - s - 1)
        return {float(y): float(pr) for y, pr in zip(k * _GRID, probs)}

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
        a = math.exp(-self.epsilon * _GRID / 2)
        return 2 * a / (1 - a) ** 2 * _GRID ** 2


@dataclass(frozen=True, kw_only=True)
class DuchiMean(_MeanMechanism):
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


@dataclass(frozen=True, kw_only=True)
class PiecewiseMean(_MeanMechanism):
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
            k = np.arange(math.floor(-C / _GRID) - 1, math.ceil(C / _GRID) + 2).astype(float)
        else:
            k = np.round(np.asarray(outputs, dtype=float) / _GRID)

        def H(u):
            u = np.clip(u, -1.0, 1.0)
            return np.where(u <= 0, (u + 1) ** 2 / 2, 1 - (1 - u) ** 2 / 2)

        def piece(a, b):
            return H(b / _GRID - k) - H(a / _GRID - k)

        probs = _GRID * (h_out * piece(-C, C) + (h_in - h_out) * piece(left, left + C - 1))
        return {float(v): float(pr) for v, pr in zip(k * _GRID, probs)}

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
