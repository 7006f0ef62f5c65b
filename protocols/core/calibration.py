"""The privacy accountant of the frequency oracles: ε ↔ (p, q) for every mechanism (docs/privacy.md).

Each function returns the probabilities that spend exactly a budget ε (or the ε that given
probabilities spend); the mechanisms only call them.

* one bit flipped with Pr[1|1] = p, Pr[1|0] = q: ε = ln(p(1 − q)/((1 − p)q)) (:func:`log_ratio`);
* k-ary randomized response (GRR, local hashing's buckets, binary RR, Hadamard's halves):
  p = e^ε/(e^ε + k − 1), q = 1/(e^ε + k − 1) (Kairouz, Oh, Viswanath 2014);
* unary encoding, two bits differ: SUE p = e^{ε/2}/(e^{ε/2} + 1) = 1 − q; OUE p = 1/2,
  q = 1/(e^ε + 1) (Wang et al., USENIX Security 2017);
* THE: p = 1 − e^{(θ−1)ε/2}/2, q = e^{−θε/2}/2, θ ∈ (1/2, 1) minimising q(1 − q)/(p − q)²;
* k-subset selection: p* = k e^ε/(k e^ε + d − k), q* = p*(k − 1)/(d − 1) + (1 − p*)k/(d − 1)
  (Ye & Barg, IEEE Trans. IT 2018).
"""

from __future__ import annotations

import math

from protocols.core.lazy import optimize


def log_ratio(p: float, q: float) -> float:
    """ε of one bit reported 1 with probability p if set and q if not: ln(p(1 − q)/((1 − p)q)).

    Parameters
    ----------
    p, q : float
        Pr[1 | 1] and Pr[1 | 0], 0 < q < p < 1.

    Returns
    -------
    float
        The largest log-likelihood ratio of the two inputs over both outputs.
    """
    return math.log(p * (1 - q) / ((1 - p) * q))


def grr_probabilities(epsilon: float, k: int) -> tuple[float, float]:
    """(p, q) = (e^ε/(e^ε + k − 1), 1/(e^ε + k − 1)): randomized response over k outputs.

    Parameters
    ----------
    epsilon : float
        Budget ε > 0.
    k : int
        Number of outputs, >= 2.

    Returns
    -------
    (float, float)
        Pr[the true output] and Pr[each other output].

    References
    ----------
    Kairouz, Oh, Viswanath, "Extremal mechanisms for local differential privacy", NeurIPS 2014.
    """
    denom = math.exp(epsilon) + k - 1
    return math.exp(epsilon) / denom, 1 / denom


def sue_probabilities(epsilon: float) -> tuple[float, float]:
    """SUE's (p, q) = (e^{ε/2}/(e^{ε/2} + 1), 1/(e^{ε/2} + 1)): ε split over two flipped bits.

    Parameters
    ----------
    epsilon : float
        Budget ε > 0 of two bits that differ.

    Returns
    -------
    (float, float)
        Pr[1 | 1] and Pr[1 | 0].

    References
    ----------
    Wang, Blocki, Li, Jha, "Locally differentially private protocols for frequency
    estimation", USENIX Security 2017.
    """
    half = math.exp(epsilon / 2)
    return half / (half + 1), 1 / (half + 1)


def oue_probabilities(epsilon: float) -> tuple[float, float]:
    """OUE's (p, q) = (1/2, 1/(e^ε + 1)), the variance-optimal unary encoding.

    Parameters
    ----------
    epsilon : float
        Budget ε > 0 of two bits that differ.

    Returns
    -------
    (float, float)
        Pr[1 | 1] and Pr[1 | 0].

    References
    ----------
    Wang, Blocki, Li, Jha, USENIX Security 2017, Section 4.2.
    """
    return 0.5, 1 / (math.exp(epsilon) + 1)


def the_probabilities(epsilon: float, theta: float) -> tuple[float, float]:
    """(p, q) of THE: p = 1 − F(θ − 1), q = 1 − F(θ), F the CDF of Laplace(0, 2/ε).

    Parameters
    ----------
    epsilon : float
        Budget ε > 0 of the underlying SHE.
    theta : float
        Threshold in (1/2, 1).

    Returns
    -------
    (float, float)
        Pr[1 | 1] = 1 − e^{(θ−1)ε/2}/2 and Pr[1 | 0] = e^{−θε/2}/2.

    References
    ----------
    Wang, Blocki, Li, Jha, USENIX Security 2017, Section 4.3.
    """
    b = 2 / epsilon
    return 1 - 0.5 * math.exp((theta - 1) / b), 0.5 * math.exp(-theta / b)


def optimal_theta(epsilon: float) -> float:
    """θ in (1/2, 1) minimising THE's variance factor q(1 − q)/(p − q)².

    A bounded Brent search (:func:`scipy.optimize.minimize_scalar`); the factor is unimodal on
    the interval.

    Parameters
    ----------
    epsilon : float
        Budget ε > 0.

    Returns
    -------
    float
        The optimal θ.
    """
    def cost(theta):
        p, q = the_probabilities(epsilon, theta)
        return q * (1 - q) / (p - q) ** 2

    return float(optimize.minimize_scalar(cost, bounds=(0.5, 1.0), method="bounded",
                                 options={"xatol": 1e-12}).x)


def subset_probabilities(epsilon: float, d: int, k: int) -> tuple[float, float]:
    """(p*, q*) of k-subset selection over d values: Pr[v in the subset | v] and | not v.

    p* = k e^ε/(k e^ε + d − k), q* = p*(k − 1)/(d − 1) + (1 − p*)k/(d − 1).

    Parameters
    ----------
    epsilon : float
        Budget ε > 0.
    d : int
        Domain size.
    k : int
        Subset size, 1 <= k < d.

    Returns
    -------
    (float, float)
        p* and q*.

    References
    ----------
    M. Ye, A. Barg, IEEE Trans. Inf. Theory 64(8), 2018.
    """
    e = math.exp(epsilon)
    p_star = k * e / (k * e + d - k)
    return p_star, p_star * (k - 1) / (d - 1) + (1 - p_star) * k / (d - 1)
