"""Hadamard response (Acharya, Sun, Zhang, AISTATS 2019).

K is the smallest power of two > d; value v owns the set C_v = {j : popcount(j & (v + 1)) even}
of K/2 outputs (row v + 1 of the Sylvester–Hadamard matrix; row 0 is skipped). A user reports
j ∈ C_v with total probability p* = e^ε/(e^ε + 1), uniformly within C_v or its complement:
every output has probability e^ε/(K/2 (e^ε + 1)) or 1/(K/2 (e^ε + 1)), so ε-LDP, tight.
Two rows' sets meet in K/4 outputs, so q* = 1/2: pure protocol, Var = n(e^ε + 1)²/(e^ε − 1)².
The server's support counts come from one fast Walsh–Hadamard transform of the histogram of
reports: C(v) = (n + (H·hist)[v + 1]) / 2, O(K log K).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_array, check_epsilon, check_int, check_range, check_values
from protocols.core.calibration import grr_probabilities
from protocols.core.base import RNG, FrequencyOracle
from protocols.core.randomness import bernoulli, integers, source


def parity(x: ArrayLike) -> np.ndarray:
    """popcount(x) mod 2, by folding the 64 bits onto one.

    Parameters
    ----------
    x : array_like of int
        Non-negative integers < 2^64.

    Returns
    -------
    numpy.ndarray
        int64 array of 0 and 1.
    """
    x = np.asarray(x, dtype=np.uint64).copy()
    for shift in (32, 16, 8, 4, 2, 1):
        x ^= x >> np.uint64(shift)
    return (x & np.uint64(1)).astype(np.int64)


def walsh_hadamard(vector: ArrayLike) -> np.ndarray:
    """Unnormalised fast Walsh–Hadamard transform (Sylvester order), O(K log K).

    Parameters
    ----------
    vector : array_like of int
        Length K = 2^m.

    Returns
    -------
    numpy.ndarray
        int64 H_K·vector, (H_K)[i, j] = (−1)^popcount(i & j).
    """
    h = np.array(vector, dtype=np.int64)
    size = 1
    while size < h.size:
        h = h.reshape(-1, 2, size)
        h = np.stack([h[:, 0] + h[:, 1], h[:, 0] - h[:, 1]], axis=1)
        size *= 2
    return h.reshape(-1)


@dataclass(frozen=True, kw_only=True)
class HadamardResponse(FrequencyOracle):
    """Hadamard response with K = 2^⌈log2(d + 1)⌉ outputs; reports are int64 indices in [0, K).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 (ε-LDP, tight).
    d : int
        Domain size, 2 <= d <= 2^40.

    Attributes
    ----------
    K : int
        Number of outputs, the smallest power of two > d.

    References
    ----------
    J. Acharya, Z. Sun, H. Zhang, "Hadamard response: estimating distributions privately,
    efficiently, and with little communication", AISTATS 2019.
    """

    epsilon: float
    d: int

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        d = check_int(self.d, "d", 2, 2 ** 40)
        K = 1 << d.bit_length()            # smallest power of two > d
        p, _ = grr_probabilities(eps, 2)        # inside C_v or not: binary randomized response
        self._set(epsilon=eps, d=d, K=K, p_star=p, q_star=0.5)

    def perturb(self, encoded: np.ndarray, rng: RNG = None) -> np.ndarray:
        """Uniform j, then moved across C_v's boundary by flipping the lowest set bit of v + 1
        (a bijection between C_v and its complement) when it fell on the wrong side.

        Parameters
        ----------
        encoded : numpy.ndarray
            int64 values in [0, d).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            int64 reports in [0, K).
        """
        rows = check_values(encoded, self.d) + 1
        src = source(rng)
        j = integers(src, self.K, rows.size)
        want_inside = bernoulli(src, self.p_star, rows.size)
        inside = parity(j & rows) == 0
        return np.where(inside == want_inside, j, j ^ (rows & -rows))

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        arr = check_array(reports, np.int64, ())
        check_range(arr, self.K)
        return arr

    def _support(self, reports):
        hist = np.bincount(reports, minlength=self.K)
        return (len(reports) + walsh_hadamard(hist)[1:self.d + 1]) // 2

    def output_distribution(self, value: int) -> dict[int, float]:
        """Exact law of one report: e^ε/(K/2·(e^ε + 1)) on C_v, 1/(K/2·(e^ε + 1)) elsewhere.

        Parameters
        ----------
        value : int
            A value in [0, d).

        Returns
        -------
        dict
            {j: Pr[report = j | value]} for every j in [0, K).
        """
        row = int(check_values([value], self.d)[0]) + 1
        e, half = math.exp(self.epsilon), self.K / 2
        inside = parity(np.arange(self.K) & row) == 0
        return {j: (e if inside[j] else 1.0) / (half * (e + 1)) for j in range(self.K)}
