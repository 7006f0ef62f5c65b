"""Bounds that survive fake users: an interval on the honest users' distinct values that holds
whatever at most β·N of the N reports counted sent (docs/manipulation.md, "Bounds that survive
fakes").

With m = ⌊β·N⌋ fakes, f_j <= m of them set column j and the honest sums are c_j − f_j over
n_h in [N − m, N] reports.

lower
    A column whose sum exceeds τ, the 1 − α/(2L) quantile of Binomial(N, q), is occupied by
    honest values (no empty column reaches it, with probability 1 − α/2, and the honest null
    Binomial(n_h, q) is lower still) unless fakes lifted it: lifting column j past τ takes
    c_j − τ of the fakes' ones (at most m), and the fakes hold at most m·w ones in all, w the most
    ones a fake report has (L, or the weight screen's upper bound when the reports were
    screened). So the honest occupied columns are at least the columns above τ less the most of
    them that m·w ones can account for (the smallest excesses first), and the collision law
    turns them into values.
upper
    t̂_j computed with N reports is t̂_h,j + (f_j − m·q)/(p − q). So the honest mass in any set H
    of columns is at least Σ_{j∈H} t̂_j − Σ_j f_j/(p − q) >= Σ_{j∈H} t̂_j − m·w/(p − q), w the most
    ones a fake report has (L, or the weight screen's upper bound when the reports were
    screened), and the honest mass outside H at most Σ_{j∉H} t̂_j + (L − |H|)·m·q/(p − q). The
    mass-balance bound (:func:`bfrrce.estimation.bounds.upper_bound`, with l·N >= l·n_h) takes
    the larger of the two shifts on its users outside H; the fakes are sent without seeing the
    honest reports, so the selection of H stays a threshold on sums with a fixed offset per
    column. Without a weight bound (w = L) the shift exceeds n at any real share of fakes: fakes
    can claim any mass, and the upper bound is n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from protocols.core.validation import check_int, check_probability
from protocols.errors import LDPValueError

from .estimation import bounds, occupancy
from .estimation.design import Observed
from .sums import ColumnSums


@dataclass(frozen=True)
class RobustInterval:
    """The interval of :func:`robust_interval`.

    Attributes
    ----------
    lower, upper : float
        Bounds on the honest users' distinct count, valid whatever at most ``fakes`` reports sent.
    fakes : int
        m = ⌊β·N⌋, the fake reports allowed for.
    max_weight : int
        w, the most ones a fake report was allowed to have.
    confidence : float
        The level of the interval.
    """

    lower: float
    upper: float
    fakes: int
    max_weight: int
    confidence: float

    def __str__(self):
        return (f"robust interval [{self.lower:,.0f}, {self.upper:,.0f}] ({100 * self.confidence:g}%) whatever up "
                f"to {self.fakes:,} fake reports of at most {self.max_weight:,} ones sent (--max-fake)")


def robust_interval(mech, agg: ColumnSums, max_fake_fraction: float, *, max_weight: int | None = None,
                    confidence: float = 0.95) -> RobustInterval:
    """Bounds on the honest users' distinct values whatever at most ``max_fake_fraction`` of the
    reports sent (module docstring).

    Parameters
    ----------
    mech : BFRRCE
        The mechanism of ``agg`` (one value per user).
    agg : ColumnSums
        All reports counted, honest and fake.
    max_fake_fraction : float
        β in [0, 1): at most ⌊β·N⌋ of the N reports are fake.
    max_weight : int, optional
        The most ones a fake report can have: the upper weight bound of the screen the reports
        passed (``bfrrce aggregate --screen`` prints it; :func:`bfrrce.poisoning.weight_bounds`),
        default L (no screen).
    confidence : float
        Joint level of the two bounds, in (0, 1).

    Returns
    -------
    RobustInterval

    Raises
    ------
    LDPValueError
        β outside [0, 1), a weight outside [0, L], ``unit="item"``, or no honest report left.
    """
    beta = check_probability(max_fake_fraction, "max_fake_fraction", open_interval=False)
    confidence = check_probability(confidence, "confidence")
    if beta >= 1:
        raise LDPValueError(f"max_fake_fraction must be below 1, got {beta!r}")
    if mech.unit != "value":
        raise LDPValueError("robust_interval needs one value per user (unit='value')")
    L, l, p, q = mech.L, mech.l, mech.p, mech.q
    weight = L if max_weight is None else check_int(max_weight, "max_weight", 0, L)
    agg = mech.check_aggregate(agg)
    n, fakes = agg.n, math.floor(beta * agg.n)
    if n - fakes < 1:
        raise LDPValueError(f"no honest report left with {fakes} fakes among {n}")
    alpha = (1 - confidence) / 2
    tau = bounds.null_quantile(alpha / (2 * L), n, q)
    excess = np.sort(agg.counts[agg.counts > tau] - tau)
    liftable = excess[excess <= fakes]
    lifted = int(np.searchsorted(np.cumsum(liftable), fakes * weight, side="right"))
    occupied = excess.size - lifted
    lower = max(math.floor(occupancy.values_lower(occupied, L, l, alpha / 2) + 1e-9), 1)

    def hidden(inside: int) -> float:
        return max(fakes * weight, (L - inside) * fakes * q) / (p - q)

    upper, _ = bounds.upper_bound(Observed(agg.counts, mech.design(n)), alpha, shift=hidden if fakes else None)
    upper = float(math.floor(min(upper, n)))
    return RobustInterval(float(min(lower, upper)), max(upper, 1.0), fakes, weight, confidence)
