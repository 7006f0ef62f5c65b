"""Defence against data poisoning: reject reports whose Hamming weight is implausible.

Fake users can send crafted reports (all ones, or ones at chosen bits) to inflate or deflate the
count (Cao, Jia, Gong, "Data poisoning attacks to local differential privacy protocols",
USENIX Security 2021). An honest report of a value whose filter has k distinct bits
(1 <= k <= l) has weight W = Binomial(k, p) + Binomial(L − k, q). :func:`weight_bounds` gives the
interval [lo, hi] outside which every honest k puts at most α/2 of its mass on either side, so
an honest report is rejected with probability at most α; :func:`screen_reports` applies it.
Crafted reports of honest-looking weight pass: the defence bounds, it does not remove, the
damage (``benchmarks/poisoning.py`` measures both).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from protocols import bits
from protocols._validate import check_probability

def weight_pmf(L, k, p, q):
    """Exact distribution of an honest report's weight when its filter has k set bits."""
    return np.convolve(binom.pmf(np.arange(k + 1), k, p), binom.pmf(np.arange(L - k + 1), L - k, q))


def weight_bounds(mech, alpha=1e-3):
    """[lo, hi]: an honest report's weight falls outside with probability at most α."""
    alpha = check_probability(alpha, "alpha")
    lo, hi = mech.L, 0
    for k in range(1, mech.l + 1):
        pmf = weight_pmf(mech.L, k, mech.p, mech.q)
        cdf = np.cumsum(pmf)
        tail = np.cumsum(pmf[::-1])[::-1]               # tail[w] = Pr[W >= w]
        lo = min(lo, int(np.searchsorted(cdf, alpha / 2, side="right")))   # Pr[W < lo] <= α/2
        hi = max(hi, int(np.flatnonzero(tail > alpha / 2)[-1]))            # Pr[W > hi] <= α/2
    return lo, hi


def report_weights(reports):
    """Number of ones in each packed report."""
    return bits.row_weights(reports)


def screen_reports(mech, reports, alpha=1e-3):
    """(accepted reports, rejected count): drops reports of implausible weight (reports unchanged)."""
    reports = mech.check_reports(reports)
    lo, hi = weight_bounds(mech, alpha)
    w = report_weights(reports)
    keep = (w >= lo) & (w <= hi)
    return reports[keep], int((~keep).sum())
