"""Microsoft's 1BitMean, one-shot and memoized (Ding, Kulkarni, Yekhanin, NeurIPS 2017).

1BitMean (values x ∈ [0, m]): send 1 with probability 1/(e^ε + 1) + (x/m)(e^ε − 1)/(e^ε + 1);
the mean is estimated by m/n Σ (b_i(e^ε + 1) − 1)/(e^ε − 1), with
Var = m²(e^ε + 1)²/((e^ε − 1)² n²) Σ p_i(1 − p_i) ≤ m²(e^ε + 1)²/(4n(e^ε − 1)²).
In law this is Duchi et al.'s ±C mechanism on t = 2x/m − 1 (:class:`protocols.DuchiMean`).

:class:`MemoizedOneBitMean`: α-point rounding — a per-user α uniform on [0, 1) rounds x
(with x/Δ = L + r, Δ = m/s) to (L + 1)Δ if α < r, else LΔ; unbiased since Pr[α < r] = r — then
the 1BitMean bit of each grid point is drawn once (independently per point) and replayed
(:mod:`protocols.core.memo`; what repeated rounds reveal: docs/accountant.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_array, check_int, check_range
from protocols.core.base import RNG, SupportCounts
from protocols.errors import IncompatibleError, LDPTypeError, LDPValueError
from protocols.mean.duchi import DuchiMean
from protocols.core.randomness import source
from protocols.core.memo import STREAM_ALPHA, STREAM_BIT, check_secrets, keyed_uniform, mechanism_word



@dataclass(frozen=True, kw_only=True)
class OneBitMean(DuchiMean):
    """1BitMean (Ding et al. 2017, Section 2.1): one bit per user, values in [0, ``high``].

    Reports are uint8 bits; the aggregate (a :class:`SupportCounts` with counts [ones]) is exact,
    mergeable and serializable. ``variance(n, t)`` (inherited) is the variance of the mean
    estimate for n users all at t = 2x/m − 1; :meth:`population_variance` sums the exact per-user terms.

    Parameters
    ----------
    epsilon : float
        ε of one report.
    high : float
        The upper bound m of the values (the lower bound is 0).

    References
    ----------
    B. Ding, J. Kulkarni, S. Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017.
    """

    low: float = field(default=0.0, init=False)
    high: float

    def privatize(self, values: ArrayLike, rng: RNG = None) -> np.ndarray:
        """One bit per value: 1 w.p. 1/(e^ε + 1) + (x/m)(e^ε − 1)/(e^ε + 1).

        Parameters
        ----------
        values : array_like of float
            Values in [0, m].
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            uint8 bits (n,).
        """
        return (self._perturb(self.to_unit(values), source(rng)) > 0).astype(np.uint8)

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        """``reports`` if they are uint8 bits.

        Parameters
        ----------
        reports : array_like of uint8

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        LDPTypeError, IncompatibleError
            Another dtype, shape or range.
        """
        arr = check_array(reports, np.uint8, ())
        check_range(arr, 2)
        return arr

    def aggregate(self, reports: ArrayLike) -> SupportCounts:
        """The number of ones and of reports.

        Parameters
        ----------
        reports : array_like of uint8
            Bits of this mechanism.

        Returns
        -------
        SupportCounts
            counts = [ones].
        """
        reports = self.check_reports(reports)
        return SupportCounts(self, [np.count_nonzero(reports)], len(reports))

    def empty_aggregate(self) -> SupportCounts:
        """The aggregate of no reports.

        Returns
        -------
        SupportCounts
        """
        return SupportCounts(self, [0], 0)

    def check_aggregate(self, aggregate: SupportCounts) -> SupportCounts:
        """``aggregate`` if it is a non-empty :class:`SupportCounts` of this mechanism.

        Parameters
        ----------
        aggregate : SupportCounts

        Returns
        -------
        SupportCounts

        Raises
        ------
        LDPTypeError
            Another type.
        IncompatibleError
            Another mechanism.
        LDPValueError
            No reports.
        """
        if not isinstance(aggregate, SupportCounts):
            raise LDPTypeError(f"expected SupportCounts, got {type(aggregate).__name__}")
        if aggregate.mechanism != self:
            raise IncompatibleError(f"aggregate of {aggregate.mechanism!r} cannot be estimated by {self!r}")
        if aggregate.n == 0:
            raise LDPValueError("cannot estimate a mean from zero reports")
        return aggregate

    def estimate(self, aggregate: SupportCounts) -> float:
        """The published estimator m·((e^ε + 1)·ones/n − 1)/(e^ε − 1), unbiased for the mean.

        Parameters
        ----------
        aggregate : SupportCounts
            A non-empty aggregate of this mechanism.

        Returns
        -------
        float
        """
        agg = self.check_aggregate(aggregate)
        e = math.exp(self.epsilon)
        return self.high * ((e + 1) * agg.counts[0] / agg.n - 1) / (e - 1)

    def population_variance(self, values: ArrayLike) -> float:
        """Var of the mean estimate for these users: m²/(4n²) Σ (C² − t_i²), C = (e^ε + 1)/(e^ε − 1).

        Parameters
        ----------
        values : array_like of float
            The users' values in [0, m].

        Returns
        -------
        float
        """
        t = self.to_unit(values)
        return float(np.sum(self.unit_variance(t))) / t.size ** 2 * (self.high / 2) ** 2

    def output_distribution(self, x: float) -> dict[int, float]:
        """Exact law of one bit.

        Parameters
        ----------
        x : float
            A value in [0, m].

        Returns
        -------
        dict
            {1: Pr[1 | x], 0: Pr[0 | x]}.
        """
        one = 1 / (math.exp(self.epsilon) + 1) + x / self.high * math.tanh(self.epsilon / 2)
        return {1: one, 0: 1 - one}


@dataclass(frozen=True, kw_only=True)
class MemoizedOneBitMean(OneBitMean):
    """1BitMean for repeated collection: α-point rounding to s + 1 grid points, then memoization.

    ``privatize(values, secrets=...)`` with one stable 64-bit secret per user replays the same
    bit while the user's rounded value stays; :attr:`epsilon_permanent` (= ε) is the cost of one
    memo key over any number of rounds (:mod:`protocols.accountant`).

    Parameters
    ----------
    epsilon : float
        ε of one report (and of any number of reports with one memo key).
    high : float
        The upper bound m of the values.
    s : int
        Grid {0, m/s, …, m}. The per-round estimate is unbiased with 1BitMean's variance.

    References
    ----------
    Ding, Kulkarni, Yekhanin, NeurIPS 2017, Section 3 (α-point rounding, memoization).
    """

    s: int = 16

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "s", check_int(self.s, "s", 1, 2 ** 32))

    @property
    def epsilon_permanent(self) -> float:
        """ε of any number of reports with one memo key: the one report they repeat."""
        return self.epsilon

    def memo_keys(self, values: ArrayLike, secrets: ArrayLike) -> np.ndarray:
        """The grid point (0..s) each user's value is α-rounded to: the key of its memoized bit.

        Parameters
        ----------
        values : array_like of float
            Values in [0, m].
        secrets : array_like of uint64
            The users' secrets (α is derived from them).

        Returns
        -------
        numpy.ndarray
            int64 grid points in [0, s].
        """
        scaled = (self.to_unit(values) + 1) / 2 * self.s
        floor = np.minimum(np.floor(scaled), self.s - 1)
        alpha = keyed_uniform(secrets, mechanism_word(self), STREAM_ALPHA)
        return (floor + (alpha < scaled - floor)).astype(np.int64)

    def privatize(self, values: ArrayLike, rng: RNG = None, secrets: ArrayLike | None = None) -> np.ndarray:
        """Memoized bits: 1 iff U(secret, grid point) < p(grid point).

        Parameters
        ----------
        values : array_like of float
            Values in [0, m].
        rng : None, int or numpy.random.Generator
            Source of fresh secrets when ``secrets`` is None.
        secrets : array_like of uint64, optional
            One stable secret per user; None: fresh ones (one-shot use).

        Returns
        -------
        numpy.ndarray
            uint8 bits (n,).
        """
        n = np.asarray(values).size
        secrets = check_secrets(secrets, n, source(rng))
        grid = self.memo_keys(values, secrets)
        one = self._one(grid)
        return (keyed_uniform(secrets, mechanism_word(self), STREAM_BIT, grid) < one).astype(np.uint8)

    def _one(self, grid):
        return 1 / (math.exp(self.epsilon) + 1) + grid / self.s * math.tanh(self.epsilon / 2)

    def history_distribution(self, history: Sequence[float]) -> dict[tuple[int, ...], float]:
        """Exact law of the reports of one user over rounds (marginal over α and the memo).

        Parameters
        ----------
        history : sequence of float
            The user's value in each round. Small histories only.

        Returns
        -------
        dict
            {tuple of bits: probability}.
        """
        scaled = [min(max(x / self.high * self.s, 0.0), float(self.s)) for x in history]
        floors = [min(math.floor(v), self.s - 1) for v in scaled]
        fracs = [v - f for v, f in zip(scaled, floors)]
        cuts = sorted({0.0, 1.0, *[r for r in fracs if 0 < r < 1]})
        out: dict[tuple[int, ...], float] = {}
        for a, b in zip(cuts[:-1], cuts[1:]):           # α in (a, b): one rounding of every round
            alpha = (a + b) / 2
            grid = [f + (alpha < r) for f, r in zip(floors, fracs)]
            keys = sorted(set(grid))
            for memo in product((0, 1), repeat=len(keys)):
                bitof = dict(zip(keys, memo))
                pr = (b - a) * math.prod(self._one(g) if bitof[g] else 1 - self._one(g) for g in keys)
                view = tuple(bitof[g] for g in grid)
                out[view] = out.get(view, 0.0) + pr
        return out
