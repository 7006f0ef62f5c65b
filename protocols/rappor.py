"""RAPPOR (Erlingsson, Pihur, Korolova, CCS 2014).

Client: the value is hashed into a Bloom filter B of ``num_bits`` bits with ``num_hashes``
hashes that depend on the user's cohort (one of ``num_cohorts``). Permanent randomized response
B'_j = 1 w.p. f/2, 0 w.p. f/2, B_j w.p. 1 − f; it is derived from a per-user secret, so a user
reporting the same value again gives the same B' (nothing is stored, on either side).
Instantaneous randomized response: S_j = 1 w.p. q if B'_j = 1 and p if B'_j = 0.

For one report, Pr[S_j = 1 | B_j = 1] = q* = f(p + q)/2 + (1 − f)q and
Pr[S_j = 1 | B_j = 0] = p* = f(p + q)/2 + (1 − f)p, so (two filters differ in ≤ 2h bits)
ε₁ = h·ln(q*(1 − p*) / (p*(1 − q*))); for infinitely many reports of the same value,
ε_∞ = 2h·ln((1 − f/2)/(f/2)). Following the package's convention (p* for a set bit), the
object's ``p_star`` is the paper's q* and its ``q_star`` the paper's p*.

Server: per cohort c and bit j, t̂_cj = (c_cj − p*·N_c)/(q* − p*) estimates the number of users
of cohort c whose filter has bit j; candidates' frequencies are fitted by non-negative least
squares on the candidate design matrix (weighted by the analytic variance of t̂), and a
Bonferroni-corrected z-test keeps the candidates that are significantly above zero.

Permanent randomness comes from MurmurHash3 of (secret, value) keyed per bit: uniform, but not a
cryptographic PRF; a deployment wanting RAPPOR's HMAC guarantee should derive it from HMAC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from . import bits
from ._validate import check_array, check_int, check_probability, check_range
from .base import FrequencyOracle, SupportCounts, log_ratio
from .errors import LDPTypeError, LDPValueError
from .hashing import hash_keys, murmur3_fixed
from .randomness import randomized_response_packed, source
from .ue import bit_vector_distribution, debias_counts, grouped_column_sums


class RapporReports(NamedTuple):
    """A batch of RAPPOR reports: cohort of each user (int64) and packed bits (uint8)."""

    cohorts: np.ndarray
    bits: np.ndarray


class CandidateEstimates(NamedTuple):
    """Frequency estimates of candidate values, with standard errors and a significance flag."""

    candidates: list
    counts: np.ndarray
    stderr: np.ndarray
    significant: np.ndarray


def nnls(A, b, max_iter=None):
    """Non-negative least squares min ‖Ax − b‖, x ≥ 0 (Lawson & Hanson 1974, active set)."""
    m, n = A.shape
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    w = A.T @ (b - A @ x)
    tol = 1e-10 * max(1.0, np.abs(A).max()) * max(m, n)
    for _ in range(max_iter or 3 * n):
        if passive.all() or w[~passive].max(initial=-np.inf) <= tol:
            break
        candidates = np.where(passive, -np.inf, w)
        passive[np.argmax(candidates)] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(A[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            bad = passive & (z <= 0)
            alpha = np.min(x[bad] / (x[bad] - z[bad]))
            x = x + alpha * (z - x)
            passive &= x > tol
            x[~passive] = 0
        w = A.T @ (b - A @ x)
    return x


@dataclass(frozen=True, kw_only=True)
class RAPPOR(FrequencyOracle):
    """RAPPOR with Bloom filters, cohorts, permanent and instantaneous randomized response.

    Parameters
    ----------
    num_bits, num_hashes, num_cohorts : int
        Bloom filter size k, hashes h, cohorts m (the paper's defaults: 128, 2, 64).
    f : float
        Permanent randomized response (0.5 in the paper).
    p, q : float
        Pr[S = 1 | B' = 0] and Pr[S = 1 | B' = 1] (0.5 and 0.75 in the paper), p < q.
    """

    num_bits: int = 128
    num_hashes: int = 2
    num_cohorts: int = 64
    f: float = 0.5
    p: float = 0.5
    q: float = 0.75

    def __post_init__(self):
        k = check_int(self.num_bits, "num_bits", 1)
        h = check_int(self.num_hashes, "num_hashes", 1, k)
        m = check_int(self.num_cohorts, "num_cohorts", 1, 2 ** 16)
        f = check_probability(self.f, "f")
        p = check_probability(self.p, "p", open_interval=False)
        q = check_probability(self.q, "q", open_interval=False)
        if not p < q:
            raise LDPValueError(f"RAPPOR needs p < q, got p={p!r}, q={q!r}")
        one = f * (p + q) / 2 + (1 - f) * q      # Pr[S=1 | B=1]
        zero = f * (p + q) / 2 + (1 - f) * p     # Pr[S=1 | B=0]
        self._set(num_bits=k, num_hashes=h, num_cohorts=m, f=f, p=p, q=q,
                  p_star=one, q_star=zero, d=k)

    @property
    def epsilon(self):
        """ε of one report: h·ln(q*(1 − p*)/(p*(1 − q*)))."""
        return self.num_hashes * log_ratio(self.p_star, self.q_star)

    @property
    def epsilon_permanent(self):
        """ε of infinitely many reports of one value: 2h·ln((1 − f/2)/(f/2))."""
        return 2 * self.num_hashes * math.log((1 - self.f / 2) / (self.f / 2))

    # -- client ---------------------------------------------------------------------------
    def cohort_of(self, secrets):
        """Cohort of each user, derived from the user's 64-bit secret."""
        keys = np.asarray(secrets, dtype="<u8").reshape(-1, 1).view(np.uint8)
        return (murmur3_fixed(keys, 0x5EED) % np.uint32(self.num_cohorts)).astype(np.int64)

    def filter_positions(self, values, cohorts):
        """Bloom filter positions (n, h) of each value in its cohort: murmur3 with seed c·h + i."""
        cohorts = np.asarray(cohorts, dtype=np.int64)
        values = np.asarray(values) if not isinstance(values, list) else values
        out = np.empty((len(cohorts), self.num_hashes), dtype=np.int64)
        for c in np.unique(cohorts):
            rows = np.flatnonzero(cohorts == c)
            subset = values[rows] if isinstance(values, np.ndarray) else [values[i] for i in rows]
            seeds = int(c) * self.num_hashes + np.arange(self.num_hashes)
            out[rows] = hash_keys(subset, seeds) % np.uint32(self.num_bits)
        return out

    def _permanent(self, values, secrets, positions):
        """B' for each user: a deterministic function of (secret, value), with the f/2, f/2, 1 − f law."""
        n = len(secrets)
        value_hash = hash_keys(values, [0x7A3]).astype(np.uint64)[:, 0]
        keys = np.stack([np.asarray(secrets, dtype=np.uint64), value_hash], axis=1).astype("<u8")
        key_bytes = keys.view(np.uint8).reshape(n, 16)
        u = np.stack([murmur3_fixed(key_bytes, j) for j in range(self.num_bits)], axis=1)
        u = u.astype(np.float64) * 2.0 ** -32   # uniform on a 2^-32 grid
        filt = np.zeros((n, self.num_bits), dtype=bool)
        filt[np.arange(n)[:, None], positions] = True
        return np.where(u < self.f / 2, True, np.where(u < self.f, False, filt))

    def privatize(self, values, rng=None, secrets=None):
        """Reports of a batch of values (any keys: ints, str, bytes).

        ``secrets`` (uint64, one per user) makes the permanent response and the cohort repeat
        across calls, as RAPPOR requires; without them, fresh secrets are drawn (one-shot use).
        """
        src = source(rng)
        n = len(values)
        if n == 0:
            raise LDPValueError("values is empty")
        if secrets is None:
            secrets = np.frombuffer(src.bytes(8 * n), dtype="<u8")
        secrets = np.asarray(secrets)
        if secrets.shape != (n,) or not np.issubdtype(secrets.dtype, np.integer):
            raise LDPTypeError(f"secrets must be {n} integers, got {secrets.dtype} {secrets.shape}")
        cohorts = self.cohort_of(secrets)
        permanent = self._permanent(values, secrets, self.filter_positions(values, cohorts))
        return RapporReports(cohorts, randomized_response_packed(src, permanent.shape, np.nonzero(permanent),
                                                                 self.q, self.p))

    def encode(self, values):
        raise LDPTypeError("RAPPOR encodes inside privatize(values, secrets=...)")

    # -- server ---------------------------------------------------------------------------
    def check_reports(self, reports):
        if not isinstance(reports, tuple) or len(reports) != 2:
            raise LDPTypeError("RAPPOR reports are a (cohorts, bits) pair, as privatize returns")
        cohorts = check_array(reports[0], np.int64, (), "cohorts")
        check_range(cohorts, self.num_cohorts, "cohorts")
        packed = bits.check_packed(reports[1], self.num_bits)
        if len(packed) != len(cohorts):
            raise LDPValueError(f"{len(cohorts)} cohorts for {len(packed)} reports")
        return RapporReports(cohorts, packed)

    def aggregate(self, reports):
        """Per cohort: the bit counts and, in the last column, the number of reports."""
        reports = self.check_reports(reports)
        counts = grouped_column_sums(reports.cohorts, reports.bits, self.num_cohorts, self.num_bits)
        return SupportCounts(self, counts, len(reports.cohorts))

    def empty_aggregate(self):
        return SupportCounts(self, np.zeros((self.num_cohorts, self.num_bits + 1), np.int64), 0)

    def debias(self, aggregate):
        """t̂ (cohorts × bits): unbiased number of users of each cohort whose filter has each bit,
        and its variance [t q*(1−q*) + (N_c − t) p*(1−p*)]/(q* − p*)² at t = clip(t̂, 0, N_c)."""
        counts = self.check_aggregate(aggregate).counts
        return debias_counts(counts[:, :-1], counts[:, -1:], self.p_star, self.q_star)

    def estimate(self, aggregate, candidates=None, alpha=0.05):
        """Fit candidate counts by weighted non-negative least squares.

        Returns :class:`CandidateEstimates`: counts, standard errors (weighted least squares on the
        candidates kept by NNLS) and ``significant`` (z > Φ⁻¹(1 − α/M), Bonferroni over M candidates).
        """
        if candidates is None:
            raise LDPTypeError("RAPPOR.estimate needs candidates=[...] (the values to look for)")
        candidates = list(candidates)
        agg = self.check_aggregate(aggregate)
        t_hat, var = self.debias(agg)
        sizes = agg.counts[:, -1].astype(float)
        share = sizes / max(agg.n, 1)
        cohorts = np.arange(self.num_cohorts)
        design = np.zeros((self.num_cohorts, self.num_bits, len(candidates)))
        for c in cohorts:
            pos = self.filter_positions(candidates, np.full(len(candidates), c))
            for i in range(self.num_hashes):
                design[c, pos[:, i], np.arange(len(candidates))] = share[c]
        X = design.reshape(-1, len(candidates))
        w = 1 / np.sqrt(np.maximum(var.ravel(), 1e-12))
        keep = np.repeat(sizes > 0, self.num_bits)
        Xw, yw = X[keep] * w[keep, None], t_hat.ravel()[keep] * w[keep]
        counts = nnls(Xw, yw)
        stderr = np.full(len(candidates), np.inf)
        active = counts > 0
        if active.any():
            cov = np.linalg.pinv(Xw[:, active].T @ Xw[:, active])
            stderr[active] = np.sqrt(np.diag(cov))
        z = NormalDist().inv_cdf(1 - alpha / max(len(candidates), 1))
        return CandidateEstimates(candidates, counts, stderr, counts > z * stderr)

    def output_distribution(self, value, cohort=0):
        """Exact Pr[one report | value, cohort] (marginal over the secret). Small num_bits only."""
        return bit_vector_distribution(self._filter(value, cohort), self.p_star, self.q_star)

    def permanent_distribution(self, value, cohort=0):
        """Exact Pr[B' | value, cohort]: what infinitely many reports reveal. Small num_bits only."""
        return bit_vector_distribution(self._filter(value, cohort), 1 - self.f / 2, self.f / 2)

    def _filter(self, value, cohort):
        filt = np.zeros(self.num_bits, dtype=bool)
        filt[self.filter_positions([value], [cohort])[0]] = True
        return filt
