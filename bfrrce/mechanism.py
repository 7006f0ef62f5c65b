"""BFRRCE: Bloom filter randomized response for cardinality estimation, client and server.

One immutable object holds the parameters and derives everything else once: the Bloom filter,
the flip probabilities (p, q) and the user-level ε (:mod:`bfrrce.calibration`), and the unary
encoding oracle of :mod:`protocols.oracles.unary` that perturbs the filters and sums the columns.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Collection, Iterable, Sequence
from dataclasses import InitVar, dataclass, field

import numpy as np
from bitarray import bitarray
from numpy.typing import ArrayLike

from protocols.bits import packing as bits
from protocols.core.validation import check_int, check_probability, check_set_batch, check_value_batch
from protocols.core.base import Mechanism, user_counts
from protocols.errors import LDPTypeError, LDPValueError
from protocols.core.randomness import RNG, generator, randomized_response_packed, source
from protocols.core.hashing import deduplicate, distinct_keys
from protocols.core.lazy import optimize
from protocols.core.perturbation import (bit_vector_distribution, count_variance, perturb_positions,
                                          simulate_column_sums)
from protocols.shuffle import shuffled_epsilon

from .calibration import budget
from .bloom import BloomFilter
from .columns import NULLS, KeyColumn, column_keys, is_column
from .identity import batch_sums
from .estimation import CardinalityEstimate, detected_candidates, detection_limit, estimate_cardinality
from .estimation.bounds import EXACT_BELOW, exact_regime
from .estimation.design import Candidates, Design, Observed
from .estimation.extrapolation import Extrapolation, power_law_extrapolation
from .estimation.result import identified
from .sums import MAX_REPORTS, ColumnSums, Debiased, check_column_sums, debias, null_variance

METHODS = ("auto", "paper", "corrected", "fill")
DEGRADED_LAWS = 3     # the grid points 2^{k/2} in [ε/2√2, ε) at which the upper bound is also computed
LEAST_EPSILON = 1e-3  # the smallest ε′ searched for ε_x (degraded_laws): its sums are outside the exact regime for n >= 101


@dataclass(frozen=True, kw_only=True)
class BFRRCE(Mechanism):
    """Distinct counting under ε-LDP with Bloom filters and per-bit randomized response.

    Each user hashes its value into a Bloom filter of L bits with l hashes and sends the filter
    with every bit flipped: a set bit is reported 1 with probability p, an unset bit with
    probability q < p. The server keeps only the L column sums (:class:`ColumnSums`) and
    estimates the number of distinct values from them (:meth:`estimate`).

    Parameters
    ----------
    epsilon : float
        User-level privacy budget (docs/privacy.md): what the mechanism guarantees to each
        user. Exactly one of ``epsilon`` and ``per_bit_epsilon`` is given.
    L : int
        Bits per filter (2 <= L <= 2**24). Default 1024.
    l : int
        Hashes per value (1 <= l <= L). Default 1: each extra hash splits the budget and lowers
        the signal-to-noise ratio per value like 1/√l, so l = 1 is best for counting.
    perturbation : {"optimized", "symmetric"}
        "optimized" (p = 1/2, OUE-style, the default: lower variance at the same ε) or
        "symmetric" (the paper's). With ``per_bit_epsilon`` only "symmetric" exists.
    unit : {"value", "item"}
        "value": one value per user, 2l bits may differ (the paper's model). "item": a party
        holds a set; neighbouring sets differ by one item, at most l bits.
    hash_seed : int
        First hash seed (0 <= hash_seed <= 2**32 − l); hashes use hash_seed, …, hash_seed + l − 1.
        Public (it fixes the Bloom positions every client and the server share), unlike the
        noise, whose randomness is the ``rng`` of :meth:`privatize`.
    seed : int, optional
        Deprecated alias of ``hash_seed`` (a :class:`DeprecationWarning`; removed in the next
        release); reading ``mech.seed`` gives ``hash_seed``.
    per_bit_epsilon : float, optional
        The paper's per-bit budget ε_b (RR_P = e^{ε_b}/(1 + e^{ε_b})); the true user-level ε is
        2l·ε_b (value) or l·ε_b (item), set as ``epsilon``, with a :class:`PrivacyWarning`;
        ``dataclasses.replace`` recomputes it when ``l`` or ``unit`` change.

    Attributes
    ----------
    bloom : BloomFilter
        The filter of (L, l, hash_seed).
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0], from ε, l, perturbation and unit
        (:func:`bfrrce.calibration.budget`).

    Raises
    ------
    LDPTypeError
        L, l or hash_seed not an integer, or an ε that is not a number.
    LDPValueError
        Both or neither of ``epsilon`` and ``per_bit_epsilon``, an ε that is not positive and
        finite (or so large that p or q rounds to 0 or 1), L, l or hash_seed out of range, or an
        unknown ``perturbation`` or ``unit``.

    Warns
    -----
    PrivacyWarning
        With ``per_bit_epsilon``: the user-level ε it amounts to.

    References
    ----------
    The BFRRCE paper (Bloom filter randomized response for cardinality estimation);
    docs/privacy.md (the budget), docs/estimation.md (the estimators).
    """

    epsilon: float | None = None
    L: int = 1024
    l: int = 1
    perturbation: str | None = None
    unit: str = "value"
    hash_seed: int = 0
    per_bit_epsilon: float | None = None
    seed: InitVar[int | None] = None
    bloom: BloomFilter = field(init=False, repr=False, compare=False)
    p: float = field(init=False, repr=False, compare=False)
    q: float = field(init=False, repr=False, compare=False)

    def __post_init__(self, seed):
        if seed is not None and not isinstance(seed, _SeedAlias):
            if self.hash_seed != 0:
                raise LDPValueError(f"give hash_seed only (seed={seed!r} is its deprecated alias)")
            warnings.warn("BFRRCE(seed=...) is deprecated: the hash seed is hash_seed=... (the "
                          "noise comes from rng=)", DeprecationWarning, stacklevel=3)
            object.__setattr__(self, "hash_seed", seed)
        bloom = BloomFilter(L=self.L, l=self.l, seed=self.hash_seed)
        eps, p, q, perturbation = budget(self.epsilon, self.per_bit_epsilon, bloom.l,
                                         self.perturbation, self.unit)
        for name, value in dict(epsilon=eps, L=bloom.L, l=bloom.l, hash_seed=bloom.seed,
                                perturbation=perturbation, bloom=bloom, p=p, q=q).items():
            object.__setattr__(self, name, value)

    @property
    def parameters(self) -> dict:
        """ε (user level, rounded to 6 digits), L, l, perturbation and unit, for reports."""
        return {"epsilon": round(self.epsilon, 6), "L": self.L, "l": self.l,
                "perturbation": self.perturbation, "unit": self.unit}

    # -- client ---------------------------------------------------------------------------
    def privatize(self, values: Sequence, rng: RNG = None, *, nulls: str = "refuse") -> np.ndarray:
        """Reports of a batch of values, one per user: each value's filter, every bit flipped.

        Bit j of a report is 1 with probability p if the value's filter has bit j, q otherwise,
        independently over bits and users.

        Parameters
        ----------
        values : sequence of bytes, str or int, or a column
            One value per user; a ``str`` or ``bytes`` is one value (:func:`check_value_batch`
            lists what is refused). A pandas or polars Series or a pyarrow Array or
            ChunkedArray of text, bytes or integers is read without a Python object per value
            (:mod:`bfrrce.columns`).
        rng : None, int, SeedSequence, BitGenerator, Generator or SystemRandom
            None (clients): a ChaCha20 stream keyed from ``os.urandom``
            (:class:`protocols.core.randomness.SystemRandom`); seeds are for simulations only.
        nulls : {"refuse", "skip"}
            Missing values (None; NaN or nulls of a column): refused (the default), or their rows
            dropped (no report for them).

        Returns
        -------
        numpy.ndarray
            uint8 (n, ceil(L/8)), little-endian bit order, zero padding bits (docs/formats.md).

        Raises
        ------
        LDPTypeError
            An ambiguous or unsized ``values`` (set, dict, generator, 2-D array, None, a number),
            a value that is not bytes, str or an integer, or an ``rng`` of another type.
        LDPValueError
            No values, nulls with ``nulls="refuse"``, or a negative int seed.
        """
        return perturb_positions(self._positions(values, nulls), self.L, self.p, self.q, rng)

    def _positions(self, values, nulls):
        """Each value's Bloom positions, from a sequence or a column (:meth:`privatize`)."""
        if is_column(values):
            keys = column_keys(values, nulls)
            if isinstance(keys, KeyColumn):
                return self.bloom.key_positions(keys.data, keys.offsets)[keys.codes]
            return self.bloom.positions(keys)
        if nulls not in NULLS:
            raise LDPValueError(f"nulls must be one of {NULLS}, got {nulls!r}")
        values = check_value_batch(values)
        if nulls == "skip" and not isinstance(values, np.ndarray) and any(v is None for v in values):
            values = [v for v in values if v is not None]
        return self.bloom.positions(values)

    def report(self, value: bytes | str | int, rng: RNG = None) -> bitarray:
        """One client's report of its value, as a ``bitarray(endian="little")`` of L bits.

        The same report as ``privatize([value], rng)[0]`` (bit j is bit ``j % 8`` of byte
        ``j // 8`` of the packed row), for client code that handles one report at a time:
        ``bitarray.tobytes()`` is the packed row a server aggregates (docs/formats.md, "One
        report"), and :func:`protocols.bits.packing.from_bitarray` gives it as a numpy row.

        Parameters
        ----------
        value : bytes, str or int
            The client's value.
        rng : None, int, SeedSequence, Generator, BitGenerator or SystemRandom
            As in :meth:`privatize` (None: the secure default).

        Returns
        -------
        bitarray.bitarray
            L bits, little-endian.
        """
        return bits.to_bitarray(self.privatize([value], rng)[0], self.L)

    def privatize_sets(self, sets: Sequence, rng: RNG = None) -> np.ndarray:
        """Reports of parties holding sets of items (``unit="item"``): each set's filter (the
        union of its items' filters), every bit flipped as in :meth:`privatize`.

        Parameters
        ----------
        sets : sequence of collections
            One collection (set, frozenset, list, tuple, 1-D array) of items per party
            (:func:`check_set_batch`); a ``str`` entry is refused, wrap one item as ``{item}``.
            An empty collection is allowed (an empty filter).
        rng : None, int, SeedSequence, Generator or SystemRandom
            As in :meth:`privatize`.

        Returns
        -------
        numpy.ndarray
            uint8 (len(sets), ceil(L/8)), little-endian bit order.

        Raises
        ------
        LDPValueError
            ``unit`` is not "item", no sets, or a negative int seed.
        LDPTypeError
            ``sets`` or an entry that is not a collection, an item that is not bytes, str or an
            integer, or an ``rng`` of another type.
        """
        if self.unit != "item":
            raise LDPValueError("privatize_sets needs unit='item' (a set can differ in many bits)")
        sets = check_set_batch(sets)
        filters = self.bloom.set_bits(sets)
        return randomized_response_packed(source(rng), filters.shape, np.nonzero(filters), self.p, self.q)

    def output_distribution(self, value: bytes | str | int) -> dict[bytes, float]:
        """Exact Pr[report | value] over all 2^L reports, for privacy audits (L <= 16).

        Pr[r | v] = Π_j p^{r_j} (1 − p)^{1 − r_j} over the filter's set bits, with q in place of
        p over its unset bits.

        Parameters
        ----------
        value : bytes, str or int
            One value.

        Returns
        -------
        dict
            {packed report (bytes): probability}.

        Raises
        ------
        LDPValueError
            L > 16.
        LDPTypeError
            A value that is not bytes, str or an integer.
        """
        return bit_vector_distribution(self.bloom.bits([value])[0], self.p, self.q)

    def set_output_distribution(self, items: Collection) -> dict[bytes, float]:
        """Exact Pr[report | set of items] over all 2^L reports (``unit="item"`` audits, L <= 16).

        Parameters
        ----------
        items : collection of bytes, str or int
            One party's items (possibly empty); its filter is the union of the items' filters.

        Returns
        -------
        dict
            {packed report (bytes): probability}, as :meth:`output_distribution`.

        Raises
        ------
        LDPValueError
            L > 16.
        LDPTypeError
            An item that is not bytes, str or an integer.
        """
        return bit_vector_distribution(self.bloom.set_bits([items])[0], self.p, self.q)

    # -- server ---------------------------------------------------------------------------
    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        """``reports`` if they are packed reports of this mechanism.

        Parameters
        ----------
        reports : array_like
            uint8 (n, ceil(L/8)) with zero padding bits beyond bit L − 1.

        Returns
        -------
        numpy.ndarray
            The reports, unchanged and never copied.

        Raises
        ------
        LDPTypeError
            A dtype other than uint8.
        IncompatibleError
            Another shape, or padding bits set (reports of another L).
        """
        return bits.check_packed(reports, self.L)

    def aggregate(self, reports: ArrayLike, *, label: bool = True) -> ColumnSums:
        """Column sums c_j (reports with bit j set) of a batch of packed reports.

        Parameters
        ----------
        reports : array_like
            Packed reports, validated by :meth:`check_reports` and never modified.

        label : bool
            Label the sums with the reports' content identifier (:mod:`bfrrce.identity`: one
            SHA-256 per report) and refuse duplicated reports; False (simulations whose sums are
            never merged with others) skips both.

        Returns
        -------
        ColumnSums
            The L column sums and n = len(reports), labelled with the batch's identifier: the
            same reports read from a file are then refused as already counted.

        Raises
        ------
        LDPTypeError, IncompatibleError
            As :meth:`check_reports`; duplicated reports (:func:`bfrrce.identity.check_repeats`).
        """
        return self.aggregate_batches([reports], label=label)

    def aggregate_batches(self, batches: Iterable[ArrayLike], *, label: bool = True,
                          seeded: bool = False, screen=None) -> ColumnSums:
        """Column sums of an iterable of report batches (file chunks) with one running counter.

        Memory is one batch plus O(L), whatever the number of batches (and, with ``label``, 8
        bytes a report for the duplicate check). The chunks form one batch: its identifier is
        that of all their rows (:mod:`bfrrce.identity`).

        Parameters
        ----------
        batches : iterable of array_like
            Packed report batches, each validated as :meth:`check_reports` and not kept.
        label : bool
            As :meth:`aggregate`.
        seeded : bool
            The reports were privatized with a seeded generator (recorded in the sums).
        screen : callable, optional
            reports → boolean mask of the reports to count (a defence, e.g.
            :func:`bfrrce.poisoning.plausible_weight`); the identifier is still that of every
            row, so a screened file and the same file unscreened are one batch.

        Returns
        -------
        ColumnSums
            The column sums of all the batches' reports (n = 0 for no batches).

        Raises
        ------
        LDPTypeError, IncompatibleError
            A batch refused by :meth:`check_reports`; duplicated reports.
        LDPValueError
            More than 2**53 reports in all.
        """
        return batch_sums(self, batches, label=label, seeded=seeded, screen=screen)

    def empty_aggregate(self) -> ColumnSums:
        """The column sums of no reports.

        Returns
        -------
        ColumnSums
            L zeros, n = 0: the neutral element of :meth:`ColumnSums.merge`.
        """
        return ColumnSums(self, np.zeros(self.L, dtype=np.int64), 0)

    def simulate(self, values: Sequence, *, counts: ArrayLike | None = None, rng: RNG = None) -> ColumnSums:
        """Column sums of ``values``' users drawn exactly in distribution, without reports.

        With t_j the users whose filter has bit j, c_j ~ Binomial(t_j, p) + Binomial(n − t_j, q)
        independently over j: the exact law of the column sums of :meth:`privatize`'s reports
        (:func:`protocols.core.perturbation.simulate_column_sums`). Cost O(distinct·l + L), so 10^9 users take
        milliseconds.

        Parameters
        ----------
        values : sequence of bytes, str or int
            The values (:func:`check_value_batch`); duplicates allowed.
        counts : array_like of int, optional
            ``counts[i]`` users hold ``values[i]``; default one user per entry.
        rng : None, int, SeedSequence, Generator or SystemRandom
            Seed or generator of the simulation (None: fresh OS entropy).

        Returns
        -------
        ColumnSums
            Column sums of n = sum(counts) users.

        Raises
        ------
        LDPTypeError
            Ambiguous ``values`` (:func:`check_value_batch`), a value that is not bytes, str or
            an integer, counts that are not integers, or an ``rng`` of another type.
        LDPValueError
            No values, counts of another length, negative, or more than 2**53 users in all, or a
            negative int seed.
        """
        values = check_value_batch(values)
        if counts is None:
            values, counts = distinct_keys(values)
        values, counts = user_counts(values, counts)
        if counts.sum(dtype=float) > MAX_REPORTS:          # float: the int64 sum could wrap
            raise LDPValueError(f"at most 2**53 users can be simulated, got {counts.sum(dtype=float):.4g}")
        n = int(counts.sum())
        t = self.bloom.column_counts(self.bloom.positions(values), counts)
        return ColumnSums(self, simulate_column_sums(t, n, self.p, self.q, generator(rng)), n)

    def check_aggregate(self, aggregate: ColumnSums) -> ColumnSums:
        """``aggregate`` if it is the non-empty :class:`ColumnSums` of this configuration.

        Parameters
        ----------
        aggregate : ColumnSums
            Column sums to estimate from.

        Returns
        -------
        ColumnSums
            ``aggregate`` itself.

        Raises
        ------
        LDPTypeError
            Not a :class:`ColumnSums`.
        IncompatibleError
            Column sums of other parameters.
        LDPValueError
            No reports.
        """
        return check_column_sums(self, aggregate)

    def debias(self, aggregate: ColumnSums) -> Debiased:
        """Unbiased users per bit and their plug-in variances.

        t̂_j = (c_j − nq)/(p − q) is unbiased for t_j, the users whose filter has bit j, and
        Var(t̂_j) = [t_j p(1 − p) + (n − t_j) q(1 − q)]/(p − q)², returned at t_j = clip(t̂_j, 0, n).

        Parameters
        ----------
        aggregate : ColumnSums
            Column sums of this mechanism's reports.

        Returns
        -------
        Debiased
            t̂, the variances, the null variance (:meth:`null_variance`) and n.

        Raises
        ------
        LDPTypeError, IncompatibleError, LDPValueError
            As :meth:`check_aggregate`.

        References
        ----------
        Theorem 2 of the BFRRCE paper; docs/estimation.md.
        """
        agg = self.check_aggregate(aggregate)
        return debias(agg.counts, agg.n, self.p, self.q)

    def null_variance(self, n: int) -> float:
        """Var(t̂_j) of a column no user touched (t_j = 0): n q(1 − q)/(p − q)².

        Parameters
        ----------
        n : int
            Number of reports (not validated).

        Returns
        -------
        float
        """
        return null_variance(n, self.p, self.q)

    def detection_limit(self, n: int, levels: Sequence[float] = (0.5, 0.9)) -> dict[float, float]:
        """Users a value needs to be detected with each probability (docs/estimation.md).

        The root f of Φ((f − τ)/σ(f))^l = level, σ(f)² = [f p(1−p) + (n − f) q(1−q)]/(p − q)²,
        with the per-bit threshold τ that lets an absent value pass with probability 5%
        (:func:`bfrrce.estimation.detection_limit`).

        Parameters
        ----------
        n : int
            Users in all, in [1, 2**53].
        levels : sequence of float
            Detection probabilities, each in (0, 1).

        Returns
        -------
        dict
            {level: users} (a float; ∞ when even n users do not reach the level).

        Raises
        ------
        LDPTypeError, LDPValueError
            ``n`` not an integer in [1, 2**53], or a level that is not a number in (0, 1).
        """
        n = check_int(n, "n", 1, MAX_REPORTS)
        if isinstance(levels, (int, float, np.number)):
            raise LDPTypeError(f"levels must be a sequence of probabilities, got {levels!r} (write ({levels!r},))")
        levels = tuple(check_probability(level, "level") for level in levels)
        return detection_limit(n, self.p, self.q, self.l, levels)

    def estimate_with_error(self, aggregate: ColumnSums, confidence: float = 0.95) -> CardinalityEstimate:
        """:meth:`estimate` (method "auto", no candidates) at level ``confidence``: the shared verb.

        Parameters
        ----------
        aggregate : ColumnSums
            Column sums of this mechanism's reports.
        confidence : float
            Joint level of the bounds.

        Returns
        -------
        CardinalityEstimate
            ``value``, ``std_error``, ``interval`` (the bounds, valid for any frequency
            distribution) and ``confidence``, with the detection limit and details.
        """
        return self.estimate(aggregate, confidence=confidence)

    def design(self, n: int) -> Design:
        """The parameters the estimators read for ``n`` reports of this mechanism.

        Parameters
        ----------
        n : int
            Number of reports.

        Returns
        -------
        bfrrce.estimation.design.Design
        """
        return Design(n, self.p, self.q, self.L, self.l, self.unit)

    def hash_candidates(self, values: Sequence) -> Candidates:
        """A candidate list hashed for the estimators: positions and column multiplicities.

        Parameters
        ----------
        values : sequence
            The candidates (keys).

        Returns
        -------
        bfrrce.estimation.design.Candidates
        """
        positions = self.bloom.positions(values)
        return Candidates(positions, self.bloom.column_counts(positions))

    def degraded_laws(self, n: int | None = None) -> dict[float, tuple[float, float]]:
        """{ε': (p', q')} of this configuration at the three ε' of the grid 2^{k/2} in [ε/2√2, ε), from
        the top down, at which :meth:`estimate` also computes the upper bound, each at one law's
        share of the level (by the law's thresholds, or on sums degraded to it in the exact
        regime: :func:`~bfrrce.estimation.bounds.upper_bound_over_laws`, docs/estimation.md).

        Given ``n``, where n reports at ε fall in the exact regime (an empty column's sum has sd
        below :data:`~bfrrce.estimation.bounds.EXACT_BELOW`) and ε/2√2 does not, the laws are
        instead ε_x, ε_x/√2 and ε_x/2, ε_x the ε' at which that sd is EXACT_BELOW: the least
        noisy law outside the exact regime, to which the sums are degraded once
        (:func:`~bfrrce.estimation.bounds.upper_bound_over_laws`). Where ε/2√2 is in the exact
        regime too, the grid's last law is ε_x (if the sd reaches EXACT_BELOW at all), so that
        the law that serves a smaller ε is still tried.

        Parameters
        ----------
        n : int, optional
            The number of reports.

        Returns
        -------
        dict
            {ε': (p', q')}, three laws, highest ε' first.
        """
        top = math.ceil(2 * math.log2(self.epsilon)) - 1
        grid = [2.0 ** (k / 2) for k in range(top, top - DEGRADED_LAWS, -1)]
        low = self.epsilon / (2 * math.sqrt(2))
        if n is not None and exact_regime(n, self.p, self.q):
            if not exact_regime(n, *self._law(low)):
                edge = self._exact_edge(n, low, self.epsilon)
                grid = [edge / 2.0 ** (k / 2) for k in range(DEGRADED_LAWS)]
            elif not exact_regime(n, *self._law(LEAST_EPSILON)):
                grid[-1] = self._exact_edge(n, LEAST_EPSILON, low)
        return {eps: self._law(eps) for eps in grid}

    def _exact_edge(self, n: int, below: float, above: float) -> float:
        """ε_x in [below, above): the ε' at which an empty column's sum of n reports has sd
        :data:`~bfrrce.estimation.bounds.EXACT_BELOW` (``scipy.optimize.brentq``), taken just
        outside the exact regime (``below`` is outside it, ``above`` in it)."""
        edge = optimize.brentq(lambda e: math.sqrt(count_variance(0, n, *self._law(e))) - EXACT_BELOW, below, above)
        return next(e for e in (edge, edge - 1e-6, below) if not exact_regime(n, *self._law(e)))

    def _law(self, epsilon: float) -> tuple[float, float]:
        """(p, q) of this configuration at ``epsilon``."""
        _, p, q, _ = budget(epsilon, None, self.l, self.perturbation, self.unit)
        return p, q

    def estimate(self, aggregate: ColumnSums, candidates: Sequence | None = None, method: str = "auto",
                 confidence: float = 0.95, threshold: float = 0.5, alpha: float = 0.05,
                 shuffled_delta: float | None = None) -> CardinalityEstimate:
        """Bounds and point estimate of the number of distinct values (docs/estimation.md).

        Parameters
        ----------
        aggregate : ColumnSums
            Column sums of this mechanism's reports.
        candidates : sequence, optional
            The possible values (needed by "paper" and "corrected").
        method : {"auto", "paper", "corrected", "fill"}
            The point estimate; "auto" is "corrected" with candidates and "fill" without. The
            bounds are the same for every method.
        confidence : float
            Joint level of the bounds (each one-sided at (1 − confidence)/2) and of the interval
            of ``visible``.
        threshold : float
            "paper": a bit of B″ is set when t̂_j > threshold (users).
        alpha : float
            "corrected": false-positive rate of the per-candidate list ``details["detected"]``.
        shuffled_delta : float, optional
            Also report what the n reports would mean centrally if they had passed a shuffler:
            ``details["shuffled"]`` = {"n", "epsilon0", "delta", "epsilon"}, the central
            (ε, δ) of :func:`protocols.shuffle.shuffled_epsilon` (valid only with a shuffler
            trusted not to collude and one report per user; docs/privacy.md, "Shuffling").

        Returns
        -------
        CardinalityEstimate
            ``interval`` = (lower, upper) covers the true count for any frequency distribution;
            ``value`` rests on ``assumption``; ``visible`` counts the values above the
            detection limit.

        Raises
        ------
        LDPValueError
            Unknown method, no candidates for a candidate method, confidence or alpha outside
            (0, 1), a non-finite threshold, or no reports.
        LDPTypeError
            ``aggregate`` not a :class:`ColumnSums`, ambiguous ``candidates``
            (:func:`check_value_batch`), or a candidate that is not bytes, str or an integer.
        IncompatibleError
            Column sums of other parameters.

        References
        ----------
        The BFRRCE paper (method "paper", Theorem 2 for t̂); docs/estimation.md.
        """
        if method not in METHODS:
            raise LDPValueError(f"method must be one of {METHODS}, got {method!r}")
        alpha, confidence = check_probability(alpha, "alpha"), check_probability(confidence, "confidence")
        if method == "auto":
            method = "fill" if candidates is None else "corrected"
        agg = self.check_aggregate(aggregate)
        hashed = None
        if method != "fill":
            if candidates is not None:
                candidates = deduplicate(check_value_batch(candidates, "candidates"))
            if candidates is None or len(candidates) == 0:
                raise LDPValueError(f"method {method!r} needs a non-empty list of candidates")
            hashed = self.hash_candidates(candidates)
        est = estimate_cardinality(Observed(agg.counts, self.design(agg.n)), method=method,
                                   confidence=confidence, parameters=self.parameters,
                                   candidates=hashed, threshold=threshold, degraded=self.degraded_laws(agg.n))
        if hashed is not None and method == "corrected":
            est.details["detected"] = detected_candidates(debias(agg.counts, agg.n, self.p, self.q),
                                                          hashed.positions, alpha)
        if shuffled_delta is not None:
            if self.unit == "item":
                raise LDPValueError("shuffled_delta needs one report per user at a known ε; with "
                                    "unit='item' a party holding k items spends k·ε")
            est.details["shuffled"] = {"n": agg.n, "epsilon0": self.epsilon, "delta": shuffled_delta,
                                       "epsilon": shuffled_epsilon(self.epsilon, agg.n, shuffled_delta)}
        if not identified(est.interval):
            est.details["identified_at"] = self.identifying(agg.n, max(est.value, 1.0))
        return est

    def extrapolate(self, aggregate: ColumnSums, interval: tuple[float, float] | None = None,
                    f0: float | None = None) -> Extrapolation:
        """An optional, model-based count: D if the frequencies follow a power law, fitted to the
        values above the detection limit and to the users below it, with a check that refuses
        where they disagree (:mod:`bfrrce.estimation.extrapolation`). Not the default and not
        covered by the bounds of :meth:`estimate`, which hold whatever the frequencies.

        Parameters
        ----------
        aggregate : ColumnSums
            Column sums of this mechanism's reports.
        interval : (float, float), optional
            The bounds of :meth:`estimate` (computed when not given): an extrapolation outside
            them is refused.
        f0 : float, optional
            The frequency from which values are read one by one (default: twice the 90%
            detection limit, at least five times an empty column's noise in users).

        Returns
        -------
        Extrapolation
            ``value`` ± ``std_error`` (the model's sampling error only), or ``refused`` with why.

        Raises
        ------
        LDPValueError
            ``unit="item"`` or ``l > 1`` (the model reads one value per user in one column), or
            f0 not above 1.
        """
        if self.unit != "value" or self.l != 1:
            raise LDPValueError("extrapolate reads one value per user hashed once: it needs unit='value' "
                                f"and l=1 (got unit={self.unit!r}, l={self.l})")
        if f0 is not None and not f0 > 1:
            raise LDPValueError(f"f0 must be above 1, got {f0!r}")
        agg = self.check_aggregate(aggregate)
        if interval is None:
            interval = self.estimate(agg).interval
        return power_law_extrapolation(Observed(agg.counts, self.design(agg.n)), tuple(interval), f0)

    def identifying(self, n: int, D: float) -> dict[str, float | None]:
        """The ε (same n) and the n (same ε) at which the advisor's model (D equal frequencies)
        puts the interval within 2×: the relative error e of ``value``
        (:func:`bfrrce.advice.predicted_aare`) at most 1/6, so that ±2e spans a factor
        (1 + 1/3)/(1 − 1/3) = 2, and the upper bound's mass balance at the truth
        (:func:`bfrrce.advice.predicted_upper`, read by :func:`bfrrce.advice.predicted_within`)
        at most (1 − 1/6)·2·D, so that it is within 2× of
        a lower bound within 1/6 of D: ε up to 8 times (as far as float64 represents its flip
        probabilities) and n up to 1,024 times the present one, None beyond (one value held by
        all users is never located closer than the noise of its own columns, whatever ε and n).

        Parameters
        ----------
        n : int
            Users.
        D : float
            The number of values assumed.

        Returns
        -------
        dict
            {"epsilon": ε or None, "n": n or None}.
        """
        from .advice import predicted_aare, predicted_within  # advice imports this module

        target = math.sqrt(2 / math.pi) / 6

        def close(users, eps):
            with np.errstate(invalid="ignore"):              # the model's power can round past 1
                return float(predicted_aare(int(users), [D], *self._law(float(eps)), self.L, self.l)[0]) <= target

        def narrow(users, eps):
            return predicted_within(int(users), D, *self._law(float(eps)), self.L, self.l, 2 * (1 - 1 / 6) * D)

        # the mass balance narrows with ε (bisection on the grid past the first close ε) and
        # widens with n at a fixed D (only the first close n can pass)
        grid = [float(e) for e in self.epsilon * 2 ** (np.arange(1, 13) / 4) if _representable(self, e)]
        start = next((i for i, e in enumerate(grid) if close(n, e)), len(grid))
        lo, hi = start, len(grid)
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if narrow(n, grid[mid]) else (mid + 1, hi)
        users = next((int(m) for m in n * 2 ** np.arange(1, 11) if m >= D and close(m, self.epsilon)), None)
        return {"epsilon": grid[lo] if lo < len(grid) else None,
                "n": users if users is not None and narrow(users, self.epsilon) else None}


def _representable(mech: BFRRCE, epsilon: float) -> bool:
    """Whether ``mech``'s configuration at ``epsilon`` has flip probabilities strictly inside
    (0, 1) in float64 (symmetric perturbation rounds p to 1 from ε ≈ 73.5 at l = 1)."""
    try:
        mech._law(float(epsilon))
    except LDPValueError:
        return False
    return True


class _SeedAlias(int):
    """``mech.seed``: the hash seed, marked so that ``dataclasses.replace`` (which passes every
    init argument's current value back) does not count it as a deprecated ``seed=``."""


# Reading the deprecated name: set after the class, so that BFRRCE's __init__ keeps seed=None as
# the default of its init-only argument.
BFRRCE.seed = property(lambda self: _SeedAlias(self.hash_seed),  # type: ignore[assignment]
                       doc="Deprecated alias of ``hash_seed``.")


def estimate_distinct(values: Sequence, epsilon: float = 2.0, rng: RNG = None,
                      candidates: Sequence | None = None, method: str = "auto", nulls: str = "refuse",
                      **params) -> CardinalityEstimate:
    """Privatize every value as its own client would, aggregate, and estimate.

    ``BFRRCE(epsilon=epsilon, **params)``, :meth:`BFRRCE.privatize`, :meth:`BFRRCE.aggregate`
    and :meth:`BFRRCE.estimate` in one call, for experiments on a list of values.

    Parameters
    ----------
    values : sequence of bytes, str or int, or a column
        One value per user (:func:`check_value_batch`), or a pandas/polars Series or a pyarrow
        Array/ChunkedArray (:meth:`BFRRCE.privatize`).
    epsilon : float
        User-level budget (docs/privacy.md).
    rng : None, int, SeedSequence, Generator or SystemRandom
        None uses a ChaCha20 stream keyed from ``os.urandom``; pass a seed for a reproducible
        simulation.
    candidates : sequence, optional
        The possible values, as in :meth:`BFRRCE.estimate`.
    method : {"auto", "paper", "corrected", "fill"}
        The point estimate, as in :meth:`BFRRCE.estimate`.
    nulls : {"refuse", "skip"}
        Missing values refused or skipped (:meth:`BFRRCE.privatize`).
    **params
        Go to :class:`BFRRCE` (L, l, perturbation, unit, hash_seed).

    Returns
    -------
    CardinalityEstimate
        As :meth:`BFRRCE.estimate` (default confidence, threshold and alpha).

    Raises
    ------
    LDPTypeError, LDPValueError, IncompatibleError
        As :class:`BFRRCE`, :meth:`BFRRCE.privatize` and :meth:`BFRRCE.estimate`; a ``TypeError``
        for an unknown keyword in ``params``.

    References
    ----------
    The BFRRCE paper; docs/privacy.md, docs/estimation.md.
    """
    mech = BFRRCE(epsilon=epsilon, **params)
    agg = mech.aggregate(mech.privatize(values, rng=rng, nulls=nulls))
    return mech.estimate(agg, candidates=candidates, method=method)
