"""Exact privacy accounting by enumeration.

ε is the largest log-likelihood ratio ln(Pr[y | v1] / Pr[y | v2]) over pairs of inputs and
outputs y. For mechanisms with a small output space it can be computed exactly from the output
distributions, which is what :func:`exact_epsilon` does; an output possible under one input and
impossible under another gives ε = ∞.
"""

from __future__ import annotations

import math
from itertools import permutations


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
