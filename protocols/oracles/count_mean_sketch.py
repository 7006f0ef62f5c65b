"""Apple's Count-Mean Sketch (CMS) and Hadamard Count-Mean Sketch (HCMS).

Apple Differential Privacy Team, "Learning with Privacy at Scale", Apple Machine Learning
Journal 1(8), 2017 (Algorithms 1-4). k hash functions h_1..h_k map keys to m columns.

* CMS client: pick a row j uniformly; the vector v ∈ {−1, +1}^m is −1 except v[h_j(x)] = +1;
  each entry is flipped with probability 1/(e^{ε/2} + 1). Two inputs change at most two
  entries, so the report (j, ṽ) is ε-LDP, tight when h_j(x) ≠ h_j(x').
* HCMS client: pick j and a Hadamard coefficient l ∈ [m] uniformly (m a power of two); the
  bit w = H_m[l, h_j(x)] ∈ {±1} is flipped with probability 1/(e^ε + 1). Report (j, l, w̃): ε-LDP.
* Server: the sketch M (k × m) sums k·(c_ε/2·ṽ + 1/2) into row j (CMS, c_ε = (e^{ε/2} + 1)/
  (e^{ε/2} − 1)), or k·c_ε·w̃ into (j, l) and then M ← M·H_m (HCMS, c_ε = (e^ε + 1)/(e^ε − 1));
  the count of x is f̂(x) = m/(m − 1)·(1/k Σ_l M[l, h_l(x)] − n/m).

Per user, E[M-contribution at (j, col)] = k·[h_j(x) = col], so with random hash functions
f̂(x) is unbiased, and (derived in docs/sketches.md; checked in tests/protocols/oracles/test_count_mean_sketch.py)

    Var[f̂(x)] = (m/(m − 1))² (N + ((m − 1)/m²) Σ_{y ≠ x} (n_y (1 − 1/k) + n_y²/k))

with n_y the count of y, and the privacy noise N = n e^{ε/2}/(e^{ε/2} − 1)² (CMS),
N = n c_ε² − n_x − (n − n_x)/m (HCMS). The second term is hash collisions (variance over the
choice of hash functions, which the estimate is unbiased over), about n/m.

Hashes: h_l(x) = ⌊murmur3(x, s_l)·m / 2^32⌋ with the row seeds s_l derived from ``seed``;
keys are canonical bytes (:mod:`protocols.core.hashing`), so any ints, str or bytes can be counted.
The aggregates are integers (CMS: per row, the count of +1 entries of each column and the
number of reports; HCMS: per row and coefficient, Σ w̃), mergeable and serializable
(:mod:`protocols.core.simulation`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_array, check_epsilon, check_int, check_range
from protocols.core.base import RNG, FrequencyOracle, SupportCounts, domain_counts
from protocols.errors import LDPValueError
from protocols.oracles.hadamard import parity, walsh_hadamard
from protocols.core.hashing import as_keys, hash_keys
from protocols.oracles.local_hashing import splitmix64
from protocols.core.randomness import bernoulli, generator, integers, randomized_response_packed, source
from protocols.core.simulation import simulate_from_reports
from protocols.core.perturbation import bit_vector_distribution, check_grouped_reports, grouped_column_sums


class SketchReports(NamedTuple):
    """A batch of CMS reports.

    Attributes
    ----------
    rows : numpy.ndarray
        int64 row of each user (n,).
    bits : numpy.ndarray
        uint8 packed ±1 vectors (n, ⌈m/8⌉), 1 = +1.
    """

    rows: np.ndarray
    bits: np.ndarray


@dataclass(frozen=True, kw_only=True)
class _CountMeanSketch(FrequencyOracle):
    """Common parameters and the server's estimate of the count-mean sketches.

    Parameters
    ----------
    epsilon : float
        ε of one report.
    d : int
        Size of the integer domain {0, …, d − 1} estimated by default (``estimate`` takes any
        other keys as ``candidates``).
    k, m : int
        Hash functions (rows) and columns (Apple: k = 65,536 and m = 1024 for emoji).
    seed : int
        Chooses the hash functions; every client and the server must use the same.
    """

    epsilon: float
    d: int
    k: int = 64
    m: int = 1024
    seed: int = 0

    def __post_init__(self):
        self._set(epsilon=check_epsilon(self.epsilon), d=check_int(self.d, "d", 2),
                  k=check_int(self.k, "k", 1, 2 ** 16), m=check_int(self.m, "m", 2, 2 ** 24),
                  seed=check_int(self.seed, "seed", 0, 2 ** 47 - 1))
        rows = np.arange(self.k, dtype=np.uint64) + (np.uint64(self.seed) << np.uint64(16))
        self._set(hash_seeds=(splitmix64(rows) & np.uint64(0xFFFFFFFF)).astype(np.int64))

    def encode(self, keys: ArrayLike) -> np.ndarray:
        """The encoding of each key: its column h_l(x) = ⌊murmur3(x, s_l)·m/2^32⌋ in every row.

        A client uses only the column of the row it draws (:meth:`privatize`); the server
        reads every row.

        Parameters
        ----------
        keys : array_like or sequence
            Integers, str or bytes.

        Returns
        -------
        numpy.ndarray
            int64 (n, k).
        """
        return self._bucket(hash_keys(keys, self.hash_seeds))

    def row_columns(self, keys: ArrayLike, rows: np.ndarray) -> np.ndarray:
        """h_{rows[i]}(keys[i]): each key hashed only in its own row (one pass per row present).

        Parameters
        ----------
        keys : array_like or sequence
            Integers, str or bytes.
        rows : numpy.ndarray
            int64 row of each key, in [0, k).

        Returns
        -------
        numpy.ndarray
            int64 columns (n,).
        """
        keys = as_keys(keys)
        out = np.empty(len(rows), dtype=np.int64)
        for j in np.unique(rows):
            chosen = rows == j
            out[chosen] = self._bucket(hash_keys(keys[chosen], self.hash_seeds[j:j + 1]))[:, 0]
        return out

    def _bucket(self, hashes):
        return ((hashes.astype(np.uint64) * np.uint64(self.m)) >> np.uint64(32)).astype(np.int64)

    def _draw_rows(self, keys, src):
        """A uniform row for each key (the client's choice) and the key's column in that row."""
        n = len(keys)
        if n == 0:
            raise LDPValueError("values is empty")
        rows = integers(src, self.k, n)
        return rows, self.row_columns(keys, rows)

    def _keys(self, keys):
        keys = np.arange(self.d) if keys is None else as_keys(keys)
        if len(keys) == 0:
            raise LDPValueError("no keys given")
        return keys

    def empty_aggregate(self) -> SupportCounts:
        """The aggregate of no reports.

        Returns
        -------
        SupportCounts
        """
        return SupportCounts(self, np.zeros(self._shape, dtype=np.int64), 0)

    def estimate(self, aggregate: SupportCounts, candidates: ArrayLike | None = None) -> np.ndarray:
        """Unbiased counts f̂(x) = m/(m − 1)·(1/k Σ_l M[l, h_l(x)] − n/m).

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this sketch.
        candidates : array_like or sequence, optional
            The keys to count (any ints, str or bytes); default the domain 0..d − 1.

        Returns
        -------
        numpy.ndarray
            float counts, one per candidate.

        References
        ----------
        Apple Differential Privacy Team, 2017, Algorithm 3 (sketch-based frequency estimate).
        """
        agg = self.check_aggregate(aggregate)
        cols = self.encode(self._keys(candidates))
        mean = self.sketch(agg)[np.arange(self.k), cols].mean(axis=1)
        return self.m / (self.m - 1) * (mean - agg.n / self.m)

    def variance(self, n: int, f: float | np.ndarray = 0.0,
                 others_sq: float | np.ndarray = 0.0) -> float | np.ndarray:
        """Var[f̂(x)] over the privacy noise, the users' rows and random hash functions.

        Parameters
        ----------
        n : int
            Number of reports.
        f : float or array
            Frequency of x (n_x / n).
        others_sq : float or array
            Σ_{y ≠ x} (n_y / n)²: the collision term grows with repeated other values
            (0 when every other user holds a distinct key).

        Returns
        -------
        float or numpy.ndarray
            (m/(m − 1))² (N + ((m − 1)/m²)(n(1 − f)(1 − 1/k) + n² others_sq / k)).

        Raises
        ------
        LDPValueError
            ``f`` outside [0, 1] or ``others_sq`` negative.
        """
        n = check_int(n, "n", 0)
        f, others_sq = np.asarray(f, dtype=float), np.asarray(others_sq, dtype=float)
        if np.any((f < 0) | (f > 1)) or np.any(others_sq < 0):
            raise LDPValueError(f"need f in [0, 1] and others_sq >= 0, got f={f!r}, others_sq={others_sq!r}")
        m, k = self.m, self.k
        collisions = (m - 1) / m ** 2 * (n * (1 - f) * (1 - 1 / k) + n ** 2 * others_sq / k)
        out = (m / (m - 1)) ** 2 * (self._noise(n, n * f) + collisions)
        return float(out) if out.ndim == 0 else out

    def variances(self, true_counts: ArrayLike) -> np.ndarray:
        """:meth:`variance` of every value's estimate, for a histogram of the domain.

        Parameters
        ----------
        true_counts : array_like of int
            Users holding each of the d values.

        Returns
        -------
        numpy.ndarray
            (d,) variances.
        """
        t = domain_counts(np.arange(self.d), true_counts, self.d).astype(float)
        n = int(t.sum())
        if n == 0:
            return np.zeros(self.d)
        return self.variance(n, t / n, (np.sum(t ** 2) - t ** 2) / n ** 2)


@dataclass(frozen=True, kw_only=True)
class CMS(_CountMeanSketch):
    """Count-Mean Sketch (Apple 2017, Algorithms 1-2): reports are :class:`SketchReports`.

    The aggregate holds, for each row j, the number of reports whose column c is +1
    (``counts[j, c]``, c < m) and the number of reports of row j (``counts[j, m]``).

    Parameters
    ----------
    epsilon : float
        ε of one report (ε-LDP, tight).
    d : int
        Size of the integer domain estimated by default.
    k, m : int
        Hash functions (rows) and columns.
    seed : int
        Chooses the hash functions; clients and server must share it.

    References
    ----------
    Apple Differential Privacy Team, "Learning with Privacy at Scale", 2017.
    """

    def __post_init__(self):
        super().__post_init__()
        half = math.exp(self.epsilon / 2)
        self._set(keep=half / (half + 1), c_eps=(half + 1) / (half - 1), _shape=(self.k, self.m + 1))

    def privatize(self, values: ArrayLike, rng: RNG = None) -> SketchReports:
        """Reports of a batch of keys: row j uniform, ±1 vector flipped w.p. 1/(e^{ε/2} + 1).

        Parameters
        ----------
        values : array_like or sequence
            Keys (ints, str or bytes).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        SketchReports
        """
        src = source(rng)
        rows, cols = self._draw_rows(values, src)
        packed = randomized_response_packed(src, (rows.size, self.m), (np.arange(rows.size), cols),
                                            self.keep, 1 - self.keep)
        return SketchReports(rows, packed)

    def check_reports(self, reports: SketchReports) -> SketchReports:
        """``reports`` if they are (rows, packed bits) of this sketch.

        Parameters
        ----------
        reports : SketchReports or (array, array)

        Returns
        -------
        SketchReports

        Raises
        ------
        LDPTypeError
            Not a pair, or arrays of another dtype.
        IncompatibleError
            Another shape or range.
        LDPValueError
            Rows that do not match.
        """
        return SketchReports(*check_grouped_reports(reports, self.k, self.m, "CMS", "rows"))

    def aggregate(self, reports: SketchReports) -> SupportCounts:
        """Per row: the +1 count of each column and the number of reports.

        Parameters
        ----------
        reports : SketchReports

        Returns
        -------
        SupportCounts
            counts (k, m + 1).
        """
        reports = self.check_reports(reports)
        return SupportCounts(self, grouped_column_sums(reports.rows, reports.bits, self.k, self.m),
                             len(reports.rows))

    def sketch(self, aggregate: SupportCounts) -> np.ndarray:
        """The debiased sketch M = Σ k(c_ε/2·ṽ + 1/2) per row: k(c_ε·S − (c_ε − 1)/2·N_j).

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this sketch.

        Returns
        -------
        numpy.ndarray
            float (k, m).
        """
        counts = self.check_aggregate(aggregate).counts
        plus, size = counts[:, :-1], counts[:, -1:]
        return self.k * (self.c_eps * plus - (self.c_eps - 1) / 2 * size)

    def simulate(self, values: ArrayLike, *, counts: ArrayLike | None = None,
                 rng: RNG = None) -> SupportCounts:
        # Exact in law at O(dk + km): rows are multinomial per value, and a column's +1 count is
        # Binomial(t, keep) + Binomial(N_j − t, 1 − keep), t the users of row j hashed there.
        t = domain_counts(values, counts, self.d)
        gen = generator(rng)
        per_row = gen.multinomial(t, np.full(self.k, 1 / self.k))           # (d, k)
        cells = np.arange(self.k) * self.m + self.encode(np.arange(self.d))
        hits = np.bincount(cells.ravel(), weights=per_row.ravel(), minlength=self.k * self.m)
        hits = np.rint(hits).astype(np.int64).reshape(self.k, self.m)
        size = per_row.sum(axis=0)
        plus = gen.binomial(hits, self.keep) + gen.binomial(size[:, None] - hits, 1 - self.keep)
        return SupportCounts(self, np.column_stack([plus, size]), int(t.sum()))

    def _noise(self, n, count):
        half = math.exp(self.epsilon / 2)
        return n * half / (half - 1) ** 2

    def output_distribution(self, value: int | str | bytes) -> dict[tuple[int, bytes], float]:
        """Exact law of one report over the k·2^m reports. Small m only.

        Parameters
        ----------
        value : int, str or bytes
            A key.

        Returns
        -------
        dict
            {(row, packed ṽ): probability}.
        """
        cols = self.encode([value])[0]
        return {(j, y): pr / self.k for j in range(self.k)
                for y, pr in bit_vector_distribution(np.arange(self.m) == cols[j],
                                                     self.keep, 1 - self.keep).items()}


@dataclass(frozen=True, kw_only=True)
class HCMS(_CountMeanSketch):
    """Hadamard Count-Mean Sketch (Apple 2017, Algorithms 3-4); m must be a power of two.

    Reports are int64 arrays (n, 3): row j, coefficient l, and 1 for w̃ = +1 or 0 for −1.
    The aggregate holds Σ w̃ for each (j, l) (``counts``, shape (k, m)).

    Parameters
    ----------
    epsilon : float
        ε of one report (ε-LDP).
    d : int
        Size of the integer domain estimated by default.
    k, m : int
        Hash functions (rows) and columns (m a power of two).
    seed : int
        Chooses the hash functions; clients and server must share it.

    References
    ----------
    Apple Differential Privacy Team, "Learning with Privacy at Scale", 2017.
    """

    def __post_init__(self):
        super().__post_init__()
        if self.m & (self.m - 1):
            raise LDPValueError(f"HCMS needs m a power of two, got m={self.m}")
        e = math.exp(self.epsilon)
        self._set(keep=e / (e + 1), c_eps=(e + 1) / (e - 1), _shape=(self.k, self.m))

    def privatize(self, values: ArrayLike, rng: RNG = None) -> np.ndarray:
        """Reports of a batch of keys: (j, l, w̃) with w = H[l, h_j(x)] kept w.p. e^ε/(e^ε + 1).

        Parameters
        ----------
        values : array_like or sequence
            Keys (ints, str or bytes).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            int64 (n, 3): row, coefficient, 1 for +1 or 0 for −1.
        """
        src = source(rng)
        rows, cols = self._draw_rows(values, src)
        coefficients = integers(src, self.m, rows.size)
        plus = parity(coefficients & cols) == 0
        keep = bernoulli(src, self.keep, rows.size)
        return np.column_stack([rows, coefficients, (plus == keep).astype(np.int64)])

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        """``reports`` if they are int64 (n, 3) rows, coefficients and signs of this sketch.

        Parameters
        ----------
        reports : array_like of int64

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        LDPTypeError, IncompatibleError
            Another dtype, shape or range.
        """
        arr = check_array(reports, np.int64, (3,))
        for column, high, name in ((0, self.k, "rows"), (1, self.m, "coefficients"), (2, 2, "signs")):
            check_range(arr[:, column], high, name)
        return arr

    def aggregate(self, reports: ArrayLike) -> SupportCounts:
        """Σ w̃ for each (row, coefficient).

        Parameters
        ----------
        reports : array_like of int64

        Returns
        -------
        SupportCounts
            counts (k, m).
        """
        reports = self.check_reports(reports)
        cells = reports[:, 0] * self.m + reports[:, 1]
        size = self.k * self.m
        plus = np.bincount(cells[reports[:, 2] == 1], minlength=size)
        minus = np.bincount(cells[reports[:, 2] == 0], minlength=size)
        return SupportCounts(self, (plus - minus).reshape(self.k, self.m), len(reports))

    def sketch(self, aggregate: SupportCounts) -> np.ndarray:
        """The sketch M = k·c_ε·(Σ w̃)·H_m, one fast Walsh–Hadamard transform per row.

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this sketch.

        Returns
        -------
        numpy.ndarray
            float (k, m).
        """
        signed = self.check_aggregate(aggregate).counts
        return self.k * self.c_eps * np.stack([walsh_hadamard(row) for row in signed])

    def simulate(self, values: ArrayLike, *, counts: ArrayLike | None = None,
                 rng: RNG = None) -> SupportCounts:
        # No closed form: through real reports.
        return simulate_from_reports(self, values, counts, rng)

    def _noise(self, n, count):
        return n * self.c_eps ** 2 - count - (n - count) / self.m

    def output_distribution(self, value: int | str | bytes) -> dict[tuple[int, int, int], float]:
        """Exact law of one report over the 2km reports.

        Parameters
        ----------
        value : int, str or bytes
            A key.

        Returns
        -------
        dict
            {(row, coefficient, sign): probability}.
        """
        cols = self.encode([value])[0]
        out = {}
        for j in range(self.k):
            plus = parity(np.arange(self.m) & cols[j]) == 0
            for l in range(self.m):
                for sign in (0, 1):
                    out[(j, l, sign)] = (self.keep if plus[l] == sign else 1 - self.keep) / (self.k * self.m)
        return out
