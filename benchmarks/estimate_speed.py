"""Wall time of ``BFRRCE.estimate`` on large column sums: median of repeated calls, one process.

    taskset -c 1 python -m benchmarks.estimate_speed [--L 65536] [--n 10000000] [--repeats 7]
    taskset -c 1 python -m benchmarks.estimate_speed --bitcoin [--draws 8] [--epsilons 8]

The sums are drawn exactly (``simulate``) for Zipf(1.3) frequencies over 20,000 values scaled to
about n users; the first call (which loads SciPy and fills caches) is not timed. Pin the process
to one core with ``taskset`` to measure the one-core figure. ``--bitcoin`` times instead the
shipped Bitcoin sample's sums as ``python -m bfrrce evaluate --dataset bitcoin`` draws them (the
advisor's filter, ``--draws`` draws), where the frequency-class check of the point estimate runs
at ε = 8 (docs/estimation.md, "Frequency classes"): the median over draws of the fastest of
``--repeats`` calls, and the check's likelihood evaluations per estimate.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from bfrrce import BFRRCE, PrivacyWarning


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--L", type=int, default=65536)
    ap.add_argument("--n", type=int, default=10 ** 7)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--epsilons", default=None, help="comma-separated (default 2,8,12; 8 with --bitcoin)")
    ap.add_argument("--bitcoin", action="store_true", help="the Bitcoin sample's sums (module docstring)")
    ap.add_argument("--draws", type=int, default=8)
    args = ap.parse_args(argv)
    if args.bitcoin:
        return bitcoin(args)
    args.epsilons = args.epsilons or "2,8,12"
    rng = np.random.default_rng(0)
    counts = rng.zipf(1.3, 20_000).clip(max=10 ** 5)
    counts = (counts * (args.n / counts.sum())).astype(np.int64) + 1
    values = rng.integers(0, 2 ** 62, counts.size)
    for eps in (float(e) for e in args.epsilons.split(",")):
        mech = BFRRCE(epsilon=eps, L=args.L)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)      # a simulation: seeded on purpose
            agg = mech.simulate(values, counts=counts, rng=1)
        mech.estimate(agg)
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            mech.estimate(agg)
            times.append(time.perf_counter() - start)
        print(f"eps={eps:g} L={args.L} n={agg.n:,}: median estimate {1000 * statistics.median(times):.1f} ms "
              f"over {args.repeats} calls")


def bitcoin(args):
    """The ``--bitcoin`` timing (module docstring)."""
    from bfrrce.advice import suggest_parameters
    from bfrrce.estimation import classes
    from bfrrce.sums import ColumnSums
    from datasets import bitcoin as btc
    from protocols.core.perturbation import simulate_column_sums
    distinct, counts = np.unique(btc.load()["values"], return_counts=True)
    n = int(counts.sum())
    evaluations = [0]
    loglik = classes.FrequencyClasses.loglik

    def counted(model, x):
        evaluations[0] += 1
        return loglik(model, x)
    classes.FrequencyClasses.loglik = counted
    try:
        for eps in (float(e) for e in (args.epsilons or "8").split(",")):
            mech = BFRRCE(epsilon=eps, **suggest_parameters(n, eps, (1, n), None, objective="aare").parameters)
            users = mech.bloom.column_counts(mech.bloom.positions(distinct), counts)
            times, evaluations[0] = [], 0
            for draw in range(args.draws):
                agg = ColumnSums(mech, simulate_column_sums(users, n, mech.p, mech.q, np.random.default_rng(draw)), n)
                calls = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    mech.estimate(agg)
                    calls.append(time.perf_counter() - start)
                times.append(min(calls))
            print(f"bitcoin eps={eps:g} L={mech.L} n={n:,}: median estimate {1000 * statistics.median(times):.1f} ms "
                  f"over {args.draws} draws (fastest of {args.repeats} calls each); "
                  f"{evaluations[0] / (args.draws * args.repeats):.0f} class-model likelihood evaluations an estimate")
    finally:
        classes.FrequencyClasses.loglik = loglik


if __name__ == "__main__":
    main()
