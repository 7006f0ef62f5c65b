"""Coverage of the true number of distinct values by the bounds of ``BFRRCE.estimate``.

    python -m benchmarks.coverage [--runs 200] [--quick] [--out results.csv]

For every cell of the grid (frequency shape, n, ε, L, l, unit, perturbation) it draws ``--runs``
data sets (new random values each run, so hash collisions vary as they do between data sets),
simulates the column sums exactly in distribution, and prints the coverage of the true D by the
95% interval (lower, upper), the median bounds, the AARE of ``value``, the ratio of its median
reported standard error to its measured spread (the sd of ``value`` over the runs; in the CSV
also ``se_error_ratio``, against the sd of value − D, which adds the spread of the true D where
the shape is drawn anew each run), and the coverage by ``visible``'s 95% interval of
the number of values held by at least f50 users (the detection limit), the target a user who
wants "the values above the limit" has in mind (value unit only).

Shapes: ``uniform`` (D values, equal frequencies), ``zipf1.1`` / ``zipf1.5`` (D values drawn
with weights i^{-s}; D is the number that occur), ``bitcoin`` (the address frequencies of the
shipped Bitcoin sample, rescaled to n users by multinomial sampling; D is the number that occur).
With ``unit="item"`` each of n parties holds k = 4 items drawn from the shape (set semantics:
a party holding an item twice holds it once).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import time
import warnings

import numpy as np

from bfrrce import BFRRCE, ColumnSums, PrivacyWarning
from protocols.core.perturbation import simulate_column_sums

ITEMS_PER_PARTY = 4


def weights(shape, D):
    """Relative frequencies of D values for a shape (bitcoin: the sample's address profile)."""
    if shape == "uniform":
        return np.full(D, 1.0 / D)
    if shape.startswith("zipf"):
        w = np.arange(1, D + 1, dtype=float) ** -float(shape[4:])
        return w / w.sum()
    if shape == "bitcoin":
        from bfrrce.datasets import load
        _, counts = np.unique(load("bitcoin").values, return_counts=True)
        return counts / counts.sum()
    raise ValueError(f"unknown shape {shape!r}")


def draw_counts(shape, n, D, rng, w):
    """Users per value: exact equal split for uniform, multinomial otherwise (zeros dropped)."""
    if shape == "uniform":
        return np.diff(np.linspace(0, n, min(D, n) + 1).round().astype(np.int64))
    f = rng.multinomial(n, w)
    return f[f > 0]


def simulate_items(mech, n, w, rng):
    """Column sums of n parties holding ITEMS_PER_PARTY items each, and the true D."""
    items = rng.choice(w.size, size=(n, ITEMS_PER_PARTY), p=w)
    keys = rng.integers(0, 2 ** 62, w.size)
    pos = mech.bloom.positions(keys)                             # (values, l)
    bits = np.zeros((n, mech.L), dtype=bool)
    for k in range(ITEMS_PER_PARTY):
        bits[np.arange(n)[:, None], pos[items[:, k]]] = True
    t = bits.sum(axis=0)
    counts = simulate_column_sums(t, n, mech.p, mech.q, rng)
    return ColumnSums(mech, counts, n), np.unique(items).size


def run_cell(shape, n, D, eps, L, l, unit, perturbation, runs, seed, w):
    rng = np.random.default_rng(seed)
    mech = BFRRCE(epsilon=eps, L=L, l=l, unit=unit, perturbation=perturbation)
    rows = []
    for _ in range(runs):
        if unit == "item":
            agg, truth = simulate_items(mech, n, w, rng)
            above = math.nan
        else:
            f = draw_counts(shape, n, D, rng, w)
            agg, truth = mech.simulate(rng.integers(0, 2 ** 62, f.size), rng=rng, counts=f), f.size
            above = np.count_nonzero(f >= mech.detection_limit(n)[0.5])
        est = mech.estimate(agg)
        rows.append((truth, est.value, est.std_error, *est.interval, above, *est.visible.interval))
    a = np.array(rows, dtype=float)
    truth, value, se, lo, hi, above, vis_lo, vis_hi = a.T
    spread, error_spread = np.std(value), np.std(value - truth)
    return {"shape": shape, "n": n, "D": int(np.median(truth)), "epsilon": eps, "L": L, "l": l,
            "unit": unit, "perturbation": perturbation, "runs": runs,
            "coverage": float(np.mean((lo <= truth) & (truth <= hi))),
            "lower": float(np.median(lo)), "upper": float(np.median(hi)),
            "aare": float(np.mean(np.abs(value - truth) / truth)),
            "se_ratio": float(np.median(se) / spread) if spread > 0 else math.nan,
            "se_error_ratio": float(np.median(se) / error_spread) if error_spread > 0 else math.nan,
            "above_f50": float(np.median(above)),
            "visible_coverage": float(np.mean((vis_lo <= above) & (above <= vis_hi))) if unit == "value"
            else math.nan}


SHAPES = ("uniform", "zipf1.1", "zipf1.5", "bitcoin")


def grid(quick, shapes=SHAPES):
    """The cells: a base grid over shape, n and ε, and variations of L, l, unit, perturbation."""
    ns = (10 ** 3, 10 ** 4, 10 ** 5) if quick else (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6)
    epsilons = (0.5, 2, 8) if quick else (0.5, 1, 2, 4, 8)
    cells = []
    for shape, n, eps in itertools.product(shapes, ns, epsilons):
        D = {"uniform": max(n // 80, 2), "zipf1.1": n // 10, "zipf1.5": n // 10, "bitcoin": 0}[shape]
        cells.append((shape, n, D, eps, 1024, 1, "value", "optimized"))
    for shape, eps in itertools.product([s for s in ("uniform", "zipf1.1") if s in shapes], (1, 4, 8)):
        n, D = 10 ** 5, 2000
        cells += [(shape, n, D, eps, 128, 1, "value", "optimized"),
                  (shape, n, D, eps, 4096, 1, "value", "optimized"),
                  (shape, n, D, eps, 1024, 3, "value", "optimized"),
                  (shape, n, D, eps, 1024, 2, "value", "symmetric"),
                  (shape, 10 ** 4, 500, eps, 1024, 1, "item", "optimized")]
    return cells


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="a smaller grid (3 n, 3 ε)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated subset of " + ", ".join(SHAPES))
    ap.add_argument("--out", help="write the table as CSV too")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", PrivacyWarning)
    cache = {}
    results = []
    header = (f"{'shape':8} {'n':>8} {'D':>7} {'ε':>4} {'L':>5} {'l':>2} {'unit':5} {'pert':9} "
              f"{'coverage':>8} {'lower':>8} {'upper':>9} {'AARE':>6} {'se/sd':>6} {'D>=f50':>7} {'vis.cov':>7}")
    print(header)
    start = time.perf_counter()
    shapes = args.shapes.split(",")
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        ap.error(f"unknown shapes {unknown}; choose from {', '.join(SHAPES)}")
    for i, cell in enumerate(grid(args.quick, shapes)):
        shape, n, D, eps, L, l, unit, pert = cell
        if (shape, D) not in cache:
            cache[shape, D] = weights(shape, D)
        r = run_cell(shape, n, D, eps, L, l, unit, pert, args.runs, args.seed + i, cache[shape, D])
        results.append(r)
        print(f"{shape:8} {n:>8,} {r['D']:>7,} {eps:>4g} {L:>5} {l:>2} {unit:5} {pert:9} "
              f"{r['coverage']:>8.3f} {r['lower']:>8,.0f} {r['upper']:>9,.0f} {r['aare']:>6.3f} "
              f"{r['se_ratio']:>6.2f} {r['above_f50']:>7,.0f} {r['visible_coverage']:>7.3f}", flush=True)
    worst = min(results, key=lambda r: r["coverage"])
    print(f"\n{len(results)} cells, {args.runs} runs each, {time.perf_counter() - start:.0f} s; "
          f"lowest coverage {worst['coverage']:.3f} ({worst['shape']}, n={worst['n']:,}, "
          f"ε={worst['epsilon']:g}, L={worst['L']}, l={worst['l']}, {worst['unit']}, "
          f"{worst['perturbation']})")
    if args.out:
        with open(args.out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(results[0]))
            writer.writeheader()
            writer.writerows(results)


if __name__ == "__main__":
    main()
