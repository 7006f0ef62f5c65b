"""Defences against data poisoning: reports of implausible weight, and concentrated fakes.

Fake users can send crafted reports (all ones, or ones at chosen bits) to inflate or deflate the
count (Cao, Jia, Gong, "Data poisoning attacks to local differential privacy protocols",
USENIX Security 2021). An honest report of a value whose filter has k distinct bits
(1 <= k <= l) has weight W = Binomial(k, p) + Binomial(L − k, q). :func:`weight_bounds` gives the
interval [lo, hi] outside which every honest k puts at most α/2 of its mass on either side, so
an honest report is rejected with probability at most α; :func:`screen_reports` applies it.
Crafted reports of honest-looking weight pass that screen.

Concentrated fakes (:func:`cooccurrence_test`, :func:`screen_concentrated`): with l = 1 an honest
filter has one bit, and given the users' values the report bits are independent across
columns, so two columns share ones only by chance: among the heaviest columns, the excess
co-occurrence C_jk − c_j c_k/n (C_jk reports with both bits, c_j column sums) has mean
−(p − q)² t_j t_k/n <= 0. Given the column sums, reports that are exchangeable across users
would make C_jk hypergeometric (c_j of n reports drawn, c_k of them marked); honest users
differ only in which single column is theirs, which lowers C_jk's mean and variance, so the
hypergeometric upper tail is a valid p-value (the
tests measure the false alarms). Fakes that put their ones on the same
chosen columns add about m to C_jk for every pair of them. The batch is flagged when a p-value
passes the Bonferroni level (false alarm rate at most about α on honest data); then the reports
with implausibly many ones on the flagged columns are dropped (each honest report with
probability <= α_r).

Spread fakes (:func:`weight_excess`): fakes that move many columns a little must add or remove
ones in total; the batch's total weight is tested against the exact honest law (an alarm: it
cannot tell which reports are fake). The worst case of what passes every defence is derived in
docs/manipulation.md, and ``benchmarks/poisoning.py`` measures it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from protocols.core.lazy import stats
from protocols.bits import packing as bits
from protocols.core.validation import check_int, check_probability
from protocols.errors import LDPValueError


ATTACKS = ("all-ones", "chosen", "honest-w", "max-w", "spread-max")


def fake_reports(kind, count, L, honest_weight, max_weight, rng):
    """``count`` fake reports of one attack shape, packed (for evaluating the defences).

    Shapes (:data:`ATTACKS`; docs/manipulation.md): ``all-ones``; ``chosen`` (ones on 100 chosen
    columns); ``honest-w`` (ones on as many chosen columns as an honest report's mean weight);
    ``max-w`` (ones on as many chosen columns as the weight screen accepts); ``spread-max`` (that
    many ones, at random columns in every report).

    Parameters
    ----------
    kind : str
        One of :data:`ATTACKS`.
    count : int
        Number of fake reports.
    L : int
        Bits per report.
    honest_weight : float
        Mean weight of an honest report (``honest-w``).
    max_weight : int
        Largest weight the screen accepts (``max-w``, ``spread-max``; :func:`weight_bounds`).
    rng : numpy.random.Generator
        Randomness of the attack.

    Returns
    -------
    numpy.ndarray
        uint8 (count, ceil(L/8)).
    """
    mask = np.zeros((count, L), dtype=bool)
    if kind == "all-ones":
        mask[:] = True
    elif kind == "spread-max":
        order = np.argsort(rng.random((count, L)), axis=1)[:, :max_weight]
        mask[np.arange(count)[:, None], order] = True
    else:
        width = {"chosen": 100, "honest-w": max(1, int(round(honest_weight))), "max-w": max_weight}[kind]
        mask[:, rng.choice(L, width, replace=False)] = True
    return bits.pack(mask)


def shift_bound(mech, fakes):
    """Largest move of any t̂_j that ``fakes`` arbitrary reports can cause (docs/manipulation.md).

    A report adds 0 or 1 to a column sum c_j where an honest one adds Bernoulli(q) at least, so m
    fakes move c_j by at most m·max(q, 1 − q) and t̂_j = (c_j − nq)/(p − q) by m·max(q, 1 − q)/(p − q).

    Parameters
    ----------
    mech : BFRRCE
        The mechanism (p, q).
    fakes : int or float
        Number of fake reports m.

    Returns
    -------
    float
    """
    return fakes * max(mech.q, 1 - mech.q) / (mech.p - mech.q)


def weight_pmf(L, k, p, q):
    """Exact distribution of an honest report's weight when its filter has k set bits:
    Binomial(k, p) + Binomial(L − k, q), a convolution.

    Parameters
    ----------
    L : int
        The bits of a report.
    k : int
        The set bits of the filter.
    p, q : float
        The probabilities that a report has bit j when the filter has it, and when it has not.

    Returns
    -------
    numpy.ndarray
        Pr[W = w] for w = 0..L (float, L + 1).
    """
    return np.convolve(stats.binom.pmf(np.arange(k + 1), k, p),
                       stats.binom.pmf(np.arange(L - k + 1), L - k, q))


def weight_bounds(mech, alpha=1e-3):
    """[lo, hi]: an honest report's weight falls outside with probability at most α.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism (its L, l, p and q).
    alpha : float
        The probability, at most, of an honest weight outside (α/2 each side, for each k <= l).

    Returns
    -------
    (int, int)
        lo and hi, in bits.
    """
    alpha = check_probability(alpha, "alpha")
    lo, hi = mech.L, 0
    for k in range(1, mech.l + 1):
        pmf = weight_pmf(mech.L, k, mech.p, mech.q)
        cdf = np.cumsum(pmf)
        tail = np.cumsum(pmf[::-1])[::-1]               # tail[w] = Pr[W >= w]
        lo = min(lo, int(np.searchsorted(cdf, alpha / 2, side="right")))   # Pr[W < lo] <= α/2
        hi = max(hi, int(np.flatnonzero(tail > alpha / 2)[-1]))            # Pr[W > hi] <= α/2
    return lo, hi


def report_weights(reports):
    """Number of ones in each packed report.

    Parameters
    ----------
    reports : numpy.ndarray
        Packed reports, uint8 (n, w).

    Returns
    -------
    numpy.ndarray
        The weight of each report (n,).
    """
    return bits.row_weights(reports)


def plausible_weight(mech, reports, alpha=1e-3, weights=None):
    """Boolean mask of the reports whose weight lies in :func:`weight_bounds` (reports unchanged).

    Parameters
    ----------
    mech : BFRRCE
        The mechanism of the reports.
    reports : numpy.ndarray
        Packed reports, uint8 (n, ceil(L/8)).
    alpha : float
        The probability, at most, that an honest report is outside.
    weights : numpy.ndarray, optional
        :func:`report_weights` of ``reports``, when already counted.

    Returns
    -------
    numpy.ndarray
        bool (n,): True for the reports kept.
    """
    reports = mech.check_reports(reports)
    lo, hi = weight_bounds(mech, alpha)
    w = report_weights(reports) if weights is None else weights
    return (w >= lo) & (w <= hi)


def screen_reports(mech, reports, alpha=1e-3):
    """Drop the reports of implausible Hamming weight (honest ones with probability <= α).

    Parameters
    ----------
    mech : BFRRCE
        The mechanism that produced the reports.
    reports : numpy.ndarray
        Packed reports, uint8 (n, ceil(L/8)); not modified.
    alpha : float
        Largest probability of rejecting an honest report (:func:`weight_bounds`).

    Returns
    -------
    tuple
        (accepted reports, number rejected).
    """
    keep = plausible_weight(mech, reports, alpha)
    return reports[keep], int((~keep).sum())


@dataclass(frozen=True)
class CooccurrenceTest:
    """Result of :func:`cooccurrence_test`.

    Attributes
    ----------
    columns : numpy.ndarray
        The heaviest columns tested (sorted).
    pvalues : numpy.ndarray
        Pr[C_jk >= observed] under the hypergeometric law, each pair of ``columns`` (1 on the
        diagonal).
    level : float
        Bonferroni level α/(K(K − 1)/2).
    suspicious : numpy.ndarray
        Columns in at least one pair with a p-value below ``level`` (empty: looks honest).
    """

    columns: np.ndarray
    pvalues: np.ndarray
    level: float
    suspicious: np.ndarray

    @property
    def flagged(self) -> bool:
        """True when some pair of columns co-occurs more than honest reports can."""
        return self.suspicious.size > 0


def _column_bits(reports, columns):
    """Bits of ``columns`` of packed reports: uint8 (n, len(columns))."""
    return (reports[:, columns // 8] >> (columns % 8).astype(np.uint8)) & np.uint8(1)


def cooccurrence_test(mech, reports, columns: int = 64, alpha: float = 1e-3,
                      chunk_rows: int = 1 << 16) -> CooccurrenceTest:
    """Test a batch of reports for fakes concentrated on chosen columns (module docstring).

    Parameters
    ----------
    mech : BFRRCE
        The mechanism (l = 1: with l > 1 one honest value legitimately sets l columns together).
    reports : numpy.ndarray
        Packed reports of ``mech``.
    columns : int
        K, the heaviest columns tested (2 <= K <= L).
    alpha : float
        False alarm rate on honest data (Bonferroni over the K(K − 1)/2 pairs).
    chunk_rows : int
        Reports per step of the co-occurrence count (memory O(chunk_rows·K)).

    Returns
    -------
    CooccurrenceTest

    Raises
    ------
    LDPValueError
        l > 1, K outside [2, L], α outside (0, 1), or no reports.

    References
    ----------
    Cao, Jia, Gong, "Data poisoning attacks to local differential privacy protocols", USENIX
    Security 2021 (the attacks); the hypergeometric law of the overlap of two columns given
    their sums (a permutation null).
    """
    reports = mech.check_reports(reports)
    if mech.l != 1:
        raise LDPValueError(f"the co-occurrence test needs l = 1 (one bit per honest filter), got l={mech.l}")
    k = check_int(columns, "columns", 2, mech.L)
    alpha = check_probability(alpha, "alpha")
    n = len(reports)
    if n < 2:
        raise LDPValueError(f"the co-occurrence test needs at least 2 reports, got {n}")
    sums = bits.column_sums(reports, mech.L)
    cols = np.sort(np.argsort(sums, kind="stable")[-k:])
    both = np.zeros((k, k))
    for start in range(0, n, check_int(chunk_rows, "chunk_rows", 1)):
        y = _column_bits(reports[start:start + chunk_rows], cols).astype(np.float64)
        both += y.T @ y
    c = sums[cols]
    pvalues = stats.hypergeom.sf(both - 1, n, c[:, None], c[None, :])
    np.fill_diagonal(pvalues, 1.0)
    level = alpha / (k * (k - 1) / 2)
    return CooccurrenceTest(cols, pvalues, level, cols[(pvalues < level).any(axis=1)])


def weight_excess(mech, reports, alpha: float = 1e-3):
    """Two-sided test of a batch's total weight against the honest law: (z, flagged).

    With l = 1 every honest report has weight W = Binomial(1, p) + Binomial(L − 1, q) whatever
    its value (:func:`weight_pmf`), so the batch total over n reports has mean n·μ and variance
    n·σ² (μ, σ² of that law): z = (ΣW − nμ)/(σ√n), flagged when |z| > z_{1−α/2}. Fakes that
    inflate or deflate many columns at once must add or remove ones in total (Σ_j t̂_j = n for
    honest reports), which this sees even when they are spread so that no pair of columns
    co-occurs (the ``spread-max`` attack of ``benchmarks/poisoning.py``). It detects; it cannot
    tell which reports are fake.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism that produced the reports (l = 1).
    reports : numpy.ndarray
        Packed reports, uint8 (n, ceil(L/8)).
    alpha : float
        False-alarm probability of the test.

    Returns
    -------
    tuple
        (z, flagged): the standardized total weight and whether |z| > z_{1−α/2}.

    Raises
    ------
    LDPValueError
        l > 1 (the honest weight law then depends on hash collisions inside a filter), or no
        reports.
    """
    reports = mech.check_reports(reports)
    if mech.l != 1:
        raise LDPValueError(f"the weight-excess test needs l = 1, got l={mech.l}")
    if len(reports) == 0:
        raise LDPValueError("no reports")
    alpha = check_probability(alpha, "alpha")
    return weight_total_test(mech, float(report_weights(reports).sum(dtype=np.float64)), len(reports), alpha)


def weight_total_test(mech, total: float, n: int, alpha: float = 1e-3,
                      bounds: tuple[int, int] | None = None) -> tuple[float, bool]:
    """The test of :func:`weight_excess` from the total weight of n reports (l = 1), for
    streaming: z = (total − nμ)/(σ√n), with μ and σ² of the honest weight law truncated to
    ``bounds`` (the reports a weight screen kept) when given.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism of the reports (l = 1).
    total : float
        Their total weight.
    n : int
        Their number (>= 1).
    alpha : float
        False-alarm probability.
    bounds : (int, int), optional
        The weights the reports were screened to.

    Returns
    -------
    (float, bool)
        z and whether |z| > z_{1−α/2}.
    """
    pmf = weight_pmf(mech.L, 1, mech.p, mech.q)
    w = np.arange(pmf.size)
    if bounds is not None:
        pmf = np.where((w >= bounds[0]) & (w <= bounds[1]), pmf, 0.0)
        pmf = pmf / pmf.sum()
    mean = float(np.sum(w * pmf))
    sd = math.sqrt(float(np.sum((w - mean) ** 2 * pmf)))
    z = (total - n * mean) / (sd * math.sqrt(n))
    return z, bool(abs(z) > stats.norm.isf(alpha / 2))


def concentrated_bound(mech, size: int, alpha: float = 1e-3) -> int:
    """Most ones an honest report puts on ``size`` given columns, except with probability <= α:
    its weight there is at most Binomial(1, p) + Binomial(size − 1, q) (l = 1).

    Parameters
    ----------
    mech : BFRRCE
        The mechanism (its p and q).
    size : int
        The number of columns.
    alpha : float
        The probability, at most, that an honest report exceeds the bound.

    Returns
    -------
    int
        The bound, in ones.
    """
    tail = np.cumsum(weight_pmf(size, 1, mech.p, mech.q)[::-1])[::-1]   # tail[w] = Pr[W >= w]
    return int(np.flatnonzero(tail > alpha)[-1])


def concentrated_fakes(mech, reports, columns: int = 64, alpha: float = 1e-3,
                       report_alpha: float = 1e-3):
    """(mask of the reports kept, :class:`CooccurrenceTest`) of the screen for concentrated fakes.

    When :func:`cooccurrence_test` flags the batch, a report is dropped if it has more ones on
    the suspicious columns S than :func:`concentrated_bound` (|S|, ``report_alpha``) allows; so
    an honest report is dropped with probability <= ``report_alpha`` (and only in the batches
    flagged, at most about α of the honest ones). Reports are never modified.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism of the reports.
    reports : numpy.ndarray
        Packed reports, uint8 (n, ceil(L/8)).
    columns : int
        The columns :func:`cooccurrence_test` examines.
    alpha : float
        The level of :func:`cooccurrence_test`.
    report_alpha : float
        The probability, at most, that a flagged batch's honest report is dropped.

    Returns
    -------
    (numpy.ndarray, CooccurrenceTest)
        bool (n,), True for the reports kept, and the test.
    """
    report_alpha = check_probability(report_alpha, "report_alpha")
    test = cooccurrence_test(mech, reports, columns, alpha)
    if not test.flagged:
        return np.ones(len(reports), dtype=bool), test
    ones = _column_bits(reports, test.suspicious).sum(axis=1, dtype=np.int64)
    return ones <= concentrated_bound(mech, test.suspicious.size, report_alpha), test


def screen_concentrated(mech, reports, columns: int = 64, alpha: float = 1e-3,
                        report_alpha: float = 1e-3):
    """Drop the reports that carry too many ones on columns that co-occur beyond honest chance.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism that produced the reports.
    reports : numpy.ndarray
        Packed reports, uint8 (n, ceil(L/8)); not modified.
    columns : int
        Heaviest columns tested pairwise (:func:`cooccurrence_test`).
    alpha : float
        False-alarm level of the co-occurrence test (Bonferroni over the pairs).
    report_alpha : float
        Largest probability of dropping an honest report once columns are flagged.

    Returns
    -------
    tuple
        (kept reports, number rejected, :class:`CooccurrenceTest`).
    """
    keep, test = concentrated_fakes(mech, reports, columns, alpha, report_alpha)
    return reports[keep], int((~keep).sum()), test
