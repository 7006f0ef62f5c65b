"""What the cell sums can tell about the union when the overlap is not known (docs/sets.md).

    python -m benchmarks.set_information [--union 100000] [--step 0.1] [--out docs/sets-information.md]

The union table of ``benchmarks/sets.py`` compares our estimate with Sketch-Flip-Merge's
deterministic merge told how many parties hold each occupied cell (the better of one and k):
an oracle. This table asks what any estimator that is *not* told the overlap can reach. For a
true law P (k parties, union N, an overlap) and N' = N·e^{±δ}, the expected log-likelihood gap

    D±(δ) = min over overlaps θ' of Σ_cells KL(P_N,θ ‖ P_N',θ')

is how well the reports separate N from N' however the sets overlap; δ/√(2·D±) is the
standard error of log N at which that separation is one half unit of log-likelihood (the
width a 1-sd interval must have, Le Cam's two-point argument; for the known overlap it is
the inverse Fisher information). θ' ranges over processes that really produce sums: a share s
of the union held by every party, the rest drawn at random from a universe of which each party
holds every item with probability ρ (ρ → 0: disjoint sets of equal size), and the true kind of
overlap itself (for pairs, which that family does not contain). Over a larger family
of overlaps the minimum can only be smaller and the bound larger, so the "overlap unknown"
column is a lower bound on what no estimator can beat without being told the overlap.

The laws are written here from their definitions (Poissonized cell occupancy; the sum of k
reports given the holders, Binomial(m, p) + Binomial(k − m, q), is
:func:`bfrrce.poisoning.weight_pmf`), independently of ``bfrrce.sets``' likelihood; "pairs" (every item held by exactly two random parties) by the exact chain of
the holders' count over the cell's items.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from benchmarks._common import provenance
from bfrrce import SetSketch
from bfrrce.poisoning import weight_pmf

B, G = 4096, 24


def sum_laws(sk, k):
    """law[m, c] = Pr[c | m holding parties]: Binomial(m, p) + Binomial(k − m, q), the law of
    a report's weight (:func:`bfrrce.poisoning.weight_pmf`, k bits of which m are set)."""
    return np.array([weight_pmf(k, m, sk.p, sk.q) for m in range(k + 1)])


def rates(sk, union):
    """λ_g: union items per cell of level g (Poissonized: empty with probability (1 − π_g/B)^N)."""
    return -union * np.log1p(-sk.pi / sk.buckets)


def overlap_law(sk, k, union, share, rho, law):
    """Pr[c] per level, (G, k + 1): a share s held by all k parties; the rest from a universe
    of rate λ_U = (1 − s)λ/(1 − (1 − ρ)^k) of which each party holds each item with
    probability ρ (ρ = 0: disjoint, equal sizes: each party holds w.p. 1 − e^{−(1−s)λ/k})."""
    lam = rates(sk, union)
    rest = (1 - share) * lam
    if rho == 0:
        held = -np.expm1(-rest / k)
        hold = stats.binom.pmf(np.arange(k + 1)[None, :], k, held[:, None])       # (G, m)
    else:
        lam_u = rest / -math.expm1(k * math.log1p(-rho))
        top = int(lam_u.max() + 12 * math.sqrt(lam_u.max()) + 30)
        terms = np.arange(top)
        pois = stats.poisson.pmf(terms[None, :], lam_u[:, None])                  # (G, M)
        held = -np.expm1(terms * math.log1p(-rho))                                 # Pr[a party holds | M]
        hold = pois @ stats.binom.pmf(np.arange(k + 1)[None, :], k, held[:, None])
    common = -np.expm1(-share * lam)
    hold = hold * (1 - common)[:, None]
    hold[:, k] += common
    return hold @ law


def pairs_law(sk, k, union, law):
    """Pr[c] per level when every item is held by exactly two of k parties (random pairs)."""
    lam = rates(sk, union)
    step = np.zeros((k + 1, k + 1))
    for m in range(k + 1):                       # holders m → m + new after one more item
        for new in range(3):
            if new <= k - m and 2 - new <= m:
                step[m, m + new] = stats.hypergeom(k, k - m, 2).pmf(new)
    top = int(lam.max() + 12 * math.sqrt(lam.max()) + 30)
    chain = np.zeros((top, k + 1))
    chain[0, 0] = 1
    for j in range(1, top):
        chain[j] = chain[j - 1] @ step
    return stats.poisson.pmf(np.arange(top)[None, :], lam[:, None]) @ chain @ law


def divergence(truth, other):
    """Σ_cells KL(truth ‖ other): B cells per level."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(truth > 0, truth * (np.log(truth) - np.log(np.maximum(other, 1e-300))), 0.0)
    return float(B * terms.sum())


def least_divergence(sk, k, union, truth, law):
    """min over (s, ρ) of the divergence from ``truth`` to the overlap law at ``union``: Nelder–Mead
    over (s, log ρ) from several starts (ρ in [10⁻⁴, 1)), and over s alone at ρ = 0."""
    def at(x):
        return divergence(truth, overlap_law(sk, k, union, min(1.0, max(0.0, x[0])), min(1 - 1e-9, max(1e-4, math.exp(x[1]))),
                                             law))
    best = min(optimize.minimize_scalar(lambda s: divergence(truth, overlap_law(sk, k, union, s, 0.0, law)),
                                        bounds=(0.0, 1.0), method="bounded").fun, at([1.0, 0.0]))
    for start in ([0.9, math.log(0.5)], [0.5, math.log(0.5)], [0.5, math.log(2 / k)], [0.1, math.log(0.05)],
                  [0.0, math.log(0.9)]):
        best = min(best, optimize.minimize(at, start, method="Nelder-Mead",
                                           options={"maxfev": 400, "xatol": 1e-7, "fatol": 1e-10}).fun)
    return max(best, 1e-300)


def bounds(epsilon, k, scenario, union, step):
    """(sd of log N with the overlap known, sd with it unknown: upward, downward)."""
    sk = SetSketch(epsilon=epsilon, buckets=B, levels=G)
    law = sum_laws(sk, k)
    if scenario == "pairs":
        def known(n):
            return pairs_law(sk, k, n, law)
    else:
        theta = {"identical": (1.0, 0.0), "half": (0.5, 0.0), "disjoint": (0.0, 0.0)}[scenario]

        def known(n):
            return overlap_law(sk, k, n, *theta, law)
    truth = known(union)
    out = []
    for sign in (1, -1):
        other = union * math.exp(sign * step)
        told = divergence(truth, known(other))
        out.append((step / math.sqrt(2 * told),
                    step / math.sqrt(2 * min(told, least_divergence(sk, k, other, truth, law)))))
    return max(a for a, _ in out), out[0][1], out[1][1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--union", type=int, default=100_000)
    ap.add_argument("--step", type=float, default=0.1, help="δ: N' = N·e^{±δ}")
    ap.add_argument("--epsilons", default="0.5,1,2,4,8")
    ap.add_argument("--parties", default="2,10")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    lines = [f"Generated by `python -m benchmarks.set_information {' '.join(argv if argv is not None else sys.argv[1:])}` "
             f"on {provenance()}; B = {B}, G = {G}, union {args.union:,}, δ = {args.step}.\n",
             "Standard error of log N (≈ relative error) that the cell sums allow: told the overlap, and not "
             "told it (the least-separated overlap at N·e^{+δ} and at N·e^{−δ}).\n",
             "| ε | k | overlap | told the overlap | not told: upward | not told: downward | ratio |",
             "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for eps in (float(x) for x in args.epsilons.split(",")):
        for k in (int(x) for x in args.parties.split(",")):
            for scenario in ("identical", "half", "disjoint") + (("pairs",) if k > 2 else ()):
                known, up, down = bounds(eps, k, scenario, args.union, args.step)
                lines.append(f"| {eps:g} | {k} | {scenario} | {known:.3g} | {up:.3g} | {down:.3g} | "
                             f"{max(up, down) / known:.3g} |")
                print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
