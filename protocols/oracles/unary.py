"""Unary encoding: SUE (= Basic RAPPOR), OUE, and the generic UE(p, q).

Wang et al. (USENIX Security 2017): one-hot encode v into d bits, then report each bit 1 with
probability p if it is 1 and q if it is 0. Two one-hot vectors differ in 2 bits, so
ε = ln(p(1 − q) / ((1 − p) q)). Pure protocol with p* = p, q* = q; at f = 0,
Var = n q(1 − q)/(p − q)²: SUE n e^{ε/2}/(e^{ε/2} − 1)², OUE 4n e^ε/(e^ε − 1)².
Reports are packed bits, little-endian bit order (:mod:`protocols.bits.packing`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from protocols.bits import packing as bits
from protocols.core.validation import check_epsilon, check_int, check_probability, check_values
from protocols.core.calibration import log_ratio, oue_probabilities, sue_probabilities
from protocols.core.base import RNG, FrequencyOracle, SupportCounts, domain_counts
from protocols.errors import LDPValueError
from protocols.core.randomness import generator
from protocols.core.perturbation import bit_vector_distribution, count_columns, perturb_positions, simulate_column_sums


@dataclass(frozen=True, kw_only=True)
class UnaryEncoding(FrequencyOracle):
    """Unary encoding with arbitrary flip probabilities p = Pr[1|1] > q = Pr[1|0].

    ε is derived: ε = ln(p(1 − q)/((1 − p)q)), tight.

    Parameters
    ----------
    d : int
        Domain size, >= 2.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0], 0 < q < p < 1.

    References
    ----------
    Wang et al., USENIX Security 2017, Section 4.2.
    """

    d: int
    p: float
    q: float
    epsilon: float = field(init=False)

    def __post_init__(self):
        d = check_int(self.d, "d", 2)
        p = check_probability(self.p, "p", open_interval=False)
        q = check_probability(self.q, "q")
        if not (p > q and p < 1):
            raise LDPValueError(f"unary encoding needs q < p < 1, got p={p!r}, q={q!r}")
        eps = getattr(self, "epsilon", None) or log_ratio(p, q)      # subclasses set ε first
        self._set(d=d, p=p, q=q, epsilon=eps, p_star=p, q_star=q)

    @property
    def tight_epsilon(self) -> float:
        """ln(p(1 − q)/((1 − p)q)): the exact ε of these flip probabilities."""
        return log_ratio(self.p, self.q)

    def perturb(self, encoded: np.ndarray, rng: RNG = None) -> np.ndarray:
        """Per-bit randomized response (p, q) on the one-hot encodings of the values.

        Parameters
        ----------
        encoded : numpy.ndarray
            int64 values in [0, d).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            uint8 packed reports (n, ⌈d/8⌉), little-endian bit order.
        """
        values = check_values(encoded, self.d)
        return perturb_positions(values[:, None], self.d, self.p, self.q, rng)

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        return bits.check_packed(reports, self.d)

    def simulate(self, values: ArrayLike, *, counts: ArrayLike | None = None,
                 rng: RNG = None) -> SupportCounts:
        # Exact in law without reports (simulate_column_sums), O(d) whatever n is.
        t = domain_counts(values, counts, self.d)
        return SupportCounts(self, simulate_column_sums(t, int(t.sum()), self.p, self.q,
                                                        generator(rng)), int(t.sum()))

    def _support(self, reports):
        return bits.column_sums(reports, self.d)

    def aggregate_batches(self, batches: Iterable) -> SupportCounts:
        """One aggregate of an iterable of report batches, one running bit-sliced counter.

        Parameters
        ----------
        batches : iterable of numpy.ndarray
            Packed report batches.

        Returns
        -------
        SupportCounts
            Equal to merging ``aggregate(batch)`` over the batches (:func:`count_columns`).
        """
        return SupportCounts(self, *count_columns(batches, self.d))

    def output_distribution(self, value: int) -> dict[bytes, float]:
        """Exact law of one report over all 2^d reports. Small d only.

        Parameters
        ----------
        value : int
            A value in [0, d).

        Returns
        -------
        dict
            {packed report (bytes): probability}.
        """
        value = int(check_values([value], self.d)[0])
        return bit_vector_distribution(np.arange(self.d) == value, self.p, self.q)


@dataclass(frozen=True, kw_only=True)
class _BudgetedUnaryEncoding(UnaryEncoding):
    """Unary encoding whose (p, q) derive from ε by ``_probabilities``."""

    epsilon: float
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        p, q = self._probabilities(eps)
        self._set(epsilon=eps, p=p, q=q)
        super().__post_init__()


@dataclass(frozen=True, kw_only=True)
class SUE(_BudgetedUnaryEncoding):
    """Symmetric unary encoding (Basic RAPPOR): p = e^{ε/2}/(e^{ε/2} + 1), q = 1 − p.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 (ε-LDP, tight).
    d : int
        Domain size, >= 2.

    References
    ----------
    Wang et al., USENIX Security 2017, Section 4.2.
    """

    @staticmethod
    def _probabilities(eps):
        return sue_probabilities(eps)


@dataclass(frozen=True, kw_only=True)
class BasicRAPPOR(SUE):
    """Basic RAPPOR (Erlingsson et al., CCS 2014) with one-hot encoding and one report.

    Each bit is kept with probability 1 − f/2 and flipped otherwise; ε = 2 ln(p/(1 − p)) with
    p = 1 − f/2. Identical in distribution to :class:`SUE`; :meth:`from_f` takes RAPPOR's f.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size, >= 2.

    References
    ----------
    Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: randomized aggregatable privacy-preserving
    ordinal response", CCS 2014.
    """

    @classmethod
    def from_f(cls, *, f: float, d: int) -> BasicRAPPOR:
        """The mechanism of RAPPOR's permanent response parameter f.

        Parameters
        ----------
        f : float
            Each bit is replaced by a fair coin with probability f, in (0, 1).
        d : int
            Domain size.

        Returns
        -------
        BasicRAPPOR
            ε = 2 ln((1 − f/2)/(f/2)).
        """
        f = check_probability(f, "f")
        return cls(epsilon=2 * math.log((1 - f / 2) / (f / 2)), d=d)


@dataclass(frozen=True, kw_only=True)
class OUE(_BudgetedUnaryEncoding):
    """Optimized unary encoding: p = 1/2, q = 1/(e^ε + 1); Var = 4n e^ε/(e^ε − 1)² at f = 0.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 (ε-LDP, tight).
    d : int
        Domain size, >= 2.

    References
    ----------
    Wang et al., USENIX Security 2017, Section 4.2.
    """

    @staticmethod
    def _probabilities(eps):
        return oue_probabilities(eps)
