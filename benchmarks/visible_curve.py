"""What the visible count counts, by a value's users: the detection limit as a curve.

    python -m benchmarks.visible_curve [--n 20000] [--epsilon 4] [--L 4096] [--runs 40]

For each frequency f in f50/4, f50/2, f50, f90 and 2·f90 (the 50% and 90% points of the
per-value test at this n, ε, L), 50 values held by f users each, plus one value holding the
other users (so n is fixed), are simulated exactly in distribution; the share of the 50 values
that ``estimate().visible`` counts is printed (mean and sd over the runs), next to the chance
that the per-value test detects one such value (``detection_probability``).
"""

import argparse

import numpy as np

from bfrrce import BFRRCE
from bfrrce.estimation import detection_probability

VALUES = 50


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--L", type=int, default=4096)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    mech = BFRRCE(epsilon=args.epsilon, L=args.L)
    limit = mech.detection_limit(args.n)
    f50, f90 = limit[0.5], limit[0.9]
    rng = np.random.default_rng(args.seed)
    print(f"n={args.n:,}, ε={args.epsilon:g}, L={args.L}, l=1; f50={f50:.0f}, f90={f90:.0f} users; "
          f"{VALUES} values at each f, {args.runs} runs")
    print(f"{'f':>8} {'users':>6} {'visible counts':>15} {'sd':>6} {'per-value test':>15}")
    for label, f in (("f50/4", f50 / 4), ("f50/2", f50 / 2), ("f50", f50), ("f90", f90), ("2·f90", 2 * f90)):
        f = max(int(round(f)), 1)
        if VALUES * f >= args.n:
            continue
        counts = np.concatenate([np.full(VALUES, f), [args.n - VALUES * f]])
        shares = []
        for _ in range(args.runs):
            agg = mech.simulate(rng.integers(0, 2 ** 62, VALUES + 1), rng=rng, counts=counts)
            shares.append((mech.estimate(agg).visible.value - 1) / VALUES)   # minus the heavy value
        test = detection_probability(f, args.n, mech.p, mech.q, mech.l)
        print(f"{label:>8} {f:>6} {np.mean(shares):>15.2f} {np.std(shares):>6.2f} {test:>15.2f}")


if __name__ == "__main__":
    main()
