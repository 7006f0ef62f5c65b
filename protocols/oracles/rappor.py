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
of cohort c whose filter has bit j. Candidates are decoded as published (Erlingsson et al. 2014,
Section 5): Lasso on the candidate design matrix selects candidates, least squares on the selected
ones gives counts, standard errors and p-values, and a Bonferroni (or Benjamini–Hochberg)
threshold keeps the significant ones; ``method="nnls"`` fits non-negative least squares weighted
by the analytic variance of t̂ instead.

Permanent randomness comes from MurmurHash3 of (secret, value) keyed per bit: uniform, but not a
cryptographic PRF; a deployment wanting RAPPOR's HMAC guarantee should derive it from HMAC.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.lazy import stats
from protocols.core.validation import check_int, check_probability
from protocols.core.calibration import log_ratio
from protocols.core.base import RNG, FrequencyOracle, SupportCounts
from protocols.errors import LDPTypeError, LDPValueError
from protocols.core.hashing import as_keys, deduplicate, hash_keys, murmur3_fixed
from protocols.core.memo import mechanism_word
from protocols.core.randomness import randomized_response_packed, source
from protocols.core.perturbation import bit_vector_distribution, check_grouped_reports, debias_counts, grouped_column_sums


class RapporReports(NamedTuple):
    """A batch of RAPPOR reports.

    Attributes
    ----------
    cohorts : numpy.ndarray
        int64 cohort of each user (n,).
    bits : numpy.ndarray
        uint8 packed reports (n, ⌈num_bits/8⌉).
    """

    cohorts: np.ndarray
    bits: np.ndarray


class CandidateEstimates(NamedTuple):
    """Frequency estimates of candidate values.

    Attributes
    ----------
    candidates : list
        The values looked for.
    counts, stderr : numpy.ndarray
        Estimated counts and their standard errors.
    significant : numpy.ndarray
        bool: the count passes the multiple test.
    p_values : numpy.ndarray
        One-sided p-values of H0: the count is 0.
    """

    candidates: list
    counts: np.ndarray
    stderr: np.ndarray
    significant: np.ndarray
    p_values: np.ndarray


def nnls(A: np.ndarray, b: np.ndarray, max_iter: int | None = None) -> np.ndarray:
    """Non-negative least squares min ‖Ax − b‖, x ≥ 0 (active-set method).

    Parameters
    ----------
    A : numpy.ndarray
        Design matrix (m, n).
    b : numpy.ndarray
        Right-hand side (m,).
    max_iter : int, optional
        Outer iterations; default 3n.

    Returns
    -------
    numpy.ndarray
        x (n,), x >= 0.

    References
    ----------
    C. L. Lawson, R. J. Hanson, "Solving least squares problems", Prentice-Hall 1974, ch. 23.
    """
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


def lasso_select(X: np.ndarray, y: np.ndarray, limit: int) -> np.ndarray:
    """Columns selected by the positive Lasso path (scikit-learn's coordinate descent, as glmnet
    with ``lower.limits = 0`` in RAPPOR's analysis): the solution at the smallest penalty of the
    path (100 penalties down to 10^-4 of the largest) with at most ``limit`` non-zero columns.

    Parameters
    ----------
    X : numpy.ndarray
        Design matrix (rows, M), centred.
    y : numpy.ndarray
        Response (rows,), centred.
    limit : int
        Most columns selected.

    Returns
    -------
    numpy.ndarray
        bool (M,): the selected columns.

    Raises
    ------
    ImportError
        scikit-learn is not installed.

    References
    ----------
    R. Tibshirani, "Regression shrinkage and selection via the lasso", JRSS B 58(1), 1996.
    """
    try:
        from sklearn.linear_model import lasso_path
    except ImportError:
        raise ImportError("RAPPOR's Lasso decoder needs scikit-learn: pip install 'bfrrce[rappor]', "
                          "or use method='nnls'") from None
    if not np.any(X.T @ y > 0):
        return np.zeros(X.shape[1], dtype=bool)
    _, coefs, _ = lasso_path(X, y, positive=True, eps=1e-4)      # 100 penalties
    nonzero = (coefs > 0).sum(axis=0)
    return coefs[:, np.flatnonzero(nonzero <= limit)[-1]] > 0


def ols_fit(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ordinary least squares with standard errors and one-sided p-values.

    Parameters
    ----------
    X : numpy.ndarray
        Design matrix (rows, columns), rows > columns.
    y : numpy.ndarray
        Response (rows,).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        Coefficients β, standard errors σ̂·sqrt(diag (XᵀX)⁻¹) with σ̂² = RSS/(rows − columns),
        and p-values Pr[t_dof >= β/se].

    Raises
    ------
    LDPValueError
        No degrees of freedom left.
    """
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    dof = X.shape[0] - X.shape[1]
    if dof <= 0:
        raise LDPValueError(f"{X.shape[1]} selected candidates for {X.shape[0]} equations")
    sigma2 = np.sum((y - X @ beta) ** 2) / dof
    se = np.sqrt(sigma2 * np.diag(np.linalg.pinv(X.T @ X)))
    return beta, se, stats.t.sf(beta / se, dof)


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

    References
    ----------
    Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: randomized aggregatable privacy-preserving
    ordinal response", CCS 2014.
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
    def epsilon(self) -> float:
        """ε of one report: h·ln(q*(1 − p*)/(p*(1 − q*)))."""
        return self.num_hashes * log_ratio(self.p_star, self.q_star)

    @property
    def epsilon_permanent(self) -> float:
        """ε of infinitely many reports of one value: 2h·ln((1 − f/2)/(f/2))."""
        return 2 * self.num_hashes * math.log((1 - self.f / 2) / (self.f / 2))

    # -- client ---------------------------------------------------------------------------
    def cohort_of(self, secrets: ArrayLike) -> np.ndarray:
        """Cohort of each user: murmur3(secret) mod num_cohorts.

        Parameters
        ----------
        secrets : array_like of uint64
            The users' 64-bit secrets.

        Returns
        -------
        numpy.ndarray
            int64 cohorts in [0, num_cohorts).
        """
        keys = np.asarray(secrets, dtype="<u8").reshape(-1, 1).view(np.uint8)
        return (murmur3_fixed(keys, 0x5EED) % np.uint32(self.num_cohorts)).astype(np.int64)

    def filter_positions(self, values: ArrayLike, cohorts: ArrayLike) -> np.ndarray:
        """Bloom filter positions of each value in its cohort: murmur3 with seed c·h + i.

        Parameters
        ----------
        values : array_like or list
            Keys (ints, str or bytes).
        cohorts : array_like of int
            The cohort of each value.

        Returns
        -------
        numpy.ndarray
            int64 (n, num_hashes) in [0, num_bits).
        """
        cohorts = np.asarray(cohorts, dtype=np.int64)
        values = as_keys(values)
        out = np.empty((len(cohorts), self.num_hashes), dtype=np.int64)
        for c in np.unique(cohorts):
            rows = np.flatnonzero(cohorts == c)
            subset = values[rows]
            seeds = int(c) * self.num_hashes + np.arange(self.num_hashes)
            out[rows] = hash_keys(subset, seeds) % np.uint32(self.num_bits)
        return out

    def _permanent(self, values, secrets, positions):
        """B' for each user: a deterministic function of (secret, value), with the f/2, f/2, 1 − f law."""
        n = len(secrets)
        value_hash = hash_keys(values, [0x7A3]).astype(np.uint64)[:, 0]
        word = np.full(n, mechanism_word(self), dtype=np.int64).astype(np.uint64)
        keys = np.stack([np.asarray(secrets, dtype=np.uint64), value_hash, word], axis=1).astype("<u8")
        key_bytes = keys.view(np.uint8).reshape(n, 24)
        u = np.stack([murmur3_fixed(key_bytes, j) for j in range(self.num_bits)], axis=1)
        u = u.astype(np.float64) * 2.0 ** -32   # uniform on a 2^-32 grid
        filt = np.zeros((n, self.num_bits), dtype=bool)
        filt[np.arange(n)[:, None], positions] = True
        return np.where(u < self.f / 2, True, np.where(u < self.f, False, filt))

    def privatize(self, values: ArrayLike, rng: RNG = None, secrets: ArrayLike | None = None) -> RapporReports:
        """Reports of a batch of values (any keys: ints, str, bytes).

        Parameters
        ----------
        values : array_like or sequence
            Keys (ints, str or bytes).
        rng : None, int or numpy.random.Generator
            None: the OS CSPRNG (clients); a seed or generator for simulations only.
        secrets : array_like of uint64, optional
            One per user: makes the permanent response and the cohort repeat across calls, as
            RAPPOR requires; without them, fresh secrets are drawn (one-shot use).

        Returns
        -------
        RapporReports

        Raises
        ------
        LDPValueError
            No values.
        LDPTypeError
            Secrets that are not one integer per value.
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

    def encode(self, values: ArrayLike, cohorts: ArrayLike | None = None) -> np.ndarray:
        """The Bloom filters B of ``values`` in their ``cohorts``.

        Parameters
        ----------
        values : array_like or sequence
            Keys (ints, str or bytes).
        cohorts : array_like of int, optional
            Default cohort 0 for every value; :meth:`privatize` derives each user's cohort
            from its secret (:meth:`cohort_of`) and perturbs these filters.

        Returns
        -------
        numpy.ndarray
            bool (n, num_bits).

        Raises
        ------
        LDPValueError
            No values.
        """
        if len(values) == 0:
            raise LDPValueError("values is empty")
        cohorts = np.zeros(len(values), dtype=np.int64) if cohorts is None else cohorts
        filters = np.zeros((len(values), self.num_bits), dtype=np.bool_)
        filters[np.arange(len(values))[:, None], self.filter_positions(values, cohorts)] = True
        return filters

    # -- server ---------------------------------------------------------------------------
    def check_reports(self, reports: RapporReports) -> RapporReports:
        """``reports`` if they are (cohorts, packed bits) of this mechanism.

        Parameters
        ----------
        reports : RapporReports or (array, array)

        Returns
        -------
        RapporReports

        Raises
        ------
        LDPTypeError
            Not a pair, or arrays of another dtype.
        IncompatibleError
            Another shape or range.
        LDPValueError
            Cohorts and bits of different lengths.
        """
        return RapporReports(*check_grouped_reports(reports, self.num_cohorts, self.num_bits, "RAPPOR",
                                                    "cohorts"))

    def aggregate(self, reports: RapporReports) -> SupportCounts:
        """Per cohort: the bit counts and, in the last column, the number of reports.

        Parameters
        ----------
        reports : RapporReports

        Returns
        -------
        SupportCounts
            counts (num_cohorts, num_bits + 1).
        """
        reports = self.check_reports(reports)
        counts = grouped_column_sums(reports.cohorts, reports.bits, self.num_cohorts, self.num_bits)
        return SupportCounts(self, counts, len(reports.cohorts))

    def empty_aggregate(self) -> SupportCounts:
        """The aggregate of no reports.

        Returns
        -------
        SupportCounts
        """
        return SupportCounts(self, np.zeros((self.num_cohorts, self.num_bits + 1), np.int64), 0)

    def debias(self, aggregate: SupportCounts) -> tuple[np.ndarray, np.ndarray]:
        """Unbiased number of users of each cohort whose filter has each bit, with its variance.

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this mechanism.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            t̂ (cohorts × bits) and [t q*(1−q*) + (N_c − t) p*(1−p*)]/(q* − p*)² at the plug-in
            t = clip(t̂, 0, N_c) (:func:`protocols.core.perturbation.debias_counts`).
        """
        counts = self.check_aggregate(aggregate).counts
        return debias_counts(counts[:, :-1], counts[:, -1:], self.p_star, self.q_star)

    def design_matrix(self, candidates: Sequence) -> np.ndarray:
        """X (cohorts·bits × M): 1 where candidate v's Bloom filter in cohort c has bit j.

        Parameters
        ----------
        candidates : sequence
            M keys.

        Returns
        -------
        numpy.ndarray
            float (num_cohorts·num_bits, M).
        """
        candidates = list(candidates)
        M = len(candidates)
        X = np.zeros((self.num_cohorts, self.num_bits, M))
        for c in range(self.num_cohorts):
            pos = self.filter_positions(candidates, np.full(M, c))
            X[c, pos, np.arange(M)[:, None]] = 1.0
        return X.reshape(-1, M)

    def estimate(self, aggregate: SupportCounts, candidates: Sequence | None = None, alpha: float = 0.05,
                 method: str = "lasso", correction: str = "bonferroni",
                 max_selected: int | None = None) -> CandidateEstimates:
        """Counts of candidate values, with standard errors, p-values and a significance flag.

        Parameters
        ----------
        aggregate : SupportCounts
            An aggregate of this mechanism.
        candidates : sequence
            The values to look for (M of them).
        alpha : float
            Level of the multiple test.
        method : {"lasso", "nnls"}
            ``"lasso"`` (as published: Erlingsson, Pihur, Korolova 2014, Section 5; Fanti, Pihur,
            Erlingsson 2016): y_cj = t̂_cj / N_c, the estimated share of cohort c's users with bit j,
            is regressed on X (:meth:`design_matrix`) and an intercept; the positive Lasso path on
            the even cohorts selects at most ``max_selected`` candidates (default min(500,
            ⌊0.8·rows⌋), as RAPPOR's analysis code), then ordinary least squares on the odd cohorts
            (sample splitting: the cohorts' reports are independent, so the p-values are valid for
            the candidates selected; with one cohort both steps use it) on the intercept and the
            selected columns
            gives the shares β, standard errors σ̂·sqrt(diag (X_SᵀX_S)⁻¹) with σ̂² = RSS/(rows − |S| − 1),
            and one-sided p-values Pr[t_dof ≥ β/se]. The (unpenalized) intercept is our addition:
            values outside the candidate list set bits uniformly at random, and without it their
            mass goes to the candidates (see tests/protocols/oracles/test_rappor.py). Needs scikit-learn
            (``pip install bfrrce[rappor]``).
            ``"nnls"``: non-negative least squares on t̂ weighted by its analytic variance
            (:meth:`debias`), standard errors of weighted least squares on the kept candidates,
            p-values 1 − Φ(count/se).
        correction : {"bonferroni", "bh"}
            ``significant``: p < α/M (Bonferroni), or Benjamini–Hochberg at false discovery rate α.
        max_selected : int, optional
            Most candidates the Lasso selects (``"lasso"`` only).

        Returns
        -------
        CandidateEstimates
            counts (n·β), stderr, significant, p_values; candidates not selected have count 0,
            stderr inf and p-value 1.

        Raises
        ------
        LDPTypeError
            No candidates.
        LDPValueError
            An unknown ``method`` or ``correction``.

        References
        ----------
        Erlingsson, Pihur, Korolova, CCS 2014, Section 5; G. Fanti, V. Pihur, Ú. Erlingsson,
        "Building a RAPPOR with the unknown", PoPETs 2016; Y. Benjamini, Y. Hochberg, JRSS B 1995.
        """
        if candidates is None:
            raise LDPTypeError("RAPPOR.estimate needs candidates=[...] (the values to look for)")
        if correction not in ("bonferroni", "bh"):
            raise LDPValueError(f"correction must be 'bonferroni' or 'bh', got {correction!r}")
        fit = {"lasso": self._fit_lasso, "nnls": self._fit_nnls}.get(method)
        if fit is None:
            raise LDPValueError(f"method must be 'lasso' or 'nnls', got {method!r}")
        candidates = list(deduplicate(candidates))
        agg = self.check_aggregate(aggregate)
        sizes = agg.counts[:, -1]
        keep = np.repeat(sizes > 0, self.num_bits)
        counts, stderr, p_values = fit(agg, self.design_matrix(candidates)[keep], keep, max_selected)
        if correction == "bonferroni":
            significant = p_values < alpha / max(len(candidates), 1)
        else:
            significant = stats.false_discovery_control(p_values) <= alpha
        return CandidateEstimates(candidates, counts, stderr, significant, p_values)

    def _fit_lasso(self, agg, X, keep, max_selected):
        t_hat, _ = self.debias(agg)
        y = (t_hat / np.maximum(agg.counts[:, -1:], 1)).ravel()[keep]
        rows, M = X.shape
        limit = (min(500, int(0.8 * rows)) if max_selected is None
                 else check_int(max_selected, "max_selected", 1))
        counts, stderr, p_values = np.zeros(M), np.full(M, np.inf), np.ones(M)
        cohort = np.repeat(np.arange(self.num_cohorts), self.num_bits)[keep]
        choose = cohort % 2 == 0 if self.num_cohorts >= 2 and len(np.unique(cohort % 2)) == 2 \
            else np.ones(rows, dtype=bool)
        fit = ~choose if not choose.all() else choose
        Xs, ys = X[choose], y[choose]
        selected = lasso_select(Xs - Xs.mean(axis=0), ys - ys.mean(), min(limit, max(1, int(0.8 * len(ys)))))
        if not len(selected):
            return counts, stderr, p_values
        beta, se, p = ols_fit(np.column_stack([np.ones(int(fit.sum())), X[fit][:, selected]]), y[fit])
        counts[selected], stderr[selected], p_values[selected] = agg.n * beta[1:], agg.n * se[1:], p[1:]
        return counts, stderr, p_values

    def _fit_nnls(self, agg, X, keep, max_selected=None):
        t_hat, var = self.debias(agg)
        share = np.repeat(agg.counts[:, -1] / max(agg.n, 1), self.num_bits)[keep]
        w = 1 / np.sqrt(np.maximum(var.ravel()[keep], 1e-12))
        Xw, yw = X * (share * w)[:, None], t_hat.ravel()[keep] * w
        counts = nnls(Xw, yw)
        stderr, p_values = np.full(X.shape[1], np.inf), np.ones(X.shape[1])
        active = counts > 0
        if active.any():
            cov = np.linalg.pinv(Xw[:, active].T @ Xw[:, active])
            stderr[active] = np.sqrt(np.diag(cov))
            p_values[active] = stats.norm.sf(counts[active] / stderr[active])
        return counts, stderr, p_values

    def output_distribution(self, value: int | str | bytes, cohort: int = 0) -> dict[bytes, float]:
        """Exact law of one report in a cohort (marginal over the secret). Small num_bits only.

        Parameters
        ----------
        value : int, str or bytes
            A key.
        cohort : int
            The user's cohort.

        Returns
        -------
        dict
            {packed report (bytes): probability}.
        """
        return bit_vector_distribution(self.encode([value], [cohort])[0], self.p_star, self.q_star)

    def permanent_distribution(self, value: int | str | bytes, cohort: int = 0) -> dict[bytes, float]:
        """Exact law of the permanent response B': what infinitely many reports reveal.

        The audit of :attr:`epsilon_permanent`. Small num_bits only.

        Parameters
        ----------
        value : int, str or bytes
            A key.
        cohort : int
            The user's cohort.

        Returns
        -------
        dict
            {packed B' (bytes): probability}.
        """
        return bit_vector_distribution(self.encode([value], [cohort])[0], 1 - self.f / 2, self.f / 2)
