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

from ._validate import check_epsilon, check_int
from .errors import IncompatibleError, LDPTypeError, LDPValueError
from .randomness import bernoulli, laplace_grid, source, uniform

_GRID = 2.0 ** -20


def snap(x, src):
    """Stochastic rounding to the grid g = 2^-20: g·⌊x/g + U⌋, unbiased."""
    return np.floor(x / _GRID + uniform(src, x.size)) * _GRID


@dataclass(frozen=True, eq=False)
class MeanAggregate:
    """Sum of reports and their number; ``merge`` adds them."""

    mechanism: object
    total: float
    n: int

    def merge(self, other):
        if not isinstance(other, MeanAggregate) or other.mechanism != self.mechanism:
            raise IncompatibleError("cannot merge mean aggregates of different mechanisms")
        return MeanAggregate(self.mechanism, self.total + other.total, self.n + other.n)

    __add__ = merge


@dataclass(frozen=True, kw_only=True)
class _MeanMechanism:
    """Common parameters: ε and the interval [low, high] of the values."""

    epsilon: float
    low: float = -1.0
    high: float = 1.0

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        low, high = float(self.low), float(self.high)
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise LDPValueError(f"need finite low < high, got low={self.low!r}, high={self.high!r}")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def to_unit(self, values):
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

    def privatize(self, values, rng=None):
        return self._perturb(self.to_unit(values), source(rng))

    def aggregate(self, reports):
        r = np.asarray(reports, dtype=float)
        if r.ndim != 1 or not np.isfinite(r).all():
            raise LDPValueError("reports must be a 1-d array of finite numbers")
        return MeanAggregate(self, float(np.sum(r)), r.size)

    def estimate(self, aggregate):
        """Unbiased estimate of the mean of the original values."""
        if not isinstance(aggregate, MeanAggregate) or aggregate.mechanism != self:
            raise IncompatibleError("aggregate does not come from this mechanism")
        if aggregate.n == 0:
            raise LDPValueError("cannot estimate a mean from zero reports")
        return self.low + (aggregate.total / aggregate.n + 1) * (self.high - self.low) / 2

    def variance(self, n, t=0.0):
        """Variance of the estimated mean of n users all at unit value t, in value units."""
        n = check_int(n, "n", 1)
        return self.unit_variance(float(t)) / n * ((self.high - self.low) / 2) ** 2


@dataclass(frozen=True, kw_only=True)
class LaplaceMean(_MeanMechanism):
    def _perturb(self, t, src):
        noise = laplace_grid(src, 2 / self.epsilon, _GRID, t.size) * _GRID
        return snap(t, src) + noise

    def unit_variance(self, t):
        a = math.exp(-self.epsilon * _GRID / 2)
        return 2 * a / (1 - a) ** 2 * _GRID ** 2


@dataclass(frozen=True, kw_only=True)
class DuchiMean(_MeanMechanism):
    @property
    def C(self):
        return (math.exp(self.epsilon) + 1) / (math.exp(self.epsilon) - 1)

    def _perturb(self, t, src):
        up = uniform(src, t.size) < 0.5 + t / (2 * self.C)
        return np.where(up, self.C, -self.C)

    def output_distribution(self, t):
        """Exact Pr[output | t] for t in [−1, 1]: ±C with probabilities 1/2 ± t/(2C)."""
        return {self.C: 0.5 + t / (2 * self.C), -self.C: 0.5 - t / (2 * self.C)}

    def unit_variance(self, t):
        return self.C ** 2 - t ** 2


@dataclass(frozen=True, kw_only=True)
class PiecewiseMean(_MeanMechanism):
    @property
    def C(self):
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

    def density(self, y, t):
        """Exact output density at y for t in [−1, 1] (before the 2^-20 rounding):
        s/(s + 1)/(C − 1) on [ℓ(t), r(t)], 1/((s + 1)(C + 1)) elsewhere on [−C, C]."""
        s, C = math.exp(self.epsilon / 2), self.C
        left = (C + 1) / 2 * t - (C - 1) / 2
        y = np.asarray(y, dtype=float)
        inside = (y >= left) & (y <= left + C - 1)
        out = np.where(inside, s / (s + 1) / (C - 1), 1 / ((s + 1) * (C + 1)))
        return np.where(np.abs(y) <= C, out, 0.0)

    def unit_variance(self, t):
        s = math.exp(self.epsilon / 2)
        return t ** 2 / (s - 1) + (s + 3) / (3 * (s - 1) ** 2)
