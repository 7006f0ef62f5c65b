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
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.randomness import RNG, simulating
from protocols.core.registry import register
from protocols.core.validation import check_int, check_probability, check_values
from protocols.errors import IncompatibleError, LDPTypeError, LDPValueError


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

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism whose reports were aggregated (compared by value on merge).
    counts : array_like of int
        The sufficient statistics (copied to a read-only int64 array).
    n : int
        The number of reports, >= 0.
    """

    mechanism: Mechanism
    counts: np.ndarray
    n: int

    def __post_init__(self):
        object.__setattr__(self, "counts", _freeze(self.counts))
        object.__setattr__(self, "n", check_int(self.n, "n", 0))

    @classmethod
    def empty(cls, mechanism: Mechanism, size: int | tuple[int, ...]) -> SupportCounts:
        """The aggregate of no reports.

        Parameters
        ----------
        mechanism : Mechanism
            The mechanism the aggregate belongs to.
        size : int or tuple of int
            Shape of the zero counts.

        Returns
        -------
        SupportCounts
            Zero counts, ``n = 0``: the neutral element of :meth:`merge`.
        """
        return cls(mechanism, np.zeros(size, dtype=np.int64), 0)

    def merge(self, other: SupportCounts) -> SupportCounts:
        """The aggregate of both batches (exact integer addition).

        Parameters
        ----------
        other : SupportCounts
            An aggregate of the same mechanism.

        Returns
        -------
        SupportCounts
            Counts and ``n`` added.

        Raises
        ------
        LDPTypeError
            ``other`` is of another type.
        IncompatibleError
            ``other`` comes from another mechanism or other parameters.
        """
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


def user_counts(values: ArrayLike, counts: ArrayLike | None = None) -> tuple[ArrayLike, np.ndarray]:
    """``values`` and the number of users holding each (validated; default one user per entry).

    Parameters
    ----------
    values : array_like
        The values held (one entry per distinct holder group).
    counts : array_like of int, optional
        ``counts[i]`` users hold ``values[i]``; default one user per entry.

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
    if c.dtype == np.uint64 and c.size and c.max() > np.iinfo(np.int64).max:
        raise LDPValueError(f"counts must be below 2**63, got {int(c.max())}")
    if c.shape != (len(values),) or (c < 0).any():
        raise LDPValueError(f"counts must be one non-negative integer per value, got shape {c.shape}")
    return values, c.astype(np.int64)


def _lossless(values):
    """``values`` as an array without numpy's text conversion of mixed lists (ints and str
    become text, trailing NULs of bytes are dropped): such lists stay Python objects."""
    if isinstance(values, np.ndarray):
        return values
    arr = np.asarray(values)
    return np.fromiter(values, dtype=object, count=len(values)) if arr.dtype.kind in "USO" else arr


def _charging(privatize):
    """``privatize`` that also takes ``accountant=`` (a :class:`protocols.accountant.PrivacyAccountant`),
    ``users=`` (one id per value: the ledger is per user) and ``keys=`` (memo keys; default, for
    a memoized mechanism given ``secrets=``, its :meth:`memo_keys`), and charges the accountant
    before any report is produced: over budget, :class:`protocols.accountant.BudgetExceeded`
    is raised and nothing is produced or charged."""
    @functools.wraps(privatize)
    def charged(self, values, *args, accountant=None, users=None, keys=None, **kwargs):
        if accountant is None:
            if users is not None or keys is not None:
                raise LDPTypeError("users= and keys= go with accountant=")
            return privatize(self, values, *args, **kwargs)
        if users is None:
            raise LDPTypeError("accountant= needs users=: one user id per value (the ledger is per user)")
        if keys is None and kwargs.get("secrets") is not None and hasattr(self, "memo_keys"):
            keys = self.memo_keys(values, kwargs["secrets"])
        if keys is None and kwargs.get("secrets") is not None and hasattr(self, "epsilon_permanent"):
            keys = values                      # RAPPOR: the memo key is the value
        accountant.spend(users, self, keys)
        return privatize(self, values, *args, **kwargs)
    return charged


@dataclass(frozen=True)
class Estimate:
    """An estimate with its standard error and confidence interval (arrays for frequency oracles).

    Attributes
    ----------
    value : float or numpy.ndarray
        The point estimate.
    std_error : float or numpy.ndarray
        Its standard error.
    interval : (lower, upper)
        Normal-approximation interval value ± z·std_error at level ``confidence``.
    confidence : float
        Level of ``interval``.
    """

    value: float | np.ndarray
    std_error: float | np.ndarray
    interval: tuple[float | np.ndarray, float | np.ndarray]
    confidence: float

    @classmethod
    def normal(cls, value: float | np.ndarray, std_error: float | np.ndarray,
               confidence: float = 0.95) -> Estimate:
        """The normal interval value ± z·std_error, z = Φ⁻¹((1 + confidence)/2).

        Parameters
        ----------
        value, std_error : float or numpy.ndarray
            Point estimate and standard error.
        confidence : float
            Level in (0, 1).

        Returns
        -------
        Estimate

        Raises
        ------
        LDPValueError
            ``confidence`` outside (0, 1).
        """
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

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for frequency
    estimation", USENIX Security 2017 (encode, perturb, aggregate, estimate).
    """

    epsilon: float

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register(cls)
        if "privatize" in cls.__dict__ and not getattr(cls.__dict__["privatize"], "__isabstractmethod__", False):
            cls.privatize = _charging(cls.__dict__["privatize"])

    @abc.abstractmethod
    def privatize(self, values: ArrayLike, rng: RNG = None) -> Any:
        """One report per value: what each client sends.

        Parameters
        ----------
        values : array_like
            The users' values (one per user).
        rng : None, int or numpy.random.Generator
            None: the operating system's CSPRNG (what clients must use); a seed or generator
            only for simulations and tests.

        Returns
        -------
        reports
            A batch of reports (an array or a named tuple of arrays, see each mechanism).

        Raises
        ------
        LDPTypeError, LDPValueError
            Values of the wrong type or outside the domain.
        """

    @abc.abstractmethod
    def check_reports(self, reports: Any) -> Any:
        """Validate a batch of reports of this mechanism.

        Parameters
        ----------
        reports
            A batch as :meth:`privatize` returns it.

        Returns
        -------
        reports
            The same reports (never copied nor modified).

        Raises
        ------
        LDPTypeError
            Reports of another type or dtype.
        IncompatibleError
            Reports of another shape or range: another mechanism or other parameters.
        """

    @abc.abstractmethod
    def aggregate(self, reports: Any) -> Any:
        """The mergeable aggregate of a batch of reports (validated, never modified).

        Parameters
        ----------
        reports
            A batch as :meth:`privatize` returns it.

        Returns
        -------
        aggregate
            A :class:`SupportCounts` (or :class:`protocols.MeanAggregate`, or
            :class:`bfrrce.ColumnSums`): exact, mergeable with ``merge``.

        Raises
        ------
        LDPTypeError, IncompatibleError
            As :meth:`check_reports`.
        """

    @abc.abstractmethod
    def check_aggregate(self, aggregate: Any) -> Any:
        """Validate an aggregate of this mechanism.

        Parameters
        ----------
        aggregate
            An aggregate as :meth:`aggregate` returns it.

        Returns
        -------
        aggregate
            The same aggregate.

        Raises
        ------
        LDPTypeError
            An object of another type.
        IncompatibleError
            The aggregate of another mechanism or other parameters.
        """

    @abc.abstractmethod
    def empty_aggregate(self) -> Any:
        """The aggregate of no reports: the neutral element of ``merge``.

        Returns
        -------
        aggregate
            Of the type :meth:`aggregate` returns, with n = 0.
        """

    def aggregate_batches(self, batches: Iterable) -> Any:
        """One aggregate of an iterable of report batches (chunks of a file, say).

        Equal to merging ``aggregate(batch)`` over the batches, starting from
        :meth:`empty_aggregate`; memory is that of one batch. Packed-bit mechanisms override it
        to keep one running counter across batches.

        Parameters
        ----------
        batches : iterable
            Report batches as :meth:`privatize` returns them.

        Returns
        -------
        aggregate
            As :meth:`aggregate` (n = 0 for no batches).
        """
        total = self.empty_aggregate()
        for reports in batches:
            total = total.merge(self.aggregate(reports))
        return total

    def simulate(self, values: ArrayLike, *, counts: ArrayLike | None = None, rng: RNG = None) -> Any:
        """The aggregate of users holding ``values``, exactly in distribution.

        This default privatizes every user (exact, O(n)); mechanisms with a closed form override
        it to draw the aggregate directly.

        Parameters
        ----------
        values : array_like
            The values held.
        counts : array_like of int, optional
            ``counts[i]`` users hold ``values[i]`` (default: one user per entry).
        rng : None, int or numpy.random.Generator
            Randomness of the simulation.

        Returns
        -------
        aggregate
            What :meth:`aggregate` would return on the users' reports (same law).
        """
        values, counts = user_counts(values, counts)
        with simulating():
            return self.aggregate(self.privatize(np.repeat(_lossless(values), counts), rng))

    @abc.abstractmethod
    def estimate(self, aggregate: Any) -> Any:
        """The estimate of the aggregate's users (see each mechanism).

        Parameters
        ----------
        aggregate
            An aggregate of this mechanism.

        Returns
        -------
        estimate
            Counts per value (frequency oracles), a mean, or a cardinality estimate.

        Raises
        ------
        LDPTypeError, IncompatibleError
            As :meth:`check_aggregate`.
        """

    @abc.abstractmethod
    def estimate_with_error(self, aggregate: Any, confidence: float = 0.95) -> Any:
        """:meth:`estimate` with its standard error and a confidence interval.

        Parameters
        ----------
        aggregate
            An aggregate of this mechanism.
        confidence : float
            Level of the interval, in (0, 1).

        Returns
        -------
        Estimate
            Fields ``value``, ``std_error``, ``interval`` and ``confidence`` (an :class:`Estimate`,
            or a :class:`bfrrce.CardinalityEstimate`, which has the same fields and more).
        """

    @abc.abstractmethod
    def output_distribution(self, value: Any) -> dict:
        """Exact law of one report, for audits (small output spaces).

        Parameters
        ----------
        value
            One input value.

        Returns
        -------
        dict
            {report (hashable): Pr[report | value]}.
        """


class FrequencyOracle(Mechanism):
    """Base class of the frequency oracles (subclasses are frozen keyword-only dataclasses).

    Subclasses define ``d``, ``epsilon``, ``p_star``, ``q_star`` and the methods ``encode``,
    ``perturb``, ``check_reports``, ``_support`` and ``output_distribution``.

    Attributes
    ----------
    d : int
        Domain size: values are integers in [0, d).
    epsilon : float
        The ε of one report (exact).
    p_star, q_star : float
        Pr[a report supports v | the user holds v], and | the user holds another value.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, Theorem 2 (pure protocols).
    """

    def _set(self, **derived):
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    # -- client ---------------------------------------------------------------------------
    def encode(self, values: ArrayLike) -> np.ndarray:
        """Validate values; the default encoding is the value itself.

        Parameters
        ----------
        values : array_like of int
            Integers in [0, d).

        Returns
        -------
        numpy.ndarray
            int64 values (n,).

        Raises
        ------
        LDPTypeError
            Not integers.
        LDPValueError
            Outside [0, d), empty or not one-dimensional.
        """
        return check_values(values, self.d)

    def privatize(self, values: ArrayLike, rng: RNG = None) -> np.ndarray:
        """Encode and perturb a batch of values; one report per value.

        Parameters
        ----------
        values : array_like of int
            Integers in [0, d).
        rng : None, int or numpy.random.Generator
            None draws from a ChaCha20 stream keyed from the operating system's CSPRNG
            (:class:`protocols.core.randomness.SystemRandom`, what clients must use); pass a seed only
            for simulations and tests.

        Returns
        -------
        numpy.ndarray
            One report per value.

        Raises
        ------
        LDPTypeError, LDPValueError
            As :meth:`encode`.
        """
        return self.perturb(self.encode(values), rng)

    # -- server ---------------------------------------------------------------------------
    def aggregate(self, reports: ArrayLike) -> SupportCounts:
        """Support counts C(v) of a batch of reports (validated, never modified).

        Parameters
        ----------
        reports : numpy.ndarray
            A batch as :meth:`privatize` returns it.

        Returns
        -------
        SupportCounts
            C(v) for every value and the number of reports.

        Raises
        ------
        LDPTypeError, IncompatibleError
            As :meth:`check_reports`.
        """
        reports = self.check_reports(reports)
        return SupportCounts(self, self._support(reports), len(reports))

    def empty_aggregate(self) -> SupportCounts:
        """The aggregate of no reports.

        Returns
        -------
        SupportCounts
            Zero counts: the neutral element of ``merge``.
        """
        return SupportCounts.empty(self, self.d)

    def check_aggregate(self, aggregate: SupportCounts) -> SupportCounts:
        """``aggregate`` if it is a :class:`SupportCounts` of this oracle.

        Parameters
        ----------
        aggregate : SupportCounts

        Returns
        -------
        SupportCounts
            The same aggregate.

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

    def estimate(self, aggregate: SupportCounts) -> np.ndarray:
        """Unbiased estimates of the number of users holding each value: (C − n·q*)/(p* − q*).

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this oracle.

        Returns
        -------
        numpy.ndarray
            float counts (d,).

        Raises
        ------
        LDPTypeError, IncompatibleError
            As :meth:`check_aggregate`.

        References
        ----------
        Wang et al., USENIX Security 2017, Theorem 2.
        """
        agg = self.check_aggregate(aggregate)
        return (agg.counts - agg.n * self.q_star) / (self.p_star - self.q_star)

    def estimate_with_error(self, aggregate: SupportCounts, confidence: float = 0.95) -> Estimate:
        """:meth:`estimate` with standard errors and normal intervals.

        The standard error is √Var(n, f̂) (:meth:`variance`) at the plug-in f̂ = clip(ĉ/n, 0, 1).

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this oracle.
        confidence : float
            Level of the intervals.

        Returns
        -------
        Estimate
            Arrays of d values.
        """
        value = self.estimate(aggregate)
        n = aggregate.n
        freq = np.clip(value / max(n, 1), 0.0, 1.0)
        se = np.sqrt([self.variance(n, f) for f in freq])
        return Estimate.normal(value, se, confidence)

    def variance(self, n: int, f: float = 0.0) -> float:
        """Analytic variance of one count estimate over ``n`` reports.

        Var = n·q*(1 − q*)/(p* − q*)² + n·f·(1 − p* − q*)/(p* − q*).

        Parameters
        ----------
        n : int
            Number of reports.
        f : float
            True frequency of the value, in [0, 1].

        Returns
        -------
        float

        Raises
        ------
        LDPValueError
            ``f`` outside [0, 1] or ``n`` negative.

        References
        ----------
        Wang et al., USENIX Security 2017, Theorem 2.
        """
        n = check_int(n, "n", 0)
        f = float(f)
        if not 0.0 <= f <= 1.0:
            raise LDPValueError(f"f must be a frequency in [0, 1], got {f!r}")
        p, q = self.p_star, self.q_star
        return n * q * (1 - q) / (p - q) ** 2 + n * f * (1 - p - q) / (p - q)


def domain_counts(values: ArrayLike, counts: ArrayLike | None, d: int) -> np.ndarray:
    """The histogram of users over the domain.

    Parameters
    ----------
    values : array_like of int
        Values in [0, d).
    counts : array_like of int or None
        ``counts[i]`` users hold ``values[i]`` (None: one each).
    d : int
        Domain size.

    Returns
    -------
    numpy.ndarray
        t (d,) int64: t[v] = number of users holding v.
    """
    values, counts = user_counts(values, counts)
    t = np.zeros(d, dtype=np.int64)
    np.add.at(t, check_values(values, d), counts)
    return t
