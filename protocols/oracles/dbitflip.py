"""Microsoft's dBitFlip, one-shot and memoized (Ding, Kulkarni, Yekhanin, NeurIPS 2017).

dBitFlip (buckets v ∈ [0, d)): each user samples ``num_bits`` distinct buckets j_1 < … and
reports, for each, a bit that is 1 w.p. e^{ε/2}/(e^{ε/2} + 1) if v = j_p, else 1/(e^{ε/2} + 1).
With N_v users sampling v and S_v of their bits set, ĉ(v) = (d/num_bits)(S_v(e^{ε/2} + 1) − N_v)
/(e^{ε/2} − 1) is unbiased and Var[ĉ(v)] = (d/num_bits)·n e^{ε/2}/(e^{ε/2} − 1)² + n_v(d/num_bits − 1).
Two values change at most two bits' laws: ε-LDP, tight for num_bits ≥ 2 (ε/2 for one bit).

Repeated collection (Section 3 of the paper; docs/accountant.md): :class:`MemoizedDBitFlip` derives
all its randomness from a per-user 64-bit secret (:mod:`protocols.core.memo`): the sampled buckets
are drawn once and the bits of each value are drawn once (independently per value) and replayed.
A user whose bucket does not change sends one report forever (ε for the whole period); each
distinct bucket adds one more independent ε-LDP report; the rounds at which the bucket changed are
visible, which no ε covers (tested by enumeration in tests/protocols/oracles/test_telemetry.py).
The one-bit mean mechanisms of the same paper are in :mod:`protocols.mean.one_bit`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, product
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_array, check_epsilon, check_int, check_range, check_values
from protocols.core.base import RNG, FrequencyOracle, SupportCounts
from protocols.errors import LDPTypeError, LDPValueError
from protocols.core.randomness import integers, randomized_response_bits, source
from protocols.core.simulation import simulate_from_reports
from protocols.core.memo import STREAM_BIT, STREAM_SAMPLE, check_secrets, keyed_uniform, mechanism_word

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
        out: dict[tuple[int, ...], float] = {}
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
    memo key (bucket) over any number of rounds (:mod:`protocols.accountant`).

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
        word = mechanism_word(self)
        buckets = sample_buckets(
            lambda i, high: np.floor(keyed_uniform(secrets, word, STREAM_SAMPLE, i) * high).astype(np.int64),
            n, self.d, self.num_bits)
        law = np.where(buckets == values[:, None], self.p, self.q)
        u = keyed_uniform(secrets[:, None], word, STREAM_BIT, values[:, None], buckets)
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
        out: dict[tuple, float] = {}
        for buckets in subsets:
            laws = {v: self._bits_law(v, buckets) for v in keys}
            for memo in product(product((0, 1), repeat=self.num_bits), repeat=len(keys)):
                bitsof = dict(zip(keys, memo))
                pr = math.prod(p if f else 1 - p for v in keys for p, f in zip(laws[v], bitsof[v]))
                view = (buckets, tuple(bitsof[v] for v in history))
                out[view] = out.get(view, 0.0) + pr / len(subsets)
        return out
