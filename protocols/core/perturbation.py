"""The per-bit randomized-response toolkit shared by every bit-vector mechanism.

A bit vector x is reported bit by bit: a 1 stays 1 with probability p, a 0 becomes 1 with
probability q (Warner 1965, applied per bit; Wang et al., USENIX Security 2017, unary encoding).
With c_j the column sum over n reports, t̂_j = (c_j − n q)/(p − q) is unbiased for t_j, the number
of reports whose true bit j is set, and Var(t̂_j) = [t_j p(1 − p) + (n − t_j) q(1 − q)]/(p − q)².
Used by the unary-encoding oracles, RAPPOR, the count-mean sketch and BFRRCE (docs/estimation.md).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from protocols.bits import packing as bits
from protocols.core.validation import check_array, check_range
from protocols.core.base import RNG
from protocols.errors import LDPTypeError, LDPValueError
from protocols.core.randomness import randomized_response_packed, source


def perturb_positions(positions: ArrayLike, width: int, p: float, q: float, rng: RNG = None) -> np.ndarray:
    """Per-bit randomized response on bit vectors given by the positions of their ones.

    Parameters
    ----------
    positions : int array (n, k)
        Row i has ones at ``positions[i]`` (repeats allowed), zeros elsewhere.
    width : int
        Bits per report.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    rng : None, int or Generator
        None: the OS CSPRNG (clients); a seed or generator for simulations only.

    Returns
    -------
    numpy.ndarray
        Packed uint8 reports (n, ceil(width/8)), little-endian bit order.
    """
    positions = np.asarray(positions, dtype=np.int64)
    n = positions.shape[0]
    rows = np.repeat(np.arange(n), positions.shape[1])
    return randomized_response_packed(source(rng), (n, width), (rows, positions.ravel()), p, q)


def count_columns(batches: Iterable, d: int) -> tuple[np.ndarray, int]:
    """Column sums of an iterable of packed report batches with one running bit-sliced
    :class:`protocols.bits.packing.ColumnCounter`; each batch is validated, never kept.

    Parameters
    ----------
    batches : iterable of numpy.ndarray
        Packed uint8 batches (n_i, ⌈d/8⌉).
    d : int
        Bits per report.

    Returns
    -------
    (numpy.ndarray, int)
        The int64 column sums (d,) and the number of reports.
    """
    counter, n = bits.ColumnCounter(d), 0
    for reports in batches:
        reports = bits.check_packed(reports, d)
        counter.add(reports)
        n += len(reports)
    return counter.counts(), n


def debias_counts(counts: ArrayLike, n: int | ArrayLike, p: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Debiased bit counts and their plug-in variance.

    With c the number of the n reports having a bit set, t̂ = (c − nq)/(p − q) is unbiased for
    t, the number of users whose true bit is set, and Var(t̂) = [t p(1 − p) + (n − t) q(1 − q)]
    /(p − q)², returned at the plug-in t = clip(t̂, 0, n).

    Parameters
    ----------
    counts : array_like of int
        Column sums c.
    n : int or array_like of int
        Number of reports (an array: per cohort, broadcast against ``counts``).
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        t̂ and its variance.

    References
    ----------
    Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", CCS 2014; Theorem 2 of the BFRRCE paper.
    """
    counts = np.asarray(counts, dtype=float)
    t_hat = (counts - n * q) / (p - q)
    return t_hat, count_variance(np.clip(t_hat, 0, n), n, p, q) / (p - q) ** 2


def count_variance(t: ArrayLike, n: int, p: float, q: float) -> np.ndarray:
    """Var(c) = t p(1 − p) + (n − t) q(1 − q) of a column sum c of n reports, t of whose true
    bits are set (c ~ Binomial(t, p) + Binomial(n − t, q)); linear in t, so evaluated at an
    unbiased t̂ it is an unbiased estimate. Divide by (p − q)² for Var(t̂).

    Parameters
    ----------
    t : array_like of float
        Users whose bit is set (an estimate may be fractional or negative).
    n : int or array_like of int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

    Returns
    -------
    numpy.ndarray
    """
    t = np.asarray(t, dtype=float)
    return t * p * (1 - p) + (n - t) * q * (1 - q)


def null_variance(n: int, p: float, q: float) -> float:
    """Var(t̂_j) of a column no report's true bit sets: n q(1 − q)/(p − q)².

    The one definition of the null variance: :meth:`bfrrce.BFRRCE.null_variance` and
    :attr:`bfrrce.Debiased.null_variance` are this value at their n, p, q.

    Parameters
    ----------
    n : int
        Number of reports.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

    Returns
    -------
    float
    """
    return float(count_variance(0, n, p, q)) / (p - q) ** 2


def simulate_column_sums(t: ArrayLike, n: int, p: float, q: float, rng: np.random.Generator) -> np.ndarray:
    """Column sums drawn exactly in distribution: c_j ~ Binomial(t_j, p) + Binomial(n − t_j, q).

    t_j is the number of the n users whose bit j is set; bits of different users and columns
    are independent, so this is the exact joint law of the column sums of n real reports.

    Parameters
    ----------
    t : array_like of int
        Users whose true bit is set, per column.
    n : int
        Number of users.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        int64 column sums.
    """
    t = np.asarray(t, dtype=np.int64)
    return rng.binomial(t, p) + rng.binomial(n - t, q)


def check_grouped_reports(reports, num_groups: int, width: int, what: str,
                          group_name: str) -> tuple[np.ndarray, np.ndarray]:
    """(groups, packed) of grouped bit reports (RAPPOR cohorts, CMS rows), validated.

    Parameters
    ----------
    reports : tuple
        A pair (int64 group of each report in [0, num_groups), uint8 packed rows of ``width``
        bits), as the mechanism's ``privatize`` returns.
    num_groups, width : int
        Groups and bits per report.
    what, group_name : str
        The mechanism and the name of its groups, for the messages.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The groups and the packed rows.

    Raises
    ------
    LDPTypeError
        Not a pair, or arrays of another dtype.
    IncompatibleError
        Another shape, a group out of range, or padding bits set.
    LDPValueError
        Groups and rows of different lengths.
    """
    if not isinstance(reports, tuple) or len(reports) != 2:
        raise LDPTypeError(f"{what} reports are a ({group_name}, bits) pair, as privatize returns")
    groups = check_array(reports[0], np.int64, (), group_name)
    check_range(groups, num_groups, group_name)
    packed = bits.check_packed(reports[1], width)
    if len(packed) != len(groups):
        raise LDPValueError(f"{len(groups)} {group_name} for {len(packed)} reports")
    return groups, packed


def grouped_column_sums(groups: np.ndarray, packed: np.ndarray, num_groups: int, width: int) -> np.ndarray:
    """Per group g: column sums of the packed rows of group g, and (last column) their number.

    Parameters
    ----------
    groups : numpy.ndarray
        int64 group of each row, in [0, num_groups).
    packed : numpy.ndarray
        uint8 packed rows (n, ⌈width/8⌉).
    num_groups, width : int
        Groups and bits per row.

    Returns
    -------
    numpy.ndarray
        int64 (num_groups, width + 1); one bit-sliced pass per group present.
    """
    counts = np.zeros((num_groups, width + 1), dtype=np.int64)
    for g in np.unique(groups):
        rows = packed[groups == g]
        counts[g, :-1] = bits.column_sums(rows, width)
        counts[g, -1] = len(rows)
    return counts


def bit_vector_distribution(true_bits: ArrayLike, p: float, q: float) -> dict[bytes, float]:
    """Exact output distribution of per-bit randomized response on one bit vector.

    Parameters
    ----------
    true_bits : array_like of bool
        The vector, at most 16 bits.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].

    Returns
    -------
    dict
        {packed report (bytes): probability} over all 2^len(true_bits) outputs.

    Raises
    ------
    LDPValueError
        More than 16 bits.
    """
    true_bits = np.asarray(true_bits, dtype=bool)
    d = true_bits.size
    if d > 16:
        raise LDPValueError(f"enumeration is for small domains (d <= 16), got d={d}")
    outputs = ((np.arange(2 ** d)[:, None] >> np.arange(d)) & 1).astype(bool)
    one = np.where(true_bits, p, q)
    probs = np.where(outputs, one, 1 - one).prod(axis=1)
    packed = bits.pack(outputs)
    return {row.tobytes(): float(pr) for row, pr in zip(packed, probs)}
