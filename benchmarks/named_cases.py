"""The named cases of the bounds (docs/estimation.md, "Upper bound"): medians over seeded runs.

    python -m benchmarks.named_cases [--runs 10] [--first-seed 0] [--only NAME] [--perturbation P]

Each run draws a new hash seed and new column sums (run s uses seed s, from ``--first-seed``); it
prints the median lower/D, upper/D and value/D (with more than 10 runs also the quartiles of
upper/D and the medians of its blocks of 10 runs), the median upper/D of six
data sets at ε = 4, 8 and 10, of five with few users at ε = 8, 10, 12, 16 and 20 (the bound
must not get looser with more ε), and of three of 1–5 values whose sums are in the exact regime
at ε = 4 … 16, where it rose before the exact bound's self-bounded form (docs/estimation.md,
"Monotone in ε"). ``--only`` keeps the
cases whose name contains NAME; ``--perturbation`` runs them all with that perturbation instead of
the default ("optimized", p = 1/2).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.calibration import PERTURBATIONS

CASES = (  # name, D, users each, ε, L, l
    ("D=1, n=10^6, eps=1, L=65536", 1, 10 ** 6, 1, 65536, 1),
    ("D=1, n=10^6, eps=4, L=1024", 1, 10 ** 6, 4, 1024, 1),
    ("500 x 200, eps=8, L=1024, l=1", 500, 200, 8, 1024, 1),
    ("500 x 200, eps=8, L=1024, l=2", 500, 200, 8, 1024, 2),
    ("200 x 5000, eps=8, L=4096, l=1", 200, 5000, 8, 4096, 1),
    ("200 x 5000, eps=8, L=4096, l=2", 200, 5000, 8, 4096, 2),
)


def _zipf(n, s, rng, D=20_000):
    w = np.arange(1, D + 1, dtype=float) ** -s
    f = rng.multinomial(n, w / w.sum())
    return f[f > 0]


MONOTONE = (  # name, counts(rng), L, l
    ("Zipf 0.8, n=10^5, L=1024", lambda rng: _zipf(10 ** 5, 0.8, rng), 1024, 1),
    ("Zipf 1.0, n=10^5, L=4096, l=2", lambda rng: _zipf(10 ** 5, 1.0, rng), 4096, 2),
    ("200 x 5000, L=4096", lambda rng: np.full(200, 5000), 4096, 1),
    ("singletons, n=10^4, L=1024", lambda rng: np.ones(10 ** 4, dtype=np.int64), 1024, 1),
    ("500 x 200, L=1024", lambda rng: np.full(500, 200), 1024, 1),
    ("20000 x 50, L=1024", lambda rng: np.full(20_000, 50), 1024, 1),
)
MONOTONE_EPSILONS = (4, 8, 10)
FEW_USERS = (  # nq below bounds.NULL_FLOOR at the higher ε: name, counts(rng), L, l
    ("40 x 100, L=1024", lambda rng: np.full(40, 100), 1024, 1),
    ("12 x 83, L=1024", lambda rng: np.full(12, 83), 1024, 1),
    ("30 x 30, L=512", lambda rng: np.full(30, 30), 512, 1),
    ("1 x 500, L=1024", lambda rng: np.full(1, 500), 1024, 1),
    ("3 x 333, L=2000", lambda rng: np.full(3, 333), 2000, 1),
)
FEW_USERS_EPSILONS = (8, 10, 12, 16, 20)
EXACT_REGIME = (  # sums in the exact regime at every ε here, where the bound rose (docs/estimation.md)
    ("1 x 1000, L=1024", lambda rng: np.full(1, 1000), 1024, 1),
    ("1 x 500, L=4096", lambda rng: np.full(1, 500), 4096, 1),
    ("5 x 200, L=2048", lambda rng: np.full(5, 200), 2048, 1),
)
EXACT_REGIME_EPSILONS = (4, 8, 10, 12, 16)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    ap.add_argument("--perturbation", default="optimized", choices=PERTURBATIONS)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", PrivacyWarning)
    seeds = range(args.first_seed, args.first_seed + args.runs)
    for name, D, f, eps, L, l in CASES:
        if args.only not in name:
            continue
        out = []
        for s in seeds:
            rng = np.random.default_rng(s)
            mech = BFRRCE(epsilon=eps, L=L, l=l, perturbation=args.perturbation, hash_seed=int(rng.integers(2 ** 31)))
            est = mech.estimate(mech.simulate(np.arange(D), counts=np.full(D, f), rng=rng))
            out.append((est.lower / D, est.upper / D, est.value / D))
        lo, hi, value = np.median(out, axis=0)
        print(f"{name:32} lower/D {lo:6.3f}  upper/D {hi:10.2f}  value/D {value:6.3f}")
        if args.runs > 10:
            ups = np.array(out)[:, 1]
            blocks = [np.median(ups[i:i + 10]) for i in range(0, ups.size - 9, 10)]
            print(f"{'':32} upper/D quartiles {np.percentile(ups, 25):.2f}-{np.percentile(ups, 75):.2f}; medians of "
                  f"its blocks of 10 runs: {' '.join(f'{b:.1f}' for b in blocks)}")
    for name, make, L, l, epsilons in ([(*c, MONOTONE_EPSILONS) for c in MONOTONE]
                                       + [(*c, FEW_USERS_EPSILONS) for c in FEW_USERS]
                                       + [(*c, EXACT_REGIME_EPSILONS) for c in EXACT_REGIME]):
        if args.only not in name:
            continue
        ratios = {}
        for eps in epsilons:
            ups = []
            for s in seeds:
                rng = np.random.default_rng(s)
                counts = make(rng)
                mech = BFRRCE(epsilon=eps, L=L, l=l, perturbation=args.perturbation, hash_seed=s)
                ups.append(mech.estimate(mech.simulate(np.arange(counts.size), counts=counts, rng=rng)).upper
                           / counts.size)
            ratios[eps] = float(np.median(ups))
        print(f"{name:32} median upper/D at ε = {', '.join(map(str, epsilons))}: "
              + ", ".join(f"{v:.2f}" for v in ratios.values()))


if __name__ == "__main__":
    main()
