"""Bounds that survive fake users: the estimate's interval over every honest sums that β·n
arbitrary reports could have been added to (docs/manipulation.md, "Bounds that survive fakes").

Of the N reports counted, at most m = ⌊β·N⌋ are fake (β = ``max_fake_fraction``). Whatever
the fakes sent, each adds 0 or 1 to every column sum, so the honest sums are

    n_h = N − k,   c_h,j ∈ [max(0, c_j − k), min(c_j, n_h)]   for some k in [0, m].

The debiased count t̂_j = (c_j − n q)/(p − q) of the honest reports is lowest when the k fakes
were all ones (c − k, N − k: t̂ falls by k(1 − q)/(p − q), more as k grows) and highest when
they were all zeros (c, N − k: t̂ rises by k q/(p − q)), so k = m at both ends. Every estimator
of the package reads the column sums through t̂; where it is non-decreasing in t̂ the interval
[lower bound at the all-ones extreme, upper bound at the all-zeros extreme] holds the honest
interval whatever the fakes sent. The bounds are not monotone everywhere (sums below the noise
floor, as the all-ones extreme makes at large ε, can give a lower bound above the truth:
benchmarks/poisoning.py), so the interval returned is the hull of the intervals at both
extremes and at the sums as counted. It is kept apart from :mod:`bfrrce.estimation.bounds` so
that any bound of the package can be widened this way; its coverage is measured, not proven.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from protocols.core.validation import check_probability
from protocols.errors import LDPValueError

from .sums import ColumnSums


@dataclass(frozen=True)
class RobustInterval:
    """The interval of :func:`robust_interval`.

    Attributes
    ----------
    lower, upper : float
        Bounds on the honest users' distinct count, valid whatever at most ``fakes`` reports sent.
    fakes : int
        m = ⌊β·N⌋, the fake reports allowed for.
    low, high : CardinalityEstimate
        The estimates at the all-ones and the all-zeros extremes.
    """

    lower: float
    upper: float
    fakes: int
    low: object
    high: object

    def __str__(self):
        return (f"robust interval [{self.lower:.6g}, {self.upper:.6g}] whatever up to {self.fakes:,} "
                "fake reports sent (--max-fake)")


def honest_extremes(agg: ColumnSums, fakes: int) -> tuple[ColumnSums, ColumnSums]:
    """The honest column sums at the two extremes (module docstring): (all-ones fakes removed,
    each column kept at or above the null mean ⌊n_h q⌋ when it was there: below it the bounds
    are not monotone; all-zeros fakes removed).

    Parameters
    ----------
    agg : ColumnSums
        The sums of all the reports, fakes included.
    fakes : int
        The number of fake reports.

    Returns
    -------
    (ColumnSums, ColumnSums)
        The low and the high extreme, each of ``agg.n − fakes`` reports.
    """
    n_h = agg.n - fakes
    floor = np.minimum(agg.counts, math.floor(n_h * agg.mechanism.q))     # no lower than the null mean
    low = np.clip(np.maximum(agg.counts - fakes, floor), 0, n_h)
    high = np.minimum(agg.counts, n_h)
    return ColumnSums(agg.mechanism, low, n_h), ColumnSums(agg.mechanism, high, n_h)


def robust_interval(mech, agg: ColumnSums, max_fake_fraction: float, **options) -> RobustInterval:
    """The estimate's interval widened for at most ``max_fake_fraction`` of fake reports.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism of ``agg``.
    agg : ColumnSums
        All reports counted, honest and fake.
    max_fake_fraction : float
        β in [0, 1): at most ⌊β·N⌋ of the N reports are fake.
    **options
        Passed to :meth:`bfrrce.BFRRCE.estimate` (candidates, method, confidence, ...).

    Returns
    -------
    RobustInterval

    Raises
    ------
    LDPValueError
        β outside [0, 1), or no honest report left.
    """
    beta = check_probability(max_fake_fraction, "max_fake_fraction", open_interval=False)
    if beta >= 1:
        raise LDPValueError(f"max_fake_fraction must be below 1, got {beta!r}")
    fakes = math.floor(beta * agg.n)
    if agg.n - fakes < 1:
        raise LDPValueError(f"no honest report left with {fakes} fakes among {agg.n}")
    low_sums, high_sums = honest_extremes(agg, fakes)
    ests = [mech.estimate(sums, **options) for sums in (low_sums, high_sums, agg)]
    lower = min(float(e.interval[0]) for e in ests)
    upper = max(float(e.interval[1]) for e in ests)
    return RobustInterval(lower, upper, fakes, ests[0], ests[1])
