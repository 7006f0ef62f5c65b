"""The point estimate against the equal-frequency reading it replaces where the frequency-class
likelihood rejects it (bfrrce.estimation.estimators.checked_by_classes, docs/estimation.md,
"Frequency classes").

Cells of few-user values (singletons and pairs, geometric and Zipf laws) and of equal
frequencies, l = 1, at ε where a column's sum resolves a few users. Per cell and run: new values,
a new hash seed, the reports simulated, ``estimate`` read; the equal-frequency reading is the
estimate where nothing was replaced, else ``details["equal_frequency_reading"]``. The table gives
the AARE and se/sd (median reported standard error over the spread of the error; not given where
the estimate did not vary or both are below half a value, :func:`benchmarks.coverage.se_ratio`) of
both, the
share of runs where the reading was replaced, the share where the bounds locate D (upper/lower
<= 2) and the inverse Simpson baseline's AARE (benchmarks/baselines.py).

    python -m benchmarks.frequency_classes --runs 10 --out docs/frequency-classes.md

``--random K --seed S`` runs K cells drawn at random instead (:func:`random_cells`: each shape
in turn at random, n from 500 to 50,000, ε from 6 to 16, L from 1,024 to 65,536), the runs of
cell i seeded 1000 + i.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.estimation.result import identified

from ._common import emit, run_stamp
from .baselines import BASELINES
from .coverage import se_ratio

CELLS = [  # (shape, n, ε, L)
    ("pairs 0.2", 2000, 12, 16384), ("pairs 0.2", 20000, 12, 65536), ("pairs 0.5", 5000, 8, 16384),
    ("pairs 0.2", 1000, 10, 4096), ("singletons", 2166, 12, 16384), ("singletons", 10000, 16, 65536),
    ("singletons", 1000, 8, 1024), ("geometric 1.5", 5000, 12, 16384), ("geometric 2", 10000, 16, 65536),
    ("geometric 3", 3000, 10, 16384), ("geometric 1.5", 50000, 10, 65536), ("zipf 1.5", 5000, 12, 16384),
    ("zipf 1.1", 20000, 10, 65536), ("zipf 2.0", 20000, 16, 65536), ("zipf 1.1", 100000, 8, 65536),
    ("equal 100", 1000, 8, 1024), ("equal 500", 100000, 8, 1024), ("equal 1000", 5000, 10, 16384),
    ("equal 200", 2000, 12, 4096), ("equal 2000", 10000, 12, 16384), ("equal 50", 10000, 8, 4096),
    ("equal 1000", 20000, 8, 16384), ("equal 12", 1000, 4, 1024), ("equal 10", 100000, 10, 4096),
]


def users_per_value(shape: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n users' counts per value: ``pairs a`` (a share a of the users in pairs, the rest alone),
    ``singletons``, ``geometric m`` (1 + Geometric, mean m, the last value cut to n users),
    ``zipf s`` (n draws over n/3 values with Pr ∝ rank^−s, zeros dropped) or ``equal D``."""
    kind, _, arg = shape.partition(" ")
    if kind == "pairs":
        pairs = int(n * float(arg) / 2)
        return np.concatenate([np.full(pairs, 2), np.ones(n - 2 * pairs, dtype=np.int64)])
    if kind == "singletons":
        return np.ones(n, dtype=np.int64)
    if kind == "geometric":
        f = rng.geometric(1 / float(arg), size=n)
        f = f[:np.searchsorted(np.cumsum(f), n) + 1]
        f[-1] -= f.sum() - n
        return f[f > 0]
    if kind == "zipf":
        w = np.arange(1, n // 3 + 1) ** -float(arg)
        f = rng.multinomial(n, w / w.sum())
        return f[f > 0]
    return np.diff(np.linspace(0, n, int(arg) + 1).round().astype(np.int64))


def random_cells(count: int, seed: int) -> list:
    """``count`` cells (shape, n, ε, L) drawn at random (module docstring)."""
    rng = np.random.default_rng(seed)
    cells = []
    for _ in range(count):
        kind = str(rng.choice(["pairs", "geometric", "zipf", "equal", "singletons"]))
        n = int(np.exp(rng.uniform(np.log(500), np.log(50000))))
        arg = {"pairs": f"{rng.uniform(0.05, 0.8):.2f}", "geometric": f"{rng.uniform(1.2, 6):.1f}",
               "zipf": f"{rng.uniform(0.8, 2.2):.1f}",
               "equal": str(max(2, int(n / np.exp(rng.uniform(np.log(1.5), np.log(200)))))), "singletons": ""}[kind]
        cells.append((f"{kind} {arg}".strip(), n, float(rng.choice([6, 8, 10, 12, 14, 16])),
                      int(rng.choice([1024, 4096, 16384, 65536]))))
    return cells


def estimates(mech, shape, n, rng, runs):
    """Per run: n users of a new draw of ``shape`` (:func:`users_per_value`), new values (so a new
    hash draw), their reports' column sums and ``estimate``. Yields (D, sums, estimate)."""
    for _ in range(runs):
        f = users_per_value(shape, n, rng)
        agg = mech.simulate(rng.integers(0, 2 ** 62, f.size), counts=f, rng=rng)
        yield f.size, agg, mech.estimate(agg)


def run_cell(shape, n, eps, L, runs, seed):
    mech = BFRRCE(epsilon=eps, L=L, l=1)
    rng = np.random.default_rng(seed)
    rows = []
    for D, agg, est in estimates(mech, shape, n, rng, runs):
        reading = est.details.get("equal_frequency_reading", est.value)
        reading_se = est.details.get("equal_frequency_reading_stderr", est.std_error)
        simpson = BASELINES["simpson"](agg.counts, agg.n, mech.p, mech.q, L, 1, rng)
        rows.append((D, est.value, est.std_error, reading, reading_se, reading != est.value,
                     identified(est.interval), simpson))
    D, value, se, reading, reading_se, replaced, located, simpson = np.array(rows, dtype=float).T

    def aare(v):
        return float(np.mean(np.abs(v - D) / D))

    def se_sd(v, s):
        return se_ratio(float(np.median(s)), float(np.std(v - D)))
    return [shape, n, int(np.median(D)), eps, L, float(located.mean()), aare(reading), aare(value),
            se_sd(reading, reading_se), se_sd(value, se), float(replaced.mean()), aare(simpson)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cells", type=int, default=len(CELLS), help="the first this many cells only")
    ap.add_argument("--random", type=int, default=0, metavar="K", help="K cells drawn at random (seeded by --seed)")
    ap.add_argument("--out", help="write the markdown table there too")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", PrivacyWarning)
    stamp = run_stamp()
    head = ["frequencies", "n", "D", "ε", "L", "located", "AARE reading", "AARE estimate", "se/sd reading",
            "se/sd estimate", "replaced", "AARE inverse Simpson"]
    cells, first = (random_cells(args.random, args.seed), 1000) if args.random else (CELLS[:args.cells], args.seed)
    command = f"--runs {args.runs}" + (f" --random {args.random} --seed {args.seed}" if args.random else "")
    lines = [f"Generated by `python -m benchmarks.frequency_classes {command}` on {stamp['date']} "
             f"{stamp['time']} UTC, commit {stamp['commit']}, {stamp['cores']} cores; l = 1, "
             f"{args.runs} runs per cell.", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, cell in enumerate(cells):
        row = run_cell(*cell, args.runs, first + i)
        lines.append("| " + " | ".join(f"{v:,}" if isinstance(v, int) else f"{v:.4g}" if isinstance(v, float)
                                       else str(v) for v in row) + " |")
        print(lines[-1], flush=True)
    emit("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
