"""The interval that survives fakes (bfrrce.manipulation.robust_interval) under issue 23's
honest-weight attack on unoccupied columns, beside the plain interval, at β = the true fraction.

    python -m benchmarks.robust_interval [--trials 5] [--epsilon 4]

Honest users: 200 values of 100 users each (N = 20,000), L = 1024, l = 1, optimized
perturbation; fakes of the honest mean weight, each on its own random columns that no honest
value uses (they pass the weight screen, whose upper bound is the robust interval's w). Prints, per share of fakes: coverage of the truth by the plain and by the robust
interval over the trials, and the mean bounds.
"""

import argparse
import warnings

import numpy as np

from benchmarks._common import provenance
from bfrrce import BFRRCE
from bfrrce.manipulation import robust_interval
from bfrrce.poisoning import weight_bounds
from protocols.bits import packing as bits

D, USERS = 200, 100


def attacked(mech, share, seed):
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        honest = mech.privatize(np.repeat(np.arange(D), USERS), rng=rng)
    weight = int(round(bits.unpack(honest, mech.L).sum(axis=1).mean()))
    free = np.setdiff1d(np.arange(mech.L), mech.bloom.positions(np.arange(D)).ravel())
    m = int(share * len(honest))
    ones = np.zeros((m, mech.L), dtype=np.uint8)
    for i in range(m):
        ones[i, rng.choice(free, weight, replace=False)] = 1
    return mech.aggregate(np.concatenate([honest, bits.pack(ones)]), label=False), m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--epsilon", type=float, default=4.0)
    args = ap.parse_args(argv)
    print(f"# {provenance()}; eps {args.epsilon}, {args.trials} trials, truth {D}")
    mech = BFRRCE(epsilon=args.epsilon, L=1024)
    print("fakes  share   plain cover  plain [lo, hi]          robust cover  robust [lo, hi]")
    for share in (0.001, 0.01, 0.05, 0.10):
        rows = []
        for seed in range(args.trials):
            agg, m = attacked(mech, share, seed)
            plain = mech.estimate(agg).interval
            robust = robust_interval(mech, agg, m / agg.n, max_weight=weight_bounds(mech)[1])
            rows.append((plain[0], plain[1], robust.lower, robust.upper))
        r = np.array(rows)
        cover = lambda lo, hi: np.mean((lo <= D) & (D <= hi))            # noqa: E731
        print(f"{m:5d}  {share:5.3f}   {cover(r[:, 0], r[:, 1]):11.2f}  [{r[:, 0].mean():7.1f}, {r[:, 1].mean():8.1f}]"
              f"   {cover(r[:, 2], r[:, 3]):12.2f}  [{r[:, 2].mean():7.1f}, {r[:, 3].mean():8.1f}]")


if __name__ == "__main__":
    main()
