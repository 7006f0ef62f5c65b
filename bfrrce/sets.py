"""Set sketches: the size of the union of parties' sets under per-item local differential privacy.

A party holds a set of items. Each item is hashed once (MurmurHash3 x86_32, seeded, on the
canonical key bytes of :mod:`protocols.core.hashing`); with B = 2^b buckets, the hash's low b bits
give the bucket and the number of trailing zeros of the remaining 32 − b bits the level
(level g with probability 2^-(g+1), the last level absorbing the tail). The item sets one cell
(bucket, level) of a B × G bit matrix, and every bit of the matrix is reported through per-bit
randomized response (1 with probability p if set, q if not). Adding or removing one item
changes at most one bit, from 0 to 1, so one report is ε-LDP per item with
ε = max(ln(p/q), ln((1 − q)/(1 − p))); a party holding k items gets k·ε (group privacy).

The server sums the cells over the k parties' reports (:class:`bfrrce.sums.ColumnSums`, exact
and mergeable). With N distinct items in the union, a cell of level g is empty with
probability e_g = (1 − π_g/B)^N, π_g the level's probability; its sum is
c ~ Binomial(m, p) + Binomial(k − m, q), m the number of parties holding an item in the cell
(m = 0 for an empty cell). :meth:`SetSketch.estimate` maximises over N the profile likelihood
Π_g Π_b [e_g·Pr[c | 0] + (1 − e_g)·Σ_m F_g(m)·Pr[c | m]], F_g the law of m in the occupied cells
of level g, profiled out per level (any overlap of the parties' sets); for one party F_g puts
all mass on m = 1 and this is the likelihood of Sketch-Flip-Merge. The interval is the
likelihood-ratio interval. See docs/sets.md.

References
----------
J. Hehir, D. Ting, G. Cormode, "Sketch-Flip-Merge: mergeable sketches for private distinct
counting", ICML 2023 (arXiv 2302.02056). P. Flajolet, G. N. Martin, "Probabilistic counting
algorithms for data base applications", JCSS 31(2), 1985 (the geometric levels).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from protocols.bits import packing as bits
from protocols.core.validation import check_epsilon, check_int, check_probability, check_set_batch
from protocols.core.calibration import sue_probabilities
from protocols.core.base import Mechanism
from protocols.errors import LDPTypeError, LDPValueError
from protocols.core.hashing import hash_keys
from protocols.core.lazy import optimize, special, stats
from protocols.core.randomness import RNG, generator, randomized_response_packed, source
from protocols.core.perturbation import bit_vector_distribution, simulate_column_sums

from .bloom import MAX_L
from .estimation import CardinalityEstimate
from .estimation.result import Count, identified
from .identity import batch_sums
from .nelder_mead import minimize_together, nelder_mead
from .poisoning import weight_pmf
from .set_bounds import union_bounds
from .sums import MAX_REPORTS, ColumnSums, check_column_sums

PERTURBATIONS = ("symmetric", "asymmetric")
HASH_BITS = 32
TINY_RATE = 1e-300       # λ_U = 0 read as this: its M >= 1 terms weigh e^-690 and less
SHARES = (0.0, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75)   # shares s of the union held by every party, coarse grid ...
COMMON_ITEMS = (1, 3, 10, 30, 100, 300, 1000)   # ... and numbers C of such items (s = C/N at each N)
SHAPES = (math.inf, 2.0, 0.5, 0.15)   # Gamma shapes κ of the party sizes (∞: equal sizes), coarse grid ...
RANK_EXPONENTS = (0.5, 1.0, 2.0)   # ... and exponents a of sizes ∝ rank^−a (stored as the shape −a)
SIZE_GROUPS = 32         # party sizes: this many slices of the population (k slices where k is smaller)
EXACT_RANKS = 64         # rank-law sizes: Σ j^−a exact up to this rank, Euler–Maclaurin beyond
REFINE_EVALUATIONS = 30  # Nelder–Mead evaluations per profile point beyond the nuisance grid
SEARCHED_AHEAD = 4       # grid points beyond each bracket of the interval searched in the same batch
THRESHOLD_SPREAD = 2e-3  # the threshold model checks the overlap model where a₁ is known this well
BIN_SIGMAS = 3           # sums of a level are grouped in bins of (noise sd)/3 (read at their mean)
EXACT_RATE = 4.0         # universe items per cell up to which the sum over M is exact ...
TERMS = np.arange(24)    # ... over M = 0..23 (beyond, a tail below e^-9 of the Poisson(4) mass)
HERMITE_NODES, _HW = np.polynomial.hermite_e.hermegauss(8)
LOG_HERMITE_WEIGHTS = np.log(_HW / _HW.sum())
GRID_POINTS = 24         # log N points of each profile grid
PRUNED_BELOW = 30.0      # coarse θ more than this below the profile at every point of the first window leave the grid
WINDOW_EXTENSIONS = 4    # times the last window is widened by half where its maximum is at an end
TABLES_KEPT = 32         # binomial tables of the overlap model kept per estimate (one per ρ)
HOLDERS = (2, 3, 5, 8)   # holders h of every private item, coarse grid of the exact-holders family ...
HOLDER_TERMS = 64        # ... exact over M = 0..63 items a cell ...
HOLDER_EXACT_RATE = 32.0  # ... up to this rate (Poisson(32) >= 64 has mass below 1e-7)
HOLDING_ROWS = 9 * (HOLDER_TERMS - 1) + 1   # laws of a cell's sum given m holders, in blocks of this many m
HOLDER_LOG_FACTORIALS = np.array([math.lgamma(m + 1.0) for m in range(HOLDER_TERMS)])   # ln M!
LOG_FACTORIALS = HOLDER_LOG_FACTORIALS[:TERMS.size]
UNDERFLOW = 1e-250       # a scaled sum over M below this is summed again in logarithms
LOG_NEGLIGIBLE = -700.0  # scaled log-terms below this are read as 0 (e^-700 < 10^-304 changes no sum
                         # above UNDERFLOW; exp and products are 10-80x slower where they underflow)


def item_probabilities(epsilon: float, perturbation: str) -> tuple[float, float]:
    """(p, q) spending exactly ``epsilon`` per item (one bit goes 0 → 1).

    * "symmetric": p = 1 − q = e^ε/(1 + e^ε); both log-ratios ln(p/q) and ln((1 − q)/(1 − p))
      equal ε. Binary randomized response is optimal for a binary input (Kairouz, Oh,
      Viswanath 2014): every other (p, q) of the budget has less Fisher information per cell
      at every fill (measured by ``python -m benchmarks.sets``).
    * "asymmetric": p = 1/2, q = e^{-ε}/2 (ln(p/q) = ε, ln((1 − q)/(1 − p)) = ln(2 − e^{-ε}) < ε),
      the OUE-like choice, for comparison.

    Parameters
    ----------
    epsilon : float
        Per-item budget, > 0.
    perturbation : {"symmetric", "asymmetric"}

    Returns
    -------
    (float, float)
        p and q.

    Raises
    ------
    LDPValueError
        An unknown perturbation, or ε so large that p or q rounds to 0 or 1.
    """
    if perturbation not in PERTURBATIONS:
        raise LDPValueError(f"perturbation must be one of {PERTURBATIONS}, got {perturbation!r}")
    p, q = sue_probabilities(2 * epsilon) if perturbation == "symmetric" else (0.5, 0.5 * math.exp(-epsilon))
    if not 0.0 < q < p < 1.0:
        raise LDPValueError(f"epsilon={epsilon!r} is too large: the flip probabilities round to 0 or 1 "
                            f"(p={p!r}, q={q!r})")
    return p, q


def level_probabilities(buckets: int, levels: int) -> np.ndarray:
    """π_g, the probability that an item lands in level g, g = 0..G − 1.

    The level is the number of trailing zeros of the r = 32 − log2(B) hash bits above the bucket,
    capped at G − 1 (and G − 1 when those bits are all zero): π_g = 2^-(g+1) for g < min(G − 1, r),
    0 for r <= g < G − 1, and the rest of the mass at the last level.

    Parameters
    ----------
    buckets, levels : int
        B (a power of two) and G.

    Returns
    -------
    numpy.ndarray
        float (G,), summing to 1.
    """
    r = HASH_BITS - (buckets.bit_length() - 1)
    g = np.arange(levels)
    pi = np.where(g < r, 0.5 ** (g + 1.0), 0.0)
    pi[-1] = 0.0
    pi[-1] = 1.0 - pi.sum()
    return pi


class SetEstimate(CardinalityEstimate):
    """The union's cardinality (a :class:`bfrrce.CardinalityEstimate`) with a printout for sets:
    ``interval`` is the likelihood-ratio interval, ``std_error`` the inverse observed
    information at the estimate.

    Attributes
    ----------
    value, std_error, interval, confidence
        As :class:`bfrrce.CardinalityEstimate`, for the number of distinct items in the union.
    """

    def __str__(self):
        lo, hi = self.interval
        par = self.parameters
        if "bounds_levels" in self.details:          # several parties, no model-free likelihood
            model = self.details["model_interval"]
            plus = f" ± {self.std_error:,.1f}" if identified(self.interval) else " (no ±: the bounds are wider than 2×)"
            lines = [(f"distinct items in the union of {par['parties']:,} parties' sets: between {lo:,.0f} and "
                      f"{hi:,.0f} ({100 * self.confidence:g}%, whatever the overlap)"),
                     (f"estimate {self.value:,.1f}{plus}, assuming the overlap model (common items, random "
                      f"holders, Gamma or rank-law party sizes), whose interval is [{model[0]:,.1f}, {model[1]:,.1f}]")]
            note = _set_aside(self.details["bounds_levels"])
            if note:
                lines.append(note)
        else:
            lines = [(f"distinct items in the union of {par['parties']:,} parties' sets: {self.value:,.1f} "
                      f"± {self.std_error:,.1f}"),
                     f"{100 * self.confidence:g}% interval: [{lo:,.1f}, {hi:,.1f}] ({self.assumption})"]
        lines += [(f"privacy: ε = {par['epsilon']:g} per item; a party holding k items gets k·ε "
                   "(group privacy)"),
                 "parameters: " + ", ".join(f"{k}={v}" for k, v in par.items())]
        return "\n".join(lines)


@dataclass(frozen=True, kw_only=True)
class SetSketch(Mechanism):
    """A B × G geometric-level bit sketch per party, every bit flipped: the union's size under
    per-item ε-LDP (docs/sets.md).

    Parameters
    ----------
    epsilon : float
        Per-item budget: one report is ε-LDP for the addition or removal of one item; a party
        holding k items gets k·ε (group privacy).
    buckets : int
        B, a power of two in [2, 2**24]. Default 4096.
    levels : int
        G >= 1, with B·G <= 2**24 bits. Default 24. Levels beyond 32 − log2(B) hash bits are never
        reached (π_g = 0) except the last.
    hash_seed : int
        Seed of the one MurmurHash3 hash, in [0, 2**32).
    perturbation : {"symmetric", "asymmetric"}
        The flip probabilities (:func:`item_probabilities`); "symmetric" (the default) has the
        lower variance at every fill.

    Attributes
    ----------
    L : int
        B·G, bits per report (cell j = g·B + b for bucket b of level g).
    p, q : float
        Pr[report bit 1 | cell set] and Pr[report bit 1 | cell not set].
    pi : numpy.ndarray
        Level probabilities π_g (:func:`level_probabilities`).

    Raises
    ------
    LDPTypeError, LDPValueError
        A parameter of the wrong type or out of range (B not a power of two, B·G > 2**24, an
        unknown perturbation, an ε that is not positive and finite or rounds p or q to 0 or 1).

    References
    ----------
    Hehir, Ting, Cormode, ICML 2023 (arXiv 2302.02056): the same sketch with symmetric flips.
    """

    epsilon: float
    buckets: int = 4096
    levels: int = 24
    hash_seed: int = 0
    perturbation: str = "symmetric"
    L: int = field(init=False, repr=False, compare=False)
    p: float = field(init=False, repr=False, compare=False)
    q: float = field(init=False, repr=False, compare=False)
    pi: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        buckets = check_int(self.buckets, "buckets", 2, MAX_L)
        if buckets & (buckets - 1):
            raise LDPValueError(f"buckets must be a power of two, got {buckets}")
        levels = check_int(self.levels, "levels", 1, MAX_L // buckets)
        seed = check_int(self.hash_seed, "hash_seed", 0, 2 ** 32 - 1)
        p, q = item_probabilities(eps, self.perturbation)
        for name, value in {"epsilon": eps, "buckets": buckets, "levels": levels, "hash_seed": seed, "L": buckets * levels,
                                "p": p, "q": q, "pi": level_probabilities(buckets, levels)}.items():
            object.__setattr__(self, name, value)

    @property
    def parameters(self) -> dict:
        """ε per item (6 digits), B, G, hash seed and perturbation, for reports."""
        return {"epsilon": round(self.epsilon, 6), "buckets": self.buckets, "levels": self.levels,
                "hash_seed": self.hash_seed, "perturbation": self.perturbation}

    @property
    def privacy(self) -> str:
        """The guarantee in words."""
        return (f"ε = {self.epsilon:g} per item (adding or removing one item changes at most one bit); "
                f"a party holding k items gets k·ε = {self.epsilon:g}·k")

    # -- client ---------------------------------------------------------------------------
    def cells(self, items: Collection) -> np.ndarray:
        """The cell of each item: g·B + b (int64, one per item, duplicates kept).

        Parameters
        ----------
        items : collection of bytes, str or int
            Canonical keys (:mod:`protocols.core.hashing`); a numpy array is hashed without a copy.

        Returns
        -------
        numpy.ndarray
            int64 (len(items),) in [0, L).

        Raises
        ------
        LDPTypeError
            A ``str``/``bytes`` passed as the whole collection, or an item without canonical bytes.
        """
        if isinstance(items, (str, bytes)) or not hasattr(items, "__len__"):
            raise LDPTypeError(f"items must be a collection of items, got {type(items).__name__}: "
                               f"{items!r:.80} (wrap one item as {{item}})")
        if len(items) == 0:
            return np.zeros(0, dtype=np.int64)
        if not isinstance(items, np.ndarray):
            items = list(items)
        h = hash_keys(items, [self.hash_seed])[:, 0]
        shift = self.buckets.bit_length() - 1
        rest = h >> np.uint32(shift)
        low = rest & (~rest + np.uint32(1))                   # lowest set bit (0 when rest = 0)
        level = np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1
        level = np.where(rest == 0, self.levels - 1, np.minimum(level, self.levels - 1))
        return level * self.buckets + (h & np.uint32(self.buckets - 1)).astype(np.int64)

    def privatize(self, items: Collection, rng: RNG = None) -> np.ndarray:
        """One party's report: its sketch with every bit flipped.

        Parameters
        ----------
        items : collection of bytes, str or int
            The party's items (set, list, tuple, 1-D array; may be empty; duplicates count once).
        rng : None, int, SeedSequence, Generator or SystemRandom
            None (clients): a ChaCha20 stream keyed from ``os.urandom``; seeds are for simulations.

        Returns
        -------
        numpy.ndarray
            uint8 (ceil(L/8),), little-endian bit order.

        Raises
        ------
        LDPTypeError
            As :meth:`cells`, or an ``rng`` of another type.
        """
        cells = self.cells(items)
        return randomized_response_packed(source(rng), (1, self.L), (np.zeros(cells.size, np.int64), cells),
                                          self.p, self.q)[0]

    def privatize_sets(self, sets: Sequence, rng: RNG = None) -> np.ndarray:
        """Reports of many parties at once, one row per party (as :meth:`privatize` each).

        Parameters
        ----------
        sets : sequence of collections
            One collection of items per party (:func:`bfrrce.mechanism.check_set_batch`).
        rng : None, int, SeedSequence, Generator or SystemRandom
            As :meth:`privatize`.

        Returns
        -------
        numpy.ndarray
            uint8 (len(sets), ceil(L/8)).

        Raises
        ------
        LDPTypeError, LDPValueError
            As :func:`check_set_batch` and :meth:`cells`; no sets.
        """
        sets = check_set_batch(sets)
        if len(sets) == 0:
            raise LDPValueError("sets is empty")
        rows, cells = self._party_cells(sets)
        return randomized_response_packed(source(rng), (len(sets), self.L), (rows, cells), self.p, self.q)

    def _party_cells(self, sets):
        """(party, cell) of every item of every set, sorted by party."""
        per = [self.cells(s) for s in sets]
        rows = np.repeat(np.arange(len(per)), [c.size for c in per])
        return rows, (np.concatenate(per) if per else np.zeros(0, np.int64))

    def output_distribution(self, items: Collection) -> dict[bytes, float]:
        """Exact Pr[report | set of items] over all 2^L reports, for privacy audits (L <= 16).

        Parameters
        ----------
        items : collection
            One party's items.

        Returns
        -------
        dict
            {packed report (bytes): probability}.

        Raises
        ------
        LDPValueError
            L > 16.
        """
        cells = np.zeros(self.L, dtype=bool)
        cells[self.cells(items)] = True
        return bit_vector_distribution(cells, self.p, self.q)

    # -- server ---------------------------------------------------------------------------
    def check_reports(self, reports: ArrayLike) -> np.ndarray:
        """``reports`` (one report, 1-D, or a batch, 2-D) as uint8 (n, ceil(L/8)).

        Parameters
        ----------
        reports : array_like
            uint8 packed reports with zero padding bits beyond bit L − 1.

        Returns
        -------
        numpy.ndarray
            The reports as a 2-D array (a view, never a copy of a 2-D input).

        Raises
        ------
        LDPTypeError
            A dtype other than uint8.
        IncompatibleError
            Another width, or padding bits set.
        """
        reports = np.asarray(reports)
        return bits.check_packed(reports[None] if reports.ndim == 1 else reports, self.L)

    def aggregate(self, reports: ArrayLike, *, label: bool = True) -> ColumnSums:
        """Cell sums (reports with bit j set) of one report or a batch of them.

        Parameters
        ----------
        reports : array_like
            Packed reports, validated by :meth:`check_reports` and never modified.
        label : bool
            Label the sums with the reports' content identifier and refuse duplicated reports
            (:func:`bfrrce.identity.batch_sums`); False skips both.

        Returns
        -------
        ColumnSums
            The L sums and n = the number of parties; merge with ``+``.

        Raises
        ------
        LDPTypeError, IncompatibleError
            As :meth:`check_reports`.
        """
        reports = self.check_reports(reports)
        return self.aggregate_batches([reports], label=label)

    def aggregate_batches(self, batches: Iterable[ArrayLike], *, label: bool = True, seeded: bool = False,
                          screen=None) -> ColumnSums:
        """Cell sums of an iterable of report batches, one running counter (O(L) memory).

        Parameters
        ----------
        batches : iterable of array_like
            Packed report batches, each validated by :meth:`check_reports` and not kept.
        label, seeded, screen
            As :func:`bfrrce.identity.batch_sums`.

        Returns
        -------
        ColumnSums
            The sums of all the batches' reports.
        """
        return batch_sums(self, batches, label=label, seeded=seeded, screen=screen)

    def empty_aggregate(self) -> ColumnSums:
        """The sums of no reports.

        Returns
        -------
        ColumnSums
            L zeros and n = 0: the neutral element of merging.
        """
        return ColumnSums(self, np.zeros(self.L, dtype=np.int64), 0)

    def occupancy(self, sets: Sequence, counts: ArrayLike | None = None) -> np.ndarray:
        """m_j, the number of parties holding an item in cell j (int64, L).

        Parameters
        ----------
        sets : sequence of collections
            Distinct party sets.
        counts : array_like of int, optional
            ``counts[i]`` parties hold ``sets[i]``; default one each.
        """
        sets = check_set_batch(sets)
        weights = np.ones(len(sets), np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
        if weights.shape != (len(sets),) or (weights < 0).any():
            raise LDPValueError(f"counts must be {len(sets)} non-negative integers, got {counts!r:.80}")
        rows, cells = self._party_cells(sets)
        key = np.unique(rows * self.L + cells)                # each party's cell once
        return np.bincount(key % self.L, weights=weights[key // self.L], minlength=self.L).astype(np.int64)

    def simulate(self, sets: Sequence, *, counts: ArrayLike | None = None, rng: RNG = None) -> ColumnSums:
        """Cell sums of the parties' reports drawn exactly in law, without reports:
        c_j ~ Binomial(m_j, p) + Binomial(k − m_j, q) (:meth:`occupancy`).

        Parameters
        ----------
        sets : sequence of collections
            Distinct party sets.
        counts : array_like of int, optional
            Parties holding each set; default one each.
        rng : None, int, SeedSequence, Generator or SystemRandom
            Seed of the simulation.
        """
        m = self.occupancy(sets, counts)
        k = len(sets) if counts is None else int(np.sum(counts))
        return self.sums_from_occupancy(m, k, rng)

    def sums_from_occupancy(self, occupancy: ArrayLike, parties: int, rng: RNG = None) -> ColumnSums:
        """Cell sums of ``parties`` reports given the occupant counts m_j, drawn exactly in law.

        Parameters
        ----------
        occupancy : array_like of int
            m_j in [0, parties], L of them.
        parties : int
            k, the number of reports, in [1, 2**53].
        rng : None, int, SeedSequence, Generator or SystemRandom
            Seed of the simulation.
        """
        k = check_int(parties, "parties", 1, MAX_REPORTS)
        m = np.asarray(occupancy, dtype=np.int64)
        if m.shape != (self.L,) or (m < 0).any() or (m > k).any():
            raise LDPValueError(f"occupancy must be {self.L} integers in [0, {k}]")
        return ColumnSums(self, simulate_column_sums(m, k, self.p, self.q, generator(rng)), k)

    def check_aggregate(self, aggregate: ColumnSums) -> ColumnSums:  # documented by Mechanism
        return check_column_sums(self, aggregate)

    def intersection(self, a: ColumnSums, b: ColumnSums, confidence: float = 0.95) -> SetEstimate:
        """|A ∩ B| of two parties from their reports' sums (docs/sets.md).

        The two reports give each cell a pair of bits (``(a + b)`` holds their merge). Poissonized, a cell of level g holds
        Poisson(λ) items of A \\ B, B \\ A and A ∩ B, λ = n·(−ln(1 − π_g/B)) for each part's size n,
        so its true pair is (0, 0) with probability e^{−(λ_a + λ_b + λ_c)}, and so on; each bit is
        then reported 1 with probability p if set, q if not. The maximum likelihood estimate of
        (n_a, n_b, n_c) from the counts of the four observed pairs per level, and the standard
        error of n̂_c = |A ∩ B| from the inverse observed information (the delta method on the
        joint likelihood: the dependence of |A|, |B| and |A ∪ B| is in it). The interval is
        n̂_c ± z·se clipped at 0; its coverage is measured by ``python -m benchmarks.sets``.

        Parameters
        ----------
        a, b : ColumnSums
            The sums of one report each (n = 1), of this sketch.
        confidence : float
            Level of the interval.

        Returns
        -------
        SetEstimate
            ``details`` holds |A|, |B|, |A ∪ B| (estimates of the same fit) and the fitted parts.

        Raises
        ------
        LDPValueError
            Sums of more than one report, or a confidence outside (0, 1).
        LDPTypeError, IncompatibleError
            As :meth:`check_aggregate`.
        """
        confidence = check_probability(confidence, "confidence")
        a, b = self.check_aggregate(a), self.check_aggregate(b)
        if a.n != 1 or b.n != 1:
            raise LDPValueError(f"intersection needs the sums of one report each, got n={a.n} and n={b.n}")
        pairs = (np.asarray(a.counts) + 2 * np.asarray(b.counts)).reshape(self.levels, self.buckets)
        observed = np.stack([(pairs == v).sum(axis=1) for v in range(4)], axis=1).astype(float)  # (G, 4)
        rate = -np.log1p(-self.pi / self.buckets)
        keep = np.array([[1 - self.q, 1 - self.p], [self.q, self.p]])       # keep[y, true bit]
        # Pr[observed pair y_a + 2 y_b | true pair t_a + 2 t_b]
        law = np.array([[keep[ya, ta] * keep[yb, tb] for ta, tb in ((0, 0), (1, 0), (0, 1), (1, 1))]
                        for ya, yb in ((0, 0), (1, 0), (0, 1), (1, 1))])

        def laws(sizes):
            """Pr[observed pair] per level (G, 4) and its derivatives in (n_a, n_b, n_c) (3, G, 4)."""
            e_a, e_b, e_c = (np.exp(-rate * s) for s in np.maximum(sizes, 0.0))
            t0 = e_a * e_b * e_c
            true = np.stack([t0, (1 - e_a) * e_b * e_c, e_a * (1 - e_b) * e_c, 1 - e_b * e_c - e_a * e_c + t0], 1)
            d = rate[:, None] * np.stack([
                np.stack([-t0, t0, -e_a * (1 - e_b) * e_c, e_a * e_c * (1 - e_b)], 1),
                np.stack([-t0, -(1 - e_a) * e_b * e_c, t0, e_b * e_c * (1 - e_a)], 1),
                np.stack([-true[:, 0], -true[:, 1], -true[:, 2], 1 - true[:, 3]], 1)])
            return np.maximum(true @ law.T, 1e-300), d @ law.T

        def nll(z):
            prob, grad = laws(z * scale)
            return -float(np.sum(observed * np.log(prob))), -np.einsum("gy,kgy->k", observed / prob, grad) * scale

        one_a, one_b = self.estimate(a).value, self.estimate(b).value
        low = min(one_a, one_b)
        starts = [np.array([one_a - f * low, one_b - f * low, f * low]) for f in (0.0, 0.5, 1.0)]
        scale = np.maximum(np.array([one_a, one_b, low]), 1.0)
        fits = [optimize.minimize(nll, x0 / scale, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * 3)
                for x0 in starts]
        sizes = np.maximum(min(fits, key=lambda f: f.fun).x * scale, 0.0)
        prob, grad = laws(sizes)                                    # expected information
        info = self.buckets * np.einsum("kgy,jgy->kj", grad, grad / prob)
        try:
            cov = np.linalg.inv(info)
            se = math.sqrt(max(cov[2, 2], 0.0))
        except np.linalg.LinAlgError:
            cov, se = None, math.inf
        z = stats.norm.ppf(0.5 + confidence / 2)
        value = float(sizes[2])
        interval = (max(0.0, value - z * se), value + z * se)
        details = {"a_only": float(sizes[0]), "b_only": float(sizes[1]), "size_a": float(sizes[0] + sizes[2]),
                   "size_b": float(sizes[1] + sizes[2]), "union": float(sizes.sum()), "covariance": cov,
                   "parties": 2}
        return SetEstimate(value=value, std_error=se, interval=interval, confidence=confidence,
                           assumption="joint likelihood of the two reports, delta-method interval",
                           visible=Count(value, se, interval, confidence), detection_limit={}, detection={},
                           method="intersection", parameters={**self.parameters, "parties": 2},
                           details=details)

    def fisher_information(self, union: float) -> float:
        """Fisher information about N of one party's report holding N items (the Cramér–Rao bound
        is its inverse): Σ_g B·(p − q)²·(de_g/dN)²/(r_g(1 − r_g)), r_g = q + (p − q)(1 − e_g).

        Parameters
        ----------
        union : float
            N > 0.

        Returns
        -------
        float
        """
        e, de = self._empty(np.atleast_1d(float(union)))
        r = self.q + (self.p - self.q) * (1 - e[0])
        return float(np.sum(self.buckets * (self.p - self.q) ** 2 * de[0] ** 2 / (r * (1 - r))))

    def _empty(self, union):
        """e_g(N) = (1 − π_g/B)^N and de_g/dN for every N of ``union`` (shape (len(union), G))."""
        log1m = np.log1p(-self.pi / self.buckets)
        e = np.exp(np.outer(union, log1m))
        return e, e * log1m

    def estimate_with_error(self, aggregate: ColumnSums, confidence: float = 0.95) -> SetEstimate:
        """:meth:`estimate`: the shared verb of every mechanism.

        Parameters
        ----------
        aggregate : ColumnSums
            Cell sums of this sketch's reports.
        confidence : float
            Level of the interval.

        Returns
        -------
        SetEstimate
            ``value``, ``std_error``, ``interval`` and ``confidence`` of the union's size.
        """
        return self.estimate(aggregate, confidence=confidence)

    def estimate(self, aggregate: ColumnSums, confidence: float = 0.95) -> SetEstimate:
        """The number of distinct items in the union of the parties' sets (docs/sets.md).

        The profile likelihood of N, maximised per level over the law F_g of the occupant
        counts of occupied cells (module docstring); for one party, the likelihood of
        Sketch-Flip-Merge. ``value`` is the maximum, ``interval`` the likelihood-ratio interval
        {N: 2(ℓ̂ − ℓ(N)) <= χ²₁(confidence)}, ``std_error`` the inverse observed information.

        Parameters
        ----------
        aggregate : ColumnSums
            Cell sums of this sketch's reports (k = aggregate.n parties).
        confidence : float
            Level of the interval, in (0, 1).

        Returns
        -------
        SetEstimate
            A :class:`bfrrce.CardinalityEstimate`; ``details`` holds the profile grid, the
            per-level empty fractions at the estimate and the number of EM steps.

        Raises
        ------
        LDPTypeError, IncompatibleError, LDPValueError
            As :meth:`check_aggregate`; a confidence outside (0, 1).
        """
        confidence = check_probability(confidence, "confidence")
        agg = self.check_aggregate(aggregate)
        counts = agg.counts.reshape(self.levels, self.buckets)
        value, se, interval, details = _Overlap(self, counts, agg.n).solve(_cut(confidence, agg.n, 2))
        details.update(model="overlap", **dict(zip(("shared", "holding", "size_shape", "holders"), details.pop("nuisance"))))
        assumption = "likelihood-ratio interval"
        threshold_model = _Threshold(self, counts, agg.n) if agg.n > 1 else None
        if threshold_model is not None and threshold_model.valid:       # a choice by (k, p, q) only
            check = threshold_model.solve(_cut(confidence, agg.n, 1))
            details["check"] = {"value": check[0], "std_error": check[1], "interval": check[2]}
            details["model_interval"], interval = interval, check[2]
            assumption = "likelihood-ratio interval of the threshold model, whatever the overlap"
            if not check[2][0] <= value <= check[2][1]:
                value, se, details = check[0], check[1], {**check[3], "model": "threshold", "overlap": details,
                                                          "model_interval": interval}
                assumption += " (the overlap model's estimate fell outside it)"
        elif agg.n > 1:
            low, high, levels = union_bounds(counts, agg.n, self.p, self.q, self.pi, (1 - confidence) / 2)
            details.update(model_interval=interval, bounds_levels=levels)
            interval, value = (float(low), float(high)), float(min(max(value, low), high))
            assumption = ("bounds whatever the overlap; the estimate and its ± assume the overlap model "
                          "(common items, random holders, Gamma or rank-law party sizes), whose interval is "
                          f"[{details['model_interval'][0]:,.1f}, {details['model_interval'][1]:,.1f}]")
            note = _set_aside(levels)
            if note:
                assumption += "; " + note
        params = {**self.parameters, "parties": agg.n}
        return SetEstimate(value=value, std_error=se, interval=interval, confidence=confidence,
                           assumption=assumption, visible=Count(value, se, interval, confidence), detection_limit={},
                           detection={}, method="profile-likelihood", parameters=params, details=details)


class _ProfileLikelihood:
    """ℓ(N) = max over a nuisance grid of ℓ(N, θ), maximised and inverted on zooming grids of
    log N; subclasses give ``loglik(union, *θ)``, ``nuisance()`` (a coarse grid of θ) and
    ``near(*θ)`` (a local grid), and may search off the grid (``minima``). A coarse θ whose ℓ
    lies more than ``PRUNED_BELOW`` below the profile at every point of the first window (which
    spans ℓ within χ² + 2 of its maximum) is left out of the later windows (a margin, not a
    bound: a later window widened beyond the first could favour it; the same estimates in the
    designs of ``tests/bfrrce/test_sets.py``). Grid points outside the last window keep their
    own best coarse θ, from which Nelder–Mead starts where they bracket the interval."""

    sketch: SetSketch
    k: int

    def minima(self, grid, points, indices) -> dict:
        """{j: the least −ℓ(N, θ) found off the grid at log N = grid[j] from θ = points[j]} for
        the j of ``indices`` (default: none, the profile stays as it is on the grid)."""
        return {}

    def resolved(self, point: tuple, log_union: float) -> tuple:
        """The nuisance θ of a grid ``point`` at log N = ``log_union`` (default: θ itself)."""
        return point

    def logliks(self, union: np.ndarray, grid: list) -> np.ndarray:
        """ℓ(N, θ) for every θ of ``grid`` (rows) and N of ``union`` (columns)."""
        return np.stack([self.loglik(union, *point) for point in grid])

    def profile(self, union: np.ndarray, grid: list) -> tuple[np.ndarray, np.ndarray]:
        """(max over the θ of ``grid`` of ℓ(N, θ), the index of the maximiser) at each N."""
        table = self.logliks(union, grid)
        best = table.argmax(axis=0)
        return table[best, np.arange(union.size)], best

    def solve(self, threshold: float):
        """(value, std_error, interval, details) from zooming grids of log N."""
        sk = self.sketch
        reach = np.flatnonzero(sk.pi > 0)
        top = math.log(sk.buckets / sk.pi[reach[-2] if reach.size > 1 else reach[-1]]) + math.log(64.0)
        grid = np.linspace(math.log(0.25), max(top, 2.0), GRID_POINTS)
        coarse = self.nuisance()
        ll, first = self.profile(np.exp(grid), coarse)
        zero = float(self.profile(np.zeros(1), coarse[:1])[0][0])
        window = _window(grid, ll, threshold)
        table = self.logliks(np.exp(window), coarse)
        which = table.argmax(axis=0)
        inner = table[which, np.arange(window.size)]
        best = int(np.argmax(inner))
        kept = [point for point, row in zip(coarse, table) if (row >= inner - PRUNED_BELOW).any()]
        nuisance = list(dict.fromkeys(kept + self.near(*self.resolved(coarse[which[best]], window[best]))))
        window = _window(np.concatenate([grid, window]), np.concatenate([ll, inner]), threshold)
        inner, which = self.profile(np.exp(window), nuisance)
        for _ in range(WINDOW_EXTENSIONS):    # a maximum at an end of the window: widen it that way
            edge = int(np.argmax(inner))
            end = window[0] if edge == 0 else window[-1]
            if 0 < edge < window.size - 1 or not grid[0] < end < grid[-1]:
                break
            span = (window[-1] - window[0]) / 2
            window = np.linspace(window[0] - span * (edge == 0), window[-1] + span * (edge > 0), GRID_POINTS)
            nuisance = list(dict.fromkeys(nuisance + self.near(*self.resolved(nuisance[which[edge]], window[edge]))))
            inner, which = self.profile(np.exp(window), nuisance)
        outside = (grid < window[0]) | (grid > window[-1])       # coarse points, their best coarse θ
        theta = [coarse[j] for j in first[outside]] + [nuisance[j] for j in which]
        grid = np.concatenate([grid[outside], window])
        order = np.argsort(grid)
        grid = grid[order]
        ll = np.concatenate([ll[outside], inner])[order]
        points = [self.resolved(theta[j], at) for j, at in zip(order, grid)]
        refined = ll >= ll.max() - threshold / 2 - 3.0
        band = np.flatnonzero(refined)          # searched with the points between and beyond it
        minima = self.minima(grid, points, _ahead(range(band[0], band[-1] + 1), refined, int(np.argmax(ll)), {}))
        ll = _lifted(ll, minima, refined)
        while True:                             # refine the grid points that bracket the crossings too
            i = int(np.argmax(ll))
            cut = max(ll[i], zero) - threshold / 2
            todo = np.zeros(grid.size, bool)
            for step in (-1, 1):
                j = i
                while 0 <= j + step < grid.size and ll[j + step] >= cut:
                    j += step
                if 0 <= j + step < grid.size and not refined[j + step]:
                    todo[j + step] = True
            if not todo.any():
                break
            missing = [j for j in np.flatnonzero(todo) if j not in minima]
            if missing:
                minima.update(self.minima(grid, points, _ahead(missing, refined | todo, i, minima)))
            ll, refined = _lifted(ll, minima, todo), refined | todo
        best = max(ll[i], zero)
        value = 0.0 if zero >= ll[i] else math.exp(_vertex(grid, ll, i))
        cut = best - threshold / 2
        lower = _crossing(grid, ll, i, cut, -1)
        upper = _crossing(grid, ll, i, cut, +1)
        lower = 0.0 if lower is None or zero >= cut else math.exp(lower)
        upper = math.inf if upper is None else math.exp(upper)
        curv = _curvature(grid, ll, i)
        if math.isfinite(upper):                   # the interval's half width in z units
            se = (upper - lower) / (2 * math.sqrt(threshold))
        else:
            se = value / math.sqrt(curv) if curv > 0 and value > 0 else math.inf
        details = {"log_union_grid": grid, "loglik": ll, "loglik_zero": zero, "nuisance": points[i], "empty_fraction": self.sketch._empty(np.array([value]))[0][0],
                   "parties": self.k}
        return value, float(se), (float(min(lower, value)), float(max(upper, value))), details



class _Overlap(_ProfileLikelihood):
    """The profile log-likelihood ℓ(N) = max over θ = (s, ρ, κ, h) of ℓ(N, θ), cell sums
    (levels × buckets) of k parties (docs/sets.md, "The estimator").

    A cell of level g holds Poisson(λ) union items, λ = −N ln(1 − π_g/B) (so that it is empty
    with probability (1 − π_g/B)^N). A share s of the union is held by every party; the rest
    comes from a universe of which each party holds every item independently with probability
    ρ (so the universe has rate λ_U = (1 − s)λ/(1 − (1 − ρ)^k)): given M universe items in the
    cell, each party holds one of them independently with probability 1 − (1 − ρ)^M. So
    Pr[c] = (1 − e^{−sλ})·Bin(c; k, p) + e^{−sλ}·Σ_M Pois(M; λ_U)·Bin(c; k, q + (p − q)(1 − (1 − ρ)^M)).
    ρ → 0 is disjoint sets of equal size (Bin(c; k, q + (p − q)(1 − e^{−(1−s)λ/k}))), ρ = 1 or
    s = 1 identical sets; for one party (s, ρ) do not matter and this is the likelihood of
    Sketch-Flip-Merge. The sum over M is exact for λ_U <= ``EXACT_RATE``, a Gauss–Hermite
    quadrature of its normal approximation above. With ρ = 0 the parties' sizes may differ
    (the size law κ: Gamma(κ) sizes, or for κ = −a < 0 sizes ∝ rank^−a, :func:`_held`); with
    h > 0 the private items (rate (1 − s)λ) are each held by exactly h parties drawn at random
    instead (:func:`_sum_given_items`).
    """

    def __init__(self, sketch: SetSketch, counts: np.ndarray, k: int):
        self.sketch, self.k = sketch, k
        # cells grouped by level and sum, sums within a level in bins of a third of the noise sd
        width = max(1, int(math.sqrt(k * sketch.q * (1 - sketch.q)) / BIN_SIGMAS))
        key = (np.arange(counts.shape[0])[:, None] * (k // width + 1) + counts // width).ravel()
        every = np.bincount(key)                                 # keys are small integers: no sort
        present = np.flatnonzero(every)
        lookup = np.zeros(every.size, np.intp)
        lookup[present] = np.arange(present.size)
        index, weight = lookup[key], every[present]
        self.level = present // (k // width + 1)                 # ascending: a level's sums are contiguous
        self.c = np.bincount(index, weights=counts.ravel().astype(float)) / weight   # mean sum per bin
        self.weight = weight.astype(float)
        self.rate = -np.log1p(-sketch.pi / sketch.buckets)   # λ per unit of N, per level
        edges = self.edges = np.searchsorted(self.level, np.arange(counts.shape[0] + 1))   # level g: bins edges[g]:edges[g + 1]
        self.levels = [(g, slice(a, b)) for g, (a, b) in enumerate(zip(edges[:-1], edges[1:])) if b > a]
        self.level_bins = np.diff(edges)                     # bins per level
        self._tables: dict = {}                               # _table's binomial tables per ρ
        self._holder_tables: dict = {}                        # _holders_table's per h
        self.common = self._log_binomial(sketch.p)            # log Bin(c; k, x) without log C(k, c)
        self.null = self._log_binomial(sketch.q)
        self.sums, self.sum_index = np.unique(self.c, return_inverse=True)   # distinct sums: few where width = 1
        self.top = self._log_binomial(np.clip(self.sums / k, sketch.q, sketch.p), self.sums)   # >= the table
        self.common_sums = self._log_binomial(sketch.p, self.sums)

    def _log_binomial(self, x, c=None):
        """log Bin(c; k, x) − log C(k, c), broadcast: x of shape (..., sums), c the bins' sums
        (default) or any other."""
        c = self.c if c is None else c
        return c * np.log(x) + (self.k - c) * np.log1p(-x)

    def _at_sums(self, per_level):
        """An (E, levels) array read at every bin's level: (E, bins), laid out column by column
        (a repeat of the transpose: the bins are grouped by level, in order)."""
        return np.repeat(per_level.T, self.level_bins, axis=0).T

    def _table(self, rho):
        """Per ρ (kept for the estimate) the table of :meth:`_poisson_mixture`
        (:meth:`_binomial_table` of that ρ alone)."""
        table = self._tables.get(rho)
        if table is None:
            if len(self._tables) >= TABLES_KEPT:
                self._tables.clear()
            entries, scaled, top, at_bins = self._binomial_table([rho])
            table = self._tables[rho] = (lambda rows, sums: entries(np.zeros_like(rows), sums), scaled[0], top, at_bins)
        return table

    def _binomial_table(self, rho):
        """The table of :meth:`_poisson_mixture` for one ρ per row of ``rho``: the entries
        log Bin(c; k, x_M) − log C(k, c) − ln M! = c·(ln x_M − ln(1 − x_M)) + k·ln(1 − x_M) − ln M!
        at the distinct sums, x_M = q + (p − q)(1 − (1 − ρ)^M), M = 0 … 23, and the common items'
        column (as :meth:`_mixture_table`), scaled by ``top`` (the entries' bound over x in [q, p],
        raised to the common column where it is larger) and exponentiated in one array
        (ρ × sums × 25). The entries themselves, needed only at the few sums whose product
        underflows, are a function of (rows, sums) that recomputes them by the same operations."""
        sk = self.sketch
        x = sk.q + (sk.p - sk.q) * -np.expm1(TERMS * np.array([math.log1p(-r) for r in rho])[:, None])
        slope, base = np.log(x) - np.log1p(-x), self.k * np.log1p(-x) - LOG_FACTORIALS
        top = np.maximum(self.top, self.common_sums)
        scaled = np.empty((len(rho), TERMS.size + 1, self.sums.size))    # sums last: contiguous loops
        np.multiply(slope[:, :, None], self.sums, out=scaled[:, :-1])
        scaled[:, :-1] += base[:, :, None]
        scaled[:, -1] = self.common_sums
        scaled -= top

        def entries(rows, sums):
            out = np.empty((rows.size, TERMS.size + 1))
            np.multiply(self.sums[sums][:, None], slope[rows], out=out[:, :-1])
            out[:, :-1] += base[rows]
            out[:, -1] = self.common_sums[sums]
            return out

        return entries, _exp_scaled(scaled).transpose(0, 2, 1), top, {}

    def _holders_table(self, holders):
        """Per h, the table of :meth:`_poisson_mixture`: log Pr[c | M items, each held by h
        parties drawn at random] − log C(k, c) − ln M! (:func:`_sum_given_items`, read linearly
        between the integers around each distinct sum; M = 0 … ``HOLDER_TERMS`` − 1), scaled by
        its maximum over M."""
        table = self._holder_tables.get(holders)
        if table is None:
            k = self.k
            law = _sum_given_items(k, holders, self.sketch.p, self.sketch.q, HOLDER_TERMS)   # (M, c = 0 … k)
            low = np.floor(self.sums).astype(int)
            frac = self.sums - low
            entries = law[:, low] * (1 - frac) + np.where(frac > 0, law[:, np.minimum(low + 1, k)], 0.0) * frac
            entries = entries.T - (special.gammaln(k + 1) - special.gammaln(self.sums + 1)
                                   - special.gammaln(k - self.sums + 1))[:, None] - HOLDER_LOG_FACTORIALS
            table = self._holder_tables[holders] = self._mixture_table(entries, entries.max(axis=1))
        return table

    def _mixture_table(self, entries, top):
        """A table of :meth:`_poisson_mixture` from log T_M(c) − ln M! at the distinct sums
        (sums × M) and a per-sum scale ``top``: (those entries and a last
        column, log Bin(c; k, p) − log C(k, c) of the common items, the same exponentiated
        relative to the scale (raised to that column where it is larger), the scale, and a dict
        for the scaled entries read at every bin, filled when a call needs them)."""
        entries = np.column_stack([entries, self.common_sums])
        top = np.maximum(top, self.common_sums)
        return entries, _exp_scaled(entries - top[:, None]), top, {}

    def _poisson_mixture(self, rate, shared, table, log_keep, exact_rate, by_row):
        """log[e^{−shared}·Σ_M Pois(M; rate)·T_M(c) + (1 − e^{−shared})·Bin(c; k, p)] (without
        log C(k, c)) at every (rate, shared) of (E, levels), for every sum: (E, sums), ``table``
        of :meth:`_table` or :meth:`_holders_table` (the common items, rate ``shared``, are its
        last column; its entries an array or a function of (rows, sums)), or
        :meth:`_binomial_table` of one ρ per row (scaled entries (E, sums, M + 1)); ``log_keep``
        one or one per row. Exact over its M where
        the rate is at most ``exact_rate`` (the Poisson mass beyond is below e^-9): the weights
        and the table, each scaled, in one matrix product per row over the distinct sums × levels
        (``by_row``: rows of one N each) or one per level over the bins (the few sums where the
        product underflows, below ``UNDERFLOW``, are summed in logarithms); above, a
        Gauss–Hermite quadrature of the normal approximation of the Poisson law, each party
        holding the cell with probability 1 − e^{M·log_keep} (:meth:`_quadrature`)."""
        entries, scaled, top, at_bins = table
        log_weight = np.empty((scaled.shape[-1],) + rate.shape)
        np.multiply.outer(np.arange(scaled.shape[-1] - 1), np.log(np.maximum(rate, TINY_RATE)), out=log_weight[:-1])
        log_weight[:-1] -= rate + shared
        with np.errstate(divide="ignore"):
            np.log(-np.expm1(-shared), out=log_weight[-1])
        weight_top = log_weight.max(axis=0)                                       # (M, E, levels) above
        weight = _exp_scaled(log_weight - weight_top)
        if by_row:
            total = np.matmul(scaled, np.ascontiguousarray(weight.transpose(1, 0, 2)))[:, self.sum_index, self.level]
        else:
            total = np.empty((rate.shape[0], self.c.size))
            bins = self._at_bins(scaled, at_bins)
            for g, sums in self.levels:
                np.matmul(bins[sums], weight[:, :, g], out=total[:, sums].T)
        with np.errstate(divide="ignore"):
            out = np.log(total)
        out += top[self.sum_index]
        out += self._at_sums(weight_top)
        cells = rate > exact_rate
        quadrature = self._at_sums(cells)
        underflow = total < UNDERFLOW
        underflow &= ~quadrature
        if underflow.any():
            rows, cols = np.nonzero(underflow)
            sums = self.sum_index[cols]
            at = entries(rows, sums) if callable(entries) else entries[sums]
            out[rows, cols] = _logsumexp(log_weight[:, rows, self.level[cols]] + at.T)
        if cells.any():                                              # the quadrature's entries only
            self._quadrature(rate, shared, np.broadcast_to(log_keep, cells.shape), cells, out)
        return out

    def _at_bins(self, scaled, at_bins):
        """A table's scaled entries read at every bin (bins, M + 1), kept in its dict once a call
        needs them."""
        bins = at_bins.get("scaled")
        if bins is None:
            bins = at_bins["scaled"] = scaled[self.sum_index]
        return bins

    def _quadrature(self, rate, shared, log_keep, cells, out):
        """The Gauss–Hermite sum of :meth:`_poisson_mixture`, written into ``out`` (E, bins) at
        the bins of each (row, level) where the (E, levels) mask ``cells`` holds, at Poisson
        rates ``rate``, common rates ``shared`` and ``log_keep`` (each (E, levels)): per node,
        x = q + (p − q)(1 − e^{M·log_keep}), M the nodes of the normal approximation of
        Poisson(rate), and the term c·ln(x/(1 − x)) + k·ln(1 − x) + ln(node weight) − shared;
        built level by level (its bins are contiguous, its rows broadcast against them) into
        one (nodes + 1, entries) array, summed in one :func:`_logsumexp` (so that each entry's
        sum runs in the same order whatever the other entries: a reduction over a single
        contiguous column is pairwise in numpy)."""
        sk = self.sketch
        blocks = [(g, np.flatnonzero(cells[:, g]), slice(self.edges[g], self.edges[g + 1]))
                  for g in np.flatnonzero(cells.any(axis=0))]
        terms = np.empty((HERMITE_NODES.size + 1, sum(rows.size * (b.stop - b.start) for _, rows, b in blocks)))
        start = 0
        for g, rows, bins in blocks:
            lam, common = rate[rows, g], shared[rows, g]
            x = sk.q + (sk.p - sk.q) * -np.expm1(np.maximum(lam + np.sqrt(lam) * HERMITE_NODES[:, None], 0.0)
                                                 * log_keep[rows, g])
            log_not = np.log1p(-x)                                          # (nodes, rows)
            block = np.empty((x.shape[0] + 1, rows.size, bins.stop - bins.start))
            np.multiply(self.c[bins], (np.log(x) - log_not)[:, :, None], out=block[:-1])
            block[:-1] += (self.k * log_not + (LOG_HERMITE_WEIGHTS[:, None] - common))[:, :, None]
            with np.errstate(divide="ignore"):
                block[-1] = np.log(-np.expm1(-common))[:, None] + self.common[bins]
            terms[:, start:start + block[0].size] = block.reshape(block.shape[0], -1)
            start += block[0].size
        total = _logsumexp(terms)
        start = 0
        for _, rows, bins in blocks:
            size = rows.size * (bins.stop - bins.start)
            out[rows, bins] = total[start:start + size].reshape(rows.size, -1)
            start += size

    def logliks(self, union: np.ndarray, grid: list) -> np.ndarray:
        """ℓ(N, θ) for every θ of ``grid`` (rows) and N of ``union`` (columns): one
        :meth:`loglik` per (ρ, κ, h), its shares stacked."""
        out = np.empty((len(grid), union.size))
        groups: dict = {}
        for row, point in enumerate(grid):
            groups.setdefault(point[1:], []).append(row)
        for others, rows in groups.items():
            shares = np.concatenate([_share(grid[row][0], union) for row in rows])
            out[rows] = self.loglik(np.tile(union, len(rows)), shares, *others).reshape(len(rows), union.size)
        return out

    def resolved(self, point: tuple, log_union: float) -> tuple:
        """θ with a grid point's common items C (a share −C, :meth:`nuisance`) read as the share
        C/N at log N = ``log_union``."""
        return (float(_share(point[0], np.exp([log_union]))[0]), *point[1:])

    def loglik(self, union: np.ndarray, share: float | np.ndarray, rho: float, shape: float = math.inf,
               holders: int = 0) -> np.ndarray:
        """ℓ(N, s, ρ, κ, h) at each N of ``union`` (any N >= 0), up to a constant, s one share
        or one per N; h > 0: the private items are each held by exactly h parties drawn at
        random (ρ, κ not used)."""
        return self._cell_logliks(union, share, [rho], [shape], holders, union.size == 1) @ self.weight

    def loglik_rows(self, union: np.ndarray, share, rho, shape, holders) -> np.ndarray:
        """ℓ(N_i, s_i, ρ_i, κ_i, h_i) for rows i of one N and one θ each (Nelder–Mead's points,
        evaluated together by family: each h, then ρ in (0, 1), ρ = 0 and ρ = 1). Each row's
        value is :meth:`loglik`'s at its N and θ alone to the last bit: the same operations,
        stacked (matrix products one per row)."""
        out = np.empty(union.size)
        families: dict = {}
        for i, (r, h) in enumerate(zip(rho, holders)):
            families.setdefault(("holders", h) if h else ("rho", 0.0 if r == 0 else 0.5 if r < 1 else 1.0), []).append(i)
        share, rho, shape = np.asarray(share, float), np.asarray(rho, float), np.asarray(shape, float)
        for (family, h), rows in families.items():
            cells = self._cell_logliks(union[rows], share[rows], rho[rows], shape[rows],
                                       h if family == "holders" else 0, True)
            out[rows] = np.matmul(np.ascontiguousarray(cells)[:, None, :], self.weight)[:, 0]
        return out

    def _cell_logliks(self, union, share, rho, shape, holders, by_row):
        """log Pr[c] (without log C(k, c)) of every bin at each N of ``union`` (E, bins): s one or
        one per N; ρ and κ one value, or one per N (``by_row``, all of one family: ρ in (0, 1),
        ρ = 0 or ρ = 1); ``by_row``: each N a row of its own (:meth:`_poisson_mixture`)."""
        sk, k = self.sketch, self.k
        lam = np.outer(union, self.rate)                         # (E, levels)
        share = np.reshape(share, (-1, 1))
        rest, shared = (1 - share) * lam, share * lam
        if holders:                                              # exactly h holders each, exact up to 31 items
            return self._poisson_mixture(rest, shared, self._holders_table(holders), math.log1p(-holders / k),
                                         HOLDER_EXACT_RATE, by_row)
        if 0 < rho[0] < 1:
            keep = np.array([math.log1p(-r) for r in rho])[:, None]
            within = np.array([-math.expm1(k * math.log1p(-r)) for r in rho])[:, None]
            table = self._table(rho[0]) if len(rho) == 1 else self._binomial_table(rho)
            return self._poisson_mixture(rest / within, shared, table, keep, EXACT_RATE, by_row)
        if rho[0] == 0:                                          # parties' sizes by their size law (_held), mean rest/k
            x = sk.q + (sk.p - sk.q) * _held(rest, k, shape)
            own = self.c * self._at_sums(np.log(x)) + (k - self.c) * self._at_sums(np.log1p(-x))
        else:
            with np.errstate(divide="ignore"):
                own = _logaddexp(self.null - self._at_sums(rest), self._at_sums(np.log(-np.expm1(-rest))) + self.common)
        if share.any():
            with np.errstate(divide="ignore"):
                common = np.log(-np.expm1(-shared))
            own = _logaddexp(self._at_sums(common) + self.common, own - self._at_sums(shared))
        return own

    def minima(self, grid, points, indices) -> dict:
        """Nelder–Mead over (s, log ρ), (s, 1/κ) or (s, a) (the size law's family fixed,
        :func:`_size_coordinate`) or s (h fixed) from each grid point's best
        (s, ρ, κ, h), ``REFINE_EVALUATIONS`` evaluations each, the searches side by side
        (:func:`bfrrce.nelder_mead.minimize_together`: one :meth:`loglik_rows` per step
        evaluates a point of each); none for one party."""
        if self.k == 1:
            return {}
        searches, thetas = {}, {}
        for j in indices:
            share, rho, shape, holders = points[j]
            inward = -0.05 if share > 0.5 else min(0.05, share or SHARES[1])   # inside s in [0, 1], of s's scale
            if holders:
                simplex = [[share], [share + inward]]

                def theta(x, h=holders):
                    return min(1.0, max(0.0, x[0])), 0.0, math.inf, h
            else:
                if rho > 0:
                    start = [share, math.log(rho)]

                    def theta(x):
                        return min(1.0, max(0.0, x[0])), min(1.0, math.exp(x[1])), math.inf, 0
                else:
                    start = [share, _size_coordinate(shape)]

                    def theta(x, rank=shape < 0):
                        return min(1.0, max(0.0, x[0])), 0.0, _size_law(x[1], rank), 0
                simplex = [start, [start[0] + inward, start[1]], [start[0], start[1] + 0.3]]
            searches[j], thetas[j] = nelder_mead(simplex, REFINE_EVALUATIONS), theta

        def evaluate(rows, xs):
            union = np.exp(grid[rows])
            return -self.loglik_rows(union, *zip(*(thetas[j](x) for j, x in zip(rows, xs))))
        return minimize_together(searches, evaluate)

    def nuisance(self) -> list:
        """The coarse grid of (s, ρ, κ, h), s a share or −C for C common items at every N
        (:func:`_share`: a few common items stand out at any N, so ℓ is sharp in s near C/N);
        one point for one party."""
        if self.k == 1:
            return [(0.0, 0.0, math.inf, 0)]
        rhos = sorted({0.0, 1.0, 0.2, min(1.0, 2 / self.k)})
        return [(1.0, 0.0, math.inf, 0)] + [(s, r, math.inf, 0) for s in SHARES for r in rhos] + \
            [(-common, 0.0, math.inf, 0) for common in COMMON_ITEMS] + \
            [(s, 0.0, kappa, 0) for s in (0.0, 0.25) for kappa in SHAPES[1:] + tuple(-a for a in RANK_EXPONENTS)] + \
            [(s, 0.0, math.inf, h) for s in (0.0, 0.25) for h in HOLDERS if h < self.k]

    def near(self, share, rho, shape, holders) -> list:
        """A local grid of (s, ρ, κ, h) around one point: shares around s, each with holding
        probabilities around ρ (or around 0 and 1/k) and with size laws around κ (Gamma shapes
        around equal sizes: a size law of the other family is reached from the coarse grid), or
        with holders h − 1, h, h + 1 (2 <= h < k)."""
        if self.k == 1:
            return []
        shares = sorted({min(1.0, max(0.0, share + d)) for d in (-0.15, -0.05, 0.0, 0.05, 0.15)}
                        | {share * f for f in (0.5, 0.7, 1.4, 2.0) if 0 < share < 0.05})
        if holders:
            return [(s, 0.0, math.inf, h) for s in shares for h in range(max(2, holders - 1), min(self.k - 1, holders + 1) + 1)]
        rhos = {min(1.0, rho * f) for f in (0.4, 0.7, 1.0, 1.4, 2.5)} if rho > 0 else {0.3 / self.k, 1 / self.k}
        shapes = (math.inf, 6.0, 2.0) if math.isinf(shape) else tuple(shape * f for f in (0.5, 0.75, 1.0, 1.4, 2.0))
        return [(s, r, math.inf, 0) for s in shares for r in sorted(rhos)] + \
            [(s, 0.0, kappa, 0) for s in shares for kappa in shapes]

class _Threshold(_ProfileLikelihood):
    """The likelihood of the cells whose sum reaches τ (τ = 1: the OR of the noisy bits, SFM's
    deterministic merge): ones_g ~ Binomial(B, a₀ + (a₁ − a₀)(1 − e_g(N))), a₀ = Pr[Binomial(k, q)
    >= τ] exact, a₁ = Pr[c >= τ | occupied] between its values for one and for all k holding
    parties (profiled). τ is the smallest with a₀ <= 1/2. ``valid`` where those two values differ
    by at most ``THRESHOLD_SPREAD`` (high ε: one holding party already reaches τ): then the model
    holds for any overlap and party sizes, and checks the overlap model."""

    def __init__(self, sketch: SetSketch, counts: np.ndarray, k: int):
        self.sketch, self.k = sketch, k
        tau = int(stats.binom.ppf(0.5, k, sketch.q)) + 1
        self.a0 = float(stats.binom.sf(tau - 1, k, sketch.q))
        laws = [weight_pmf(k, m, sketch.p, sketch.q) for m in (1, k)]        # the law of c given m
        self.low, self.high = (float(law[tau:].sum()) for law in laws)
        self.valid = self.high - self.low <= THRESHOLD_SPREAD
        self.ones = (counts >= tau).sum(axis=1).astype(float)
        self.log_rate = -np.log1p(-sketch.pi / sketch.buckets)
        self.tau = tau

    def loglik(self, union: np.ndarray, a1: float) -> np.ndarray:
        """ℓ(N, a₁) at each N of ``union``."""
        rate = self.a0 + (a1 - self.a0) * -np.expm1(-np.outer(union, self.log_rate))
        rate = np.clip(rate, 1e-300, 1 - 1e-16)
        return np.log(rate) @ self.ones + np.log1p(-rate) @ (self.sketch.buckets - self.ones)

    def nuisance(self) -> list:
        return [(a1,) for a1 in np.linspace(self.low, self.high, 5)]

    def near(self, a1) -> list:
        return []


def _share(share: float, union: np.ndarray) -> np.ndarray:
    """The share s at each N of ``union``: ``share`` itself, or where it is −C (C common items,
    :meth:`_Overlap.nuisance`) min(1, C/N)."""
    if share >= 0:
        return np.full(union.size, share)
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, -share / union)


def _set_aside(levels: dict) -> str:
    """The printout's note on levels whose bounds conflicted with others' (union_bounds): those
    whose lower bound, and those whose upper bound, was set aside as the failed one."""
    parts = [f"level(s) {', '.join(map(str, levels[key]))} set aside: their {side} bound was "
             f"{relation} other levels' {other} bound (one of the two failed)"
             for key, side, relation, other in (("conflicting_levels", "lower", "above", "upper"),
                                                ("failed_upper_levels", "upper", "below", "lower"))
             if levels.get(key)]
    return "; ".join(parts)


@functools.lru_cache(maxsize=64)
def _union_sizes(k: int, holders: int, terms: int) -> np.ndarray:
    """Pr[m | M] (M = 0 … terms − 1 rows, m = 0 … min(k, h·(terms − 1)) columns): the number m
    of distinct parties among k holding M items that are each held by h = ``holders`` parties
    drawn at random, a Markov chain whose step adds Hypergeometric(k, k − m, h) new parties,
    C(k − m, x)·C(m, h − x)/C(k, h) (scipy.special.comb: far faster than the distribution's pmf)."""
    top = min(k, holders * (terms - 1))
    held = np.arange(top + 1)
    new = np.arange(holders + 1)
    step = special.comb(k - held[:, None], new) * special.comb(held[:, None], holders - new) / special.comb(k, holders)
    law = np.zeros((terms, top + 1))
    law[0, 0] = 1.0
    for items in range(1, terms):
        for x in new:
            law[items, x:] += law[items - 1, :top + 1 - x] * step[:top + 1 - x, x]
    return law


@functools.lru_cache(maxsize=16)
def _sum_given_items(k: int, holders: int, p: float, q: float, terms: int) -> np.ndarray:
    """log Pr[c | M items in the cell, each held by h = ``holders`` parties drawn at random]
    for M = 0 … terms − 1 (rows) and c = 0 … k: Σ_m Pr[m | M]·Pr[c | m] (:func:`_union_sizes`,
    :func:`_sum_given_holding`), read as at least ``TINY_RATE`` (10^-300: sums this family
    cannot give, below e^-690 each)."""
    union = _union_sizes(k, holders, terms)
    rows = min(k + 1, HOLDING_ROWS * -(-union.shape[1] // HOLDING_ROWS))   # one table for every h it covers
    return np.log(np.maximum(union @ _sum_given_holding(k, p, q, rows)[:union.shape[1]], TINY_RATE))


@functools.lru_cache(maxsize=8)
def _sum_given_holding(k: int, p: float, q: float, rows: int) -> np.ndarray:
    """Pr[c | m of the k parties hold the cell] = Binomial(m, p) + Binomial(k − m, q) (the
    law of :func:`bfrrce.poisoning.weight_pmf`) for m = 0 … rows − 1 (rows) and c = 0 … k:
    both binomials by the recursion Bin(j + 1, x)(y) = (1 − x)·Bin(j, x)(y) + x·Bin(j, x)(y − 1)
    (sums of positive terms, exact to rounding), one convolution per m."""
    held = np.zeros((rows, rows))                       # Binomial(m, p) at 0 … m, row m
    held[0, 0] = 1.0
    for m in range(1, rows):
        held[m, :m] = held[m - 1, :m] * (1 - p)
        held[m, 1:m + 1] += held[m - 1, :m] * p
    law = np.empty((rows, k + 1))
    rest = stats.binom.pmf(np.arange(k - rows + 2), k - rows + 1, q)   # Binomial(k − m, q), from m = rows − 1 down
    for m in range(rows - 1, -1, -1):
        law[m] = np.convolve(held[m, :m + 1], rest)
        if m:
            rest = np.concatenate([rest * (1 - q), [0.0]]) + np.concatenate([[0.0], rest * q])
    return law


@functools.lru_cache(maxsize=64)
def _slice_sizes(shape: float, k: int) -> np.ndarray:
    """Relative sizes w (mean 1) of the equal slices of k parties of size law ``shape``
    (:func:`_slice_sizes_of` of one law, kept)."""
    return _slice_sizes_of(np.array([shape]), k)[0]


def _slice_sizes_of(shape: np.ndarray, k: int) -> np.ndarray:
    """Relative sizes w (mean 1) of min(k, ``SIZE_GROUPS``) equal slices of k parties, each its
    slice's mean, per size law of ``shape`` (rows). κ > 0: slices of equal probability of a Gamma(κ)
    population, w_j = groups·(F_{κ+1}(b_j) − F_{κ+1}(a_j)), (a_j, b_j) the Gamma(κ) quantiles
    (j − 1)/groups and j/groups (E[W·1{a < W <= b}] = F_{κ+1}(b) − F_{κ+1}(a) for W of mean
    1); κ = −a < 0: k parties of sizes ∝ rank^−a (:func:`_rank_sizes`). So w_j <= groups: the
    largest slice holds at most everything."""
    groups = min(k, SIZE_GROUPS)
    shape = shape[:, None]
    out = np.empty((shape.shape[0], groups))
    gamma = shape[:, 0] > 0
    if gamma.any():
        edges = special.gammaincinv(shape[gamma], np.arange(groups + 1) / groups)      # κ·(quantiles of W)
        out[gamma] = groups * np.diff(special.gammainc(shape[gamma] + 1, edges), axis=-1)
    if not gamma.all():
        out[~gamma] = _rank_sizes(groups, k, -shape[~gamma])
    return out


def _rank_sizes(groups: int, k: int, a: np.ndarray) -> np.ndarray:
    """Relative sizes (mean 1) of ``groups`` slices of k/groups parties of consecutive ranks,
    party j of size ∝ j^−a (a per row, shape (rows, 1)): slice g's share of
    H(x) = Σ_{j <= x} j^−a between x = k(g − 1)/groups and kg/groups, H read linearly between
    integers (a party split between two slices; exact where groups = k). H is summed up to
    ``EXACT_RANKS`` = m and beyond by Euler–Maclaurin, H(n) = H(m) + ∫_m^n t^−a dt +
    (n^−a − m^−a)/2 − a(n^−a−1 − m^−a−1)/12 + a(a + 1)(a + 2)(n^−a−3 − m^−a−3)/720 (the
    last term because a slice past rank m is a difference of two such sums, whose errors do not
    cancel; checked against the exact sums in tests/bfrrce/test_sets.py)."""
    edges = k * np.arange(groups + 1) / groups
    whole = np.floor(edges)
    m = float(EXACT_RANKS)
    exact = np.concatenate([np.zeros_like(a), np.cumsum(np.arange(1.0, m + 1) ** -a, axis=-1)], axis=-1)

    def cumulative(n):                                    # H at the integers n
        beyond = np.maximum(n, m)
        span = np.log(beyond / m)
        tail = (exact[:, -1:] + m ** (1 - a) * span * special.exprel((1 - a) * span)
                + (beyond ** -a - m ** -a) / 2 - a * (beyond ** (-a - 1) - m ** (-a - 1)) / 12
                + a * (a + 1) * (a + 2) * (beyond ** (-a - 3) - m ** (-a - 3)) / 720)
        inside = exact[:, np.minimum(n, m).astype(int)]
        return np.where(n <= m, inside, tail)

    low, high = cumulative(whole), cumulative(whole + 1)
    share = np.diff(low + (edges - whole) * (high - low), axis=-1)
    return share / share.mean(axis=-1, keepdims=True)


def _size_coordinate(shape: float) -> float:
    """The Nelder–Mead coordinate of a size law within its family: 1/κ for Gamma(κ) sizes (0 for
    equal sizes, κ = ∞), a for sizes ∝ rank^−a (``shape`` −a)."""
    return -shape if shape < 0 else 0.0 if math.isinf(shape) else 1 / shape


def _size_law(t: float, rank: bool) -> float:
    """The size law at coordinate t of its family (:func:`_size_coordinate`; t <= 0: equal)."""
    if t <= 1e-9:
        return math.inf
    return -t if rank else 1 / t


def _held(rest: np.ndarray, k: int, shape) -> np.ndarray:
    """The mean over k parties of Pr[a party holds an item of a cell] where disjoint private
    items (rate ``rest`` per cell) are spread over parties of fixed relative sizes w_j:
    mean_j (1 − e^{−rest·w_j/k}), w the mean sizes of ``SIZE_GROUPS`` equal slices of the
    parties under the size law κ (:func:`_slice_sizes`: Gamma(κ), or ∝ rank^−a for κ = −a;
    κ = ∞: equal sizes, 1 − e^{−rest/k}); κ one value or a sequence of one per row of ``rest``. The sizes are the parties' own, the same
    in every cell, so however unequal they are, the mean number of holders of a cell is at
    least 1 − e^{−rest} (1 − e^{−x} is subadditive and Σ_j w_j/k = 1): the unseen items this
    family can add are bounded (a size drawn anew per cell, 1 − (1 + rest/(kκ))^{−κ}, let
    κ → 0 hide any number)."""
    shape = np.asarray(shape, float)
    if shape.size == 1:                  # one κ for every row: its slices kept (_slice_sizes)
        kappa = float(shape.ravel()[0])
        if math.isinf(kappa):
            return -np.expm1(-rest / k)
        return _mean_held(rest, _slice_sizes(kappa, k), k)
    finite = np.isfinite(shape)
    out = -np.expm1(-rest / k)
    if finite.any():
        out[finite] = _mean_held(rest[finite], _slice_sizes_of(shape[finite], k)[:, None, :], k)
    return out


def _mean_held(rest: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """mean_j (1 − e^{−rest·w_j/k}) over the last axis of the slice sizes ``w`` (broadcast
    against ``rest`` with a last axis added)."""
    return -np.expm1(rest[..., None] * (-w / k)).mean(axis=-1)


def _cut(confidence: float, parties: int, nuisance: int) -> float:
    """The likelihood-ratio threshold: χ²₁(confidence) for one party (no nuisance), else
    χ²_{1+d}(confidence) with d = ``nuisance``, the parameters profiled beside N. At the truth
    the fitted nuisance often sits on the boundary of its range (s = 1 for identical sets,
    ρ = 0 for disjoint ones) while a larger N can add items that no party's sum shows (held by
    few of many parties), so the statistic is a mixture of χ²₁ … χ²_{1+d} (Self & Liang, JASA
    82(398), 1987), which χ²_{1+d} bounds (docs/sets.md says what χ²₁ gave)."""
    return float(stats.chi2.ppf(confidence, 1 if parties == 1 else 1 + nuisance))


def _window(grid, ll, threshold):
    """GRID_POINTS log N points spanning where ℓ is within threshold + 2 of its maximum (and
    one grid step beyond)."""
    order = np.argsort(grid)
    grid, ll = grid[order], ll[order]
    inside = np.flatnonzero(ll >= ll.max() - threshold - 2.0)
    return np.linspace(grid[max(inside[0] - 1, 0)], grid[min(inside[-1] + 1, grid.size - 1)], GRID_POINTS)


def _logaddexp(a, b):
    """np.logaddexp(a, b) to rounding (absolute error below 3·10^-16 beyond the max), in steps
    numpy vectorises (its own loop and log1p call libm one element at a time):
    max(a, b) + ln(1 + e^{−|a − b|}), the gap read as at most ``−LOG_NEGLIGIBLE`` (e^-700 adds
    nothing to the max, and exp is slow where it underflows), −∞ where both are −∞ (``a`` is
    overwritten: callers pass temporaries)."""
    top = np.maximum(a, b)
    np.minimum(a, b, out=a)
    with np.errstate(invalid="ignore"):
        a -= top                             # −|a − b|, NaN where both are −∞ (then the widest gap)
    np.fmax(a, LOG_NEGLIGIBLE, out=a)
    np.exp(a, out=a)
    a += 1.0
    np.log(a, out=a)
    a += top
    return a


def _logsumexp(a):
    """log Σ exp over the first axis, the terms (reductions over it are elementwise across
    contiguous slices; ``a`` is overwritten: callers pass temporaries). Terms scaled by their
    largest are read as at least ``LOG_NEGLIGIBLE``: e^-700 adds nothing to a sum >= 1, and exp
    is slow where it underflows."""
    top = a.max(axis=0)
    a -= top
    np.maximum(a, LOG_NEGLIGIBLE, out=a)
    total = np.exp(a, out=a).sum(axis=0)
    np.log(total, out=total)
    total += top
    return total


def _exp_scaled(a):
    """e^a in place for log-terms scaled to at most 0 by their largest (or a bound), 0 below
    ``LOG_NEGLIGIBLE`` (``a`` is overwritten: callers pass temporaries)."""
    if a.min() >= LOG_NEGLIGIBLE:
        return np.exp(a, out=a)
    kept = a >= LOG_NEGLIGIBLE
    np.maximum(a, LOG_NEGLIGIBLE, out=a)       # exp's fast range
    np.exp(a, out=a)
    a *= kept
    return a


def _ahead(indices, done, centre, known):
    """The grid indices of ``indices`` and, beyond each away from index ``centre``, the next
    ``SEARCHED_AHEAD`` that are not ``done`` (a mask), less those in ``known``: the points the
    crossing search of :meth:`_ProfileLikelihood.solve` may ask for next (each refined point
    lifts ℓ, and where it rises above the cut the next point out brackets the crossing),
    searched in the same batch."""
    out = set(int(j) for j in indices)
    for j in indices:
        step = -1 if j < centre else 1
        out.update(t for t in range(j + step, j + step * (SEARCHED_AHEAD + 1), step)
                   if 0 <= t < done.size and not done[t])
    return sorted(out - set(known))


def _lifted(ll, minima, where):
    """ℓ raised to the searches' maxima −minima[j] at the indices where ``where`` holds."""
    out = ll.copy()
    for j in np.flatnonzero(where):
        if j in minima:
            out[j] = max(out[j], -minima[j])
    return out


def _vertex(grid, ll, i):
    """The maximum of the parabola through the grid points around index i (log N)."""
    if i == 0 or i == grid.size - 1:
        return grid[i]
    x, y = grid[i - 1:i + 2], ll[i - 1:i + 2]
    a, b, _ = np.polyfit(x - x[1], y, 2)
    return float(x[1] - b / (2 * a)) if a < 0 else float(x[1])


def _curvature(grid, ll, i):
    """−d²ℓ/d(log N)² at grid index i (0 at an end)."""
    if i == 0 or i == grid.size - 1:
        return 0.0
    x, y = grid[i - 1:i + 2], ll[i - 1:i + 2]
    return float(-2 * np.polyfit(x - x[1], y, 2)[0])


def _crossing(grid, ll, i, level, direction):
    """log N where ℓ falls below ``level`` for the last time beyond index i in ``direction``
    (linear interpolation from the outermost grid point at or above it), None when the end of
    the grid is at or above it: the hull of {N : ℓ(N) >= level}, so a profile point left below
    its maximum inside the set cannot cut the interval short."""
    above = np.flatnonzero(ll >= level)
    j = int(above.max() if direction > 0 else above.min()) if above.size else i
    k = j + direction
    if not 0 <= k < grid.size:
        return None
    t = (ll[j] - level) / (ll[j] - ll[k])
    return float(grid[j] + t * (grid[k] - grid[j]))
