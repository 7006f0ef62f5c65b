"""Privacy audits: exact ε by enumeration, and a sampled lower bound for large domains.

ε is the largest log-likelihood ratio ln(Pr[y | v1] / Pr[y | v2]) over pairs of inputs and
outputs y (over events, for the sampled bound).

* :func:`exact_epsilon` computes it from exact output distributions (small domains); an output
  possible under one input and impossible under another gives ε = ∞.
* :func:`exact_delta` gives the δ of an (ε, δ) claim: the largest hockey-stick divergence
  D_{e^ε}(P_x ‖ P_x') = Σ_y max(0, Pr[y | x] − e^ε Pr[y | x']) over input pairs
  (:func:`hockey_stick` on aligned arrays); ε-LDP means δ = 0 at that ε.
* :func:`audit_mechanism` runs it on a mechanism's ``output_distribution`` and compares with its claim.
* :func:`empirical_epsilon` gives a lower bound that holds with the stated confidence from
  samples of two inputs: half of the samples choose the event (and direction) with the largest
  empirical ratio, the other half bound its two probabilities with the Chernoff (relative-entropy) inequality
  Pr[p̂ ≥ a] ≤ exp(−N·KL(a‖p)); ε_lb = ln(lower(P1[E]) / upper(P2[E])).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import numpy as np

from protocols.core.lazy import optimize
from protocols.core.base import Mechanism
from protocols.errors import LDPValueError


def exact_epsilon(distribution: Callable[[Any], dict], inputs: Iterable) -> float:
    """Worst-case ε of a mechanism given its exact output distributions.

    Parameters
    ----------
    distribution : callable
        ``distribution(x)`` returns {output: probability} for input x (for example a
        mechanism's ``output_distribution``).
    inputs : iterable
        The inputs to compare pairwise (all of a small domain, or the worst-case pair).

    Returns
    -------
    float
        max over input pairs (x, x') and outputs y of ln(Pr[y | x]/Pr[y | x']); ∞ when an output
        is possible under one input and impossible under another.
    """
    dists = [distribution(x) for x in inputs]
    worst = 0.0
    for a, b in permutations(dists, 2):
        for y, pa in a.items():
            if pa <= 0:
                continue
            pb = b.get(y, 0.0)
            if pb <= 0:
                return math.inf
            worst = max(worst, math.log(pa / pb))
    return worst


def hockey_stick(p: np.ndarray, q: np.ndarray, epsilon: float) -> float:
    """The hockey-stick divergence D_{e^ε}(p ‖ q) = Σ max(0, p − e^ε·q) of two aligned laws.

    Parameters
    ----------
    p, q : numpy.ndarray
        Probabilities of the same outcomes.
    epsilon : float
        ε >= 0.

    Returns
    -------
    float
        The smallest δ for which every event E has p(E) <= e^ε q(E) + δ.

    References
    ----------
    G. Barthe, B. Köpf, F. Olmedo, S. Zanella-Béguelin, "Probabilistic relational reasoning for
    differential privacy", POPL 2012 (DP as a bound on this divergence).
    """
    return float(np.maximum(np.asarray(p) - math.exp(epsilon) * np.asarray(q), 0.0).sum())


def exact_delta(distribution: Callable[[Any], dict], inputs: Iterable, epsilon: float) -> float:
    """Exact δ of a mechanism at ε: the largest hockey-stick divergence between input pairs.

    Parameters
    ----------
    distribution : callable
        ``distribution(x)`` returns {output: probability} for input x.
    inputs : iterable
        The inputs to compare pairwise.
    epsilon : float
        ε >= 0.

    Returns
    -------
    float
        max over ordered pairs (x, x') of Σ_y max(0, Pr[y | x] − e^ε Pr[y | x']): the mechanism is
        (ε, δ)-LDP exactly for this δ and no smaller.
    """
    dists = [distribution(x) for x in inputs]
    outputs = sorted({y for dist in dists for y in dist}, key=repr)
    laws = [np.array([dist.get(y, 0.0) for y in outputs]) for dist in dists]
    return max((hockey_stick(a, b, epsilon) for a, b in permutations(laws, 2)), default=0.0)


@dataclass(frozen=True)
class AuditResult:
    """Claimed and measured ε of one mechanism.

    Attributes
    ----------
    mechanism : str
        The mechanism's repr.
    claimed : float
        The ε it claims.
    measured : float
        The exact ε of its output distributions.
    """

    mechanism: str
    claimed: float
    measured: float

    @property
    def ok(self) -> bool:
        """The measured ε does not exceed the claim (relative tolerance 1e-9)."""
        return self.measured <= self.claimed * (1 + 1e-9)

    @property
    def tight(self) -> bool:
        """The measured ε equals the claim (relative tolerance 1e-9)."""
        return self.ok and self.measured >= self.claimed * (1 - 1e-9)


def audit_mechanism(mechanism: Mechanism, inputs: Iterable | None = None,
                    claimed: float | None = None) -> AuditResult:
    """Exact audit of a mechanism's claimed ε by enumeration of ``output_distribution``.

    Parameters
    ----------
    mechanism : Mechanism
        A mechanism with ``output_distribution`` (and ``d`` when ``inputs`` is None).
    inputs : iterable, optional
        The inputs to compare; default ``range(mechanism.d)``.
    claimed : float, optional
        The claim to check; default ``mechanism.epsilon``.

    Returns
    -------
    AuditResult
    """
    inputs = range(mechanism.d) if inputs is None else inputs
    claimed = mechanism.epsilon if claimed is None else claimed
    return AuditResult(repr(mechanism), claimed, exact_epsilon(mechanism.output_distribution, inputs))


def _kl(a, p):
    out = 0.0
    if a > 0:
        out += a * math.log(a / p)
    if a < 1:
        out += (1 - a) * math.log((1 - a) / (1 - p))
    return out


def chernoff_bounds(count: int, total: int, delta: float) -> tuple[float, float]:
    """Confidence bounds on a success probability p from ``count`` successes in ``total`` trials.

    Each bound solves KL(p̂‖p) = ln(1/δ)/total (Brent's method), so each side fails with
    probability at most δ: Pr[p̂ >= a] <= exp(−total·KL(a‖p)).

    Parameters
    ----------
    count, total : int
        Successes and trials.
    delta : float
        Failure probability of each side.

    Returns
    -------
    (float, float)
        Lower and upper bound on p.

    References
    ----------
    W. Hoeffding, "Probability inequalities for sums of bounded random variables", JASA 1963.
    """
    a = count / total
    limit = math.log(1 / delta) / total

    def solve(lo, excess):
        """The p in [lo, 1] where KL(a‖p) reaches ``limit`` (KL increases in p there), or 1."""
        if excess(1.0 - 1e-15) <= 0:
            return 1.0
        return optimize.brentq(excess, lo, 1.0 - 1e-15, xtol=1e-15)

    upper = 1.0 if a >= 1 else solve(a, lambda p: _kl(a, p) - limit)
    lower = 0.0 if a <= 0 else 1 - solve(1 - a, lambda p: _kl(1 - a, p) - limit)
    return lower, upper


def empirical_epsilon(sampler: Callable, x1: Any, x2: Any, samples: int = 100_000,
                      confidence: float = 0.95, feature: Callable | None = None,
                      rng: int | np.random.Generator = 0) -> float:
    """Lower bound on ε that holds with probability ``confidence``, from samples.

    Parameters
    ----------
    sampler : callable
        ``sampler(x, size, rng)`` returns ``size`` outputs of the mechanism on input x (an array
        whose rows are outputs, or a sequence of hashable outputs).
    x1, x2
        The two inputs compared.
    samples : int
        Outputs drawn in all (half to choose the event, half to bound it), >= 4.
    confidence : float
        Probability that the bound holds.
    feature : callable, optional
        Maps the outputs to hashable events (default: the output itself, rows as bytes).
    rng : int or numpy.random.Generator
        Randomness of the sampling.

    Returns
    -------
    float
        ε_lb = ln(lower(P1[E])/upper(P2[E])) (0 when nothing is significant).

    Raises
    ------
    LDPValueError
        ``samples`` < 4.
    """
    if samples < 4:
        raise LDPValueError(f"samples must be >= 4, got {samples}")
    gen = np.random.default_rng(rng)
    feature = feature or _as_keys
    half = samples // 2
    pick1, pick2 = Counter(feature(sampler(x1, half, gen))), Counter(feature(sampler(x2, half, gen)))
    # the event and direction: the output most over-represented under one input (add-one smoothing)
    ratio = lambda a, b, y: (a[y] + 1) / (b.get(y, 0) + 1)  # noqa: E731
    best12 = max(pick1, key=lambda y: ratio(pick1, pick2, y))
    best21 = max(pick2, key=lambda y: ratio(pick2, pick1, y))
    if ratio(pick1, pick2, best12) >= ratio(pick2, pick1, best21):
        event, first, second = best12, x1, x2
    else:
        event, first, second = best21, x2, x1
    test1 = Counter(feature(sampler(first, half, gen)))[event]
    test2 = Counter(feature(sampler(second, half, gen)))[event]
    delta = (1 - confidence) / 2
    lower1, _ = chernoff_bounds(test1, half, delta)
    _, upper2 = chernoff_bounds(test2, half, delta)
    if lower1 <= 0:
        return 0.0
    return max(0.0, math.log(lower1 / upper2)) if upper2 > 0 else math.inf


def _as_keys(outputs):
    arr = np.asarray(outputs)
    if arr.ndim >= 2:
        return [row.tobytes() for row in arr.reshape(arr.shape[0], -1)]
    return arr.tolist()
