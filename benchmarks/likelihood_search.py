"""Does the equal-frequency estimate find the likelihood's peak? A grid of equal frequencies.

    python -m benchmarks.likelihood_search [--runs 3] [--ns 100000,1000000,10000000]

Where values are far above the noise, the likelihood of the column sums is a comb of narrow
peaks (D and aliases such as 2D), and the de-Poissonized one pins D to ±0.3 values: a search
that misses the peak returns a wrong S with a small spread. For n in ``--ns``, ε in 6, 8, 10,
L in 64, 256, 1024, 4096, l in 1, 2, 3 and λ = mD/L in 0.5, 2, 7.5, 7.95, 8.3 (values a column,
m a value's mean distinct columns; 8 is where the mixture collapses to one component), D values
of n/D users each are simulated exactly in distribution, and a run counts as missed when the
de-Poissonized −log-likelihood at S exceeds its value at the true D by more than
``KEEP_WITHIN`` (15 nats). Prints the missed runs and the total (docs/estimation.md, "Search").
"""

import argparse
import itertools
import time

import numpy as np

from bfrrce import BFRRCE
from bfrrce.estimation import likelihood

LOADS = (0.5, 2.0, 7.5, 7.95, 8.3)


def missed(mech, n, D, runs, seed):
    """The runs whose S is more than KEEP_WITHIN nats below the true D on the pinned model."""
    rng = np.random.default_rng(seed)
    counts_of = np.diff(np.linspace(0, n, D + 1).round().astype(np.int64))
    out = []
    for r in range(runs):
        counts = mech.simulate(rng.integers(0, 2 ** 62, D), counts=counts_of, rng=rng).counts
        design = mech.design(n)
        est = likelihood.equal_frequency_estimate(counts, design, n)
        deficit = likelihood.search_deficit(counts, est, D, design, n)
        if deficit > likelihood.KEEP_WITHIN:
            out.append((r, est.value, est.spread, deficit))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ns", default="100000,1000000,10000000")
    ap.add_argument("--Ls", default="64,256,1024,4096")
    ap.add_argument("--epsilons", default="6,8,10")
    args = ap.parse_args(argv)
    start, total, bad = time.perf_counter(), 0, 0
    for n, eps, L, l, load in itertools.product([int(x) for x in args.ns.split(",")],
                                                [float(x) for x in args.epsilons.split(",")],
                                                [int(x) for x in args.Ls.split(",")], (1, 2, 3), LOADS):
        D = max(round(load * L / (L * (1 - (1 - 1 / L) ** l))), 1)
        if D > n / 2:
            continue
        mech = BFRRCE(epsilon=eps, L=L, l=l)
        found = missed(mech, n, D, args.runs, seed=L + l + int(eps))
        total += args.runs
        bad += len(found)
        for r, value, spread, excess in found:
            print(f"missed: n={n:,} ε={eps:g} L={L} l={l} D={D} (λ = {load:g}) run {r}: "
                  f"S = {value:,.1f} ± {spread:.2f}, {excess:.0f} nats below D")
    print(f"{bad} of {total} runs missed the peak ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
