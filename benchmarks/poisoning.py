"""Data poisoning (Cao, Jia, Gong, USENIX Security 2021) against BFRRCE: every attack shape, with
and without each defence of :mod:`bfrrce.poisoning`, beside the worst-case bound of
docs/manipulation.md.

    python -m benchmarks.poisoning [--trials 10] [--alpha 0.001] [--epsilons 4,8]
    python -m benchmarks.poisoning --readme docs/poisoning.txt    # the README's table of that output

Honest users: synthetic-2's setting (n = 10,000, 122 distinct values of about 82 users each,
every report privatized). Fake users (1% and 5% of n, so m = 100 or 500) send, per attack:

  all-ones     every bit set;
  chosen       the same 100 chosen columns;
  honest-w     the same w chosen columns, w the honest mean weight (passes the weight screen);
  max-w        the same hi chosen columns, hi the largest weight the weight screen accepts;
  spread-max   hi columns drawn at random for each fake (maximal accepted weight, no two fakes
               alike: no co-occurrence to see);
  honest-free  the honest mean weight on columns no honest value uses, drawn for each fake
               (issue 23: raises the estimate with no screen or alarm firing).

Columns: the bound m·max(q, 1 − q)/(p − q) on how far fakes move any debiased column count t̂_j
(docs/manipulation.md) and the largest shift measured (no defence, mean over trials); the mean
fill estimate (truth 122) with no defence, the weight screen (``screen_reports``), the
co-occurrence screen (``screen_concentrated``) and both; and, for both defences together, the
share of fake and of honest reports removed, and the share of trials in which the total
weight of the reports both defences kept is flagged (``weight_excess``: detection only); the
share of trials in which the batch of all reports is refused for repeated rows (``dup alarm``,
:mod:`bfrrce.identity`); the coverage of the truth by the plain fill interval and by the
robust interval of :mod:`bfrrce.manipulation` on the weight-screened reports, at β = the true
fraction of the fakes the screen kept and w = the screen's upper weight bound (valid whatever
they sent), and that interval's median upper bound over D.
Optimized perturbation, L = 1024, l = 1.
"""

import argparse
import sys

import numpy as np

from bfrrce import BFRRCE
from bfrrce.identity import DuplicateReportsError
from bfrrce.manipulation import robust_interval
from protocols.bits import packing as bits
from protocols.core.randomness import simulating
from bfrrce.poisoning import (ATTACKS, concentrated_fakes, fake_reports, plausible_weight, report_weights, shift_bound,
                              weight_bounds, weight_excess)

from ._common import provenance

DEFENCES = ("none", "weight", "cooccurrence", "both")


def kept_mask(mech, reports, defence, alpha):
    """Mask of the reports a defence keeps (both: the weight screen, then co-occurrence)."""
    keep = np.ones(len(reports), dtype=bool)
    if defence in ("weight", "both"):
        keep = plausible_weight(mech, reports, alpha)
    if defence in ("cooccurrence", "both"):
        inner, _ = concentrated_fakes(mech, reports[keep], alpha=alpha, report_alpha=alpha)
        keep[np.flatnonzero(keep)[~inner]] = False
    return keep


def free_column_fakes(mech, values, count, weight, rng):
    """``count`` fakes of ``weight`` ones each on random columns that no value of ``values`` uses."""
    free = np.setdiff1d(np.arange(mech.L), mech.bloom.positions(np.unique(values)).ravel())
    ones = np.zeros((count, mech.L), dtype=np.uint8)
    for i in range(count):
        ones[i, rng.choice(free, min(weight, free.size), replace=False)] = 1
    return bits.pack(ones)


def duplicated(mech, reports):
    try:
        mech.aggregate(reports)
    except DuplicateReportsError:
        return True
    return False


def honest_values(n, D, rng):
    return np.repeat(rng.choice(np.arange(1, 1001), D, replace=False),
                     np.diff(np.linspace(0, n, D + 1).round().astype(int)))


def readme_table(text, share="5%"):
    """The README's table from this benchmark's output: per ε and attack at ``share`` fakes, the
    coverage of the plain and of the robust interval and the robust upper bound over D."""
    lines = ["| ε | attack (5% fakes) | plain interval covers | robust interval covers | robust upper/D |",
             "|---|---|---|---|---|"]
    for line in text.splitlines():
        cells = line.split()
        if len(cells) > 4 and cells[0].replace(".", "").isdigit() and cells[2] == share:
            lines.append(f"| {cells[0]} | {cells[1]} | {cells[-3]} | {cells[-2]} | {cells[-1]} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", metavar="OUTPUT", help="print the README table of a saved output and stop")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--epsilons", default="4,8")
    ap.add_argument("--shares", default="0.01,0.05")
    args = ap.parse_args(argv)
    if args.readme:
        with open(args.readme, encoding="utf-8") as fh:
            print(readme_table(fh.read()))
        return
    n, D = 10_000, 122
    print(f"# {provenance()}; python -m benchmarks.poisoning {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"n = {n:,}, D = {D}, L = 1024, l = 1, alpha = {args.alpha}, {args.trials} trials; "
          "mean fill estimate (truth 122)")
    print(f"{'eps':>4} {'attack':10} {'fake':>5} {'t^ bound':>9} {'t^ shift':>9} "
          + " ".join(f"{d:>12}" for d in DEFENCES) + f" {'fake removed':>13} {'honest removed':>15} {'weight alarm':>13}"
          + f" {'dup alarm':>10} {'plain cover':>12} {'robust cover':>13} {'robust up/D':>12}")
    for eps in map(float, args.epsilons.split(",")):
        mech = BFRRCE(epsilon=eps, L=1024)
        _, hi = weight_bounds(mech, args.alpha)
        for kind in ("none",) + ATTACKS + ("honest-free",):
            for share in ((0.0,) if kind == "none" else tuple(map(float, args.shares.split(",")))):
                m = int(round(share * n))
                est = {d: [] for d in DEFENCES}
                shift, fake_out, honest_out, alarms, dups, plain_cover, robust_cover = [], 0, 0, 0, 0, 0, 0
                robust_upper = []
                for t in range(args.trials):
                    rng = np.random.default_rng([int(eps), t])
                    values = honest_values(n, D, rng)
                    with simulating():
                        honest = mech.privatize(values, rng=rng)
                    weight = report_weights(honest).mean()
                    fakes = (np.zeros((0, honest.shape[1]), dtype=np.uint8) if not m else
                             free_column_fakes(mech, values, m, int(round(weight)), rng) if kind == "honest-free"
                             else fake_reports(kind, m, mech.L, weight, hi, rng))
                    reports = np.concatenate([honest, fakes])
                    total = mech.aggregate(reports, label=False)
                    clean, attacked = mech.debias(mech.aggregate(honest, label=False)), mech.debias(total)
                    dups += duplicated(mech, reports)
                    lo, up = mech.estimate(total).interval
                    plain_cover += lo <= D <= up
                    screened = kept_mask(mech, reports, "weight", args.alpha)       # then β = the fakes left
                    kept = mech.aggregate(reports[screened], label=False)
                    robust = robust_interval(mech, kept, int(screened[n:].sum()) / kept.n, max_weight=hi)
                    robust_cover += robust.lower <= D <= robust.upper
                    robust_upper.append(robust.upper / D)
                    shift.append(np.abs(attacked.t_hat - clean.t_hat).max())
                    for d in DEFENCES:
                        keep = kept_mask(mech, reports, d, args.alpha)
                        est[d].append(mech.estimate(mech.aggregate(reports[keep], label=False)).value)
                    alarms += weight_excess(mech, reports[keep], args.alpha)[1]
                    fake_out += m - int(keep[n:].sum())             # keep: both defences
                    honest_out += n - int(keep[:n].sum())
                removed = f"{fake_out / (m * args.trials):13.1%}" if m else f"{'—':>13}"
                print(f"{eps:4g} {kind:10} {share:5.0%} {shift_bound(mech, m):9.0f} {np.mean(shift):9.0f} "
                      + " ".join(f"{np.mean(est[d]):12.1f}" for d in DEFENCES)
                      + f" {removed} {honest_out / (n * args.trials):15.3%} {alarms / args.trials:13.0%}"
                      + f" {dups / args.trials:10.0%} {plain_cover / args.trials:12.0%} {robust_cover / args.trials:13.0%}"
                      + f" {np.median(robust_upper):12.1f}")


if __name__ == "__main__":
    main()
