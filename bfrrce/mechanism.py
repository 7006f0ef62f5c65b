"""BFRRCE: Bloom filter randomized response for cardinality estimation, client and server.

One immutable object holds the parameters and derives everything else once: the Bloom filter,
the flip probabilities (p, q) and the user-level ε (:mod:`bfrrce.accounting`), and the unary
encoding oracle of :mod:`protocols.ue` that perturbs the filters and sums the columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from protocols import bits
from protocols._validate import check_int, check_probability
from protocols.base import Mechanism, user_counts
from protocols.errors import IncompatibleError, LDPTypeError, LDPValueError
from protocols.randomness import generator, randomized_response_packed, source
from protocols.ue import bit_vector_distribution, count_columns, perturb_positions, simulate_column_sums

from .accounting import budget
from .bloom import BloomFilter
from .estimation import detected_candidates, detection_limit, estimate_cardinality
from .sums import MAX_REPORTS, ColumnSums, debias, null_variance

METHODS = ("auto", "paper", "corrected", "fill")


def check_value_batch(values, name="values"):
    """``values`` as a batch of values (one per user), refusing what is ambiguous.

    A ``str`` or ``bytes`` is one value (not one per character); a 1-D numpy array, a list, a
    tuple or any other sized sequence is a batch. Refused with :class:`LDPTypeError`: None,
    numbers, iterators and generators (no length: pass ``list(...)``), sets and dicts
    (unordered, or keys versus items), bytearray and memoryview (bytes or integers?), and
    arrays of more than one dimension (one user per row, or per cell?).
    """
    if isinstance(values, (str, bytes)):
        return [values]
    if isinstance(values, (set, frozenset, Mapping, bytearray, memoryview)) or not hasattr(values, "__len__") \
            or not hasattr(values, "__getitem__"):
        raise LDPTypeError(f"{name} must be a sequence of values (list, tuple, 1-D array) or one str "
                           f"or bytes, got {type(values).__name__}: {values!r:.80}")
    if getattr(values, "ndim", 1) != 1:
        raise LDPTypeError(f"{name} must be one-dimensional, got shape {np.shape(values)}")
    return values


def check_set_batch(sets):
    """``sets`` as a batch of item sets: a sequence (:func:`check_value_batch`) whose entries are
    collections of items (set, frozenset, list, tuple, 1-D array); a ``str`` or ``bytes`` entry
    is refused (one item or its characters?), as are numbers and dicts."""
    sets = check_value_batch(sets, "sets")
    for s in sets:
        if isinstance(s, (str, bytes, Mapping)) or not hasattr(s, "__iter__") or not hasattr(s, "__len__"):
            raise LDPTypeError(f"each party's items must be a set, list or tuple, got "
                               f"{type(s).__name__}: {s!r:.80} (wrap one item as {{item}})")
    return sets


@dataclass(frozen=True, kw_only=True)
class BFRRCE(Mechanism):
    """Distinct counting under ε-LDP with Bloom filters and per-bit randomized response.

    Parameters
    ----------
    epsilon : float
        User-level privacy budget (docs/privacy.md): what the mechanism guarantees to each
        user. Exactly one of ``epsilon`` and ``per_bit_epsilon`` is given.
    L : int
        Bits per filter (>= 2). Default 1024.
    l : int
        Hashes per value (1 <= l <= L). Default 1: each extra hash splits the budget and lowers
        the signal-to-noise ratio per value like 1/√l, so l = 1 is best for counting.
    perturbation : {"optimized", "symmetric"}
        "optimized" (p = 1/2, OUE-style, the default: lower variance at the same ε) or
        "symmetric" (the paper's). With ``per_bit_epsilon`` only "symmetric" exists.
    unit : {"value", "item"}
        "value": one value per user, 2l bits may differ (the paper's model). "item": a party
        holds a set; neighbouring sets differ by one item, at most l bits.
    seed : int
        First hash seed; hashes use seed, …, seed + l − 1.
    per_bit_epsilon : float, optional
        The paper's per-bit budget ε_b (RR_P = e^{ε_b}/(1 + e^{ε_b})); the true user-level ε is
        2l·ε_b (value) or l·ε_b (item), set as ``epsilon``, with a :class:`PrivacyWarning`;
        ``dataclasses.replace`` recomputes it when ``l`` or ``unit`` change.
    """

    epsilon: float | None = None
    L: int = 1024
    l: int = 1
    perturbation: str | None = None
    unit: str = "value"
    seed: int = 0
    per_bit_epsilon: float | None = None
    bloom: BloomFilter = field(init=False, repr=False, compare=False)
    p: float = field(init=False, repr=False, compare=False)
    q: float = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        bloom = BloomFilter(L=self.L, l=self.l, seed=self.seed)
        eps, p, q, perturbation = budget(self.epsilon, self.per_bit_epsilon, bloom.l,
                                         self.perturbation, self.unit)
        for name, value in dict(epsilon=eps, L=bloom.L, l=bloom.l, seed=bloom.seed,
                                perturbation=perturbation, bloom=bloom, p=p, q=q).items():
            object.__setattr__(self, name, value)

    @property
    def parameters(self) -> dict:
        """ε (user level, rounded to 6 digits), L, l, perturbation and unit, for reports."""
        return {"epsilon": round(self.epsilon, 6), "L": self.L, "l": self.l,
                "perturbation": self.perturbation, "unit": self.unit}

    # -- client ---------------------------------------------------------------------------
    def privatize(self, values, rng=None):
        """Reports of a batch of values, one per user: uint8 (n, ceil(L/8)), little-endian bits.

        ``values`` is a sequence (a ``str`` or ``bytes`` is one value; :func:`check_value_batch`
        lists what is refused). ``rng=None`` (clients) draws from a ChaCha20 stream keyed from
        ``os.urandom``; seeds are for simulations only.

        Raises
        ------
        LDPTypeError
            An ambiguous or unsized ``values`` (set, dict, generator, 2-D array, None, a number),
            or a value that is not bytes, str or an integer.
        LDPValueError
            No values.
        """
        values = check_value_batch(values)
        return perturb_positions(self.bloom.positions(values), self.L, self.p, self.q, rng)

    def privatize_sets(self, sets, rng=None):
        """Reports of parties holding sets of items (``unit="item"``): ``sets`` is a sequence of
        collections (:func:`check_set_batch`; a ``str`` is refused as a set)."""
        if self.unit != "item":
            raise LDPValueError("privatize_sets needs unit='item' (a set can differ in many bits)")
        sets = check_set_batch(sets)
        filters = self.bloom.set_bits(sets)
        return randomized_response_packed(source(rng), filters.shape, np.nonzero(filters), self.p, self.q)

    def output_distribution(self, value):
        """Exact Pr[report | value] over all 2^L reports (small L only), for privacy audits."""
        return bit_vector_distribution(self.bloom.bits([value])[0], self.p, self.q)

    def set_output_distribution(self, items):
        """Exact Pr[report | set of items] (``unit="item"`` audits; small L only)."""
        return bit_vector_distribution(self.bloom.set_bits([items])[0], self.p, self.q)

    # -- server ---------------------------------------------------------------------------
    def check_reports(self, reports):
        """``reports`` if they are packed reports of this mechanism: uint8 (n, ceil(L/8)) with
        zero padding bits (returned unchanged, never copied)."""
        return bits.check_packed(reports, self.L)

    def aggregate(self, reports):
        """Column sums of a batch of packed reports (validated, never modified)."""
        reports = self.check_reports(reports)
        return ColumnSums(self, bits.column_sums(reports, self.L), len(reports))

    def aggregate_batches(self, batches):
        """Column sums of an iterable of report batches (file chunks), one running counter."""
        return ColumnSums(self, *count_columns(batches, self.L))

    def empty_aggregate(self) -> ColumnSums:
        """The column sums of no reports (the neutral element of ``merge``)."""
        return ColumnSums(self, np.zeros(self.L, dtype=np.int64), 0)

    def simulate(self, values, *, counts=None, rng=None):
        """Column sums of ``values``' users drawn exactly in distribution, without reports.

        ``values`` are values with ``counts`` users each (default: one user per entry,
        duplicates allowed); cost O(distinct·l + L), so 10^9 users take milliseconds.

        Raises
        ------
        LDPTypeError
            Ambiguous ``values`` (:func:`check_value_batch`) or counts that are not integers.
        LDPValueError
            Counts of another length, negative, or more than 2**53 users in all.
        """
        values = check_value_batch(values)
        if counts is None:
            values, counts = np.unique(np.asarray(values), return_counts=True)
        values, counts = user_counts(values, counts)
        if counts.sum(dtype=float) > MAX_REPORTS:          # float: the int64 sum could wrap
            raise LDPValueError(f"at most 2**53 users can be simulated, got {counts.sum(dtype=float):.4g}")
        n = int(counts.sum())
        t = self.bloom.column_counts(self.bloom.positions(values), counts)
        return ColumnSums(self, simulate_column_sums(t, n, self.p, self.q, generator(rng)), n)

    def check_aggregate(self, aggregate):
        """``aggregate`` if it is the non-empty :class:`ColumnSums` of this configuration.

        Raises
        ------
        LDPTypeError
            Not a :class:`ColumnSums`.
        IncompatibleError
            Column sums of other parameters.
        LDPValueError
            No reports.
        """
        if not isinstance(aggregate, ColumnSums):
            raise LDPTypeError(f"expected ColumnSums, got {type(aggregate).__name__}")
        if aggregate.mechanism != self:
            raise IncompatibleError(f"column sums of {aggregate.mechanism!r} cannot be read by {self!r}")
        if aggregate.n == 0:
            raise LDPValueError("no reports: nothing to estimate")
        return aggregate

    def debias(self, aggregate):
        """Unbiased users per bit t̂ with plug-in variances (:class:`bfrrce.sums.Debiased`)."""
        agg = self.check_aggregate(aggregate)
        return debias(agg.counts, agg.n, self.p, self.q)

    def null_variance(self, n):
        """Var(t̂_j) of a column no user touched: n q(1 − q)/(p − q)² (the oracle's f = 0 variance)."""
        return null_variance(n, self.p, self.q)

    def detection_limit(self, n, levels=(0.5, 0.9)):
        """Users a value needs to be detected with each probability (:mod:`bfrrce.estimation.detection`).

        Raises
        ------
        LDPTypeError, LDPValueError
            ``n`` not an integer in [1, 2**53], or a level outside (0, 1).
        """
        n = check_int(n, "n", 1, MAX_REPORTS)
        levels = tuple(check_probability(level, "level") for level in levels)
        return detection_limit(n, self.p, self.q, self.l, levels)

    def estimate(self, aggregate, candidates=None, method="auto", confidence=0.95,
                 threshold=0.5, alpha=0.05):
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
        """
        if method not in METHODS:
            raise LDPValueError(f"method must be one of {METHODS}, got {method!r}")
        if not 0 < alpha < 1:
            raise LDPValueError(f"alpha must be in (0, 1), got {alpha!r}")
        if method == "auto":
            method = "fill" if candidates is None else "corrected"
        agg = self.check_aggregate(aggregate)
        deb = debias(agg.counts, agg.n, self.p, self.q)
        options = {}
        if method != "fill":
            if candidates is not None:
                candidates = check_value_batch(candidates, "candidates")
            if candidates is None or len(candidates) == 0:
                raise LDPValueError(f"method {method!r} needs a non-empty list of candidates")
            positions = self.bloom.positions(candidates)
            options = dict(positions=positions, multiplicity=self.bloom.column_counts(positions))
        est = estimate_cardinality(deb, method=method, counts=agg.counts, p=self.p, q=self.q,
                                   L=self.L, l=self.l, unit=self.unit, confidence=confidence,
                                   parameters=self.parameters, threshold=threshold, **options)
        if method == "corrected":
            est.details["detected"] = detected_candidates(deb, options["positions"], alpha)
        return est


def estimate_distinct(values, epsilon=2.0, rng=None, candidates=None, method="auto", **params):
    """Privatize every value as its own client would, aggregate, and estimate.

    ``params`` go to :class:`BFRRCE` (L, l, perturbation, unit, seed). ``rng=None`` uses the OS
    CSPRNG; pass a seed for a reproducible simulation.
    """
    mech = BFRRCE(epsilon=epsilon, **params)
    agg = mech.aggregate(mech.privatize(values, rng=rng))
    return mech.estimate(agg, candidates=candidates, method=method)
