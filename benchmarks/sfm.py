"""Sketch-Flip-Merge (Hehir, Ting, Cormode, ICML 2023, arXiv 2302.02056), written from the paper
as the baseline of ``benchmarks/sets.py``.

A party's sketch is a B × G bit matrix: an item sets the bit of its bucket (uniform) and level
(geometric, the last level absorbing the tail); every bit is then flipped with probability r
(keep with 1 − r), r = 1/(1 + e^ε). The estimate of the cardinality is the maximum of the
composite likelihood Π_g Π_b ρ_g^{y} (1 − ρ_g)^{1−y}, ρ_g = a₀ + (a₁ − a₀)(1 − e_g(N)),
e_g(N) = (1 − π_g/B)^N, with (a₀, a₁) = (r, 1 − r) for one sketch; its standard error is the
inverse Fisher information at the estimate. Two merges of k sketches:

* deterministic: the OR of the noisy bits; a bit no party holds is 1 with probability
  a₀ = 1 − (1 − r)^k, one held by h parties with a₁ = 1 − r^h (1 − r)^{k−h}; the estimator is
  told h (``holders``; the benchmark reports the better of h = 1 and h = k, an oracle choice in
  SFM's favour);
* randomized: the paper's merge of two noisy bits into one bit distributed as randomized
  response with flip probability s of the OR of the true bits, s the smallest such probability
  (a linear programme over Pr[z = 1 | x, y], :func:`merge_table`); merging k sketches pairwise in
  a balanced tree gives a sketch of the union with one flip probability, read by the one-sketch
  estimator.

The sketching here is the straightforward one (``mmh3.hash`` per item, numpy flips), for the
throughput comparison.
"""

from __future__ import annotations

import math

import mmh3
import numpy as np
from scipy import optimize


def flip_probability(epsilon: float) -> float:
    """r = 1/(1 + e^ε): each bit is flipped with probability r (ε per item)."""
    return 1.0 / (1.0 + math.exp(epsilon))


def cells(items, buckets: int, levels: int, seed: int = 0) -> np.ndarray:
    """Cell level·B + bucket of each item: a 32-bit mmh3 hash per item, bucket from its low bits,
    level from the trailing zeros of the rest (capped at G − 1)."""
    shift = buckets.bit_length() - 1
    out = np.empty(len(items), dtype=np.int64)
    for i, item in enumerate(items):
        h = mmh3.hash(int(item).to_bytes(8, "little", signed=True) if isinstance(item, (int, np.integer))
                      else item, seed, signed=False)
        rest = h >> shift
        level = levels - 1 if rest == 0 else min(levels - 1, (rest & -rest).bit_length() - 1)
        out[i] = level * buckets + (h & (buckets - 1))
    return out


def sketch(items, buckets: int, levels: int, epsilon: float, rng: np.random.Generator, seed: int = 0) -> np.ndarray:
    """One party's SFM sketch: bool (G, B), every bit flipped with probability r."""
    bits = np.zeros(buckets * levels, dtype=bool)
    bits[cells(items, buckets, levels, seed)] = True
    return (bits ^ (rng.random(bits.size) < flip_probability(epsilon))).reshape(levels, buckets)


def merge_table(r1: float, r2: float) -> tuple[np.ndarray, float]:
    """The randomized merge of a bit flipped with r1 and one flipped with r2.

    Returns
    -------
    (numpy.ndarray, float)
        f[x, y] = Pr[merged bit 1 | noisy bits x, y] and the merged flip probability s: the
        merged bit is the OR of the two true bits flipped with probability s, the smallest s for
        which such an f exists.
    """
    def law(r, truth, noisy):
        return 1 - r if noisy == truth else r
    rows, rhs = [], []
    for a in (0, 1):
        for b in (0, 1):
            coef = [law(r1, a, x) * law(r2, b, y) for x in (0, 1) for y in (0, 1)]
            # Pr[z = 1 | a, b] = s if a = b = 0, else 1 − s
            rows.append(coef + ([-1.0] if a == b == 0 else [1.0]))
            rhs.append(0.0 if a == b == 0 else 1.0)
    res = optimize.linprog(c=[0, 0, 0, 0, 1], A_eq=rows, b_eq=rhs, bounds=[(0, 1)] * 4 + [(0, 0.5)],
                           method="highs")
    return np.array(res.x[:4]).reshape(2, 2), float(res.x[4])


def randomized_merge(sketches: list[np.ndarray], flips: list[float], rng: np.random.Generator):
    """Balanced-tree randomized merge of noisy sketches: (merged sketch, its flip probability)."""
    items = list(zip(sketches, flips))
    while len(items) > 1:
        merged = []
        for i in range(0, len(items) - 1, 2):
            (x, r1), (y, r2) = items[i], items[i + 1]
            f, s = merge_table(r1, r2)
            merged.append((rng.random(x.shape) < f[x.astype(int), y.astype(int)], s))
        if len(items) % 2:
            merged.append(items[-1])
        items = merged
    return items[0]


def merged_flip(k: int, r: float) -> float:
    """The flip probability of the balanced-tree randomized merge of k sketches flipped with r."""
    flips = [r] * k
    while len(flips) > 1:
        flips = [merge_table(flips[i], flips[i + 1])[1] for i in range(0, len(flips) - 1, 2)] + \
            (flips[-1:] if len(flips) % 2 else [])
    return flips[0]


def _rates(log_n, pi, buckets, a0, a1):
    e = np.exp(np.exp(log_n) * np.log1p(-pi / buckets))
    return a0 + (a1 - a0) * (1 - e), e


def estimate(ones: np.ndarray, buckets: int, pi: np.ndarray, a0: float, a1: float) -> tuple[float, float]:
    """Maximum composite likelihood cardinality and its Fisher standard error.

    Parameters
    ----------
    ones : numpy.ndarray
        Ones per level (G,) of the (merged) sketch.
    buckets : int
    pi : numpy.ndarray
        Level probabilities.
    a0, a1 : float
        Pr[bit 1 | cell empty], Pr[bit 1 | cell occupied].
    """
    ones = np.asarray(ones, dtype=float)

    def nll(log_n):
        rho, _ = _rates(log_n, pi, buckets, a0, a1)
        rho = np.clip(rho, 1e-300, 1 - 1e-16)
        return -float(ones @ np.log(rho) + (buckets - ones) @ np.log1p(-rho))

    grid = np.linspace(math.log(0.5), math.log(buckets / pi[pi > 0][-1]) + 4, 80)
    values = [nll(x) for x in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    log_n = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded",
                                     options={"xatol": 1e-6}).x
    n = math.exp(log_n)
    rho, e = _rates(log_n, pi, buckets, a0, a1)
    de = e * np.log1p(-pi / buckets)
    info = float(np.sum(buckets * (a1 - a0) ** 2 * de ** 2 / np.clip(rho * (1 - rho), 1e-300, None)))
    if n < 1:
        n = 0.0
    return n, (1 / math.sqrt(info) if info > 0 else math.inf)
