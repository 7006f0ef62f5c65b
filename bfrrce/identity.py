"""Content identity of a batch of BFRRCE reports (docs/formats.md, batch identity).

A batch's identifier is a digest of the *multiset* of its report rows, so it does not depend on
the file that carries them (package format or Parquet, any compression, any header, any row
order) and cannot be copied onto other reports:

    S = Σ_i SHA-256(row_i) mod 2**256          (each digest read as a little-endian integer)
    id = SHA-256("BFRRCE batch v2\\0" ‖ L (4 bytes) ‖ n (8 bytes) ‖ S (32 bytes)), 64 hex digits

The sum is order independent and additive over chunks, so a file streamed in chunks gets the
identifier of the same rows held in memory (the additive multiset hash of Bellare and
Micciancio, 1997). Making another multiset with a given identifier means solving a k-sum
problem over Z_(2**256) with valid rows: generalized-birthday (Wagner, 2002) and lattice
methods make that feasible for a determined attacker with many rows, which is why a collision
is never silent: the merge that meets it is refused, naming the batch (a loud denial, never a
report counted twice). Holding the reports is the only way to get their identifier by chance.

Rows repeated inside one batch are counted (``repeats``: pairs of equal rows, from 64-bit
fingerprints of the row digests, 8 bytes of memory per report) and the batch is refused when
honest clients could not plausibly have produced that many (:func:`check_repeats`).
"""

from __future__ import annotations

import hashlib
import math
from operator import methodcaller

import numpy as np

from protocols.core.lazy import stats
from protocols.core.perturbation import count_columns
from protocols.errors import IncompatibleError

from .sums import ColumnSums

TAG = b"BFRRCE batch v2\x00"
MODULUS = 1 << 256
REPEAT_ALPHA = 1e-9           # honest batches are refused for repeats with at most this probability


class DuplicateReportsError(IncompatibleError):
    """A batch holding more repeated reports than honest clients produce (:func:`check_repeats`)."""


def row_digests(reports: np.ndarray) -> np.ndarray:
    """SHA-256 of every row of a packed uint8 array (n, w): uint8 (n, 32).

    Parameters
    ----------
    reports : numpy.ndarray
        Packed reports, uint8 (n, w).

    Returns
    -------
    numpy.ndarray
        The digests, uint8 (n, 32).
    """
    reports = np.ascontiguousarray(reports)
    width = reports.shape[1] if reports.ndim == 2 else 0
    if not len(reports):
        return np.zeros((0, 32), dtype=np.uint8)
    data = memoryview(reports.reshape(-1))
    digests = b"".join(map(methodcaller("digest"), map(hashlib.sha256, (
        data[i:i + width] for i in range(0, len(data), width)))))
    return np.frombuffer(digests, dtype=np.uint8).reshape(len(reports), 32)


class BatchDigest:
    """Running content digest of one batch: ``add`` chunks of reports, then ``identifier``.

    Parameters
    ----------
    L : int
        The number of bits of a report (part of the identifier).

    Attributes
    ----------
    L : int
        The number of bits of a report.
    n : int
        The reports added so far.
    total : int
        The sum of their digests modulo :data:`MODULUS`.
    """

    def __init__(self, L: int):
        self.L, self.n, self.total = L, 0, 0
        self._fingerprints: list[np.ndarray] = []

    def add(self, reports: np.ndarray) -> None:
        """Count a chunk of (already validated) packed reports."""
        digests = row_digests(reports)
        limbs = digests.view("<u4").sum(axis=0, dtype=np.uint64)    # exact below 2**32 rows
        self.total = (self.total + sum(int(s) << (32 * k) for k, s in enumerate(limbs))) % MODULUS
        self._fingerprints.append(digests[:, :8].copy().view("<u8").ravel())
        self.n += len(digests)

    def identifier(self) -> str:
        """The batch identifier: 64 lowercase hex digits (module docstring)."""
        return hashlib.sha256(TAG + self.L.to_bytes(4, "little") + self.n.to_bytes(8, "little")
                              + self.total.to_bytes(32, "little")).hexdigest()

    def repeats(self) -> int:
        """Pairs of equal rows in the batch (equal 64-bit fingerprints of their digests)."""
        if not self._fingerprints:
            return 0
        _, counts = np.unique(np.concatenate(self._fingerprints), return_counts=True)
        counts = counts[counts > 1].astype(np.int64)
        return int((counts * (counts - 1) // 2).sum())


def expected_repeats(n: int, L: int, l: int, p: float, q: float) -> float:
    """An upper bound on the expected pairs of equal reports among n honest clients.

    Two clients report the same row with probability Π_j c_j: c_j = a = p² + (1 − p)² where
    both filters have bit j, b = q² + (1 − q)² where neither has it, and pq + (1 − p)(1 − q)
    <= max(a, b) where one has it; both having at most l bits, C(n, 2)·max_(0<=k<=l)
    a^k b^(L−k) bounds the expectation whatever the values (a set sketch, whose rows may have
    any number of bits, passes l = L).

    Parameters
    ----------
    n : int
        The number of clients.
    L : int
        The bits of a report.
    l : int
        The most bits set in a filter.
    p, q : float
        The probabilities that a report has bit j when the filter has it, and when it has not.

    Returns
    -------
    float
        The bound on the expected number of pairs of equal reports.
    """
    a, b = p * p + (1 - p) ** 2, q * q + (1 - q) ** 2
    log_pair = max(k * math.log(a) + (L - k) * math.log(b) for k in (0, l))
    return n * (n - 1) / 2 * math.exp(log_pair)


def check_repeats(mech, digest: BatchDigest, what: str = "batch") -> None:
    """Refuse a batch whose pairs of equal rows honest clients reach with probability below
    ``REPEAT_ALPHA``, E = :func:`expected_repeats` bounding their mean: for E <= 1 (rare
    coincidences, where pairs are close to Poisson) when P(Poisson(E) >= pairs) is below it,
    for E > 1 (clusters of equal rows make the count over-dispersed) only by Markov's
    inequality, pairs >= E/``REPEAT_ALPHA``.

    At L >= 64 and moderate ε, E is astronomically small and one repeated row refuses the
    batch; at small L or very large ε honest rows do repeat (E of order 1 or more) and only an
    excess is refused.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism of the batch (its L, l, p and q).
    digest : BatchDigest
        The batch's digest.
    what : str
        What the batch is, for the message.

    Raises
    ------
    DuplicateReportsError
        Naming the pairs found and the honest bound.
    """
    pairs = digest.repeats()
    if not pairs:
        return
    expected = expected_repeats(digest.n, mech.L, getattr(mech, "l", mech.L), mech.p, mech.q)
    tail = stats.poisson.sf(pairs - 1, expected) if expected <= 1 else expected / pairs
    if tail < REPEAT_ALPHA:
        raise DuplicateReportsError(f"{what}: {pairs} pair(s) of identical reports among {digest.n}, where "
                                f"honest clients produce at most {expected:.3g} in expectation: "
                                "the batch holds duplicated reports")


def batch_sums(mech, batches, *, label: bool = True, seeded: bool = False, screen=None) -> ColumnSums:
    """Column sums of an iterable of report batches with one running counter, labelled with the
    content identifier of all their rows (the ``aggregate_batches`` of :class:`bfrrce.BFRRCE`
    and :class:`bfrrce.SetSketch`).

    Parameters
    ----------
    mech : BFRRCE or SetSketch
        The mechanism (``check_reports``, ``L``, ``p``, ``q``).
    batches : iterable of array_like
        Packed report batches, each validated and not kept.
    label : bool
        Label the sums with the identifier and refuse duplicated rows (:func:`check_repeats`);
        False (simulations never merged with others) skips both.
    seeded : bool
        The reports were privatized with a seeded generator (recorded in the sums).
    screen : callable, optional
        reports → boolean mask of the reports to count; the identifier is that of every row.

    Returns
    -------
    ColumnSums
    """
    if not label:
        return ColumnSums(mech, *count_columns((mech.check_reports(b) for b in batches), mech.L), seeded=seeded)
    digest = BatchDigest(mech.L)

    def digested():
        for reports in batches:
            reports = mech.check_reports(reports)
            digest.add(reports)
            yield reports if screen is None else reports[screen(reports)]
    counts, n = count_columns(digested(), mech.L)
    if not digest.n:
        return ColumnSums(mech, counts, 0, seeded=seeded)
    check_repeats(mech, digest)
    return ColumnSums(mech, counts, n, frozenset([digest.identifier()]), seeded)

