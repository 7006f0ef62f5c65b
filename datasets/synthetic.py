"""The paper's synthetic datasets and a parametrised generator."""

from __future__ import annotations

import numpy as np


def equal_counts(n, k):
    """k counts summing to n, as equal as possible (they differ by at most 1)."""
    return np.diff(np.linspace(0, n, k + 1).round().astype(np.int64))


def generate(n, cardinality, domain=1000, distribution="uniform", s=1.1, seed=0):
    """n values with exactly ``cardinality`` distinct integers from 1..domain.

    ``distribution="uniform"``: frequencies as equal as possible; ``"zipf"``: the i-th value has
    weight i^(−s), every value held by at least one user. Values are shuffled.
    """
    if not 1 <= cardinality <= min(n, domain):
        raise ValueError(f"need 1 <= cardinality <= min(n, domain), got {cardinality}")
    rng = np.random.default_rng(seed)
    support = rng.choice(np.arange(1, domain + 1), size=cardinality, replace=False)
    if distribution == "uniform":
        counts = equal_counts(n, cardinality)
    elif distribution == "zipf":
        weights = np.arange(1, cardinality + 1, dtype=float) ** -s
        extra = n - cardinality
        counts = 1 + np.floor(extra * weights / weights.sum()).astype(np.int64)
        counts[: n - counts.sum()] += 1
    else:
        raise ValueError(f"distribution must be 'uniform' or 'zipf', got {distribution!r}")
    values = np.repeat(support, counts)
    rng.shuffle(values)
    return values


PAPER_SETS = {
    "synthetic-1": dict(n=2_000, cardinality=122, domain=1000, seed=1),
    "synthetic-2": dict(n=10_000, cardinality=122, domain=1000, seed=2),
}
