"""Simulation through real reports: the aggregate of users holding given values, exact in
distribution, in the memory of one chunk of users (for mechanisms without a closed form)."""

from __future__ import annotations


import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_int
from protocols.core.base import RNG, FrequencyOracle, SupportCounts, domain_counts
from protocols.core.randomness import generator

_CHUNK = 1 << 16                 # reports privatized at a time by simulate_from_reports


def simulate_from_reports(mechanism: FrequencyOracle, values: ArrayLike, counts: ArrayLike | None = None,
                          rng: RNG = None, chunk: int = _CHUNK) -> SupportCounts:
    """The aggregate of users holding ``values`` (``counts`` each) in [0, d), from real reports.

    Exact in distribution (it runs the clients), memory of one chunk of ``chunk`` users.
    Users are generated value by value; the aggregate does not depend on their order.

    Parameters
    ----------
    mechanism : FrequencyOracle
        The oracle whose clients are run.
    values : array_like of int
        Values in [0, d).
    counts : array_like of int, optional
        ``counts[i]`` users hold ``values[i]`` (default one each).
    rng : None, int or numpy.random.Generator
        Randomness of the simulation.
    chunk : int
        Users privatized at a time.

    Returns
    -------
    SupportCounts
    """
    t = domain_counts(values, counts, mechanism.d)
    chunk = check_int(chunk, "chunk", 1)
    rng = generator(rng)
    ends = np.cumsum(t)

    def batches():
        for s in range(0, int(ends[-1]), chunk):
            users = np.arange(s, min(s + chunk, int(ends[-1])))
            yield mechanism.privatize(np.searchsorted(ends, users, side="right"), rng=rng)
    return mechanism.aggregate_batches(batches())
