"""The frequency-oracle interface and the mergeable aggregate shared by every mechanism.

Every oracle follows the stages of Wang et al. (USENIX Security 2017): encode → perturb →
aggregate → estimate. A *pure* protocol has a support function such that a user holding v
supports v with probability p* and supports any other value with probability q*; then

    ĉ(v) = (C(v) − n·q*) / (p* − q*)                                     (unbiased)
    Var[ĉ(v)] = n·q*(1 − q*)/(p* − q*)² + n·f_v·(1 − p* − q*)/(p* − q*)

with C(v) the number of reports supporting v and f_v the true frequency of v (Wang et al.,
Theorem 2). Mechanisms override ``_support`` (reports → C) and set ``p_star``, ``q_star``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import check_int, check_values
from .errors import IncompatibleError, LDPTypeError, LDPValueError


def _freeze(arr):
    arr = np.array(arr, dtype=np.int64, copy=True)
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class SupportCounts:
    """Mergeable aggregate: per-value sufficient statistics (int64) and the number of reports.

    Immutable; ``a.merge(b)`` (or ``a + b``) returns a new aggregate. Merging is exact integer
    addition, so any order of merges gives an equal result. Aggregates of different mechanisms
    (or of the same mechanism with other parameters) refuse to merge.
    """

    mechanism: object
    counts: np.ndarray
    n: int

    def __post_init__(self):
        object.__setattr__(self, "counts", _freeze(self.counts))
        object.__setattr__(self, "n", check_int(self.n, "n", 0))

    @classmethod
    def empty(cls, mechanism, size):
        return cls(mechanism, np.zeros(size, dtype=np.int64), 0)

    def merge(self, other):
        if not isinstance(other, type(self)):
            raise LDPTypeError(f"can only merge {type(self).__name__}, got {type(other).__name__}")
        if other.mechanism != self.mechanism:
            raise IncompatibleError(
                f"cannot merge aggregates of {self.mechanism!r} and {other.mechanism!r}")
        return type(self)(self.mechanism, self.counts + other.counts, self.n + other.n)

    __add__ = merge

    def __eq__(self, other):
        return (isinstance(other, type(self)) and other.mechanism == self.mechanism
                and other.n == self.n and np.array_equal(other.counts, self.counts))

    __hash__ = None


class FrequencyOracle:
    """Base class of the frequency oracles (subclasses are frozen keyword-only dataclasses).

    Subclasses define ``d``, ``epsilon``, ``p_star``, ``q_star`` and the methods ``encode``,
    ``perturb``, ``check_reports``, ``_support`` and ``output_distribution``.
    """

    def _set(self, **derived):
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    # -- client ---------------------------------------------------------------------------
    def encode(self, values):
        """Validate ``values`` (integers in [0, d)); the default encoding is the value itself."""
        return check_values(values, self.d)

    def privatize(self, values, rng=None):
        """Encode and perturb a batch of values; one report per value.

        ``rng=None`` draws from a ChaCha20 stream keyed from the operating system's CSPRNG
        (:class:`protocols.randomness.SystemRandom`, what clients must use); pass a seed only
        for simulations and tests.
        """
        return self.perturb(self.encode(values), rng)

    # -- server ---------------------------------------------------------------------------
    def aggregate(self, reports):
        """Support counts of a batch of reports, as a mergeable :class:`SupportCounts`.

        The reports are validated and never modified.
        """
        reports = self.check_reports(reports)
        return SupportCounts(self, self._support(reports), len(reports))

    def aggregate_batches(self, batches):
        """One aggregate of an iterable of report batches (chunks of a file, say).

        Equal to merging ``aggregate(batch)`` over the batches; memory is that of one batch.
        Packed-bit mechanisms override it to keep one running counter across batches.
        """
        total = self.empty_aggregate()
        for reports in batches:
            total = total.merge(self.aggregate(reports))
        return total

    def empty_aggregate(self):
        """The aggregate of no reports (the neutral element of ``merge``)."""
        return SupportCounts.empty(self, self.d)

    def check_aggregate(self, aggregate):
        if not isinstance(aggregate, SupportCounts):
            raise LDPTypeError(f"expected SupportCounts, got {type(aggregate).__name__}")
        if aggregate.mechanism != self:
            raise IncompatibleError(
                f"aggregate of {aggregate.mechanism!r} cannot be estimated by {self!r}")
        return aggregate

    def estimate(self, aggregate):
        """Unbiased estimates of the number of users holding each value: (C − n·q*)/(p* − q*)."""
        agg = self.check_aggregate(aggregate)
        return (agg.counts - agg.n * self.q_star) / (self.p_star - self.q_star)

    def variance(self, n, f=0.0):
        """Analytic variance of one count estimate over ``n`` reports (f: true frequency of the value)."""
        n = check_int(n, "n", 0)
        f = float(f)
        if not 0.0 <= f <= 1.0:
            raise LDPValueError(f"f must be a frequency in [0, 1], got {f!r}")
        p, q = self.p_star, self.q_star
        return n * q * (1 - q) / (p - q) ** 2 + n * f * (1 - p - q) / (p - q)


def check_counts(true_counts, d):
    """Validate a vector of d non-negative integer user counts (for simulations)."""
    t = np.asarray(true_counts)
    if t.dtype == bool or not np.issubdtype(t.dtype, np.integer):
        raise LDPTypeError(f"true_counts must be integers, got dtype {t.dtype}")
    if t.shape != (d,) or (t < 0).any():
        raise LDPValueError(f"true_counts must be {d} non-negative integers, got shape {t.shape}")
    return t.astype(np.int64)


def log_ratio(p, q):
    """ln(p(1−q) / ((1−p)q)): the ε of one bit flipped with Pr[1|1] = p, Pr[1|0] = q."""
    return math.log(p * (1 - q) / ((1 - p) * q))
