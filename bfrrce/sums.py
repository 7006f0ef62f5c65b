"""Column sums of BFRRCE reports: the server's whole state, O(L) memory whatever n is.

Debiasing (Theorem 2 of the paper): with c_j the number of reports with bit j set among n,
t̂_j = (c_j − n·q)/(p − q) is unbiased for t_j, the number of users whose filter has bit j, and
Var(t̂_j) = [t_j·p(1 − p) + (n − t_j)·q(1 − q)]/(p − q)².
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_int
from protocols.core.base import Mechanism, SupportCounts
from protocols.errors import IncompatibleError, LDPTypeError, LDPValueError
from protocols.core.perturbation import debias_counts, null_variance

MAX_REPORTS = 2 ** 53          # n and every count stay exact in float64 (the estimators' arithmetic)
_BATCH = re.compile(r"[0-9a-f]{64}")


def check_batch(batch) -> str:
    """``batch`` if it is a batch identifier: 64 lowercase hex digits, the content digest of
    :mod:`bfrrce.identity` (docs/formats.md).

    Parameters
    ----------
    batch : str
        The identifier to check.

    Returns
    -------
    str
        ``batch``.

    Raises
    ------
    LDPTypeError
        Not a str.
    LDPValueError
        Not 64 lowercase hex digits.
    """
    if not isinstance(batch, str):
        raise LDPTypeError(f"a batch identifier is a str of 64 hex digits, got {batch!r:.80}")
    if not _BATCH.fullmatch(batch):
        raise LDPValueError(f"a batch identifier is 64 lowercase hex digits, got {batch[:80]!r}")
    return batch


@dataclass(frozen=True, eq=False)
class ColumnSums(SupportCounts):
    """Per-bit report counts and the number of reports, for one BFRRCE configuration.

    Immutable and mergeable (``a.merge(b)``, ``a + b``; exact in any order); ``add(reports)``
    returns the aggregate with one more batch (a rejected batch raises and changes nothing).
    ``batches`` holds the identifiers of the report batches counted, digests of their rows
    (:mod:`bfrrce.identity`: the same reports have the same identifier in memory, in a report
    file or in a Parquet file): merging two aggregates that share a batch is refused, so the
    same reports are never counted twice (docs/formats.md). ``seeded`` records that some batch
    came from a seeded (replayable) noise source.

    Parameters
    ----------
    mechanism : BFRRCE
        The configuration whose reports were counted (compared by value on merge).
    counts : array_like of int
        c_j, the reports with bit j set: L integers in [0, n] (stored as a read-only int64 array).
    n : int
        Number of reports, in [0, 2**53] (every count stays exact in float64).
    batches : set of str, optional
        Identifiers (64 lowercase hex digits) of the report batches counted; default none.
    seeded : bool, optional
        Some batch counted was privatized with a seeded generator (docs/formats.md); default False.

    Raises
    ------
    LDPTypeError
        A field of the wrong type (float or boolean counts, a mechanism without ``L``, ...).
    LDPValueError
        Counts of another length or outside [0, n], n outside [0, 2**53], a bad batch id.
    """

    batches: frozenset = field(default=frozenset())
    seeded: bool = False

    def __post_init__(self):
        """Validate every field (the class docstring lists what is refused)."""
        mech = self.mechanism
        if not isinstance(mech, Mechanism) or not isinstance(getattr(mech, "L", None), int):
            raise LDPTypeError(f"column sums need a BFRRCE mechanism, got {mech!r}")
        n = check_int(self.n, "n", 0, MAX_REPORTS)
        counts = np.asarray(self.counts)
        if counts.dtype == bool or not np.issubdtype(counts.dtype, np.integer):
            raise LDPTypeError(f"column sums must be integers, got dtype {counts.dtype}")
        if counts.shape != (mech.L,):
            raise LDPValueError(f"column sums must have shape ({mech.L},), got {counts.shape}")
        bad = (counts < 0) | (counts > n)
        if bad.any():
            raise LDPValueError(f"column sums must be in [0, n={n}]; found {counts[bad][0].item()}")
        if not isinstance(self.batches, (set, frozenset)):
            raise LDPTypeError(f"batches must be a set of identifiers, got {type(self.batches).__name__}")
        for batch in self.batches:
            check_batch(batch)
        object.__setattr__(self, "batches", frozenset(self.batches))
        if not isinstance(self.seeded, bool):
            raise LDPTypeError(f"seeded must be a bool, got {self.seeded!r}")
        super().__post_init__()

    def merge(self, other: "ColumnSums") -> "ColumnSums":
        """The column sums of both aggregates' reports (exact integer addition, any order).

        Parameters
        ----------
        other : ColumnSums
            Column sums of the same configuration and of other batches.

        Returns
        -------
        ColumnSums
            Counts and n added, the union of the batches.

        Raises
        ------
        LDPTypeError
            ``other`` is not a :class:`ColumnSums`.
        IncompatibleError
            Other parameters, or a batch counted in both.
        LDPValueError
            More than 2**53 reports in all.
        """
        merged = super().merge(other)              # type, parameters, and n <= 2**53
        twice = self.batches & other.batches
        if twice:
            raise IncompatibleError(f"batch {sorted(twice)[0]} is already counted")
        # both sets were validated when their sums were made: label the new object without
        # checking every identifier again (merging B files one by one stays O(B) per merge)
        object.__setattr__(merged, "batches", self.batches | other.batches)
        object.__setattr__(merged, "seeded", self.seeded or other.seeded)
        return merged

    __add__ = merge

    def __eq__(self, other):
        return super().__eq__(other) and self.batches == other.batches and self.seeded == other.seeded

    __hash__ = None

    def add(self, reports: ArrayLike) -> "ColumnSums":
        """The aggregate with one more batch of reports: ``self.merge(mechanism.aggregate(reports))``.

        Parameters
        ----------
        reports : array_like
            Packed reports of ``mechanism`` (see :meth:`bfrrce.BFRRCE.check_reports`).

        Returns
        -------
        ColumnSums
            A new aggregate; ``self`` is unchanged, also when the batch is rejected.

        Raises
        ------
        LDPTypeError, IncompatibleError
            Reports refused by :meth:`bfrrce.BFRRCE.check_reports`.
        LDPValueError
            More than 2**53 reports in all.
        """
        return self.merge(self.mechanism.aggregate(reports))

    def as_batch(self, batch: str) -> "ColumnSums":
        """These sums labelled as the one batch ``batch`` (the sums of one report file).

        Parameters
        ----------
        batch : str
            The batch identifier: 64 lowercase hex digits (docs/formats.md).

        Returns
        -------
        ColumnSums
            The same counts and n, with ``batches = {batch}``.

        Raises
        ------
        IncompatibleError
            These sums already carry batch identifiers.
        LDPTypeError, LDPValueError
            ``batch`` not a str of 64 lowercase hex digits (:func:`check_batch`).
        """
        if self.batches:
            raise IncompatibleError(f"sums of batches {sorted(self.batches)} cannot be relabelled")
        return ColumnSums(self.mechanism, self.counts, self.n, frozenset([check_batch(batch)]), self.seeded)


@dataclass(frozen=True)
class Debiased:
    """Unbiased estimates t̂ of the users per bit, their plug-in variances and the null variance.

    Attributes
    ----------
    t_hat : numpy.ndarray
        t̂_j = (c_j − nq)/(p − q), unbiased for t_j, the users whose filter has bit j (float, L).
    variance : numpy.ndarray
        Var(t̂_j) = [t_j p(1 − p) + (n − t_j) q(1 − q)]/(p − q)² at the plug-in
        t_j = clip(t̂_j, 0, n) (float, L).
    null_variance : float
        The variance of a column no user touched: n q(1 − q)/(p − q)².
    n : int
        Number of reports.

    References
    ----------
    Theorem 2 of the BFRRCE paper; docs/estimation.md.
    """

    t_hat: np.ndarray
    variance: np.ndarray
    null_variance: float
    n: int


def debias(counts, n, p, q) -> Debiased:
    """:class:`Debiased` column sums (:func:`protocols.core.perturbation.debias_counts`), with the null variance.

    Parameters
    ----------
    counts : array_like
        c_j, the reports with bit j set (int, L).
    n : int
        The number of reports.
    p, q : float
        The probabilities that a report has bit j when the filter has it, and when it has not.

    Returns
    -------
    Debiased
        t̂, its variances, the null variance and n.
    """
    t_hat, var = debias_counts(counts, n, p, q)
    return Debiased(t_hat, var, null_variance(n, p, q), n)


def check_column_sums(mech: Mechanism, aggregate) -> ColumnSums:
    """``aggregate`` if it is non-empty :class:`ColumnSums` of ``mech`` (the ``check_aggregate``
    of :class:`bfrrce.BFRRCE` and :class:`bfrrce.SetSketch`).

    Parameters
    ----------
    mech : Mechanism
        The mechanism that must have produced the sums.
    aggregate : ColumnSums
        Sums to estimate from.

    Returns
    -------
    ColumnSums
        ``aggregate`` itself.

    Raises
    ------
    LDPTypeError
        Not a :class:`ColumnSums`.
    IncompatibleError
        Sums of other parameters.
    LDPValueError
        No reports.
    """
    if not isinstance(aggregate, ColumnSums):
        raise LDPTypeError(f"expected ColumnSums, got {type(aggregate).__name__}")
    if aggregate.mechanism != mech:
        raise IncompatibleError(f"column sums of {aggregate.mechanism!r} cannot be read by {mech!r}")
    if aggregate.n == 0:
        raise LDPValueError("no reports: nothing to estimate")
    return aggregate
