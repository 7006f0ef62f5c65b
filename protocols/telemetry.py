"""Microsoft's telemetry mechanisms: 1BitMean and dBitFlip, one-shot and memoized.

Ding, Kulkarni, Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017.

* 1BitMean (values x ∈ [0, m]): send 1 with probability 1/(e^ε + 1) + (x/m)(e^ε − 1)/(e^ε + 1);
  the mean is estimated by m/n Σ (b_i(e^ε + 1) − 1)/(e^ε − 1), with
  Var = m²(e^ε + 1)²/((e^ε − 1)² n²) Σ p_i(1 − p_i) ≤ m²(e^ε + 1)²/(4n(e^ε − 1)²).
  In law this is Duchi et al.'s ±C mechanism on t = 2x/m − 1 (:class:`protocols.DuchiMean`).
* dBitFlip (buckets v ∈ [0, d)): each user samples ``num_bits`` distinct buckets j_1 < … and
  reports, for each, a bit that is 1 w.p. e^{ε/2}/(e^{ε/2} + 1) if v = j_p, else 1/(e^{ε/2} + 1).
  With N_v users sampling v and S_v of their bits set, ĉ(v) = (d/num_bits)(S_v(e^{ε/2} + 1) − N_v)
  /(e^{ε/2} − 1) is unbiased and Var[ĉ(v)] = (d/num_bits)·n e^{ε/2}/(e^{ε/2} − 1)² + n_v(d/num_bits − 1).
  Two values change at most two bits' laws: ε-LDP, tight for num_bits ≥ 2 (ε/2 for one bit).

Repeated collection (Section 3 of the paper; docs/accountant.md). A memoized client derives all
its randomness from a per-user 64-bit secret (like RAPPOR's permanent response), so the same
state gives the same report in every round:

* :class:`MemoizedOneBitMean`: α-point rounding — a per-user α uniform on [0, 1) rounds x
  (with x/Δ = L + r, Δ = m/s) to (L + 1)Δ if α < r, else LΔ; unbiased since Pr[α < r] = r — then
  the 1BitMean bit of each grid point is drawn once (independently per point) and replayed.
* :class:`MemoizedDBitFlip`: the sampled buckets are drawn once; the bits of each value are
  drawn once (independently per value) and replayed.

What an observer of any number of rounds learns (tested by enumeration in tests/test_telemetry.py):
a user whose memo key (rounded grid point; bucket) does not change sends one report forever,
so the whole period is ε-LDP; each distinct memo key adds one more independent ε-LDP report
(ε per distinct key, by sequential composition); and the rounds at which the key changed are
visible (reports that differ come from different keys), which no ε covers. The per-round
estimates keep the one-shot variance: marginally over α and the memo, a round's bit has the
one-shot law.

Memo randomness is MurmurHash3 of (secret, key), 53-bit uniforms: uniform, but not a
cryptographic PRF (same caveat as :mod:`protocols.rappor`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, product
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validate import check_array, check_epsilon, check_int, check_range, check_values
from .base import RNG, FrequencyOracle, SupportCounts
from .errors import IncompatibleError, LDPTypeError, LDPValueError
from .hashing import murmur3_fixed
from .mean import DuchiMean
from .randomness import SystemRandom, integers, randomized_response_bits, source
from .serialize import simulate_from_reports

_STREAM_ALPHA, _STREAM_BIT, _STREAM_SAMPLE = 0xA1, 0xB1, 0x5A


def keyed_uniform(secrets: ArrayLike, *keys: ArrayLike) -> np.ndarray:
    """Uniforms on the 2^-53 grid, a deterministic function of (secret, *keys) (broadcast).

    Two MurmurHash3 x86_32 hashes (seeds 0x9E37, 0x85EB) of the 8-byte little-endian words
    (secret, key_1, …) give 26 + 27 bits.

    Parameters
    ----------
    secrets : array_like of uint64
        Per-user secrets.
    *keys : array_like of int
        Further 64-bit words (stream tag, memo key, ...), broadcast against ``secrets``.

    Returns
    -------
    numpy.ndarray
        float64 in [0, 1), of the broadcast shape.
    """
    cols = np.broadcast_arrays(np.asarray(secrets, dtype=np.uint64),
                               *(np.asarray(k, dtype=np.int64).astype(np.uint64) for k in keys))
    words = np.stack([c.ravel() for c in cols], axis=1).astype("<u8")
    raw = words.view(np.uint8).reshape(words.shape[0], -1)
    hi = murmur3_fixed(raw, 0x9E37).astype(np.uint64) >> np.uint64(6)
    lo = murmur3_fixed(raw, 0x85EB).astype(np.uint64) >> np.uint64(5)
    return (((hi << np.uint64(27)) | lo).astype(np.float64) * 2.0 ** -53).reshape(cols[0].shape)


def check_secrets(secrets: ArrayLike | None, n: int, src: np.random.Generator | SystemRandom) -> np.ndarray:
    """Per-user uint64 secrets; None draws fresh ones (one-shot use, nothing repeats).

    Parameters
    ----------
    secrets : array_like of int or None
        One integer per user.
    n : int
        Number of users.
    src : numpy.random.Generator or SystemRandom
        Source of fresh secrets.

    Returns
    -------
    numpy.ndarray
        uint64 (n,).

    Raises
    ------
    LDPTypeError
        Not n integers.
    """
    if secrets is None:
        return np.frombuffer(src.bytes(8 * n), dtype="<u8").copy()
    secrets = np.asarray(secrets)
    if secrets.shape != (n,) or not np.issubdtype(secrets.dtype, np.integer):
        raise LDPTypeError(f"secrets must be {n} integers, got {secrets.dtype} {secrets.shape}")
    return secrets.astype(np.uint64)


# -- 1BitMean ---------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class OneBitMean(DuchiMean):
    """1BitMean (Ding et al. 2017, Section 2.1): one bit per user, values in [0, ``high``].

    Reports are uint8 bits; the aggregate (a :class:`SupportCounts` with counts [ones]) is exact,
    mergeable and serializable. ``variance(n, t)`` (inherited) is the variance of the mean
    estimate for n users all at t = 2x/m − 1; :meth:`population_variance` sums the exact per-user terms.

    Parameters
    ----------
    epsilon : float
        ε of one report.
    high : float
        The upper bound m of the values (the lower bound is 0).

    References
    ----------
    B. Ding, J. Kulkarni, S. Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017.
    """

    low: float = field(default=0.0, init=False)
    high: float

    def privatize(self, values: ArrayLike, rng: RNG = None) -> np.ndarray:
        """One bit per value: 1 w.p. 1/(e^ε + 1) + (x/m)(e^ε − 1)/(e^ε + 1).

        Parameters
        ----------
        values : array_like of float
            Values in [0, m].
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        numpy.ndarray
            uint8 bits (n,).
        """
        return (self._perturb(self.to_unit(values), source(rng)) > 0).astype(np.uint8)

    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        """``reports`` if they are uint8 bits.

        Parameters
        ----------
        reports : array_like of uint8

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        LDPTypeError, IncompatibleError
            Another dtype, shape or range.
        """
        arr = check_array(reports, np.uint8, ())
        check_range(arr, 2)
        return arr

    def aggregate(self, reports: ArrayLike) -> SupportCounts:
        """The number of ones and of reports.

        Parameters
        ----------
        reports : array_like of uint8
            Bits of this mechanism.

        Returns
        -------
        SupportCounts
            counts = [ones].
        """
        reports = self.check_reports(reports)
        return SupportCounts(self, [np.count_nonzero(reports)], len(reports))

    def empty_aggregate(self) -> SupportCounts:
        """The aggregate of no reports.

        Returns
        -------
        SupportCounts
        """
        return SupportCounts(self, [0], 0)

    def check_aggregate(self, aggregate: SupportCounts) -> SupportCounts:
        """``aggregate`` if it is a non-empty :class:`SupportCounts` of this mechanism.

        Parameters
        ----------
        aggregate : SupportCounts

        Returns
        -------
        SupportCounts

        Raises
        ------
        LDPTypeError
            Another type.
        IncompatibleError
            Another mechanism.
        LDPValueError
            No reports.
        """
        if not isinstance(aggregate, SupportCounts):
            raise LDPTypeError(f"expected SupportCounts, got {type(aggregate).__name__}")
        if aggregate.mechanism != self:
            raise IncompatibleError(f"aggregate of {aggregate.mechanism!r} cannot be estimated by {self!r}")
        if aggregate.n == 0:
            raise LDPValueError("cannot estimate a mean from zero reports")
        return aggregate

    def estimate(self, aggregate: SupportCounts) -> float:
        """The published estimator m·((e^ε + 1)·ones/n − 1)/(e^ε − 1), unbiased for the mean.

        Parameters
        ----------
        aggregate : SupportCounts
            A non-empty aggregate of this mechanism.

        Returns
        -------
        float
        """
        agg = self.check_aggregate(aggregate)
        e = math.exp(self.epsilon)
        return self.high * ((e + 1) * agg.counts[0] / agg.n - 1) / (e - 1)

    def population_variance(self, values: ArrayLike) -> float:
        """Var of the mean estimate for these users: m²/(4n²) Σ (C² − t_i²), C = (e^ε + 1)/(e^ε − 1).

        Parameters
        ----------
        values : array_like of float
            The users' values in [0, m].

        Returns
        -------
        float
        """
        t = self.to_unit(values)
        return float(np.sum(self.unit_variance(t))) / t.size ** 2 * (self.high / 2) ** 2

    def output_distribution(self, x: float) -> dict[int, float]:
        """Exact law of one bit.

        Parameters
        ----------
        x : float
            A value in [0, m].

        Returns
        -------
        dict
            {1: Pr[1 | x], 0: Pr[0 | x]}.
        """
        one = 1 / (math.exp(self.epsilon) + 1) + x / self.high * math.tanh(self.epsilon / 2)
        return {1: one, 0: 1 - one}


@dataclass(frozen=True, kw_only=True)
class MemoizedOneBitMean(OneBitMean):
    """1BitMean for repeated collection: α-point rounding to s + 1 grid points, then memoization.

    ``privatize(values, secrets=...)`` with one stable 64-bit secret per user replays the same
    bit while the user's rounded value stays; :attr:`epsilon_permanent` (= ε) is the cost of one
    memo key over any number of rounds (:mod:`protocols.budget`).

    Parameters
    ----------
    epsilon : float
        ε of one report (and of any number of reports with one memo key).
    high : float
        The upper bound m of the values.
    s : int
        Grid {0, m/s, …, m}. The per-round estimate is unbiased with 1BitMean's variance.

    References
    ----------
    Ding, Kulkarni, Yekhanin, NeurIPS 2017, Section 3 (α-point rounding, memoization).
    """

    s: int = 16

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "s", check_int(self.s, "s", 1, 2 ** 32))

    @property
    def epsilon_permanent(self) -> float:
        """ε of any number of reports with one memo key: the one report they repeat."""
        return self.epsilon

    def memo_keys(self, values: ArrayLike, secrets: ArrayLike) -> np.ndarray:
        """The grid point (0..s) each user's value is α-rounded to: the key of its memoized bit.

        Parameters
        ----------
        values : array_like of float
            Values in [0, m].
        secrets : array_like of uint64
            The users' secrets (α is derived from them).

        Returns
        -------
        numpy.ndarray
            int64 grid points in [0, s].
        """
        scaled = (self.to_unit(values) + 1) / 2 * self.s
        floor = np.minimum(np.floor(scaled), self.s - 1)
        alpha = keyed_uniform(secrets, _STREAM_ALPHA)
        return (floor + (alpha < scaled - floor)).astype(np.int64)

    def privatize(self, values: ArrayLike, rng: RNG = None, secrets: ArrayLike | None = None) -> np.ndarray:
        """Memoized bits: 1 iff U(secret, grid point) < p(grid point).

        Parameters
        ----------
        values : array_like of float
            Values in [0, m].
        rng : None, int or numpy.random.Generator
            Source of fresh secrets when ``secrets`` is None.
        secrets : array_like of uint64, optional
            One stable secret per user; None: fresh ones (one-shot use).

        Returns
        -------
        numpy.ndarray
            uint8 bits (n,).
        """
        n = np.asarray(values).size
        secrets = check_secrets(secrets, n, source(rng))
        grid = self.memo_keys(values, secrets)
        one = self._one(grid)
        return (keyed_uniform(secrets, _STREAM_BIT, grid) < one).astype(np.uint8)

    def _one(self, grid):
        return 1 / (math.exp(self.epsilon) + 1) + grid / self.s * math.tanh(self.epsilon / 2)

    def history_distribution(self, history: Sequence[float]) -> dict[tuple[int, ...], float]:
        """Exact law of the reports of one user over rounds (marginal over α and the memo).

        Parameters
        ----------
        history : sequence of float
            The user's value in each round. Small histories only.

        Returns
        -------
        dict
            {tuple of bits: probability}.
        """
        scaled = [min(max(x / self.high * self.s, 0.0), float(self.s)) for x in history]
        floors = [min(math.floor(v), self.s - 1) for v in scaled]
        fracs = [v - f for v, f in zip(scaled, floors)]
        cuts = sorted({0.0, 1.0, *[r for r in fracs if 0 < r < 1]})
        out = {}
        for a, b in zip(cuts[:-1], cuts[1:]):           # α in (a, b): one rounding of every round
            alpha = (a + b) / 2
            grid = [f + (alpha < r) for f, r in zip(floors, fracs)]
            keys = sorted(set(grid))
            for memo in product((0, 1), repeat=len(keys)):
                bitof = dict(zip(keys, memo))
                pr = (b - a) * math.prod(self._one(g) if bitof[g] else 1 - self._one(g) for g in keys)
                view = tuple(bitof[g] for g in grid)
                out[view] = out.get(view, 0.0) + pr
        return out


# -- dBitFlip ---------------------------------------------------------------------------------

class BitFlipReports(NamedTuple):
    """A batch of dBitFlip reports.

    Attributes
    ----------
    buckets : numpy.ndarray
        int64 sampled buckets of each user (n, num_bits), sorted.
    bits : numpy.ndarray
        uint8 bit reported for each sampled bucket (n, num_bits).
    """

    buckets: np.ndarray
    bits: np.ndarray


def sample_buckets(draw: Callable[[int, int], np.ndarray], n: int, d: int, size: int) -> np.ndarray:
    """``size`` distinct buckets of [0, d) per user, uniformly, sorted (Floyd's algorithm,
    vectorised over users).

    Parameters
    ----------
    draw : callable
        ``draw(i, high)`` returns n integers uniform in [0, high) for step i.
    n, d, size : int
        Users, buckets, and buckets per user.

    Returns
    -------
    numpy.ndarray
        int64 (n, size), each row sorted.

    References
    ----------
    J. Bentley, R. Floyd, "Programming pearls: a sample of brilliance", CACM 30(9), 1987.
    """
    chosen = np.empty((n, size), dtype=np.int64)
    for i, j in enumerate(range(d - size, d)):
        t = draw(i, j + 1)
        taken = (chosen[:, :i] == t[:, None]).any(axis=1)
        chosen[:, i] = np.where(taken, j, t)
    return np.sort(chosen, axis=1)


@dataclass(frozen=True, kw_only=True)
class DBitFlip(FrequencyOracle):
    """dBitFlip (Ding et al. 2017, Section 2.2): histograms over d buckets.

    The aggregate's counts are (2, d): users sampling v, and how many of them sent 1 for v.

    Parameters
    ----------
    epsilon : float
        ε of one report (each sampled bit gets ε/2).
    d : int
        Number of buckets (the paper's k).
    num_bits : int
        Buckets sampled and reported per user (the paper's d), 1 ≤ num_bits ≤ d.

    References
    ----------
    B. Ding, J. Kulkarni, S. Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017.
    """

    epsilon: float
    d: int
    num_bits: int

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        d = check_int(self.d, "d", 2)
        b = check_int(self.num_bits, "num_bits", 1, d)
        half = math.exp(eps / 2)
        self._set(epsilon=eps, d=d, num_bits=b, p=half / (half + 1), q=1 / (half + 1))

    @property
    def tight_epsilon(self) -> float:
        """The exact ε: ε when two buckets can both be sampled, ε/2 for one bit."""
        return self.epsilon if self.num_bits >= 2 else self.epsilon / 2

    def privatize(self, values: ArrayLike, rng: RNG = None) -> BitFlipReports:
        """Sample ``num_bits`` buckets, report for each a bit that is 1 w.p. p if it holds v, else q.

        Parameters
        ----------
        values : array_like of int
            Buckets in [0, d).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        BitFlipReports
        """
        values = check_values(values, self.d)
        src = source(rng)
        n = values.size
        buckets = sample_buckets(lambda i, high: integers(src, high, n), n, self.d, self.num_bits)
        match = buckets == values[:, None]
        flipped = randomized_response_bits(src, match.shape, np.nonzero(match), self.p, self.q)
        return BitFlipReports(buckets, flipped.astype(np.uint8))

    def check_reports(self, reports: BitFlipReports) -> BitFlipReports:
        """``reports`` if they are (buckets, bits) of this mechanism.

        Parameters
        ----------
        reports : BitFlipReports or (array, array)

        Returns
        -------
        BitFlipReports

        Raises
        ------
        LDPTypeError
            Not a pair, or arrays of another dtype.
        IncompatibleError
            Another shape or range.
        LDPValueError
            Buckets not distinct and sorted, or rows that do not match.
        """
        if not isinstance(reports, tuple) or len(reports) != 2:
            raise LDPTypeError("dBitFlip reports are a (buckets, bits) pair, as privatize returns")
        buckets = check_array(reports[0], np.int64, (self.num_bits,), "buckets")
        check_range(buckets, self.d, "buckets")
        if buckets.size and (np.diff(buckets, axis=1) <= 0).any():
            raise LDPValueError("each report's buckets must be distinct and sorted")
        flags = check_array(reports[1], np.uint8, (self.num_bits,), "bits")
        check_range(flags, 2, "bits")
        if len(flags) != len(buckets):
            raise LDPValueError(f"{len(buckets)} bucket rows for {len(flags)} bit rows")
        return BitFlipReports(buckets, flags)

    def aggregate(self, reports: BitFlipReports) -> SupportCounts:
        """Per bucket v: N_v, the users sampling v, and S_v, how many of them sent 1 for v.

        Parameters
        ----------
        reports : BitFlipReports

        Returns
        -------
        SupportCounts
            counts (2, d) = [N, S].
        """
        reports = self.check_reports(reports)
        sampled = np.bincount(reports.buckets.ravel(), minlength=self.d)
        ones = np.bincount(reports.buckets[reports.bits == 1], minlength=self.d)
        return SupportCounts(self, np.stack([sampled, ones]), len(reports.buckets))

    def empty_aggregate(self) -> SupportCounts:
        """The aggregate of no reports.

        Returns
        -------
        SupportCounts
        """
        return SupportCounts(self, np.zeros((2, self.d), dtype=np.int64), 0)

    def estimate(self, aggregate: SupportCounts) -> np.ndarray:
        """ĉ(v) = (d/num_bits)(S_v(e^{ε/2} + 1) − N_v)/(e^{ε/2} − 1): unbiased counts.

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this mechanism.

        Returns
        -------
        numpy.ndarray
            float counts (d,).
        """
        sampled, ones = self.check_aggregate(aggregate).counts
        half = math.exp(self.epsilon / 2)
        return self.d / self.num_bits * (ones * (half + 1) - sampled) / (half - 1)

    def variance(self, n: int, f: float = 0.0) -> float:
        """Var[ĉ(v)] = (d/b)·n e^{ε/2}/(e^{ε/2} − 1)² + n f (d/b − 1), b = num_bits.

        Parameters
        ----------
        n : int
            Number of reports.
        f : float
            True frequency of the value, in [0, 1].

        Returns
        -------
        float

        Raises
        ------
        LDPValueError
            ``f`` outside [0, 1].
        """
        n = check_int(n, "n", 0)
        f = float(f)
        if not 0.0 <= f <= 1.0:
            raise LDPValueError(f"f must be a frequency in [0, 1], got {f!r}")
        half, ratio = math.exp(self.epsilon / 2), self.d / self.num_bits
        return ratio * n * half / (half - 1) ** 2 + n * f * (ratio - 1)

    def simulate(self, values: ArrayLike, *, counts: ArrayLike | None = None,
                 rng: RNG = None) -> SupportCounts:
        # No closed form: through real reports.
        return simulate_from_reports(self, values, counts, rng)

    def _bits_law(self, value, buckets):
        return [self.p if j == value else self.q for j in buckets]

    def output_distribution(self, value: int) -> dict[tuple, float]:
        """Exact law of one report over all reports. Small d only.

        Parameters
        ----------
        value : int
            A bucket in [0, d).

        Returns
        -------
        dict
            {(buckets, bits): probability}.
        """
        value = int(check_values([value], self.d)[0])
        subsets = list(combinations(range(self.d), self.num_bits))
        out = {}
        for buckets in subsets:
            law = self._bits_law(value, buckets)
            for flags in product((0, 1), repeat=self.num_bits):
                pr = math.prod(p if f else 1 - p for p, f in zip(law, flags))
                out[(buckets, flags)] = pr / len(subsets)
        return out


@dataclass(frozen=True, kw_only=True)
class MemoizedDBitFlip(DBitFlip):
    """dBitFlip for repeated collection: the sampled buckets and each value's bits are memoized.

    ``privatize(values, secrets=...)`` with one stable 64-bit secret per user replays the same
    report while the user's bucket stays; :attr:`epsilon_permanent` (= ε) is the cost of one
    memo key (bucket) over any number of rounds (:mod:`protocols.budget`).

    Parameters
    ----------
    epsilon : float
        ε of one report (and of any number of reports with one memo key).
    d : int
        Number of buckets.
    num_bits : int
        Buckets sampled and reported per user.

    References
    ----------
    Ding, Kulkarni, Yekhanin, NeurIPS 2017, Section 3.
    """

    @property
    def epsilon_permanent(self) -> float:
        """ε of any number of reports with one memo key: the one report they repeat."""
        return self.epsilon

    def memo_keys(self, values: ArrayLike, secrets: ArrayLike | None = None) -> np.ndarray:
        """The memo key of each user: its bucket.

        Parameters
        ----------
        values : array_like of int
            Buckets in [0, d).
        secrets : array_like, optional
            Not used (the key does not depend on the secret); same signature as
            :meth:`MemoizedOneBitMean.memo_keys`.

        Returns
        -------
        numpy.ndarray
            int64 buckets.
        """
        return check_values(values, self.d)

    def privatize(self, values: ArrayLike, rng: RNG = None,
                  secrets: ArrayLike | None = None) -> BitFlipReports:
        """Memoized reports: buckets and bits derived from (secret, value), replayed every round.

        Parameters
        ----------
        values : array_like of int
            Buckets in [0, d).
        rng : None, int or numpy.random.Generator
            Source of fresh secrets when ``secrets`` is None.
        secrets : array_like of uint64, optional
            One stable secret per user; None: fresh ones (one-shot use).

        Returns
        -------
        BitFlipReports
        """
        values = check_values(values, self.d)
        n = values.size
        secrets = check_secrets(secrets, n, source(rng))
        buckets = sample_buckets(
            lambda i, high: np.floor(keyed_uniform(secrets, _STREAM_SAMPLE, i) * high).astype(np.int64),
            n, self.d, self.num_bits)
        law = np.where(buckets == values[:, None], self.p, self.q)
        u = keyed_uniform(secrets[:, None], _STREAM_BIT, values[:, None], buckets)
        return BitFlipReports(buckets, (u < law).astype(np.uint8))

    def history_distribution(self, history: Sequence[int]) -> dict[tuple, float]:
        """Exact law of the reports of one user over rounds (marginal over buckets and memo).

        Parameters
        ----------
        history : sequence of int
            The user's bucket in each round. Small d only.

        Returns
        -------
        dict
            {(buckets, per-round bits): probability}.
        """
        subsets = list(combinations(range(self.d), self.num_bits))
        keys = sorted(set(history))
        out = {}
        for buckets in subsets:
            laws = {v: self._bits_law(v, buckets) for v in keys}
            for memo in product(product((0, 1), repeat=self.num_bits), repeat=len(keys)):
                bitsof = dict(zip(keys, memo))
                pr = math.prod(p if f else 1 - p for v in keys for p, f in zip(laws[v], bitsof[v]))
                view = (buckets, tuple(bitsof[v] for v in history))
                out[view] = out.get(view, 0.0) + pr / len(subsets)
        return out
