"""Multi-dimensional range queries under LDP: HIO (Wang et al., SIGMOD 2019) and a per-attribute
baseline.

A table has k attributes; attribute j takes integer values in [0, m_j), ordinal (range
predicates) or categorical (point predicates). A query asks

    COUNT(*) or SUM(w)  WHERE  a_1 ∈ [lo_1, hi_1]  AND  a_2 ∈ [lo_2, hi_2]  AND …

(an attribute left out, or given as None, is unconstrained; a categorical predicate is lo = hi).

**HIO** (hierarchical-interval optimized). Each ordinal attribute has a b-adic hierarchy of
intervals: level 0 is the whole domain, level ℓ splits it into intervals of width b^(h − ℓ),
h = ⌈log_b m⌉ (level h: single values); a categorical attribute has two levels (all, one
value). A *layer* picks one level per attribute, and its *cells* are the products of the
intervals at those levels. Every user is assigned to one layer uniformly at random (the
all-root layer, whose count is n, is skipped) and reports the cell holding its row through a
frequency oracle over that layer's cells, at the full ε: one report per user, ε-LDP (the layer
does not depend on the data). A range on one attribute is the disjoint union of at most
2(b − 1) intervals per level (the b-adic decomposition); a query's answer is the sum, over the
product of its attributes' decompositions, of the cells' estimated counts, each scaled from its
layer's n_ℓ users to the population (n/n_ℓ): unbiased, with variance the sum of the cells'
(cells of different layers are independent; within a layer, GRR's exact set variance, and for
OLH and Hadamard response the sum of the cells' variances — their supports of distinct values
are uncorrelated under pairwise-independent hashing / orthogonal Hadamard rows).

The oracle of a layer is the one of GRR, OLH (layers of at most 256 cells: its server cost is
O(n_ℓ·cells)) and Hadamard response (O(n_ℓ + K log K)) with the smallest variance at f = 0.

**SUM(w)** with weights w ∈ [0, 1] (``measure=True``): a user reports its cell with probability
w and an extra "null" cell otherwise (stochastic rounding of w to a bit, then the same
oracle): the expected count of a cell is Σ w over its users, so the same estimator answers SUM.

**Consistency** (``consistency="norm_sub"``): each layer's cell estimates are projected onto
the non-negative vectors summing to n (Norm-Sub, Wang et al., NDSS 2020) before the query sums
them: lower error, no longer unbiased (no variance is reported then).

**Per-attribute baseline** (:class:`PerAttribute`): every user reports one attribute, chosen
uniformly, through that attribute's one-dimensional HIO; a conjunction is answered as
n·Π_j f̂_j(P_j), the product of the marginal fractions — what a collector of separate marginals
can do, biased whenever the attributes are correlated.

References
----------
T. Wang, B. Ding, J. Zhou, C. Hong, Z. Huang, N. Li, S. Jha, "Answering Multi-Dimensional
Analytical Queries under Local Differential Privacy", SIGMOD 2019 (HIO); T. Wang, J. Blocki,
N. Li, S. Jha, USENIX Security 2017 (the oracles); M. Hay, V. Rastogi, G. Miklau, D. Suciu,
VLDB 2010 (hierarchical intervals).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_epsilon, check_int
from protocols.core.base import RNG, Estimate, Mechanism
from protocols.consistency import norm_sub
from protocols.errors import IncompatibleError, LDPTypeError, LDPValueError
from protocols.oracles.grr import GRR
from protocols.oracles.hadamard import HadamardResponse
from protocols.oracles.local_hashing import OLH
from protocols.core.randomness import generator, integers, source

OLH_MAX_CELLS = 256         # OLH's server cost is O(users × cells): beyond, GRR or Hadamard response
CONSISTENCY = (None, "norm_sub")


def _oracle(epsilon, cells):
    """The oracle with the smallest variance at f = 0 for a layer of ``cells`` outputs."""
    options = [GRR(epsilon=epsilon, d=cells), HadamardResponse(epsilon=epsilon, d=cells)]
    if cells <= OLH_MAX_CELLS:
        options.append(OLH(epsilon=epsilon, d=cells))
    return min(options, key=lambda oracle: oracle.variance(1))


@dataclass(frozen=True)
class Hierarchy:
    """The b-adic intervals of one attribute: ``widths[ℓ]`` and ``sizes[ℓ]`` (intervals) per level.

    Attributes
    ----------
    domain : int
        Values of the attribute.
    ordinal : bool
        Ordered values (intervals) or categories (one level).
    """

    domain: int
    ordinal: bool
    branching: int
    widths: tuple = field(init=False)
    sizes: tuple = field(init=False)

    def __post_init__(self):
        if self.ordinal:
            height = max(1, math.ceil(math.log(self.domain, self.branching) - 1e-12))
            widths = tuple(self.branching ** (height - level) for level in range(height + 1))
        else:
            widths = (self.domain, 1)
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "sizes", tuple(-(-self.domain // w) for w in widths))

    def decompose(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """The fewest (level, index) intervals whose disjoint union is [lo, hi] (clipped to the domain)."""
        out, stack = [], [(0, 0)]
        while stack:
            level, index = stack.pop()
            start = index * self.widths[level]
            stop = min(start + self.widths[level], self.domain) - 1
            if stop < lo or start > hi:
                continue
            if lo <= start and stop <= hi:
                out.append((level, index))
            else:
                b = self.widths[level] // self.widths[level + 1]
                stack.extend((level + 1, index * b + c) for c in range(b))
        return sorted(out)


class HIOReports(NamedTuple):
    """A batch of HIO reports, grouped by layer: ``reports[i]`` are the oracle reports of the
    users assigned to layer ``i`` (the order of users within the batch is not kept)."""

    reports: tuple


@dataclass(frozen=True, eq=False)
class LayerCounts:
    """Mergeable aggregate of HIO: the oracle support counts of every layer.

    Parameters
    ----------
    mechanism : HIO
        The mechanism whose reports were aggregated.
    layers : tuple of SupportCounts
        One aggregate per layer, of that layer's oracle.
    """

    mechanism: Mechanism
    layers: tuple

    @property
    def n(self) -> int:
        """Reports aggregated."""
        return sum(layer.n for layer in self.layers)

    def merge(self, other: LayerCounts) -> LayerCounts:
        """The aggregate of both batches (layer-wise exact integer addition).

        Parameters
        ----------
        other : LayerCounts
            An aggregate of the same mechanism.

        Returns
        -------
        LayerCounts

        Raises
        ------
        LDPTypeError, IncompatibleError
            Another type, or another mechanism.
        """
        if not isinstance(other, LayerCounts):
            raise LDPTypeError(f"can only merge LayerCounts, got {type(other).__name__}")
        if other.mechanism != self.mechanism:
            raise IncompatibleError(f"cannot merge aggregates of {self.mechanism!r} and {other.mechanism!r}")
        return LayerCounts(self.mechanism, tuple(a.merge(b) for a, b in zip(self.layers, other.layers)))

    __add__ = merge

    def __eq__(self, other):
        return (isinstance(other, LayerCounts) and other.mechanism == self.mechanism
                and all(a == b for a, b in zip(self.layers, other.layers)))

    __hash__ = None


def _check_rows(rows, domains):
    arr = np.asarray(rows)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise LDPTypeError(f"rows must be integers, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != len(domains) or arr.shape[0] == 0:
        raise LDPValueError(f"rows must be a non-empty (n, {len(domains)}) array, got shape {arr.shape}")
    bad = (arr < 0) | (arr >= np.asarray(domains))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise LDPValueError(f"row {i}: attribute {j} = {arr[i, j]} outside [0, {domains[j]})")
    return arr.astype(np.int64)


def _check_weights(weights, n):
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or not np.all((w >= 0) & (w <= 1)):
        raise LDPValueError(f"weights must be {n} numbers in [0, 1], got shape {w.shape}")
    return w


@dataclass(frozen=True, kw_only=True)
class HIO(Mechanism):
    """Hierarchical-interval optimized range queries over k attributes (module docstring).

    Parameters
    ----------
    epsilon : float
        ε of each user's one report (ε-LDP, tight: the oracle's).
    domains : tuple of int
        m_j >= 2 per attribute.
    ordinal : tuple of bool, optional
        Which attributes are ordinal (range predicates); default all.
    branching : int
        Fan-out b >= 2 of the ordinal hierarchies (the paper's default region is 4–5).
    measure : bool
        Reports answer SUM(w) (weights in [0, 1] given to :meth:`privatize`) instead of COUNT.

    Attributes
    ----------
    hierarchies : tuple of Hierarchy
        One per attribute.
    layers : tuple of tuple of int
        The level of each attribute in every layer (the all-root layer excluded).
    oracles : tuple of FrequencyOracle
        The oracle of every layer, over its cells (+1 null cell with ``measure``).

    References
    ----------
    T. Wang et al., "Answering Multi-Dimensional Analytical Queries under Local Differential
    Privacy", SIGMOD 2019, Section 4.
    """

    epsilon: float
    domains: tuple
    ordinal: tuple | None = None
    branching: int = 4
    measure: bool = False
    hierarchies: tuple = field(init=False, repr=False)
    layers: tuple = field(init=False, repr=False)
    oracles: tuple = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.epsilon)
        domains = tuple(check_int(m, "domains", 2) for m in self.domains)
        if not domains:
            raise LDPValueError("domains must name at least one attribute")
        ordinal = (True,) * len(domains) if self.ordinal is None else tuple(bool(o) for o in self.ordinal)
        if len(ordinal) != len(domains):
            raise LDPValueError(f"ordinal must have one flag per attribute ({len(domains)}), got {len(ordinal)}")
        b = check_int(self.branching, "branching", 2)
        hier = tuple(Hierarchy(m, o, b) for m, o in zip(domains, ordinal))
        layers = tuple(levels for levels in itertools.product(*(range(len(h.widths)) for h in hier))
                       if any(levels))
        extra = int(bool(self.measure))
        oracles = tuple(_oracle(eps, self._cells(hier, levels) + extra) for levels in layers)
        for name, value in (("epsilon", eps), ("domains", domains), ("ordinal", ordinal), ("branching", b),
                            ("measure", bool(self.measure)), ("hierarchies", hier), ("layers", layers),
                            ("oracles", oracles)):
            object.__setattr__(self, name, value)

    @staticmethod
    def _cells(hier, levels):
        return math.prod(h.sizes[level] for h, level in zip(hier, levels))

    def cell_index(self, rows: np.ndarray, layer: int) -> np.ndarray:
        """Mixed-radix index of each row's cell in ``layer`` (attribute 0 most significant).

        Parameters
        ----------
        rows : numpy.ndarray
            int64 (n, k) rows.
        layer : int
            Index into :attr:`layers`.

        Returns
        -------
        numpy.ndarray
            int64 (n,) cell indices.
        """
        index = np.zeros(len(rows), dtype=np.int64)
        for j, (h, level) in enumerate(zip(self.hierarchies, self.layers[layer])):
            index = index * h.sizes[level] + rows[:, j] // h.widths[level]
        return index

    def _encoded(self, rows, layer, weights):
        cells = self.cell_index(rows, layer)
        if weights is None:
            return cells
        return np.where(weights, cells, self.oracles[layer].d - 1)      # the null cell

    def _grouped(self, rows, weights, rng):
        """Rows (and rounded weights) grouped by a uniformly drawn layer."""
        rows = _check_rows(rows, self.domains)
        if self.measure != (weights is not None):
            raise LDPValueError("weights go with measure=True (SUM) and only with it")
        src = source(rng)
        if weights is not None:
            w = _check_weights(weights, len(rows))
            uniform = (np.frombuffer(src.bytes(8 * len(rows)), dtype="<u8") >> np.uint64(11)) * 2.0 ** -53
            weights = uniform < w                   # Pr = w, to 2^-53
        layer = integers(src, len(self.layers), len(rows))
        order = np.argsort(layer, kind="stable")
        bounds = np.searchsorted(layer[order], np.arange(len(self.layers) + 1))
        for i in range(len(self.layers)):
            take = order[bounds[i]:bounds[i + 1]]
            yield i, rows[take], None if weights is None else weights[take], src

    def privatize(self, rows: ArrayLike, rng: RNG = None, *, weights: ArrayLike | None = None) -> HIOReports:
        """One report per row: a uniformly drawn layer and its oracle's report of the row's cell.

        Parameters
        ----------
        rows : array_like of int
            (n, k) rows, attribute j in [0, m_j).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.
        weights : array_like of float, optional
            With ``measure=True``: each row's weight in [0, 1] (rounded to a bit at random).

        Returns
        -------
        HIOReports
            The reports grouped by layer.

        Raises
        ------
        LDPTypeError, LDPValueError
            Rows that are not integers of the domains, or weights with(out) ``measure``.
        """
        out = []
        for i, part, w, src in self._grouped(rows, weights, rng):
            oracle = self.oracles[i]
            out.append(oracle.perturb(self._encoded(part, i, w), src) if len(part) else
                       np.empty((0, 2), dtype=np.uint64) if isinstance(oracle, OLH) else np.empty(0, dtype=np.int64))
        return HIOReports(tuple(out))

    def check_reports(self, reports: HIOReports) -> HIOReports:
        if not isinstance(reports, HIOReports):
            raise LDPTypeError(f"expected HIOReports, got {type(reports).__name__}")
        if len(reports.reports) != len(self.layers):
            raise IncompatibleError(f"reports of {len(reports.reports)} layers, this mechanism has {len(self.layers)}")
        for oracle, part in zip(self.oracles, reports.reports):
            oracle.check_reports(part)
        return reports

    def aggregate(self, reports: HIOReports) -> LayerCounts:
        reports = self.check_reports(reports)
        return LayerCounts(self, tuple(o.aggregate(r) for o, r in zip(self.oracles, reports.reports)))

    def empty_aggregate(self) -> LayerCounts:
        """The aggregate of no reports.

        Returns
        -------
        LayerCounts
            Zero counts in every layer: the neutral element of ``merge``.
        """
        return LayerCounts(self, tuple(o.empty_aggregate() for o in self.oracles))

    def check_aggregate(self, aggregate: LayerCounts) -> LayerCounts:
        if not isinstance(aggregate, LayerCounts):
            raise LDPTypeError(f"expected LayerCounts, got {type(aggregate).__name__}")
        if aggregate.mechanism != self:
            raise IncompatibleError(f"aggregate of {aggregate.mechanism!r} cannot be answered by {self!r}")
        return aggregate

    def simulate(self, rows: ArrayLike, *, counts: ArrayLike | None = None, rng: RNG = None,
                 weights: ArrayLike | None = None) -> LayerCounts:
        """The aggregate of users holding ``rows``, exactly in distribution (each layer's oracle
        draws its aggregate directly where it has a closed form).

        Parameters
        ----------
        rows : array_like of int
            (n, k) rows.
        counts : None
            Not supported (give one row per user).
        rng : None, int or numpy.random.Generator
            Randomness of the simulation.
        weights : array_like of float, optional
            As :meth:`privatize`.

        Returns
        -------
        LayerCounts
        """
        if counts is not None:
            raise LDPValueError("HIO.simulate takes one row per user (counts=None)")
        gen = generator(rng)
        layers = [self.oracles[i].simulate(self._encoded(part, i, w), rng=gen) if len(part) else
                  self.oracles[i].empty_aggregate() for i, part, w, _ in self._grouped(rows, weights, gen)]
        return LayerCounts(self, tuple(layers))

    def estimate(self, aggregate: LayerCounts) -> list[np.ndarray]:
        """Unbiased population counts (or sums) of every cell of every layer: ĉ_ℓ · n/n_ℓ.

        Parameters
        ----------
        aggregate : LayerCounts

        Returns
        -------
        list of numpy.ndarray
            One float vector per layer (without the null cell of ``measure``).
        """
        agg = self.check_aggregate(aggregate)
        n, extra = agg.n, int(self.measure)
        return [o.estimate(a)[:o.d - extra] * (n / a.n) if a.n else np.zeros(o.d - extra)
                for o, a in zip(self.oracles, agg.layers)]

    def estimate_with_error(self, aggregate: LayerCounts, confidence: float = 0.95) -> list[Estimate]:
        """:meth:`estimate` with per-cell standard errors and normal intervals, layer by layer.

        Each layer's oracle gives √Var at its plug-in frequency (its ``estimate_with_error``);
        scaling a layer's n_ℓ users to the n of all layers multiplies value and error by n/n_ℓ.

        Parameters
        ----------
        aggregate : LayerCounts
        confidence : float
            Level of the intervals.

        Returns
        -------
        list of Estimate
            One per layer, arrays over its cells (a layer without users: zeros).
        """
        agg = self.check_aggregate(aggregate)
        n, extra = agg.n, int(self.measure)
        out = []
        for o, a in zip(self.oracles, agg.layers):
            cells = o.d - extra
            if not a.n:
                out.append(Estimate.normal(np.zeros(cells), np.zeros(cells), confidence))
                continue
            e, scale = o.estimate_with_error(a, confidence), n / a.n
            out.append(Estimate.normal(e.value[:cells] * scale, e.std_error[:cells] * scale, confidence))
        return out

    def _query_cells(self, ranges):
        """{layer index: cell indices} of the product of the attributes' decompositions."""
        if len(ranges) != len(self.domains):
            raise LDPValueError(f"need one range (or None) per attribute ({len(self.domains)}), got {len(ranges)}")
        parts = []
        for j, (h, r) in enumerate(zip(self.hierarchies, ranges)):
            lo, hi = (0, h.domain - 1) if r is None else (int(r[0]), int(r[1]))
            if not 0 <= lo <= hi < h.domain:
                raise LDPValueError(f"attribute {j}: range {r!r} is not within [0, {h.domain - 1}]")
            if not h.ordinal and lo != hi and (lo, hi) != (0, h.domain - 1):
                raise LDPValueError(f"attribute {j} is categorical: give one value (lo = hi), got {r!r}")
            parts.append(h.decompose(lo, hi))
        index = {levels: i for i, levels in enumerate(self.layers)}
        cells: dict[int, list[int]] = {}
        for combo in itertools.product(*parts):
            levels = tuple(level for level, _ in combo)
            if not any(levels):
                continue                                   # the whole table: handled by the caller
            cell = 0
            for h, (level, i) in zip(self.hierarchies, combo):
                cell = cell * h.sizes[level] + i
            cells.setdefault(index[levels], []).append(cell)
        return cells, all(len(p) == 1 and p[0][0] == 0 for p in parts)

    def answer(self, aggregate: LayerCounts, ranges: Sequence, consistency: str | None = None,
               confidence: float = 0.95) -> Estimate:
        """COUNT (or SUM) of the rows with a_j ∈ [lo_j, hi_j] for every constrained attribute.

        Parameters
        ----------
        aggregate : LayerCounts
        ranges : sequence
            One (lo, hi) (inclusive) or None per attribute; categorical: (v, v).
        consistency : {None, "norm_sub"}
            Post-process every layer's cells with Norm-Sub first (biased; no error bar).
        confidence : float
            Level of the normal interval.

        Returns
        -------
        Estimate
            Unbiased value (without consistency), its standard error at the plug-in cell
            frequencies, and the normal interval.

        Raises
        ------
        LDPValueError
            Ranges outside the domains, a range on a categorical attribute, an unknown consistency.
        """
        if consistency not in CONSISTENCY:
            raise LDPValueError(f"consistency must be one of {CONSISTENCY}, got {consistency!r}")
        agg = self.check_aggregate(aggregate)
        cells, everything = self._query_cells(ranges)
        n = agg.n
        if everything and not self.measure:
            return Estimate.normal(float(n), 0.0, confidence)
        estimates = self.estimate(agg)
        if everything:                            # SUM over the whole table: a level-0 cell of some layer
            first = next(i for i, levels in enumerate(self.layers) if sum(map(bool, levels)) == 1)
            cells = {first: list(range(len(estimates[first])))}
        value, variance = 0.0, 0.0
        for i, idx in cells.items():
            est = estimates[i]
            if consistency == "norm_sub" and n:
                est = norm_sub(est, n) if est.size else est
            value += float(est[idx].sum())
            variance += self._set_variance(i, agg.layers[i], estimates[i], idx, n)
        se = math.nan if consistency else math.sqrt(variance)
        return Estimate.normal(value, se, confidence)

    def _set_variance(self, i, layer_agg, est, idx, n):
        """Variance of Σ_{c ∈ idx} ĉ_c · n/n_ℓ at the plug-in frequencies of the layer's users."""
        m = layer_agg.n
        if m == 0:
            return math.inf
        oracle = self.oracles[i]
        f = np.clip(est[idx] / n, 0.0, 1.0)
        p, q = oracle.p_star, oracle.q_star
        if isinstance(oracle, GRR):        # one output per report: the set is one Bernoulli
            fs = min(float(f.sum()), 1.0)
            hit = fs * (p + (len(idx) - 1) * q) + (1 - fs) * len(idx) * q
            var = m * hit * (1 - hit) / (p - q) ** 2
        else:
            var = float(np.sum(m * q * (1 - q) / (p - q) ** 2 + m * f * (1 - p - q) / (p - q)))
        return var * (n / m) ** 2

    def output_distribution(self, row: Sequence[int]) -> dict:
        """Exact law of one report: {(layer, oracle report): probability} (small domains).

        Parameters
        ----------
        row : sequence of int
            One row.

        Returns
        -------
        dict
            Layer uniform over :attr:`layers`; the oracle's law of the row's cell within it
            (OLH: over its audit seeds; ``measure``: weight 1).
        """
        rows = _check_rows([row], self.domains)
        out = {}
        for i, oracle in enumerate(self.oracles):
            for y, pr in oracle.output_distribution(int(self.cell_index(rows, i)[0])).items():
                out[(i, y)] = pr / len(self.layers)
        return out


@dataclass(frozen=True, kw_only=True)
class PerAttribute(Mechanism):
    """Baseline: one attribute per user (uniformly drawn), through that attribute's 1-d HIO;
    conjunctions as n·Π_j f̂_j (independence assumed; module docstring).

    Parameters
    ----------
    epsilon : float
        ε of each user's one report.
    domains, ordinal, branching
        As :class:`HIO`.
    """

    epsilon: float
    domains: tuple
    ordinal: tuple | None = None
    branching: int = 4
    marginals: tuple = field(init=False, repr=False)

    def __post_init__(self):
        ordinal = (True,) * len(self.domains) if self.ordinal is None else tuple(self.ordinal)
        object.__setattr__(self, "marginals", tuple(
            HIO(epsilon=self.epsilon, domains=(m,), ordinal=(o,), branching=self.branching)
            for m, o in zip(self.domains, ordinal)))
        object.__setattr__(self, "epsilon", self.marginals[0].epsilon)

    def _split(self, rows, src):
        rows = _check_rows(rows, tuple(h.domains[0] for h in self.marginals))
        which = integers(src, len(self.marginals), len(rows))
        return [(h, rows[which == j][:, [j]]) for j, h in enumerate(self.marginals)]

    def privatize(self, rows: ArrayLike, rng: RNG = None) -> tuple:
        """Each row reports one uniformly drawn attribute through that attribute's 1-d HIO.

        Parameters
        ----------
        rows : array_like of int
            (n, k) rows.
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.

        Returns
        -------
        tuple of HIOReports
            The reports of the users of each attribute.
        """
        src = source(rng)
        return tuple(h.privatize(part, src) for h, part in self._split(rows, src))

    def check_reports(self, reports):
        return tuple(h.check_reports(r) for h, r in zip(self.marginals, reports))

    def aggregate(self, reports) -> tuple:
        return tuple(h.aggregate(r) for h, r in zip(self.marginals, self.check_reports(reports)))

    def check_aggregate(self, aggregate):
        return tuple(h.check_aggregate(a) for h, a in zip(self.marginals, aggregate))

    def empty_aggregate(self) -> tuple:
        """The aggregate of no reports: one empty :class:`LayerCounts` per attribute.

        Returns
        -------
        tuple of LayerCounts
        """
        return tuple(h.empty_aggregate() for h in self.marginals)

    def aggregate_batches(self, batches) -> tuple:
        """One aggregate of an iterable of report batches, merged attribute by attribute.

        Parameters
        ----------
        batches : iterable
            Report batches as :meth:`privatize` returns them.

        Returns
        -------
        tuple of LayerCounts
        """
        total = self.empty_aggregate()
        for reports in batches:
            total = tuple(t.merge(a) for t, a in zip(total, self.aggregate(reports)))
        return total

    def estimate_with_error(self, aggregate, confidence: float = 0.95) -> list:
        """Each attribute's :meth:`HIO.estimate_with_error`.

        Parameters
        ----------
        aggregate : tuple of LayerCounts
        confidence : float
            Level of the intervals.

        Returns
        -------
        list of list of Estimate
        """
        return [h.estimate_with_error(a, confidence) for h, a in zip(self.marginals, self.check_aggregate(aggregate))]

    def simulate(self, rows: ArrayLike, *, counts=None, rng: RNG = None) -> tuple:
        gen = generator(rng)
        return tuple(h.simulate(part, rng=gen) for h, part in self._split(rows, gen))

    def estimate(self, aggregate) -> list:
        return [h.estimate(a) for h, a in zip(self.marginals, self.check_aggregate(aggregate))]

    def answer(self, aggregate, ranges: Sequence, n: int) -> float:
        """n · Π_j (marginal count of P_j)/(users of attribute j), P_j the range of attribute j.

        Parameters
        ----------
        aggregate : tuple of LayerCounts
        ranges : sequence
            As :meth:`HIO.answer`.
        n : int
            Users in all.

        Returns
        -------
        float
        """
        value = float(n)
        for h, a, r in zip(self.marginals, self.check_aggregate(aggregate), ranges):
            if r is not None and a.n:
                value *= h.answer(a, [r]).value / a.n
        return value

    def output_distribution(self, row):
        out = {}
        for j, h in enumerate(self.marginals):
            for y, pr in h.output_distribution([row[j]]).items():
                out[(j, y)] = pr / len(self.marginals)
        return out
