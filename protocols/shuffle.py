"""Privacy amplification by shuffling: the central (ε, δ) of n shuffled ε0-LDP reports.

A shuffler that receives one report from each of n users and outputs them in a uniformly random
order (no identities, no timing) turns ε0-LDP reports into a central (ε, δ)-DP release with
ε ≪ ε0 when n is large (Erlingsson et al., SODA 2019). This module gives the bounds of Feldman,
McMillan and Talwar ("Hiding Among the Clones", FOCS 2021, arXiv 2012.12803):

* ``method="closed_form"`` (their Theorem 3.1), for ε0 <= ln(n / (16 ln(2/δ))):

      ε = ln(1 + (e^ε0 − 1)/(e^ε0 + 1) · (8 √(e^ε0 ln(4/δ)) / √n + 8 e^ε0 / n));

* ``method="numerical"`` (the clone reduction behind it): for any ε0-DP randomizer the shuffled
  outputs on two neighbouring datasets are post-processings of P0 and P1, where
  C ~ Bin(n − 1, e^−ε0) users are "clones" of the differing user, A ~ Bin(C, 1/2) of them clones
  of its first input, Δ ~ Bern(e^ε0 / (e^ε0 + 1)), and
  P0 = (A + Δ, C − A + 1 − Δ), P1 = (A + 1 − Δ, C − A + Δ). δ(ε) = D_{e^ε}(P0 ‖ P1), the
  hockey-stick divergence, is computed exactly given C (a threshold in A, two binomial tails) and
  averaged over C; the central ε is the smallest ε with δ(ε) <= δ (bisection, rounded up).

Both are upper bounds for every ε0-LDP randomizer. For binary randomized response the shuffled
output is just the count of ones, so its exact (ε, δ) is computable (:func:`exact_shuffled_rr_delta`,
:func:`exact_shuffled_rr_epsilon`); the tests check that neither bound is ever below it.

The guarantee needs (docs/privacy.md, "Shuffling"): a shuffler trusted not to collude with the
analyst (it sees who sent what), exactly one report per user in the shuffled batch (a user
with k reports spends k of them), and the same randomizer for every user.
"""

from __future__ import annotations

import math

import numpy as np
from protocols.core.lazy import stats

from protocols.core.validation import check_epsilon, check_int, check_probability
from protocols.audit import hockey_stick
from protocols.errors import LDPValueError

METHODS = ("numerical", "closed_form")
_WINDOW = 12            # C is summed over mean ± 12 sd; the mass outside is added to δ in full
_TOLERANCE = 1e-9       # bisection stops when the bracket of ε is this narrow (relative to ε0)


def closed_form_limit(n: int, delta: float) -> float:
    """The largest ε0 for which the closed form holds: ln(n / (16 ln(2/δ))) (FMT21, Theorem 3.1).

    Parameters
    ----------
    n : int
        Shuffled reports.
    delta : float
        δ of the central guarantee, in (0, 1).

    Returns
    -------
    float
        −∞ when n <= 16 ln(2/δ) (no ε0 qualifies).
    """
    ratio = check_int(n, "n", 1) / (16 * math.log(2 / check_probability(delta, "delta")))
    return math.log(ratio) if ratio > 0 else -math.inf


def shuffled_delta(epsilon0: float, n: int, epsilon: float) -> float:
    """δ(ε) of the clone reduction: D_{e^ε}(P0 ‖ P1) averaged over C ~ Bin(n − 1, e^−ε0).

    Given C = c, the likelihood ratio P0/P1 at A + Δ = a is (p·r + 1 − p)/((1 − p)·r + p) with
    r = a/(c + 1 − a) and p = e^ε0/(e^ε0 + 1), increasing in a; so the positive part of
    P0 − e^ε P1 is the set a > β(c + 1), β = t/(1 + t), t = (e^ε p − 1 + p)/(p − e^ε (1 − p)), and
    its mass is two binomial tails of Bin(c, 1/2). The divergence is symmetric (a ↦ c + 1 − a maps
    P0 to P1), so one direction suffices.

    Parameters
    ----------
    epsilon0 : float
        ε of each local report.
    n : int
        Shuffled reports, >= 1.
    epsilon : float
        Central ε >= 0.

    Returns
    -------
    float
        An upper bound on the δ of the shuffled reports at ε (0 for ε >= ε0); the mass of C
        outside the summed range (mean ± 12 sd) is computed and added in full.

    References
    ----------
    V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal
    Analysis of Privacy Amplification by Shuffling", FOCS 2021 (arXiv 2012.12803), Theorem 3.2.
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int(n, "n", 1)
    epsilon = float(epsilon)
    if not epsilon >= 0:
        raise LDPValueError(f"epsilon must be >= 0, got {epsilon!r}")
    if epsilon >= eps0:
        return 0.0
    p = 1 / (1 + math.exp(-eps0))
    e = math.exp(epsilon)
    t = (e * p - (1 - p)) / (p - e * (1 - p))
    clones = stats.binom(n - 1, math.exp(-eps0))
    mean, sd = clones.mean(), clones.std()
    c = np.arange(max(int(mean - _WINDOW * sd) - 1, 0), min(int(mean + _WINDOW * sd) + 2, n - 1) + 1)
    k = np.floor(t / (1 + t) * (c + 1)).astype(np.int64) + 1      # the first a with P0 > e^ε P1
    half = stats.binom(c, 0.5)
    shifted, direct = half.sf(k - 2), half.sf(k - 1)              # Σ_{a>=k} b(a − 1), Σ_{a>=k} b(a)
    slice_delta = p * shifted + (1 - p) * direct - e * ((1 - p) * shifted + p * direct)
    outside = clones.cdf(c[0] - 1) + clones.sf(c[-1])
    return float(np.clip(np.dot(clones.pmf(c), np.maximum(slice_delta, 0.0)) + outside, 0.0, 1.0))


def _smallest_epsilon(delta_of, epsilon0, delta):
    """The smallest ε in [0, ε0] with delta_of(ε) <= δ, rounded up (delta_of decreases in ε)."""
    if delta_of(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, epsilon0
    while hi - lo > _TOLERANCE * epsilon0:
        mid = (lo + hi) / 2
        if delta_of(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def shuffled_epsilon(epsilon0: float, n: int, delta: float, method: str = "numerical") -> float:
    """Central ε of n shuffled ε0-LDP reports at the given δ (module docstring).

    Parameters
    ----------
    epsilon0 : float
        ε of each local report (a mechanism's ``epsilon``).
    n : int
        Shuffled reports, one per user, >= 1.
    delta : float
        δ of the central guarantee, in (0, 1).
    method : {"numerical", "closed_form"}
        FMT21's numerical bound (the tighter; milliseconds to a second) or their Theorem 3.1.

    Returns
    -------
    float
        ε such that the shuffled reports are (ε, δ)-DP; at most ε0 (shuffling never hurts: it
        is post-processing of n ε0-DP reports).

    Raises
    ------
    LDPValueError
        An unknown method, δ outside (0, 1), or for "closed_form" ε0 > ln(n / (16 ln(2/δ))),
        where Theorem 3.1 does not hold.

    References
    ----------
    V. Feldman, A. McMillan, K. Talwar, FOCS 2021 (arXiv 2012.12803), Theorems 3.1 and 3.2;
    Ú. Erlingsson et al., "Amplification by Shuffling", SODA 2019.

    Examples
    --------
    >>> round(shuffled_epsilon(4.0, 10**6, 1e-8), 3)
    0.064
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int(n, "n", 1)
    delta = check_probability(delta, "delta")
    if method == "numerical":
        return _smallest_epsilon(lambda eps: shuffled_delta(eps0, n, eps), eps0, delta)
    if method != "closed_form":
        raise LDPValueError(f"method must be one of {METHODS}, got {method!r}")
    limit = closed_form_limit(n, delta)
    if eps0 > limit:
        raise LDPValueError(
            f"the closed form (FMT21 Theorem 3.1) needs epsilon0 <= ln(n / (16 ln(2/delta))) = "
            f"{limit:.4g} for n={n}, delta={delta!r}; got epsilon0={eps0!r} (use method='numerical')")
    e0 = math.exp(eps0)
    gain = (e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4 / delta) / n) + 8 * e0 / n)
    return min(math.log1p(gain), eps0)


def largest_local_epsilon(central_epsilon: float, n: int, delta: float, method: str = "numerical",
                          maximum: float = 20.0) -> float:
    """The largest ε0 whose n shuffled reports are (central_epsilon, δ)-DP (bisection, rounded down).

    Parameters
    ----------
    central_epsilon : float
        The central target ε.
    n : int
        Shuffled reports.
    delta : float
        δ of the central guarantee, in (0, 1).
    method : {"numerical", "closed_form"}
        The bound used (:func:`shuffled_epsilon`); "closed_form" stays in its validity range.
    maximum : float
        The largest ε0 considered.

    Returns
    -------
    float
        ε0 >= central_epsilon (ε0 = central_epsilon always qualifies). "numerical" bisects on
        ε0 the δ of :func:`shuffled_delta` at ε = central_epsilon (each ε0 tried is accepted
        only if that δ is at most ``delta``, so the answer is valid whether or not the bound is
        monotone in ε0).
    """
    target = check_epsilon(central_epsilon, "central_epsilon")
    n, delta = check_int(n, "n", 1), check_probability(delta, "delta")
    top = check_epsilon(maximum, "maximum")
    if method == "closed_form":
        top = min(top, closed_form_limit(n, delta))
    elif method != "numerical":
        raise LDPValueError(f"method must be one of {METHODS}, got {method!r}")
    if top <= target:
        return target

    def fits(eps0):
        if method == "numerical":
            return shuffled_delta(eps0, n, target) <= delta
        return shuffled_epsilon(eps0, n, delta, method) <= target

    if fits(top):
        return top
    lo, hi = target, top
    while hi - lo > 1e-6 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _rr_count_laws(epsilon0, n, ones):
    """Laws of the count of ones in n shuffled binary-RR reports: the differing user holds 0 (P0)
    or 1 (P1), ``ones`` of the other n − 1 hold 1."""
    keep = 1 / (1 + math.exp(-epsilon0))
    rest = np.convolve(stats.binom.pmf(np.arange(ones + 1), ones, keep),
                       stats.binom.pmf(np.arange(n - ones), n - 1 - ones, 1 - keep))
    p0 = np.concatenate([keep * rest, [0.0]]) + np.concatenate([[0.0], (1 - keep) * rest])
    p1 = np.concatenate([(1 - keep) * rest, [0.0]]) + np.concatenate([[0.0], keep * rest])
    return p0, p1


def _exact_delta_of(epsilon0, n, ones):
    """ε ↦ exact δ(ε) of the shuffled count, worst over both directions and the ``ones`` given."""
    eps0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int(n, "n", 1)
    choices = range(n) if ones is None else [check_int(ones, "ones", 0, n - 1)]
    laws = [_rr_count_laws(eps0, n, m) for m in choices]

    def delta_of(eps):
        return max(max(hockey_stick(p0, p1, eps), hockey_stick(p1, p0, eps)) for p0, p1 in laws)

    return eps0, delta_of


def exact_shuffled_rr_delta(epsilon0: float, n: int, epsilon: float, ones: int | None = 0) -> float:
    """Exact δ(ε) of n shuffled binary randomized-response reports (the count of ones).

    Parameters
    ----------
    epsilon0 : float
        ε of each report (:class:`protocols.RandomizedResponse`).
    n : int
        Reports, >= 1 (O(n²) time in the convolution: up to ~10⁴).
    epsilon : float
        Central ε >= 0.
    ones : int or None
        Ones among the n − 1 other users (default 0); None: the worst over all 0..n − 1
        (O(n³): small n only).

    Returns
    -------
    float
        max over both directions of D_{e^ε}(P0 ‖ P1), P0/P1 the laws of the count when the
        differing user holds 0/1 (:func:`protocols.audit.hockey_stick`).
    """
    return _exact_delta_of(epsilon0, n, ones)[1](epsilon)


def exact_shuffled_rr_epsilon(epsilon0: float, n: int, delta: float, ones: int | None = 0) -> float:
    """Exact central ε of n shuffled binary randomized-response reports at δ.

    Parameters
    ----------
    epsilon0, n, ones
        As :func:`exact_shuffled_rr_delta`.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        The smallest ε with exact δ(ε) <= δ (bisection to 10⁻⁹·ε0, rounded up).
    """
    delta = check_probability(delta, "delta")
    eps0, delta_of = _exact_delta_of(epsilon0, n, ones)
    return _smallest_epsilon(delta_of, eps0, delta)
