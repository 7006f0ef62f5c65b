"""What the advisor picks for estimate FILE, and how it does, on equal and skewed frequencies.

For each (n, ε) the advisor is asked what ``bfrrce estimate FILE`` asks it: the analytic AARE
model over D anywhere in 1..n (``suggest_parameters(n, ε)``), timed (after one warm-up call
that imports scipy). Its choice is then measured by simulation on three data sets of n users
(``fill``, the estimator a file without candidates gets; exact binomial column sums, fixed
seeds): D = 100 and D = 10,000 equally frequent values, and 1,000 values with Zipf frequencies
(s = 1.1, every value held by at least one user). The last columns give the best AARE among the
advised L/4, L and 4L at the advised l and perturbation: how much a different L would have won.

    python benchmarks/advisor_table.py            # rewrites the table in docs/evaluation.md
"""

import argparse
import sys
import time

import numpy as np

from bfrrce import suggest_parameters
from bfrrce.datasets import load
from bfrrce.evaluation import evaluate

try:
    from benchmarks._common import replace_section, stamp
except ImportError:                      # run as a script from the checkout
    from _common import replace_section, stamp

CELLS = [(10_000, 2.0), (10_000, 8.0), (200_000, 2.0), (200_000, 8.0), (2_000_000, 4.0)]


def datasets(n):
    equal = {D: np.repeat(np.arange(D), n // D) for D in (100, 10_000) if D <= n // 2}
    zipf = load("synthetic", n=n, cardinality=1000, distribution="zipf", s=1.1, seed=0).values
    return [(f"{D:,} equal", v) for D, v in equal.items()] + [("1,000 Zipf 1.1", zipf)]


def aare(values, eps, params, trials):
    (row,) = evaluate(values, [eps], ["fill"], trials, parameters=params, progress=False, seed=1)
    return row["aare"], row["aare_se"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--doc", default="docs/evaluation.md")
    ap.add_argument("--print-only", action="store_true")
    args = ap.parse_args(argv)
    suggest_parameters(1000, 1.0)                        # imports scipy
    lines = ["| n | ε | advised L, l, perturbation | advice time | data | AARE (± se) | best of L/4, L, 4L |",
             "|---|---|---|---|---|---|---|"]
    for n, eps in CELLS:
        start = time.perf_counter()
        advice = suggest_parameters(n, eps)
        took = time.perf_counter() - start
        for name, values in datasets(n):
            err, se = aare(values, eps, advice.parameters, args.trials)
            others = {}
            for L in (advice.L // 4, advice.L * 4):
                if L >= 16:
                    others[L] = aare(values, eps, dict(advice.parameters, L=L), args.trials)[0]
            best_L, best = min([(advice.L, err), *others.items()], key=lambda kv: kv[1])
            lines.append(f"| {n:,} | {eps:g} | {advice.L:,}, {advice.l}, {advice.perturbation} | {took:.2f} s | "
                         f"{name} | {err:.3f} ± {se:.3f} | {best:.3f} at L = {best_L:,} |")
            print(lines[-1], flush=True)
    command = "python benchmarks/advisor_table.py" + (f" --trials {args.trials}" if args.trials != 20 else "")
    text = "\n".join([stamp(command) + f" {args.trials} trials a cell.", "", *lines])
    if not args.print_only:
        replace_section(args.doc, "advisor-table", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
