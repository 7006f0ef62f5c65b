"""Privacy audits: exact ε by enumeration, and a sampled lower bound for large domains.

ε is the largest log-likelihood ratio ln(Pr[y | v1] / Pr[y | v2]) over pairs of inputs and
outputs y (over events, for the sampled bound).

* :func:`exact_epsilon` computes it from exact output distributions (small domains); an output
  possible under one input and impossible under another gives ε = ∞.
* :func:`audit_mechanism` runs it on a mechanism's ``output_distribution`` and compares with its claim.
* :func:`empirical_epsilon` gives a lower bound that holds with the stated confidence from
  samples of two inputs: half of the samples choose the event (and direction) with the largest
  empirical ratio, the other half bound its two probabilities with the Chernoff (relative-entropy) inequality
  Pr[p̂ ≥ a] ≤ exp(−N·KL(a‖p)); ε_lb = ln(lower(P1[E]) / upper(P2[E])).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from itertools import permutations

import numpy as np
from scipy.optimize import brentq

from .errors import LDPValueError


def exact_epsilon(distribution, inputs):
    """Worst-case ε of a mechanism given its exact output distributions.

    Parameters
    ----------
    distribution : callable
        ``distribution(x)`` returns {output: probability} for input x (for example a
        mechanism's ``output_distribution``).
    inputs : iterable
        The inputs to compare pairwise (all of a small domain, or the worst-case pair).
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


@dataclass(frozen=True)
class AuditResult:
    """Claimed and measured ε; ``ok`` when the measured ε does not exceed the claim."""

    mechanism: str
    claimed: float
    measured: float

    @property
    def ok(self):
        return self.measured <= self.claimed * (1 + 1e-9)

    @property
    def tight(self):
        return self.ok and self.measured >= self.claimed * (1 - 1e-9)


def audit_mechanism(mechanism, inputs=None, claimed=None):
    """Exact audit of a mechanism with ``output_distribution`` (inputs default: its domain)."""
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


def chernoff_bounds(count, total, delta):
    """(lower, upper) bounds on p from ``count`` successes in ``total`` trials; each side fails
    with probability at most δ (Chernoff–Hoeffding, relative-entropy form)."""
    a = count / total
    limit = math.log(1 / delta) / total

    def solve(lo, excess):
        """The p in [lo, 1] where KL(a‖p) reaches ``limit`` (KL increases in p there), or 1."""
        if excess(1.0 - 1e-15) <= 0:
            return 1.0
        return brentq(excess, lo, 1.0 - 1e-15, xtol=1e-15)

    upper = 1.0 if a >= 1 else solve(a, lambda p: _kl(a, p) - limit)
    lower = 0.0 if a <= 0 else 1 - solve(1 - a, lambda p: _kl(1 - a, p) - limit)
    return lower, upper


def empirical_epsilon(sampler, x1, x2, samples=100_000, confidence=0.95, feature=None, rng=0):
    """Lower bound on ε that holds with probability ``confidence``, from samples.

    Parameters
    ----------
    sampler : callable
        ``sampler(x, size, rng)`` returns ``size`` outputs of the mechanism on input x (an array
        whose rows are outputs, or a sequence of hashable outputs).
    feature : callable, optional
        Maps the outputs to hashable events (default: the output itself, rows as bytes).
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
