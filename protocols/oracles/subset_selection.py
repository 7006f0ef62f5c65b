"""Subset selection (Wang et al. 2016; Ye & Barg, IEEE Trans. IT 2018).

A user reports a k-subset of the domain: it contains v with probability
p* = k e^ε / (k e^ε + d − k); the other members are uniform among the remaining values.
Every subset containing v has probability e^ε/Z, every other one 1/Z, with
Z = C(d−1, k−1) e^ε + C(d−1, k): ε-LDP, tight. Support: subsets containing v;
q* = p*(k − 1)/(d − 1) + (1 − p*)k/(d − 1). Default k = max(1, round(d/(e^ε + 1))).

Reports are packed bit masks of the subset (little-endian), so no position reveals the value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike

from protocols.bits import packing as bits
from protocols.core.validation import check_epsilon, check_int, check_values
from protocols.core.calibration import subset_probabilities
from protocols.core.base import RNG, FrequencyOracle
from protocols.errors import IncompatibleError
from protocols.core.randomness import bernoulli, integers, random_bytes, source

@dataclass(frozen=True, kw_only=True)
class SubsetSelection(FrequencyOracle):
    """k-subset selection; ``k=None`` picks the variance-optimal k ≈ d/(e^ε + 1).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 (ε-LDP, tight).
    d : int
        Domain size, >= 2.
    k : int, optional
        Subset size in [1, d − 1]; default max(1, round(d/(e^ε + 1))).

    References
    ----------
    M. Ye, A. Barg, "Optimal schemes for discrete distribution estimation under locally
    differential privacy", IEEE Trans. Inf. Theory 64(8), 2018; S. Wang et al., "Mutual
    information optimally local private discrete distribution estimation", arXiv 2016.
    """

    epsilon: float
    d: int
    k: int | None = None

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        d = check_int(self.d, "d", 2)
        k = max(1, round(d / (math.exp(eps) + 1))) if self.k is None else self.k
        k = check_int(k, "k", 1, d - 1)
        p_star, q_star = subset_probabilities(eps, d, k)
        self._set(epsilon=eps, d=d, k=k, p_star=p_star, q_star=q_star)

    def perturb(self, encoded: np.ndarray, rng: RNG = None) -> np.ndarray:
        """Draw the subsets exactly, on packed bits.

        Each other value joins independently with a dyadic probability m/2^b just below k/d
        (b random bits per report bit, compared bit-sliced); then, per user, uniformly chosen
        non-members are added (or members removed) one at a time until there are exactly
        k − [v included] of them. The procedure is invariant under permutations of the other
        values and ends at a fixed size, so the subset is uniform among those of that size.

        Parameters
        ----------
        encoded : numpy.ndarray
            int64 values in [0, d).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            uint8 packed masks (n, ⌈d/8⌉), little-endian bit order, k bits set per row.
        """
        values = check_values(encoded, self.d)
        src = source(rng)
        n, d, width = values.size, self.d, bits.nbytes(self.d)
        rows = np.arange(n)
        include = bernoulli(src, self.p_star, n)
        target = self.k - include.astype(np.int64)
        numerator, join_bits = self.join_probability()
        if numerator:
            planes = random_bytes(src, join_bits * n * width).reshape(join_bits, n, width)
            mask = bits.dyadic_bits(planes, numerator, join_bits)
        else:
            mask = np.zeros((n, width), dtype=np.uint8)
        if d % 8:
            mask[:, -1] &= np.uint8((1 << (d % 8)) - 1)        # padding bits stay zero
        byte, bit = values >> 3, (np.uint8(1) << (values & 7).astype(np.uint8))
        mask[rows, byte] &= ~bit
        counts = bits.row_weights(mask)
        todo = np.flatnonzero(counts != target)
        while todo.size:
            col = integers(src, d, todo.size)
            col_byte, col_bit = col >> 3, np.uint8(1) << (col & 7).astype(np.uint8)
            remove = counts[todo] > target[todo]
            member = (mask[todo, col_byte] & col_bit) != 0
            eligible = (member == remove) & (col != values[todo])
            hit = todo[eligible]
            mask[hit, col_byte[eligible]] ^= col_bit[eligible]
            counts[hit] += np.where(remove[eligible], -1, 1)
            todo = todo[counts[todo] != target[todo]]
        mask[rows, byte] |= bit * include.astype(np.uint8)
        return mask

    def join_probability(self) -> tuple[int, int]:
        """The dyadic probability m/2^b with which each other value first joins a subset.

        b is the fewest random bits whose m/2^b <= k/d falls short of k/d by at most 2√k/d, so
        the fix-up of :meth:`perturb` mostly adds (cheap) and its work stays O(√k) per user.

        Returns
        -------
        (int, int)
            m and b (m = 0: nobody joins, the fix-up adds all k − [v included] members).
        """
        ratio, slack = self.k / self.d, 2 * math.sqrt(self.k) / self.d
        for b in range(0, 17):                 # b = 0: nobody joins, the fix-up adds all k
            m = math.floor(ratio * 2 ** b)
            if ratio - m / 2 ** b <= slack:
                return m, b
        return m, b

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        return bits.check_packed(reports, self.d)

    def _support(self, reports):
        counts = bits.column_sums(reports, self.d)
        if counts.sum() != self.k * len(reports):
            raise IncompatibleError(f"reports are not all {self.k}-subsets: another k or d")
        return counts

    def output_distribution(self, value: int) -> dict[bytes, float]:
        """Exact law of one report: e^ε/Z for subsets holding v, 1/Z for the others. Small d only.

        Parameters
        ----------
        value : int
            A value in [0, d).

        Returns
        -------
        dict
            {packed subset mask (bytes): probability} over all C(d, k) subsets.
        """
        value = int(check_values([value], self.d)[0])
        e, d, k = math.exp(self.epsilon), self.d, self.k
        z = math.comb(d - 1, k - 1) * e + math.comb(d - 1, k)
        out = {}
        for subset in combinations(range(d), k):
            mask = np.zeros(d, dtype=bool)
            mask[list(subset)] = True
            out[bits.pack(mask).tobytes()] = (e if value in subset else 1.0) / z
        return out
