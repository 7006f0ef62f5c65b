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

from protocols.core.validation import check_epsilon, check_int
from protocols.core.base import RNG, Estimate, Mechanism
from protocols.errors import IncompatibleError, LDPTypeError, LDPValueError
from protocols.core.randomness import SystemRandom, source, uniform

GRID = 2.0 ** -20


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
    return np.floor(x / GRID + uniform(src, x.size)) * GRID


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
class MeanMechanism(Mechanism):
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

    unit = GRID                      # reports are integer multiples of this

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

    def empty_aggregate(self) -> MeanAggregate:
        """The aggregate of no reports.

        Returns
        -------
        MeanAggregate
            Sum 0 of n = 0 reports: the neutral element of ``merge``.
        """
        return MeanAggregate(self, 0, 0)

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
