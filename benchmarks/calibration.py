"""Is the ± earned? ``std_error`` against the measured error of ``value`` where the bounds locate D
(docs/estimation.md, "Point estimate": "Is the ± earned where D is located?").

Cells: those of the frequency-class tables (docs/frequency-classes.md and -random.md) and of the
coverage grid (docs/coverage.csv) whose bounds were within 2× in half their runs or more (the
located cells), and beside four all-singletons cells the same design with 2%, 5% and 10% of the users
in pairs (D 1–10% below n). Per cell and run: new values, a new hash seed, the
reports simulated (:func:`benchmarks.frequency_classes.estimates`), ``estimate`` read. Per cell:
the share of runs located (upper/lower <= 2) and at n (``value`` = n, every user alone), the bias,
the spread (sd of value − D) and the root mean square error of ``value``, the mean reported
standard error over the spread (se/sd) and over the RMSE (se/RMSE), and the band within which
se/sd falls with 90% probability where se is the true sd and the errors are normal (from the χ²
law of the spread of that many runs: with 8 runs it is 0.75–1.92, and a calibrated se falls within
0.8–1.25 in only 56% of cells of 8 runs, 62% of 10, 90% of 30 and 98% of 60).

    python -m benchmarks.calibration --runs 60 --out docs/calibration.md

``--random K --seed S`` runs the K cells of :func:`benchmarks.frequency_classes.random_cells` (K, S)
instead (cells off those tables; the summary counts those located in half their runs or more); the
runs of cell i are then seeded 1000 + i (S draws the cells), else S + i.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
from scipy import stats

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.estimation.result import identified

from ._common import emit, run_stamp
from .coverage import se_ratio
from .frequency_classes import CELLS, estimates, random_cells

LOCATED_INDICES = {"grid": (0, 1, 4, 5),      # the located cells: in frequency_classes.CELLS, in
                   7: (0, 1, 2, 4, 9, 12, 14, 17, 21, 22, 23, 26, 32, 38),    # random_cells(40, 7) ...
                   8: (5, 19, 29, 34)}                                         # ... and random_cells(40, 8)
TABLES = {"grid": CELLS, 7: random_cells(40, 7), 8: random_cells(40, 8)}
LOCATED = [TABLES[key][i] for key, indices in LOCATED_INDICES.items() for i in indices]
LOCATED.append(("equal 10000", 10 ** 6, 10, 65536))   # and of docs/coverage.csv (10⁶ users of 10⁴ values)
SINGLETONS_CELLS = ((2166, 12, 16384), (5105, 10, 4096), (631, 16, 1024), (31145, 12, 65536))   # located, at n
PAIR_SHARES = (0.02, 0.05, 0.1)     # shares of the users in pairs in their neighbours
NEIGHBOURS = [(f"pairs {a}", *cell) for cell in SINGLETONS_CELLS for a in PAIR_SHARES]
WINDOW = (0.8, 1.25)     # se over the measured error within this: calibrated


def calibrated_band(runs: int, level: float = 0.9) -> tuple[float, float]:
    """The range of se/sd that holds with probability ``level`` where se is the true sd of normal
    errors and sd their spread over ``runs`` runs (numpy's std: runs·sd²/σ² ~ χ²(runs − 1))."""
    tail = (1 - level) / 2
    chi2 = stats.chi2(runs - 1)
    return math.sqrt(runs / chi2.ppf(1 - tail)), math.sqrt(runs / chi2.ppf(tail))


def run_cell(shape, n, eps, L, runs, seed):
    mech = BFRRCE(epsilon=eps, L=L, l=1)
    rng = np.random.default_rng(seed)
    rows = [(D, est.value, est.std_error, identified(est.interval), est.value >= n - 0.5)
            for D, _, est in estimates(mech, shape, n, rng, runs)]
    D, value, se, located, at_n = np.array(rows, dtype=float).T
    error = value - D
    rmse = math.sqrt(float(np.mean(error ** 2)))
    return {"shape": shape, "n": n, "D": int(np.median(D)), "epsilon": eps, "L": L,
            "located": float(located.mean()), "at_n": float(at_n.mean()), "bias": float(error.mean()),
            "sd": float(error.std()), "rmse": rmse, "se": float(se.mean()),
            "se_sd": se_ratio(float(se.mean()), float(error.std())), "se_rmse": se_ratio(float(se.mean()), rmse)}


def _within(ratios, window):
    given = [r for r in ratios if not math.isnan(r)]
    return sum(window[0] <= r <= window[1] for r in given), len(given)


def summary(rows: list, band: tuple[float, float]) -> list[str]:
    """The counts of located cells (located in half their runs or more) whose se/sd falls within
    :data:`WINDOW` and within the band of a calibrated se, and whose se/RMSE falls within
    :data:`WINDOW`, apart for the cells whose value reads n in half their runs or more; and per
    cell of :data:`SINGLETONS_CELLS` run with its neighbours, its mean se beside the RMSE at each
    share of users in pairs and their root mean square (the error over the truths its sums do not
    tell apart, equally weighted)."""
    lines = []
    for label, keep in (("value at n in under half the runs", lambda r: r["at_n"] < 0.5),
                        ("value at n in half the runs or more", lambda r: r["at_n"] >= 0.5)):
        cells = [r for r in rows if r["located"] >= 0.5 and keep(r)]
        counts = [f"{name} within {lo:.2f}–{hi:.2f} in {a} of {b}"
                  for name, key, window in (("se/sd", "se_sd", WINDOW), ("se/sd", "se_sd", band),
                                            ("se/RMSE", "se_rmse", WINDOW))
                  for lo, hi in [window] for a, b in [_within([r[key] for r in cells], window)]]
        lines.append(f"* Located cells with {label} ({len(cells)}; a ratio only where se or the error exceeds "
                     "half a value): " + "; ".join(counts) + ".")
    by_cell = {(r["shape"], r["n"], r["epsilon"], r["L"]): r for r in rows}
    for cell in SINGLETONS_CELLS:
        family = [by_cell.get((shape, *cell)) for shape in ["singletons"] + [f"pairs {a}" for a in PAIR_SHARES]]
        if None in family:
            continue
        rms = math.sqrt(sum(r["rmse"] ** 2 for r in family) / len(family))
        shares = ", ".join(f"{100 * a:g}%" for a in (0, *PAIR_SHARES))
        lines.append(f"* {cell[0]:,} users, ε = {cell[1]:g}, L = {cell[2]:,}: all singletons, mean se "
                     f"{family[0]['se']:.3g}; RMSE " + ", ".join(f"{r['rmse']:.3g}" for r in family)
                     + f" with {shares} of the users in pairs; their root mean square {rms:.3g}.")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cells", type=int, help="the first this many cells only")
    ap.add_argument("--random", type=int, default=0, metavar="K",
                    help="K cells of benchmarks.frequency_classes.random_cells(K, --seed) instead, run i seeded 1000 + i")
    ap.add_argument("--out", help="write the markdown table there too")
    args = ap.parse_args(argv)
    if args.runs < 3:
        ap.error("--runs must be at least 3 (a spread and its χ² band)")
    warnings.simplefilter("ignore", PrivacyWarning)
    stamp = run_stamp()
    band = calibrated_band(args.runs)
    keys = ["shape", "n", "D", "epsilon", "L", "located", "at_n", "bias", "sd", "rmse", "se", "se_sd", "se_rmse"]
    head = ["frequencies", "n", "D", "ε", "L", "located", "value = n", "bias", "sd", "RMSE", "mean se", "se/sd",
            "se/RMSE"]
    cells, first = (random_cells(args.random, args.seed), 1000) if args.random else (LOCATED + NEIGHBOURS, args.seed)
    command = f"--runs {args.runs} --seed {args.seed}" + (f" --random {args.random}" if args.random else "")
    lines = [f"Generated by `python -m benchmarks.calibration {command}` on "
             f"{stamp['date']} {stamp['time']} UTC, commit {stamp['commit']}, {stamp['cores']} cores; l = 1, "
             f"{args.runs} runs per cell; se/sd of a calibrated se lies within {band[0]:.2f}–{band[1]:.2f} "
             "with 90% probability at this many runs.", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows = []
    for i, cell in enumerate(cells[:args.cells]):
        rows.append(run_cell(*cell, args.runs, first + i))
        lines.append("| " + " | ".join(f"{v:,}" if isinstance(v, int) else f"{v:.3g}" if isinstance(v, float)
                                       else str(v) for v in (rows[-1][k] for k in keys)) + " |")
        print(lines[-1], flush=True)
    emit("\n".join(lines + [""] + summary(rows, band)) + "\n", args.out)


if __name__ == "__main__":
    main()
