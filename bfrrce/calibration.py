"""The privacy accountant of BFRRCE: ε ↔ (p, q) for every unit, perturbation and per-bit mode.

See docs/privacy.md. Each bit of a Bloom filter is reported 1 with probability p if it is set
and q if not (p > q). Budgets:

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
  ε = 2l·ε_b (value) or l·ε_b (item); :func:`budget` reports it and warns.

References
----------
Wang, Blocki, Li, Jha, "Locally differentially private protocols for frequency estimation",
USENIX Security 2017.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

from protocols.core.validation import check_epsilon
from protocols.core.calibration import log_ratio, oue_probabilities, sue_probabilities
from protocols.errors import LDPValueError, PrivacyWarning

PERTURBATIONS = ("symmetric", "optimized")
UNITS = ("value", "item")


class DerivedEpsilon(float):
    """A user-level ε computed from a per-bit budget (a float).

    :class:`bfrrce.BFRRCE` stores its ``epsilon`` as this type in per-bit mode, so that
    ``dataclasses.replace`` (which passes every field back) recomputes it from
    ``per_bit_epsilon`` and the new parameters instead of refusing two budgets.

    Parameters
    ----------
    x : float
        The user-level ε (``DerivedEpsilon(x)`` as ``float(x)``).
    """

    __slots__ = ()


class Budget(NamedTuple):
    """The outcome of the accounting.

    Attributes
    ----------
    epsilon : float
        User-level ε.
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0].
    perturbation : str
        ``"symmetric"`` or ``"optimized"``.
    """

    epsilon: float
    p: float
    q: float
    perturbation: str


def user_epsilon(p: float, q: float, l: int, unit: str) -> float:
    """User-level ε of per-bit randomized response (p, q) on filters with l hashes.

    Parameters
    ----------
    p, q : float
        Pr[report bit 1 | bit 1] and Pr[report bit 1 | bit 0], 0 < q < p < 1.
    l : int
        Hashes per value.
    unit : {"value", "item"}
        What the budget protects.

    Returns
    -------
    float
        ``unit="value"``: l·ln(p(1 − q)/((1 − p)q)); ``unit="item"``:
        l·max(ln(p/q), ln((1 − q)/(1 − p))).
    """
    if unit == "value":
        return l * log_ratio(p, q)
    return l * max(math.log(p / q), math.log((1 - q) / (1 - p)))


def flip_probabilities(epsilon: float, l: int, perturbation: str, unit: str) -> tuple[float, float]:
    """(p, q) spending exactly ``epsilon`` at the user level (see the module docstring).

    The formulas are those of :mod:`protocols.core.calibration`: a one-hot SUE/OUE report spends its
    budget on one pair of bits, a filter on l pairs (unit "value") or on l single bits (unit "item").

    Parameters
    ----------
    epsilon : float
        User-level budget.
    l : int
        Hashes per value.
    perturbation : {"symmetric", "optimized"}
        SUE-like or OUE-like flips.
    unit : {"value", "item"}
        What the budget protects.

    Returns
    -------
    (float, float)
        p and q.

    Raises
    ------
    LDPValueError
        An unknown ``perturbation`` or ``unit``.

    References
    ----------
    Wang, Blocki, Li, Jha, USENIX Security 2017.
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


def per_bit_probabilities(per_bit_epsilon: float) -> tuple[float, float]:
    """The paper's RR_P = e^{ε_b}/(1 + e^{ε_b}) for each bit (symmetric).

    Parameters
    ----------
    per_bit_epsilon : float
        ε_b of one bit.

    Returns
    -------
    (float, float)
        p = e^{ε_b}/(1 + e^{ε_b}) and q = 1 − p.
    """
    return sue_probabilities(2 * per_bit_epsilon)


def budget(epsilon: float | None, per_bit_epsilon: float | None, l: int, perturbation: str | None,
           unit: str) -> Budget:
    """The whole accounting of one BFRRCE configuration.

    Parameters
    ----------
    epsilon : float or None
        User-level budget; None (or a :class:`DerivedEpsilon`) in per-bit mode.
    per_bit_epsilon : float or None
        The paper's per-bit budget ε_b; None unless in per-bit mode.
    l : int
        Hashes per value.
    perturbation : {"optimized", "symmetric"} or None
        None: "optimized" (per-bit mode: "symmetric", the only one it has).
    unit : {"value", "item"}
        What the budget protects.

    Returns
    -------
    Budget
        User-level ε (a :class:`DerivedEpsilon` in per-bit mode), p, q and the perturbation.

    Raises
    ------
    LDPValueError
        Both or neither budget, a bad name, or an ε so large that p or q rounds to 0 or 1.

    Warns
    -----
    PrivacyWarning
        In per-bit mode, with the user-level ε it amounts to.
    """
    if isinstance(epsilon, DerivedEpsilon) and per_bit_epsilon is not None:
        epsilon = None                                  # recomputed below (dataclasses.replace)
    if (epsilon is None) == (per_bit_epsilon is None):
        raise LDPValueError(f"give exactly one of epsilon and per_bit_epsilon, got epsilon={epsilon!r}, "
                            f"per_bit_epsilon={per_bit_epsilon!r}")
    if unit not in UNITS:
        raise LDPValueError(f"unit must be one of {UNITS}, got {unit!r}")
    if per_bit_epsilon is not None:
        if perturbation not in (None, "symmetric"):
            raise LDPValueError(f"per_bit_epsilon is the paper's symmetric perturbation only, got "
                                f"perturbation={perturbation!r}")
        given = check_epsilon(per_bit_epsilon, "per_bit_epsilon")
        p, q = per_bit_probabilities(given)
        perturbation = "symmetric"
    else:
        given = check_epsilon(epsilon)
        perturbation = perturbation or "optimized"
        p, q = flip_probabilities(given, l, perturbation, unit)
    if not (0.0 < q < p < 1.0):
        if 0.0 < q and p <= q:
            raise LDPValueError(f"epsilon={given!r} is too small: p and q round to the same float64, "
                                "so the reports carry no information")
        raise LDPValueError(f"epsilon={given!r} is too large: the flip probabilities round to 0 "
                            f"or 1 in float64 (p={p!r}, q={q!r})")
    if per_bit_epsilon is None:
        return Budget(given, p, q, perturbation)
    eps = DerivedEpsilon(user_epsilon(p, q, l, unit))
    warnings.warn(f"per_bit_epsilon={given} flips each bit with ε_b = {given}; the user-level "
                  f"guarantee is ε = {eps:.6g} (unit={unit!r}, l={l})", PrivacyWarning, stacklevel=4)
    return Budget(eps, p, q, perturbation)
