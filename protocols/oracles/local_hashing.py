"""Local hashing: BLH and OLH (Wang et al., USENIX Security 2017).

A user draws a hash function H from a universal family mapping the domain to g buckets, and
reports (H, GRR_g(H(v))): the bucket is kept with probability p = e^ε/(e^ε + g − 1).
Pure protocol with support {v : H(v) = y}, p* = p, q* = 1/g.
BLH: g = 2, Var = n(e^ε + 1)²/(e^ε − 1)². OLH: g = round(e^ε) + 1, Var ≈ 4n e^ε/(e^ε − 1)².

Hash family: each report carries its own 64-bit seed s (exact, not drawn from a pool);
a = splitmix64(s), b = splitmix64(s ⊕ 0x9E3779B97F4A7C15), h(v) = ((a·v + b) mod 2^64) >> 32
(multiply-add-shift, strongly universal on 32-bit keys, Dietzfelbinger 1996), and the bucket is
⌊h(v)·g / 2^32⌋. Reports are uint64 arrays (n, 2): seed, bucket.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_array, check_epsilon, check_int, check_range, check_values
from protocols.core.calibration import grr_probabilities
from protocols.core.base import RNG, FrequencyOracle
from protocols.oracles.grr import randomize_index
from protocols.core.randomness import source

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_CHUNK = 1 << 20                 # seed × value pairs tested at a time by the server


def splitmix64(x: ArrayLike) -> np.ndarray:
    """SplitMix64 finaliser, elementwise (a bijection of 64-bit words that mixes every bit).

    Parameters
    ----------
    x : array_like of uint64

    Returns
    -------
    numpy.ndarray
        uint64 array of the shape of ``x``.

    References
    ----------
    G. L. Steele, D. Lea, C. H. Flood, "Fast splittable pseudorandom number generators",
    OOPSLA 2014.
    """
    with np.errstate(over="ignore"):
        z = np.asarray(x, dtype=np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def hash_coefficients(seeds: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The coefficients (a, b) = (splitmix64(s), splitmix64(s ⊕ 0x9E3779B97F4A7C15)) of each seed.

    Parameters
    ----------
    seeds : array_like of uint64

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        uint64 a and b.
    """
    seeds = np.asarray(seeds, dtype=np.uint64)
    return splitmix64(seeds), splitmix64(seeds ^ _GOLDEN)


def buckets(seeds: ArrayLike, values: ArrayLike, g: int) -> np.ndarray:
    """Bucket ⌊h(v)·g/2^32⌋, h(v) = ((a·v + b) mod 2^64) >> 32, of each value under its seed's hash.

    Parameters
    ----------
    seeds : array_like of uint64
        One seed per hash function (broadcast against ``values``).
    values : array_like of int
        Values in [0, 2^32).
    g : int
        Number of buckets.

    Returns
    -------
    numpy.ndarray
        int64 buckets in [0, g).

    References
    ----------
    M. Dietzfelbinger, "Universal hashing and k-wise independent random variables via integer
    arithmetic without primes", STACS 1996.
    """
    a, b = hash_coefficients(seeds)
    with np.errstate(over="ignore"):
        h = (a * np.asarray(values, dtype=np.uint64) + b) >> np.uint64(32)
    return ((h * np.uint64(g)) >> np.uint64(32)).astype(np.int64)


@dataclass(frozen=True, kw_only=True)
class LocalHashing(FrequencyOracle):
    """Local hashing with g buckets (g >= 2); see :class:`BLH` and :class:`OLH`.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 (ε-LDP, tight).
    d : int
        Domain size, 2 <= d <= 2^32.
    g : int
        Number of buckets, 2 <= g <= 2^31.

    References
    ----------
    Wang et al., USENIX Security 2017, Section 4.4.
    """

    epsilon: float
    d: int
    g: int

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        d = check_int(self.d, "d", 2, 2 ** 32)
        g = check_int(self.g, "g", 2, 2 ** 31)
        p, q = grr_probabilities(eps, g)
        self._set(epsilon=eps, d=d, g=g, p=p, q=q, p_star=p, q_star=1 / g)

    def perturb(self, encoded: np.ndarray, rng: RNG = None) -> np.ndarray:
        """A fresh 64-bit hash seed per user, and its bucket through g-ary randomized response.

        Parameters
        ----------
        encoded : numpy.ndarray
            int64 values in [0, d).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            uint64 reports (n, 2): seed, bucket.
        """
        values = check_values(encoded, self.d)
        src = source(rng)
        n = values.size
        seeds = np.frombuffer(src.bytes(8 * n), dtype="<u8").copy()
        reported = randomize_index(src, buckets(seeds, values, self.g), self.g, self.p)
        return np.stack([seeds, reported.astype(np.uint64)], axis=1)

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        arr = check_array(reports, np.uint64, (2,))
        check_range(arr[:, 1], self.g, "report buckets")
        return arr

    def _support(self, reports):
        """C(v) = #{i : H_i(v) = y_i}, without computing buckets: with lo = ⌈y·2^32/g⌉ and
        hi = ⌈(y+1)·2^32/g⌉, H(v) = y ⇔ (a·v + b − lo·2^32) mod 2^64 < (hi − lo)·2^32."""
        a, b = hash_coefficients(reports[:, 0])
        y = reports[:, 1]
        g = np.uint64(self.g)
        lo = ((y << np.uint64(32)) + g - np.uint64(1)) // g
        hi = (((y + np.uint64(1)) << np.uint64(32)) + g - np.uint64(1)) // g
        offset = b - (lo << np.uint64(32))
        width = (hi - lo) << np.uint64(32)
        domain = np.arange(self.d, dtype=np.uint64)
        counts = np.zeros(self.d, dtype=np.int64)
        rows = max(1, _CHUNK // self.d)
        for s in range(0, len(y), rows):
            sl = slice(s, s + rows)
            hit = (a[sl, None] * domain + offset[sl, None]) < width[sl, None]
            counts += np.count_nonzero(hit, axis=0)
        return counts

    def output_distribution(self, value: int, seeds: Iterable[int] = range(8)) -> dict[tuple[int, int], float]:
        """Exact law of one report when the seed is uniform over ``seeds``.

        Parameters
        ----------
        value : int
            A value in [0, d).
        seeds : iterable of int
            The hash seeds to enumerate (the real seed space has 2^64 of them).

        Returns
        -------
        dict
            {(seed, bucket): probability}.
        """
        value = int(check_values([value], self.d)[0])
        seeds = list(seeds)
        out = {}
        for s in seeds:
            hv = int(buckets(np.uint64(s), np.uint64(value), self.g))
            for y in range(self.g):
                out[(s, y)] = (self.p if y == hv else self.q) / len(seeds)
        return out


@dataclass(frozen=True, kw_only=True)
class BLH(LocalHashing):
    """Binary local hashing: g = 2; Var = n(e^ε + 1)²/(e^ε − 1)².

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size.

    References
    ----------
    Wang et al., USENIX Security 2017 (after Bassily & Smith, STOC 2015).
    """

    g: int = field(default=2, init=False)


@dataclass(frozen=True, kw_only=True)
class OLH(LocalHashing):
    """Optimized local hashing: g = round(e^ε) + 1; Var ≈ 4n e^ε/(e^ε − 1)².

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size.

    References
    ----------
    Wang et al., USENIX Security 2017, Section 4.4.
    """

    g: int = field(init=False)

    def __post_init__(self):
        self._set(g=int(round(math.exp(check_epsilon(self.epsilon)))) + 1)
        super().__post_init__()
