"""Throughput and accuracy of every frequency oracle at n = 100,000, d = 1024, ε = 1.

    python -m benchmarks.frequency_oracles [--n 100000] [--d 1024] [--epsilon 1] [--repeats 3]

Prints client and server throughput (users/s, median of ``--repeats`` runs, seeded generator),
client throughput with the OS CSPRNG (rng=None, what deployments use), and the ratio of the
measured mean squared error over the d values to the analytic variance (1 is right).
"""

import statistics

import numpy as np

from benchmarks._common import timed, workload_parser
from protocols import (BLH, GRR, OLH, OUE, SHE, SUE, THE, HadamardResponse,
                       SubsetSelection)

MECHANISMS = {"GRR": GRR, "SUE": SUE, "OUE": OUE, "SHE": SHE, "THE": THE, "BLH": BLH,
              "OLH": OLH, "SS": SubsetSelection, "HR": HadamardResponse}


def main(argv=None):
    args = workload_parser(__doc__).parse_args(argv)
    rng = np.random.default_rng(0)
    values = rng.integers(0, args.d, args.n)
    truth = np.bincount(values, minlength=args.d)
    print(f"n={args.n} d={args.d} epsilon={args.epsilon} (median of {args.repeats} runs)")
    print(f"{'mechanism':10} {'client/s':>12} {'client/s os':>12} {'server/s':>12} {'MSE/Var':>8}")
    for name, cls in MECHANISMS.items():
        mech = cls(epsilon=args.epsilon, d=args.d)
        client, server, secure, ratios = [], [], [], []
        for r in range(args.repeats):
            reports, t = timed(lambda: mech.privatize(values, rng=r))
            client.append(t)
            agg, t = timed(lambda: mech.aggregate(reports))
            server.append(t)
            secure.append(timed(lambda: mech.privatize(values))[1])
            mse = np.mean((mech.estimate(agg) - truth) ** 2)
            ratios.append(mse / np.mean([mech.variance(args.n, f) for f in truth / args.n]))
        rate = lambda ts: args.n / statistics.median(ts)  # noqa: E731
        print(f"{name:10} {rate(client):12,.0f} {rate(secure):12,.0f} {rate(server):12,.0f} "
              f"{statistics.median(ratios):8.3f}")


if __name__ == "__main__":
    main()
