"""Generalized randomized response (Direct Encoding, k-RR) and binary randomized response.

Warner (1965); Kairouz, Oh, Viswanath (2014); Wang et al. (USENIX Security 2017), "DE":
report the true value with probability p = e^ε/(e^ε + d − 1), each other value with
q = 1/(e^ε + d − 1). Pure protocol with p* = p, q* = q; Var = n(d − 2 + e^ε)/(e^ε − 1)² at f = 0.

(ε, δ) randomized response (``delta`` > 0; Holohan, Leith, Mason, IEEE TIFS 2017, for the binary
case): p = δ + (1 − δ)·e^ε/(e^ε + d − 1), q = (1 − δ)/(e^ε + d − 1) — with probability δ the
true value, otherwise ε-GRR. Between two inputs only the two outputs x and x' differ, so the
hockey-stick divergence at e^ε is exactly p − e^ε q = δ (audited by
:func:`protocols.audit.exact_delta`). For d = 2 this is the optimum: the (ε, δ) constraints on
the events {0} and {1} add up to Pr[0|0] + Pr[1|1] <= 2(e^ε + δ)/(e^ε + 1), with equality only at
the symmetric p = (e^ε + δ)/(e^ε + 1), which maximises p − q and so minimises the estimator's
variance n·q(1 − q)/(p − q)² + n·f(1 − p − q)/(p − q). For d > 2 it maximises p − q among
mechanisms of the GRR form (one probability for the truth, one for every other value).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_array, check_epsilon, check_int, check_probability, check_range, check_values
from protocols.core.calibration import grr_probabilities
from protocols.core.base import RNG, FrequencyOracle, SupportCounts, domain_counts
from protocols.core.randomness import SystemRandom, bernoulli, generator, integers, source
from protocols.errors import LDPValueError


def randomize_index(src: np.random.Generator | SystemRandom, values: np.ndarray, k: int, p: float) -> np.ndarray:
    """k-ary randomized response: keep each value with probability p, else report one of the
    k − 1 others uniformly (drawn in [0, k − 1) and shifted past the true value).

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`protocols.core.randomness.source`).
    values : numpy.ndarray
        int64 values in [0, k).
    k : int
        Number of outputs.
    p : float
        Probability of keeping the value.

    Returns
    -------
    numpy.ndarray
        int64 reports in [0, k).

    References
    ----------
    Kairouz, Oh, Viswanath, "Extremal mechanisms for local differential privacy", NeurIPS 2014.
    """
    keep = bernoulli(src, p, values.size)
    other = integers(src, k - 1, values.size)
    other += other >= values
    return np.where(keep, values, other)


@dataclass(frozen=True, kw_only=True)
class GRR(FrequencyOracle):
    """Generalized randomized response over the domain {0, …, d−1}.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 (ε-LDP, tight, when ``delta`` = 0).
    d : int
        Domain size, >= 2.
    delta : float
        δ in [0, 1) of an (ε, δ)-LDP guarantee (module docstring; default 0: pure ε-LDP).

    Attributes
    ----------
    p, q : float
        Pr[report = v | v] = e^ε/(e^ε + d − 1) and Pr[report = y | v] = 1/(e^ε + d − 1), y ≠ v;
        with δ > 0, p = δ + (1 − δ)e^ε/(e^ε + d − 1) and q = (1 − δ)/(e^ε + d − 1).

    References
    ----------
    S. L. Warner, JASA 1965; Kairouz, Oh, Viswanath, NeurIPS 2014; Wang et al., USENIX
    Security 2017 ("direct encoding"); N. Holohan, D. J. Leith, O. Mason, "Optimal
    differentially private mechanisms for randomised response", IEEE TIFS 12(11), 2017 (δ > 0).
    """

    epsilon: float
    d: int
    delta: float = 0.0
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        d = check_int(self.d, "d", 2)
        delta = check_probability(self.delta, "delta", open_interval=False)
        if delta >= 1:
            raise LDPValueError(f"delta must be in [0, 1), got {delta!r}")
        p, q = grr_probabilities(eps, d)
        p, q = delta + (1 - delta) * p, (1 - delta) * q
        self._set(epsilon=eps, d=d, delta=delta, p=p, q=q, p_star=p, q_star=q)

    def perturb(self, encoded: np.ndarray, rng: RNG = None) -> np.ndarray:
        """Keep each value with probability p, else report a uniformly chosen other value.

        Parameters
        ----------
        encoded : numpy.ndarray
            int64 values in [0, d).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            int64 reports in [0, d).
        """
        return randomize_index(source(rng), check_values(encoded, self.d), self.d, self.p)

    def simulate(self, values: ArrayLike, *, counts: ArrayLike | None = None,
                 rng: RNG = None) -> SupportCounts:
        # Exact in law without reports: each value's holders report multinomially over d outputs.
        t = domain_counts(values, counts, self.d)
        probs = np.full((self.d, self.d), self.q)
        np.fill_diagonal(probs, self.p)
        counts = generator(rng).multinomial(t, probs).sum(axis=0)
        return SupportCounts(self, counts, int(t.sum()))

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        arr = check_array(reports, np.int64, ())
        check_range(arr, self.d)
        return arr

    def _support(self, reports):
        return np.bincount(reports, minlength=self.d).astype(np.int64)

    def output_distribution(self, value: int) -> dict[int, float]:
        """Exact law of one report.

        Parameters
        ----------
        value : int
            A value in [0, d).

        Returns
        -------
        dict
            {y: Pr[report = y | value]} for every y in [0, d).
        """
        value = int(check_values([value], self.d)[0])
        return {y: (self.p if y == value else self.q) for y in range(self.d)}


@dataclass(frozen=True, kw_only=True)
class RandomizedResponse(GRR):
    """Warner's binary randomized response: GRR with d = 2 (values 0 and 1).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0; the true bit is kept with probability e^ε/(e^ε + 1).
    delta : float
        δ in [0, 1): the (ε, δ)-optimal mechanism of Holohan, Leith and Mason keeps the bit with
        probability (e^ε + δ)/(e^ε + 1) (module docstring); default 0.

    References
    ----------
    S. L. Warner, "Randomized response", JASA 60(309), 1965; N. Holohan, D. J. Leith, O. Mason,
    IEEE TIFS 12(11), 2017.
    """

    d: int = field(default=2, init=False)
