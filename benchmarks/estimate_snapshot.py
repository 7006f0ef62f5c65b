"""Every number ``BFRRCE.estimate`` returns over a fixed grid of cases, to check that a speed change
leaves the results alone.

    python -m benchmarks.estimate_snapshot --out before.json        # on the old code
    python -m benchmarks.estimate_snapshot --compare before.json    # on the new: the largest change

The grid: Zipf(1.3) frequencies at 10^5 and 10^7 users, equal frequencies (500 × 200, 200 × 5,000,
30 × 3,333), one value of 10^6 users, 10^4 singletons and geometric frequencies, each at ε = 1, 2,
4, 8, 12 and (L, l) = (1024, 1), (4096, 2), (65536, 1): 120 estimates, seeded (a few seconds).
Compared are value, std_error, the interval and every numeric entry of ``details``; entries whose
relative change exceeds ``--tolerance`` are listed.
"""

from __future__ import annotations

import argparse
import json
import math
import warnings

import numpy as np

from bfrrce import BFRRCE, PrivacyWarning

DESIGNS = ((1024, 1), (4096, 2), (65536, 1))
EPSILONS = (1, 2, 4, 8, 12)


def cases():
    """(name, counts per value) of the grid."""
    rng = np.random.default_rng(0)
    zipf = rng.zipf(1.3, 20_000).clip(max=10 ** 5)
    for n in (10 ** 5, 10 ** 7):
        yield f"zipf1.3 n={n}", (zipf * (n / zipf.sum())).astype(np.int64) + 1
    yield "500 x 200", np.full(500, 200)
    yield "200 x 5000", np.full(200, 5000)
    yield "one value of 10^6", np.array([10 ** 6])
    yield "10^4 singletons", np.ones(10 ** 4, dtype=np.int64)
    yield "geometric(0.01) x 3000", rng.geometric(0.01, 3000)
    yield "30 x 3333", np.full(30, 3333)


def snapshot() -> dict:
    """{case: {field: number}} over the grid."""
    out = {}
    rng = np.random.default_rng(1)
    for name, counts in cases():
        values = rng.integers(0, 2 ** 62, counts.size)
        for eps in EPSILONS:
            for L, l in DESIGNS:
                mech = BFRRCE(epsilon=eps, L=L, l=l)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyWarning)       # a simulation: seeded on purpose
                    est = mech.estimate(mech.simulate(values, counts=counts, rng=7))
                fields = {"value": est.value, "std_error": est.std_error,
                          "lower": est.interval[0], "upper": est.interval[1]}
                fields.update({k: float(v) for k, v in est.details.items()
                               if isinstance(v, (int, float)) and not isinstance(v, bool)})
                out[f"{name} | eps={eps} L={L} l={l}"] = fields
    return out


def changes(old: dict, new: dict, tolerance: float) -> tuple[list, float]:
    """The (case, field, old, new) whose relative change exceeds ``tolerance`` (or that one side
    lacks), and the largest relative change."""
    found, worst = [], 0.0
    for case in old.keys() | new.keys():
        a, b = old.get(case, {}), new.get(case, {})
        for field in a.keys() | b.keys():
            x, y = a.get(field), b.get(field)
            if x is None or y is None:
                found.append((case, field, x, y))
                continue
            if x == y or (math.isnan(x) and math.isnan(y)):
                continue
            rel = abs(x - y) / max(abs(x), abs(y)) if math.isfinite(x) and math.isfinite(y) else math.inf
            worst = max(worst, rel)
            if rel > tolerance:
                found.append((case, field, x, y))
    return sorted(found, key=str), worst


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the snapshot here (JSON)")
    ap.add_argument("--compare", help="a snapshot to compare this code's results with")
    ap.add_argument("--tolerance", type=float, default=1e-9)
    args = ap.parse_args(argv)
    now = snapshot()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(now, fh, indent=1)
    print(f"{len(now)} estimates")
    if args.compare:
        with open(args.compare, encoding="utf-8") as fh:
            found, worst = changes(json.load(fh), now, args.tolerance)
        for case, field, x, y in found:
            print(f"changed: {case}: {field} {x} -> {y}")
        print(f"largest relative change {worst:.2g}; {len(found)} above {args.tolerance:g}")


if __name__ == "__main__":
    main()
