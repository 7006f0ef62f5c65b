"""What the estimators read: the design of the reports and the column sums observed under it.

:class:`Design` holds the parameters (n reports, the per-bit law (p, q), L columns, l hashes, the
unit, the total count N of the values); :class:`Observed` the column sums with their debiased
values, plug-in variances and null p-values, computed once; :class:`PointEstimate` is what
a point estimator returns (docs/estimation.md).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
from protocols.core.perturbation import debias_counts

from . import likelihood, moments, occupancy


@dataclass(frozen=True)
class Design:
    """The parameters of one set of column sums.

    Attributes
    ----------
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    L, l : int
        Filter size and hashes per value.
    unit : {"value", "item"}
        One value per user, or a set of items per party.
    """

    n: int
    p: float
    q: float
    L: int
    l: int
    unit: str = "value"

    @property
    def one_value_each(self) -> bool:
        """Whether every report holds exactly one value (then N = n and Σ_j t_j <= l·n are sure)."""
        return self.unit == "value"

    @property
    def known_mass(self) -> float | None:
        """N where it is known for sure (n with one value per user), else None."""
        return float(self.n) if self.one_value_each else None

    @property
    def total(self) -> float | None:
        """A sure upper bound on Σ_j t_j: l·n with one value per user, else None."""
        return float(self.l * self.n) if self.one_value_each else None

    @property
    def cap(self) -> float:
        """A sure upper bound on D: n with one value per user, else ∞."""
        return float(self.n) if self.one_value_each else math.inf

    def at(self, p: float, q: float) -> Design:
        """The same design under another per-bit law (degraded sums, docs/estimation.md).

        Parameters
        ----------
        p, q : float
            The law: Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

        Returns
        -------
        Design
        """
        return dataclasses.replace(self, p=p, q=q)


@dataclass(frozen=True)
class Observed:
    """Column sums under a design, and what every estimator derives from them (computed once,
    on first use).

    Attributes
    ----------
    counts : numpy.ndarray
        c_j, the reports with bit j set (int, L).
    design : Design
        Their parameters.
    """

    counts: np.ndarray
    design: Design

    def __post_init__(self):
        object.__setattr__(self, "counts", np.asarray(self.counts))

    @functools.cached_property
    def _debiased(self) -> tuple[np.ndarray, np.ndarray]:
        return debias_counts(self.counts, self.design.n, self.design.p, self.design.q)

    @property
    def t_hat(self) -> np.ndarray:
        """t̂_j = (c_j − nq)/(p − q), unbiased for the users whose filter has bit j (float, L)."""
        return self._debiased[0]

    @property
    def variance(self) -> np.ndarray:
        """The plug-in variances of t̂_j (float, L)."""
        return self._debiased[1]

    @functools.cached_property
    def mass(self) -> float:
        """N, the total count of the values: n with one value per user, else the estimate
        max(Σ_j t̂_j/l, 1)."""
        known = self.design.known_mass
        return known if known is not None else max(float(np.sum(self.t_hat)) / self.design.l, 1.0)

    @functools.cached_property
    def second_moment(self) -> tuple[float, float]:
        """:func:`.moments.second_moment` of the columns: Ŝ₂ and its standard error."""
        return moments.second_moment(self.t_hat, self.variance, self.design.n, self.design.p, self.design.q)

    @functools.cached_property
    def equal_frequency(self) -> likelihood.EqualFrequency:
        """:func:`.likelihood.equal_frequency_estimate` of the sums (``fill`` and ``corrected``
        both read it)."""
        return likelihood.equal_frequency_estimate(self.counts, self.design, self.mass, self.second_moment[0])

    @functools.cached_property
    def passing(self) -> np.ndarray:
        """:func:`.occupancy.passing_columns`: the columns whose p-value of "empty" is at most
        u, for every u of :data:`.occupancy.P_GRID` (int)."""
        return occupancy.passing_columns(self.counts, self.design.n, self.design.q)


@dataclass(frozen=True)
class Candidates:
    """A candidate list as the estimators read it.

    Attributes
    ----------
    positions : numpy.ndarray
        int (M, l): the candidates' filter positions.
    multiplicity : numpy.ndarray
        m_j, the candidates hashed to each column (int, L).
    """

    positions: np.ndarray
    multiplicity: np.ndarray


@dataclass(frozen=True)
class PointEstimate:
    """A point estimator's result.

    Attributes
    ----------
    value : float
        The estimate of D.
    std_error : float
        Its standard error.
    visible : float
        The visible count (values the noise lets through).
    visible_se : float
        Its standard error.
    details : dict
        The estimator's ingredients.
    assumption : str or None
        What ``value`` rests on, where it is not the method's usual assumption.
    """

    value: float
    std_error: float
    visible: float
    visible_se: float
    details: dict
    assumption: str | None = None
