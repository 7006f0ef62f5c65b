"""How often the Laplace-transform lower bound alone exceeds the true number of values, where its
normal bands are most strained: one value, two values or singletons, from nearly silent empty
columns (nq near 0) to very noisy ones (nq of 3·10⁵).

    python -m benchmarks.laplace_stress [--runs 100] [--alpha 0.05]

Each cell draws ``--runs`` data sets (new hash seed and noise each run, seeded by the cell) and
prints the runs whose bound ``bfrrce.estimation.laplace.laplace_lower`` at ``--alpha`` exceeds D;
a valid bound exceeds it in at most a share α of runs, up to binomial noise.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.estimation.design import Observed
from bfrrce.estimation.laplace import laplace_lower

CELLS = (   # (shape, n, ε, L, l)
    *(("one", n, eps, L, 1) for n in (10 ** 4, 10 ** 6) for eps in (1, 4, 8, 12) for L in (1024, 65536)),
    *(("singletons", 10 ** 4, eps, L, 1) for eps in (2, 8) for L in (1024, 65536)),
    *(("two", 10 ** 5, eps, L, 1) for eps in (4, 10) for L in (64, 1024)),
    ("one", 1000, 16, 1024, 1), ("one", 200, 10, 64, 1), ("singletons", 1000, 14, 1024, 1),
    ("one", 50, 10, 64, 1), ("singletons", 50, 10, 64, 1), ("two", 10 ** 4, 12, 4096, 2),
    ("one", 10 ** 5, 20, 65536, 1),
)


def counts(shape: str, n: int) -> np.ndarray:
    """Users per value of a shape."""
    return {"one": np.array([n]), "singletons": np.ones(n, dtype=np.int64),
            "two": np.array([n // 2, n - n // 2])}[shape]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args(argv)
    worst = 0.0
    for index, (shape, n, eps, L, l) in enumerate(CELLS):
        rng = np.random.default_rng([2026, index])
        mech = BFRRCE(epsilon=eps, L=L, l=l)
        f = counts(shape, n)
        above = 0
        for _ in range(args.runs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)         # seeded simulations on purpose
                agg = mech.simulate(rng.integers(0, 2 ** 62, f.size), counts=f, rng=rng)
            above += laplace_lower(Observed(agg.counts, mech.design(agg.n)), args.alpha)[0] > f.size
        worst = max(worst, above / args.runs)
        print(f"{shape:10s} n={n:>9,} ε={eps:<3g} L={L:<6} l={l} nq={n * mech.q:10.3f}: "
              f"above D in {above} of {args.runs} runs", flush=True)
    print(f"largest share of runs above D: {worst:.3f} (α = {args.alpha:g})")


if __name__ == "__main__":
    main()
