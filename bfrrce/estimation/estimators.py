"""Cardinality estimators on debiased column sums (docs/estimation.md).

Every estimator has the same keyword signature (:data:`ESTIMATORS` maps the method names)::

    estimate_X(debiased, *, counts, q, L, l, confidence, positions=None, multiplicity=None,
               threshold=0.5) -> (value, std_error, interval, details)

``debiased`` is the :class:`bfrrce.sums.Debiased` view of the column sums, ``counts`` the raw
column sums c_j, ``q`` the flip probability of an unset bit, ``L`` and ``l`` the filter's size
and hashes, ``confidence`` the level of ``interval``; ``positions`` (candidates × l) are the
candidates' filter positions and ``multiplicity`` their column counts m_j (both needed by
``corrected``, ``positions`` by ``paper``); ``threshold`` is the paper's B″ threshold.
The caller (:meth:`bfrrce.BFRRCE.estimate`) wraps the tuple in a
:class:`~bfrrce.estimation.CardinalityEstimate` with the detection limit
(:mod:`bfrrce.estimation.detection`).

Methods
-------
``fill`` (domain-free)
    Estimate the fraction π₀ of columns no user touched, then invert the fill ratio
    (Whang et al. 1990; Swamidass & Baldi 2007): D̂ = ln π̂₀ / (l·ln(1 − 1/L)).
    π̂₀ comes from one of two null-proportion estimators, both with the exact null law of a
    column sum, c ~ Binomial(n, q), chosen by the signal-to-noise ratio of one value that a pilot
    estimate gives (:func:`null_proportion`):

    * below ``STOREY_BELOW`` = 4.5, Storey's (2002) thresholded count
      π̂₀ = #{c_j <= τ} / (L·F₀(τ)), τ = ⌊nq + σ_c⌋, F₀ the exact binomial CDF;
    * above, the Fourier estimator of Jin & Cai (JASA 2007),
        ψ(c) = ∫ w(ξ) Re[e^{iξ(c − nq)} / φ₀(ξ)] dξ,   φ₀(ξ) = E₀[e^{iξ(c − nq)}],
      with w the triangular (Fejér) weight on [−γ, γ] and γ tuned to one value's signal.
      E[ψ] = 1 exactly on an empty column and tends to 0 on a column whose t_j is large against
      the noise, so π̂₀ = mean ψ, with standard error sd(ψ)/√L (a linear statistic).

    Measured (``python -m benchmarks.null_proportion``, AARE): Storey's count is best when a
    value's signal is about 3σ_c (n = 10^4, ε = 4: 0.071 and 0.090 at L = 256 and 1024, against
    0.099 and 0.133 for the Fourier estimator), the Fourier estimator when it is 5σ_c or more
    (ε = 8: 0.036 and 0.021, against 0.060 and 0.086; n = 10^6, D = 0.5·L: 0.025 against 0.039).
    The choice follows the better one in every row of that table to within 0.004, except at
    n = 10^4, ε = 2, where values are below the detection limit and neither estimator sees them.
``corrected`` (candidates known)
    The same null-proportion estimate on the columns the candidates touch, inverted with the
    candidates' exact column multiplicities m_j: E[#empty] = Σ_j (1 − D/M)^{m_j}, which corrects
    for filter collisions; noise false positives are removed by the null model, and misses are
    what the detection limit reports. Also lists the candidates whose every bit passes a
    per-candidate test at false-positive rate ``alpha``.
``paper``
    The paper's baseline: reconstruct B″_j = [t̂_j > threshold] and count the candidates whose l
    bits are all set. Biased upwards by noise and collisions, downwards by misses; its standard
    error reflects only its own sampling noise.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom

from protocols.errors import LDPValueError

_NORMAL = NormalDist()
PILOT_GAMMA = 2.0              # γ·σ_c of the pilot estimate, σ_c the null count sd
GAMMA_RANGE = (0.5, 3.0)
STOREY_BELOW = 4.5             # per-value signal-to-noise below which Storey's count is used
SATURATED_BELOW = 0.05         # fewer empty columns than this: the filter is (nearly) full


def _z(confidence):
    if not 0 < confidence < 1:
        raise LDPValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return _NORMAL.inv_cdf(0.5 + confidence / 2)


def fourier_psi(counts, n, q, gamma, points=129):
    """ψ(c_j) for each column (see the module docstring), γ in count units."""
    xi = np.linspace(0.0, gamma, points)
    weight = 2 * (1 - xi / gamma) / gamma           # even weight on [−γ, γ] folded to [0, γ]
    log_phi0 = n * np.log(1 - q + q * np.exp(1j * xi)) - 1j * xi * n * q
    centred = np.asarray(counts, dtype=float) - n * q
    integrand = np.real(np.exp(1j * np.outer(centred, xi) - log_phi0)) * weight
    return np.trapezoid(integrand, xi, axis=1)


def storey_null_proportion(counts, n, q):
    """Storey's (2002) estimate π̂₀ = #{c_j <= τ} / (L·F₀(τ)) at τ = ⌊nq + σ_c⌋, F₀ the exact
    Binomial(n, q) CDF of an empty column; se from the binomial variance of the count."""
    counts = np.asarray(counts, dtype=float)
    tau = math.floor(n * q + math.sqrt(n * q * (1 - q)))
    f0 = float(binom.cdf(tau, n, q))
    below = np.mean(counts <= tau)
    b = min(max(below, 1 / counts.size), 1 - 1 / counts.size)        # keeps se > 0 at 0 or L
    return below / f0, math.sqrt(b * (1 - b) / counts.size) / f0


def null_proportion(counts, n, q, balls, method="auto"):
    """Estimate of the fraction of columns with t_j = 0; returns (π̂₀, se, details).

    ``balls(π₀)`` is the number of (value, hash) pairs that the columns hold when a fraction π₀
    of them is empty (l·D̂ by the caller's inversion). A pilot Fourier estimate at γ·σ_c = 2
    gives the signal of one value, μ₁ = Σ_j (c_j − nq) / balls(π̂₀), in units of σ_c (the
    signal-to-noise ratio). ``method="auto"`` uses Storey's count below a ratio of
    ``STOREY_BELOW`` and the tuned Fourier estimator above (measured crossover between 3.0 and
    5.5, ``python -m benchmarks.null_proportion``).

    Fourier: the kernel's resolution is tuned to one value's signal. A column holding signal μ
    has E[ψ] ≈ sinc²(γμ/2), zero at γμ = 2πk, so γ = 2π/μ₁ also zeroes the columns where k values
    collide (signal ≈ kμ₁), with γ·σ_c kept in [1/2, 3] (below, no gain; above, the variance
    explodes). Tuning to the mean signal of the occupied columns falls between the multiples and
    leaves side-lobe bias: at D/L = 0.8 its AARE is 0.129 against 0.036 (same benchmark).
    """
    if method not in ("auto", "fourier", "storey"):
        raise LDPValueError(f"method must be 'auto', 'fourier' or 'storey', got {method!r}")
    counts = np.asarray(counts, dtype=float)
    sigma = math.sqrt(n * q * (1 - q))
    pilot = fourier_psi(counts, n, q, min(PILOT_GAMMA / sigma, math.pi)).mean()
    snr = max(np.sum(counts - n * q) / max(balls(pilot), 1.0), 1e-12) / sigma
    if method == "storey" or (method == "auto" and snr < STOREY_BELOW):
        pi0, se = storey_null_proportion(counts, n, q)
        return pi0, se, {"null_estimator": "storey", "signal_to_noise": snr}
    g = min(max(2 * math.pi / snr, GAMMA_RANGE[0]), GAMMA_RANGE[1])
    psi = fourier_psi(counts, n, q, min(g / sigma, math.pi))
    return (psi.mean(), psi.std(ddof=1) / math.sqrt(psi.size),
            {"null_estimator": "fourier", "signal_to_noise": snr, "gamma_sigma": g})


def _fill_inverse(pi0, L, l):
    """D with (1 − 1/L)^{l·D} = π₀ (π₀ clipped to [1/(2L), 1])."""
    pi0 = min(max(pi0, 0.5 / L), 1.0)
    return math.log(pi0) / (l * math.log1p(-1 / L))


def _need_positions(method, positions):
    if positions is None:
        raise LDPValueError(f"method {method!r} needs the candidates' filter positions")
    return positions


def estimate_fill(debiased, *, counts, q, L, l, confidence, positions=None, multiplicity=None,
                  threshold=0.5):
    """Domain-free estimate: invert the fill ratio of the estimated empty columns (see the
    module docstring; ``positions``, ``multiplicity`` and ``threshold`` are not used)."""
    n = debiased.n
    pi0, se, null = null_proportion(counts, n, q, lambda pi: l * _fill_inverse(pi, L, l))
    z = _z(confidence)
    value = _fill_inverse(pi0, L, l)
    lo, hi = _fill_inverse(pi0 + z * se, L, l), _fill_inverse(pi0 - z * se, L, l)
    slope = 1 / (max(pi0, 0.5 / L) * l * -math.log1p(-1 / L))
    details = {"pi0": pi0, "pi0_stderr": se, **null, "saturated": pi0 < SATURATED_BELOW}
    return value, se * slope, (lo, hi), details


def _solve_candidates(empty, multiplicity):
    """x in [0, 1] with Σ_j (1 − x)^{m_j} = empty (the left side decreases in x; Brent's method)."""
    m = multiplicity[multiplicity > 0]
    empty = min(max(empty, 0.0), float(m.size))
    gap = lambda x: np.sum((1 - x) ** m) - empty  # noqa: E731
    if gap(1.0) >= 0:
        return 1.0
    if gap(0.0) <= 0:
        return 0.0
    return brentq(gap, 0.0, 1.0, xtol=1e-15)


def estimate_corrected(debiased, *, counts, q, L, l, confidence, positions=None, multiplicity=None,
                       threshold=0.5):
    """Candidate-domain estimate with the candidates' exact column multiplicities (see the
    module docstring; ``L``, ``l`` and ``threshold`` are not used)."""
    n = debiased.n
    n_candidates = len(_need_positions("corrected", positions))
    if multiplicity is None:
        raise LDPValueError("method 'corrected' needs the candidates' column multiplicities")
    touched = multiplicity > 0
    size = int(touched.sum())
    m = multiplicity[touched]
    columns_per_candidate = multiplicity.sum() / n_candidates     # l, less self-collisions

    def count(pi):
        return n_candidates * _solve_candidates(pi * size, m)

    pi0, se, null = null_proportion(np.asarray(counts)[touched], n, q,
                                    lambda pi: columns_per_candidate * count(pi))
    z = _z(confidence)
    value = count(pi0)
    lo, hi = count(min(pi0 + z * se, 1.0)), count(max(pi0 - z * se, 0.0))
    x = value / n_candidates
    slope = n_candidates * size / max(np.sum(m * (1 - x) ** np.maximum(m - 1, 0)), 1e-12)
    details = {"pi0": pi0, "pi0_stderr": se, **null, "columns": size,
               "saturated": pi0 < SATURATED_BELOW}
    return value, se * slope, (lo, hi), details


def estimate_paper(debiased, *, counts, q, L, l, confidence, positions=None, multiplicity=None,
                   threshold=0.5):
    """The paper's threshold estimator over the candidates (see the module docstring; only
    ``positions``, ``threshold`` and ``confidence`` are used)."""
    positions = _need_positions("paper", positions)
    passed = debiased.t_hat > threshold
    hit = passed[positions].all(axis=1)
    value = float(hit.sum())
    sd = np.sqrt(np.maximum(debiased.variance, 1e-300))
    prob = np.array([_NORMAL.cdf(x) for x in ((debiased.t_hat - threshold) / sd)])
    pi = prob[positions].prod(axis=1)
    se = float(np.sqrt(np.sum(pi * (1 - pi))))
    z = _z(confidence)
    return value, se, (max(value - z * se, 0.0), value + z * se), {"threshold": threshold}




ESTIMATORS = {"fill": estimate_fill, "corrected": estimate_corrected, "paper": estimate_paper}
