"""The paper's synthetic datasets and a parametrised generator."""

from __future__ import annotations

import math
import numbers

import numpy as np

from protocols.errors import LDPValueError

MAX_USERS = 10 ** 8      # 800 MB of int64 values: a generated dataset larger than this is refused


def equal_counts(n: int, k: int) -> np.ndarray:
    """k counts summing to n, as equal as possible (they differ by at most 1).

    Parameters
    ----------
    n, k : int
        Total and number of counts.

    Returns
    -------
    numpy.ndarray
        int64 (k,).
    """
    return np.diff(np.linspace(0, n, k + 1).round().astype(np.int64))


def generate(n: int, cardinality: int, domain: int = 1000, distribution: str = "uniform",
             s: float = 1.1, seed: int = 0) -> np.ndarray:
    """n values with exactly ``cardinality`` distinct integers from 1..domain, shuffled.

    Parameters
    ----------
    n : int
        Number of values (users).
    cardinality : int
        Distinct values, 1 <= cardinality <= min(n, domain).
    domain : int
        Values are drawn from 1..domain.
    distribution : {"uniform", "zipf"}
        ``"uniform"``: frequencies as equal as possible; ``"zipf"``: the i-th value has weight
        i^(−s), every value held by at least one user.
    s : float
        Zipf exponent.
    seed : int
        Seed of the support and the shuffle.

    Returns
    -------
    numpy.ndarray
        int64 (n,).

    Raises
    ------
    LDPValueError
        n, cardinality or domain not an integer in range (n at most :data:`MAX_USERS`), s not a
        positive finite number, or an unknown distribution.
    """
    for name, value in (("n", n), ("cardinality", cardinality), ("domain", domain), ("seed", seed)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise LDPValueError(f"{name} must be an integer, got {value!r}")
    if not 1 <= n <= MAX_USERS:
        raise LDPValueError(f"n must be in 1..{MAX_USERS:,} (the generated values are held in memory), got {n}")
    if not (isinstance(s, numbers.Real) and math.isfinite(s) and s > 0):
        raise LDPValueError(f"s (the Zipf exponent) must be a positive finite number, got {s!r}")
    if not 1 <= cardinality <= min(n, domain):
        raise LDPValueError(f"need 1 <= cardinality <= min(n, domain), got {cardinality}")
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
        raise LDPValueError(f"distribution must be 'uniform' or 'zipf', got {distribution!r}")
    values = np.repeat(support, counts)
    rng.shuffle(values)
    return values


PAPER_SETS = {
    "synthetic-1": dict(n=2_000, cardinality=122, domain=1000, seed=1),
    "synthetic-2": dict(n=10_000, cardinality=122, domain=1000, seed=2),
}
