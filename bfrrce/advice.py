"""Parameter advice: choose L, l and the perturbation by simulating the estimator.

For each configuration the exact column-sum simulation (:meth:`BFRRCE.simulate`) runs the
estimator on data with the smallest and the largest cardinality of the expected range, every
value held by n/D users (the most favourable spread: a skewed one only hides more values), and
the configuration with the smallest worst-case AARE wins. The table shows why: each extra hash
splits the budget, and the signal-to-noise ratio per value falls like 1/√l (docs/estimation.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from protocols._validate import check_epsilon, check_int
from protocols.errors import LDPValueError

from .mechanism import BFRRCE


@dataclass(frozen=True)
class Suggestion:
    """The advised parameters, the predicted error and the table they were chosen from."""

    L: int
    l: int
    perturbation: str
    predicted_aare: float
    detection_limit: dict
    table: list
    explanation: str

    def __str__(self):
        return self.explanation


def suggest_parameters(n, epsilon, cardinality_range, candidates=None, *, Ls=None, ls=(1, 2, 3),
                       perturbations=("optimized", "symmetric"), trials=5, rng=0):
    """Suggest (L, l, perturbation) minimising the worst AARE over ``cardinality_range``.

    Parameters
    ----------
    n : int
        Number of users.
    epsilon : float
        User-level budget.
    cardinality_range : (int, int)
        Smallest and largest plausible number of distinct values.
    candidates : sequence, optional
        The candidate domain; when given, the "corrected" estimator is simulated with it.
    """
    n = check_int(n, "n", 1)
    epsilon = check_epsilon(epsilon)
    lo, hi = (check_int(c, "cardinality_range", 1, n) for c in cardinality_range)
    if lo > hi:
        raise LDPValueError(f"cardinality_range must be (low, high) with low <= high, got {cardinality_range}")
    if Ls is None:      # fill-ratio inversion works at loads D/L between about 1/16 and 4
        Ls = [2 ** k for k in range(4, 17) if hi / 4 <= 2 ** k <= 16 * hi] or [16]
    gen = np.random.default_rng(rng)
    pool = np.arange(len(candidates)) if candidates is not None else None
    table = []
    for L in Ls:
        for l in ls:
            if l > L:
                continue
            for pert in perturbations:
                mech = BFRRCE(epsilon=epsilon, L=L, l=l, perturbation=pert)
                errors = []
                for D in sorted({lo, hi}):
                    per_value = np.diff(np.linspace(0, n, D + 1).round().astype(np.int64))
                    rel = []
                    for _ in range(trials):
                        if pool is not None:
                            idx = gen.choice(len(candidates), size=min(D, len(candidates)), replace=False)
                            values = [candidates[i] for i in idx]
                        else:
                            values = gen.integers(0, 2 ** 62, D)
                        agg = mech.simulate(values, rng=gen, counts=per_value[:len(values)])
                        est = mech.estimate(agg, candidates=candidates)
                        rel.append(abs(est.value - D) / D)
                    errors.append(float(np.mean(rel)))
                table.append({"L": L, "l": l, "perturbation": pert, "aare": max(errors)})
    best = min(table, key=lambda row: row["aare"])
    mech = BFRRCE(epsilon=epsilon, L=best["L"], l=best["l"], perturbation=best["perturbation"])
    limit = mech.detection_limit(n)
    by_l = {l: min(r["aare"] for r in table if r["l"] == l) for l in ls}
    lines = [f"L={best['L']}, l={best['l']}, perturbation={best['perturbation']}: predicted worst AARE "
             f"{best['aare']:.3f} for {lo}..{hi} distinct values among n={n} at ε={epsilon}.",
             "best AARE by number of hashes: " + ", ".join(f"l={l}: {a:.3f}" for l, a in by_l.items()),
             f"values held by fewer than {limit[0.5]:,.0f} users (50% detection) are invisible."]
    if n / hi < limit[0.5]:
        lines.append(f"warning: with {hi} equally frequent values each has {n / hi:,.0f} users, "
                     "below the detection limit: the count will be underestimated.")
    return Suggestion(best["L"], best["l"], best["perturbation"], best["aare"], limit, table,
                      "\n".join(lines))
