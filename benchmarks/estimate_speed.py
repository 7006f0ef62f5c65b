"""Wall time of ``BFRRCE.estimate`` on large column sums: median of repeated calls, one process.

    taskset -c 1 python -m benchmarks.estimate_speed [--L 65536] [--n 10000000] [--repeats 7]

The sums are drawn exactly (``simulate``) for Zipf(1.3) frequencies over 20,000 values scaled to
about n users; the first call (which loads SciPy and fills caches) is not timed. Pin the process
to one core with ``taskset`` to measure the one-core figure.
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
    ap.add_argument("--epsilons", default="2,8,12")
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    main()
