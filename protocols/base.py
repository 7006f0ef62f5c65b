"""The mechanism interface (:class:`Mechanism`), the frequency-oracle base class, the mergeable
aggregate and the result object shared by every mechanism.

Every mechanism (frequency oracles, mean mechanisms, :class:`bfrrce.BFRRCE`) is a
:class:`Mechanism`: ``epsilon`` is the user-level budget it guarantees; clients ``privatize``;
the server ``check_reports``, ``aggregate`` (a mergeable aggregate), ``check_aggregate`` and
``estimate``; ``simulate`` draws the aggregate of given users exactly in distribution; and
``output_distribution`` gives the exact law of one report for audits (:mod:`protocols.audit`).

Every oracle follows the stages of Wang et al. (USENIX Security 2017): encode → perturb →
aggregate → estimate. A *pure* protocol has a support function such that a user holding v
supports v with probability p* and supports any other value with probability q*; then

    ĉ(v) = (C(v) − n·q*) / (p* − q*)                                     (unbiased)
    Var[ĉ(v)] = n·q*(1 − q*)/(p* − q*)² + n·f_v·(1 − p* − q*)/(p* − q*)

with C(v) the number of reports supporting v and f_v the true frequency of v (Wang et al.,
Theorem 2). Mechanisms override ``_support`` (reports → C) and set ``p_star``, ``q_star``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ._validate import check_int, check_probability, check_values
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


def user_counts(values, counts=None):
    """``values`` and the number of users holding each (validated; default one user per entry).

    Returns
    -------
    (values, numpy.ndarray)
        The values as given, and int64 counts (one non-negative integer per value).

    Raises
    ------
    LDPValueError
        Counts of another length, or negative.
    LDPTypeError
        Counts that are not integers.
    """
    if counts is None:
        return values, np.ones(len(values), dtype=np.int64)
    c = np.asarray(counts)
    if c.dtype == bool or not np.issubdtype(c.dtype, np.integer):
        raise LDPTypeError(f"counts must be integers, got dtype {c.dtype}")
    if c.shape != (len(values),) or (c < 0).any():
        raise LDPValueError(f"counts must be one non-negative integer per value, got shape {c.shape}")
    return values, c.astype(np.int64)


@dataclass(frozen=True)
class Estimate:
    """An estimate with its standard error and confidence interval (arrays for frequency oracles).

    Attributes
    ----------
    value : float or numpy.ndarray
    std_error : float or numpy.ndarray
    interval : (lower, upper)
        Normal-approximation interval value ± z·std_error at level ``confidence``.
    confidence : float
    """

    value: object
    std_error: object
    interval: tuple
    confidence: float

    @classmethod
    def normal(cls, value, std_error, confidence=0.95):
        """value ± z_{(1+confidence)/2}·std_error."""
        z = NormalDist().inv_cdf(0.5 + check_probability(confidence, "confidence") / 2)
        return cls(value, std_error, (value - z * std_error, value + z * std_error), confidence)


class Mechanism(abc.ABC):
    """The interface every mechanism satisfies (an abstract base class).

    Attributes
    ----------
    epsilon : float
        The user-level budget the mechanism guarantees: the largest log-likelihood ratio of one
        user's report between two neighbouring inputs (exact; :mod:`protocols.audit` checks it).

    Notes
    -----
    ``simulate(values, *, counts=None, rng=None)`` has one signature everywhere: the users hold
    ``values``, ``counts[i]`` of them ``values[i]`` (default: one user per entry). Mechanisms
    with a closed form draw the aggregate directly (O(d) or O(L)); the others privatize every
    user, which is exact in distribution too.
    """

    epsilon: float

    @abc.abstractmethod
    def privatize(self, values, rng=None):
        """One report per value (``rng=None``: the OS CSPRNG, what clients must use)."""

    @abc.abstractmethod
    def check_reports(self, reports):
        """``reports`` if they are reports of this mechanism (returned unchanged), else raise."""

    @abc.abstractmethod
    def aggregate(self, reports):
        """The mergeable aggregate of a batch of reports (validated, never modified)."""

    @abc.abstractmethod
    def check_aggregate(self, aggregate):
        """``aggregate`` if it is an aggregate of this mechanism, else raise."""

    @abc.abstractmethod
    def simulate(self, values, *, counts=None, rng=None):
        """The aggregate of users holding ``values`` (``counts`` each), exactly in distribution."""

    @abc.abstractmethod
    def estimate(self, aggregate):
        """The estimate of the aggregate's users (see each mechanism)."""

    @abc.abstractmethod
    def output_distribution(self, value):
        """Exact Pr[report | value] as {report: probability} (small output spaces)."""


class FrequencyOracle(Mechanism):
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

    def simulate(self, values, *, counts=None, rng=None):
        """The aggregate of users holding ``values`` (``counts`` each): every user privatized,
        exact in distribution at O(n) cost (oracles with a closed form override it)."""
        values, counts = user_counts(values, counts)
        return self.aggregate(self.privatize(np.repeat(np.asarray(values), counts), rng))

    def check_aggregate(self, aggregate):
        """``aggregate`` if it is a :class:`SupportCounts` of this oracle.

        Raises
        ------
        LDPTypeError
            Not a :class:`SupportCounts`.
        IncompatibleError
            The aggregate of another mechanism or other parameters.
        """
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

    def estimate_with_error(self, aggregate, confidence=0.95):
        """:meth:`estimate` with standard errors √Var(n, f̂) (f̂ = clip(ĉ/n, 0, 1), plug-in) and
        normal intervals at level ``confidence``: an :class:`Estimate` of arrays."""
        value = self.estimate(aggregate)
        n = aggregate.n
        freq = np.clip(value / max(n, 1), 0.0, 1.0)
        se = np.sqrt([self.variance(n, f) for f in freq])
        return Estimate.normal(value, se, confidence)

    def variance(self, n, f=0.0):
        """Analytic variance of one count estimate over ``n`` reports (f: true frequency of the value)."""
        n = check_int(n, "n", 0)
        f = float(f)
        if not 0.0 <= f <= 1.0:
            raise LDPValueError(f"f must be a frequency in [0, 1], got {f!r}")
        p, q = self.p_star, self.q_star
        return n * q * (1 - q) / (p - q) ** 2 + n * f * (1 - p - q) / (p - q)


def domain_counts(values, counts, d):
    """t[v] = number of users holding v, for users holding ``values`` (``counts`` each) in [0, d)."""
    values, counts = user_counts(values, counts)
    t = np.zeros(d, dtype=np.int64)
    np.add.at(t, check_values(values, d), counts)
    return t
