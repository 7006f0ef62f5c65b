"""Per-bit randomized response on Bloom filters and its privacy accounting (DESIGN §2).

Each bit is reported 1 with probability p if it is set and q if not (p > q). Budgets:

* ``unit="value"`` (one value per user, the paper's model): two filters differ in at most 2l
  bits, so ε = l·ln(p(1 − q)/((1 − p)q)).
    - symmetric (the paper; SUE on filter bits): p = 1 − q = e^{ε/(2l)}/(1 + e^{ε/(2l)});
    - optimized (OUE applied per pair of bits, Wang et al. 2017): p = 1/2, q = 1/(e^{ε/l} + 1).
* ``unit="item"`` (a party holding a set; add/remove one item): at most l bits go 0 → 1, so
  ε = l·max(ln(p/q), ln((1 − q)/(1 − p))).
    - symmetric: p = 1 − q = e^{ε/l}/(1 + e^{ε/l});
    - optimized: minimising q(1 − q)/(p − q)² on that budget's boundary gives the symmetric
      point again (checked numerically in the tests), so both names give the same (p, q).
* The paper's per-bit budget ε_b (p = e^{ε_b}/(1 + e^{ε_b}), symmetric) gives a user-level
  ε = 2l·ε_b (value) or l·ε_b (item); objects built that way report it and warn.
"""

from __future__ import annotations

import math

from protocols.base import log_ratio
from protocols.errors import LDPValueError
from protocols.ue import oue_probabilities, sue_probabilities

PERTURBATIONS = ("symmetric", "optimized")
UNITS = ("value", "item")


class PrivacyWarning(UserWarning):
    """The privacy guarantee is weaker than a parameter's name suggests."""


def user_epsilon(p, q, l, unit):
    """User-level ε of per-bit randomized response (p, q) on filters with l hashes."""
    if unit == "value":
        return l * log_ratio(p, q)
    return l * max(math.log(p / q), math.log((1 - q) / (1 - p)))


def flip_probabilities(epsilon, l, perturbation, unit):
    """(p, q) spending exactly ``epsilon`` at the user level (see the module docstring).

    The formulas are those of :mod:`protocols.ue`: a one-hot SUE/OUE report spends its budget on
    one pair of bits, a filter on l pairs (unit "value") or on l single bits (unit "item").
    """
    if perturbation not in PERTURBATIONS:
        raise LDPValueError(f"perturbation must be one of {PERTURBATIONS}, got {perturbation!r}")
    if unit not in UNITS:
        raise LDPValueError(f"unit must be one of {UNITS}, got {unit!r}")
    if unit == "item":                        # both perturbations: symmetric is optimal here
        return sue_probabilities(2 * epsilon / l)
    if perturbation == "symmetric":
        return sue_probabilities(epsilon / l)
    return oue_probabilities(epsilon / l)


def per_bit_probabilities(per_bit_epsilon):
    """The paper's RR_P = e^{ε_b}/(1 + e^{ε_b}) for each bit (symmetric)."""
    return sue_probabilities(2 * per_bit_epsilon)
