"""Data poisoning (Cao, Jia, Gong, USENIX Security 2021) against BFRRCE, with and without the
Hamming-weight defence of :mod:`bfrrce.robust`.

    python -m benchmarks.poisoning [--trials 20] [--alpha 0.001]

Honest users: synthetic-2's setting (n = 10,000, 122 distinct values, every report privatized).
Fake users (0.1%, 1%, 5% of n) send, per attack:
  all-ones   every bit set;
  targeted   the bits of 100 chosen columns (the same for every fake user);
  evasive    a chosen set of w columns with w the honest mean weight (passes the defence).
Prints the mean estimate (truth 122) without and with the defence, and the share of fake and
honest reports the defence removed. Fill estimator, optimized perturbation, L = 1024, l = 1.
"""

import argparse

import numpy as np

from bfrrce import BFRRCE
from bfrrce.robust import report_weights, screen_reports
from protocols import bits


def fake_reports(kind, count, L, honest_weight, rng):
    mask = np.zeros((count, L), dtype=bool)
    if kind == "all-ones":
        mask[:] = True
    else:
        width = 100 if kind == "targeted" else max(1, int(round(honest_weight)))
        mask[:, rng.choice(L, width, replace=False)] = True
    return bits.pack(mask)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--epsilons", default="4,8")
    args = ap.parse_args(argv)
    n, D = 10_000, 122
    print(f"{'eps':>4} {'attack':10} {'fake':>6} {'no defence':>11} {'defended':>9} "
          f"{'fake removed':>13} {'honest removed':>15}")
    for eps in map(float, args.epsilons.split(",")):
        mech = BFRRCE(epsilon=eps, L=1024)
        for kind in ("none", "all-ones", "targeted", "evasive"):
            for share in ((0.0,) if kind == "none" else (0.001, 0.01, 0.05)):
                raw, screened, fake_out, honest_out = [], [], [], []
                for t in range(args.trials):
                    rng = np.random.default_rng([int(eps), t])
                    values = np.repeat(rng.choice(np.arange(1, 1001), D, replace=False),
                                       np.diff(np.linspace(0, n, D + 1).round().astype(int)))
                    honest = mech.privatize(values, rng=rng)
                    weight = report_weights(honest).mean()
                    fakes = fake_reports(kind, int(share * n), mech.L, weight, rng) if share else \
                        np.zeros((0, honest.shape[1]), dtype=np.uint8)
                    reports = np.concatenate([honest, fakes])
                    raw.append(mech.estimate(mech.aggregate(reports)).value)
                    kept, _ = screen_reports(mech, reports, args.alpha)
                    screened.append(mech.estimate(mech.aggregate(kept)).value)
                    honest_out.append(n - len(screen_reports(mech, honest, args.alpha)[0]))
                    fake_out.append(len(fakes) - len(screen_reports(mech, fakes, args.alpha)[0])
                                    if len(fakes) else 0)
                removed = np.sum(fake_out) / max(1, int(share * n) * args.trials)
                print(f"{eps:4g} {kind:10} {share:6.1%} {np.mean(raw):11.1f} {np.mean(screened):9.1f} "
                      f"{removed:13.1%} {np.sum(honest_out) / (n * args.trials):15.3%}")


if __name__ == "__main__":
    main()
