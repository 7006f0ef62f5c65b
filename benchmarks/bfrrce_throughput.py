"""BFRRCE client and server throughput against the machine's memory bandwidth.

    python -m benchmarks.bfrrce_throughput [--n 200000] [--repeats 3] [--epsilon 4]

For L in {256, 1024, 8192} and l in {1, 3}: reports/s of ``privatize`` (seeded generator and
OS CSPRNG) and of ``aggregate``, and the packed bytes aggregated per second as a share of the
memory bandwidth measured in the same run (numpy copy of a 512 MiB array: bytes read + written).
The last column is the same column sums by unpacking bits to bytes (the method before the
bit-sliced counter, still used for short tails), for the speed-up in one run. With numba
installed the compiled column counter is loaded up front (``BFRRCE_ACCEL=numpy`` for the numpy
one; ``benchmarks/aggregation.py`` compares both).
Medians of ``--repeats`` runs.
"""

import argparse

import numpy as np

from benchmarks._common import bandwidth, column_counter, median_time
from bfrrce import BFRRCE
from protocols.bits.packing import _lane_sums


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=4.0)
    args = ap.parse_args(argv)
    counter, bw = column_counter(), bandwidth(args.repeats)
    print(f"memory bandwidth (numpy copy, read+write): {bw / 1e9:.2f} GB/s; n={args.n}, "
          f"epsilon={args.epsilon}; column counts: {counter}")
    print(f"{'L':>5} {'l':>2} {'client/s':>12} {'client/s os':>12} {'server/s':>12} "
          f"{'server GB/s':>11} {'of bandwidth':>12} {'unpacking GB/s':>14}")
    values = np.arange(args.n)
    for L in (256, 1024, 8192):
        for l in (1, 3):
            mech = BFRRCE(epsilon=args.epsilon, L=L, l=l)
            reports = mech.privatize(values, rng=0)
            client = median_time(lambda: mech.privatize(values, rng=1), args.repeats)
            secure = median_time(lambda: mech.privatize(values), args.repeats)
            server = median_time(lambda: mech.aggregate(reports), args.repeats)
            unpacking = median_time(lambda: _lane_sums(reports, L), args.repeats)
            rate = reports.nbytes / server
            print(f"{L:5d} {l:2d} {args.n / client:12,.0f} {args.n / secure:12,.0f} "
                  f"{args.n / server:12,.0f} {rate / 1e9:11.2f} {rate / bw:12.1%} "
                  f"{reports.nbytes / unpacking / 1e9:14.2f}")


if __name__ == "__main__":
    main()
