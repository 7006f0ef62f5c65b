"""Coverage of the true number of distinct values by the bounds of ``BFRRCE.estimate``.

    python -m benchmarks.coverage [--runs 200] [--quick] [--random K] [--out results.csv]

For every cell of the grid (frequency shape, n, ε, L, l, unit, perturbation) it draws ``--runs``
data sets (new random values each run, so hash collisions vary as they do between data sets),
simulates the column sums exactly in distribution, and prints the coverage of the true D by the
95% interval (lower, upper), the median bounds, the AARE of ``value``, the ratio of its median
reported standard error to its measured spread (the sd of ``value`` over the runs; in the CSV
also ``se_error_ratio``, against the sd of value − D, which adds the spread of the true D where
the shape is drawn anew each run; not given where both are below half a value, where ``value``
reads the integer D exactly), and the coverage by ``visible``'s 95% interval of
the number of values held by at least f50 users (the detection limit), the target a user who
wants "the values above the limit" has in mind (value unit only).

Shapes: ``uniform`` (D values, equal frequencies), ``zipf1.1`` / ``zipf1.5`` (D values drawn
with weights i^{-s}; D is the number that occur), ``bitcoin`` (the address frequencies of the
shipped Bitcoin sample, rescaled to n users by multinomial sampling; D is the number that occur).
With ``unit="item"`` each of n parties holds k = 4 items drawn from the shape (set semantics:
a party holding an item twice holds it once). ``zipf0.8`` / ``zipf2.0`` as the Zipf shapes;
``singletons`` (every user its own value), ``one`` (one value held by all) and ``head+tail``
(5 values share half the users, the other half hold a value each) are drawn exactly, as is
``heads+singletons`` (n/200 users hold a value each, the rest share n/2,000 values), run only
where the bound comes nearest D: 10⁶ users, symmetric flips at ε = 12 and 14 and optimized ones at
ε = 12, in sparse filters.

``--random K`` runs K cells drawn off the grid instead (:func:`random_grid`, seeded by ``--seed``):
other ε, L and l, both perturbations, every shape, n from about 300 to 10⁶.

Per cell it also reports the medians of lower/D and upper/D, the ratio of the median upper
bound to the *oracle mass balance* (the same argument with the occupied columns and their true
t_j known, no selection and no Bonferroni: :func:`bfrrce.estimation.bounds.values_upper_by_slots`
of 1.96·σ_H, σ_H² = Σ_{occupied j} Var(t̂_j)), and the AARE of the simple baselines of
:mod:`benchmarks.baselines`. ``--out`` writes the CSV with the date, commit and cores in every
row; ``--table CSV`` prints the README's markdown table from such a file.
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
from bfrrce.estimation import bounds
from protocols.core.perturbation import count_variance, simulate_column_sums

from ._common import run_stamp
from .baselines import BASELINES

ITEMS_PER_PARTY = 4


EXACT = ("singletons", "one", "head+tail", "heads+singletons")      # shapes whose counts are fixed, not drawn


def weights(shape, D):
    """Relative frequencies of D values for a shape (bitcoin: the sample's address profile)."""
    if shape in EXACT:
        return np.ones(1)
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
    if shape == "singletons":
        return np.ones(n, dtype=np.int64)
    if shape == "one":
        return np.array([n], dtype=np.int64)
    if shape == "head+tail":
        tail = n // 2
        return np.concatenate([np.diff(np.linspace(0, n - tail, 6).round().astype(np.int64)),
                               np.ones(tail, dtype=np.int64)])
    if shape == "heads+singletons":
        tail = n // 200
        return np.concatenate([np.diff(np.linspace(0, n - tail, n // 2000 + 1).round().astype(np.int64)),
                               np.ones(tail, dtype=np.int64)])
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


def oracle_upper(mech, keys, f):
    """The oracle mass balance of the module docstring for values ``keys`` held by f users."""
    t = np.zeros(mech.L)
    for column in mech.bloom.positions(keys).T:
        np.add.at(t, column, f)
    occupied = t > 0
    n = int(f.sum())
    sigma = math.sqrt(float(np.sum(count_variance(t[occupied], n, mech.p, mech.q)))) / (mech.p - mech.q)
    return min(bounds.values_upper_by_slots(1.96 * sigma, int(occupied.sum()), mech.L, mech.l, 0.005), n)


EXACT_BELOW = 0.5     # a spread and a standard error both below half a value: D is read exactly


STILL_BELOW = 1e-3    # a spread below a thousandth of a value: the same number in every run (rounding, or a
                      # combination weight 1 − 10⁻⁹ that leaves 10⁻⁵ of a value): none


def se_ratio(se, spread):
    """se/sd, or NaN where ``value`` did not vary (sd below :data:`STILL_BELOW`: a value that
    read the same number in every run, up to rounding) or where both are below
    :data:`EXACT_BELOW`: D is an integer, so an estimate that stays within half a value of it
    identifies it, and the ratio of two sub-unit numbers (a spread from the optimiser's
    tolerance) says nothing about the ±."""
    if spread < STILL_BELOW or max(se, spread) < EXACT_BELOW:
        return math.nan
    return se / spread


def run_cell(shape, n, D, eps, L, l, unit, perturbation, runs, seed, w):
    rng = np.random.default_rng(seed)
    mech = BFRRCE(epsilon=eps, L=L, l=l, unit=unit, perturbation=perturbation)
    rows = []
    for _ in range(runs):
        oracle, base = math.nan, [math.nan] * len(BASELINES)
        if unit == "item":
            agg, truth = simulate_items(mech, n, w, rng)
            above = math.nan
        else:
            f = draw_counts(shape, n, D, rng, w)
            keys = rng.integers(0, 2 ** 62, f.size)
            agg, truth = mech.simulate(keys, rng=rng, counts=f), f.size
            above = np.count_nonzero(f >= mech.detection_limit(n)[0.5])
            oracle = oracle_upper(mech, keys, f)
            base = [fn(agg.counts, agg.n, mech.p, mech.q, L, l, rng) for fn in BASELINES.values()]
        est = mech.estimate(agg)
        rows.append((truth, est.value, est.std_error, *est.interval, above, *est.visible.interval,
                     oracle, *base))
    a = np.array(rows, dtype=float)
    truth, value, se, lo, hi, above, vis_lo, vis_hi, oracle = a.T[:9]
    spread, error_spread = np.std(value), np.std(value - truth)
    narrow = hi <= 2 * lo
    return {"shape": shape, "n": n, "D": int(np.median(truth)), "epsilon": eps, "L": L, "l": l,
            "unit": unit, "perturbation": perturbation, "runs": runs,
            "coverage": float(np.mean((lo <= truth) & (truth <= hi))),
            "lower": float(np.median(lo)), "upper": float(np.median(hi)),
            "lower_ratio": float(np.median(lo / truth)), "upper_ratio": float(np.median(hi / truth)),
            "upper_to_oracle": float(np.median(hi) / np.median(oracle)) if unit == "value" else math.nan,
            "identified": float(np.mean(narrow)),
            **{f"aare_{name}": float(np.mean(np.abs(col - truth) / truth))
               for name, col in zip(BASELINES, a.T[9:])},
            "aare": float(np.mean(np.abs(value - truth) / truth)),
            "se_ratio": se_ratio(float(np.median(se)), spread),
            "se_error_ratio": se_ratio(float(np.median(se)), error_spread),
            "above_f50": float(np.median(above)),
            "visible_coverage": float(np.mean((vis_lo <= above) & (above <= vis_hi))) if unit == "value"
            else math.nan}


SHAPES = ("uniform", "zipf1.1", "zipf1.5", "bitcoin")
EXTRA_SHAPES = ("zipf0.8", "zipf2.0", "singletons", "one", "head+tail")
ALL_SHAPES = SHAPES + EXTRA_SHAPES + ("heads+singletons",)     # the last in sparse filters only


def grid(quick, shapes=SHAPES):
    """The cells: a base grid over shape, n and ε, variations of L, l, unit, perturbation, the
    extra shapes over (n, ε, L, l) from 50 users to 10^6 users at L = 65,536, and equal
    frequencies far above the noise in sparse filters (10^6 users of 10^4 or 200 values) and in a
    filter that heavy values fill to 40% (10^5 users of 500 values, L = 1024), where the bounds
    come closest to identifying D."""
    ns = (10 ** 3, 10 ** 4, 10 ** 5) if quick else (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6)
    epsilons = (0.5, 2, 8) if quick else (0.5, 1, 2, 4, 8)
    cells = []
    for shape, n, eps in itertools.product([s for s in SHAPES if s in shapes], ns, epsilons):
        D = {"uniform": max(n // 80, 2), "zipf1.1": n // 10, "zipf1.5": n // 10, "bitcoin": 0}[shape]
        cells.append((shape, n, D, eps, 1024, 1, "value", "optimized"))
    for shape, eps in itertools.product([s for s in ("uniform", "zipf1.1") if s in shapes], (1, 4, 8)):
        n, D = 10 ** 5, 2000
        cells += [(shape, n, D, eps, 128, 1, "value", "optimized"),
                  (shape, n, D, eps, 4096, 1, "value", "optimized"),
                  (shape, n, D, eps, 1024, 3, "value", "optimized"),
                  (shape, n, D, eps, 1024, 2, "value", "symmetric"),
                  (shape, 10 ** 4, 500, eps, 1024, 1, "item", "optimized")]
    for shape, (n, eps, L, l) in itertools.product(
            [s for s in EXTRA_SHAPES if s in shapes],
            [(10 ** 3, 8, 1024, 1), (10 ** 4, 4, 1024, 1), (10 ** 5, 8, 1024, 1), (10 ** 5, 10, 4096, 2),
             (10 ** 5, 1, 1024, 1), (10 ** 6, 8, 65536, 1), (50, 10, 64, 1)][:4 if quick else None]):
        cells.append((shape, n, n // 5, eps, L, l, "value", "optimized"))
    if "uniform" in shapes and not quick:      # values far above the noise in sparse filters
        cells += [("uniform", 10 ** 6, D, eps, L, 1, "value", "optimized")
                  for D, L in ((10 ** 4, 65536), (200, 4096)) for eps in (8, 10)]
        cells += [("uniform", 10 ** 5, 500, eps, 1024, l, "value", "optimized")     # H 40% of the columns
                  for l in (1, 2) for eps in (8, 10)]
    if "heads+singletons" in shapes and not quick:     # heavy values beside a few singletons, bounds near D
        cells += [("heads+singletons", 10 ** 6, 5500, eps, L, 1, "value", perturbation)
                  for eps, L, perturbation in ((12, 65536, "symmetric"), (14, 65536, "symmetric"),
                                               (12, 16384, "optimized"))]
    return cells



RANDOM_EPSILONS = (0.7, 1.5, 3, 5, 6, 7, 9, 11, 12, 13, 14, 16)
RANDOM_L = (256, 512, 2048, 8192, 16384, 32768, 65536)


def random_grid(count, seed):
    """``count`` cells off the grid, drawn from ``seed``: every shape in turn (heads+singletons
    from 10^4 users), n log-uniform in [10^2.5, 10^6], ε from :data:`RANDOM_EPSILONS` (none of the
    grid's but 12 and 14), L from :data:`RANDOM_L`, l in 1 … 4, either perturbation; D = n/10^u
    (u uniform in [0.3, 3.5]) for uniform, n/m (m in 2, 5, 10, 50) for the Zipf shapes, n/5
    for the exact shapes (which fix their own D, as the sample fixes bitcoin's)."""
    rng = np.random.default_rng(seed)
    cells = []
    for k in range(count):
        shape = ALL_SHAPES[k % len(ALL_SHAPES)]
        n = int(round(10 ** rng.uniform(4 if shape == "heads+singletons" else 2.5, 6)))
        eps = float(rng.choice(RANDOM_EPSILONS))
        L, l = int(rng.choice(RANDOM_L)), int(rng.integers(1, 5))
        perturbation = str(rng.choice(["optimized", "symmetric"]))
        if shape == "uniform":
            D = max(1, int(n / 10 ** rng.uniform(0.3, 3.5)))
        elif shape.startswith("zipf"):
            D = max(2, n // int(rng.choice([2, 5, 10, 50])))
        else:
            D = 0 if shape == "bitcoin" else n // 5
        cells.append((shape, n, D, eps, L, l, "value", perturbation))
    return cells


COLUMNS = (("shape", "shape", "{}"), ("n", "n", "{:,}"), ("D", "D", "{:,}"), ("epsilon", "ε", "{:g}"),
           ("L", "L", "{}"), ("l", "l", "{}"), ("unit", "unit", "{}"), ("coverage", "coverage", "{:.3f}"),
           ("lower_ratio", "lower/D", "{:.3f}"), ("upper_ratio", "upper/D", "{:.2f}"),
           ("upper_to_oracle", "upper/oracle", "{:.2f}"), ("aare", "AARE value", "{:.3f}"),
           ("aare_linear", "linear", "{:.3f}"), ("aare_storey", "Storey", "{:.3f}"),
           ("aare_simpson", "Simpson", "{:.3f}"), ("se_ratio", "se/sd", "{:.2f}"))


def markdown(rows):
    """The README table of CSV rows (dicts of strings)."""
    lines = ["| " + " | ".join(title for _, title, _ in COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = []
        for key, _, fmt in COLUMNS:
            raw = row[key]
            if fmt == "{}":
                cells.append(raw)
                continue
            try:
                value = float(raw)
                cells.append("–" if math.isnan(value) else fmt.format(int(value) if fmt == "{:,}" else value))
            except ValueError:
                cells.append(raw)
        lines.append("| " + " | ".join(cells) + " |")
    meta = rows[0]
    return f"{len(rows)} cells, {meta['runs']} runs each; {meta['date']}, commit {meta['commit']}, " \
           f"{meta['cores']} cores\n\n" + "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="a smaller grid (3 n, 3 ε)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shapes", default=",".join(ALL_SHAPES), help="comma-separated subset of " + ", ".join(ALL_SHAPES))
    ap.add_argument("--random", type=int, default=0, metavar="K",
                    help="run K cells drawn off the grid (random_grid, seeded by --seed) instead of the grid")
    ap.add_argument("--out", help="write the table as CSV too")
    ap.add_argument("--table", help="print the markdown table of this CSV and stop")
    args = ap.parse_args(argv)
    if args.table:
        with open(args.table, newline="") as fh:
            print(markdown(list(csv.DictReader(fh))))
        return
    warnings.simplefilter("ignore", PrivacyWarning)
    cache = {}
    results = []
    header = (f"{'shape':10} {'n':>9} {'D':>7} {'ε':>4} {'L':>5} {'l':>2} {'unit':5} {'pert':9} "
              f"{'coverage':>8} {'lo/D':>6} {'up/D':>8} {'up/orc':>6} {'AARE':>6} {'lin':>6} {'storey':>6} "
              f"{'simpsn':>6} {'se/sd':>6}")
    print(header)
    start = time.perf_counter()
    shapes = args.shapes.split(",")
    unknown = sorted(set(shapes) - set(ALL_SHAPES))
    if unknown:
        ap.error(f"unknown shapes {unknown}; choose from {', '.join(ALL_SHAPES)}")
    cells = random_grid(args.random, args.seed) if args.random else grid(args.quick, shapes)
    for i, cell in enumerate(cells):
        shape, n, D, eps, L, l, unit, pert = cell
        if (shape, D) not in cache:
            cache[shape, D] = weights(shape, D)
        r = run_cell(shape, n, D, eps, L, l, unit, pert, args.runs, args.seed + i, cache[shape, D])
        results.append(r)
        print(f"{shape:10} {n:>9,} {r['D']:>7,} {eps:>4g} {L:>5} {l:>2} {unit:5} {pert:9} "
              f"{r['coverage']:>8.3f} {r['lower_ratio']:>6.3f} {r['upper_ratio']:>8.2f} "
              f"{r['upper_to_oracle']:>6.2f} {r['aare']:>6.3f} {r['aare_linear']:>6.3f} "
              f"{r['aare_storey']:>6.3f} {r['aare_simpson']:>6.3f} {r['se_ratio']:>6.2f}", flush=True)
    worst = min(results, key=lambda r: r["coverage"])
    print(f"\n{len(results)} cells, {args.runs} runs each, {time.perf_counter() - start:.0f} s; "
          f"lowest coverage {worst['coverage']:.3f} ({worst['shape']}, n={worst['n']:,}, "
          f"ε={worst['epsilon']:g}, L={worst['L']}, l={worst['l']}, {worst['unit']}, "
          f"{worst['perturbation']})")
    if args.out:
        meta = {key: value for key, value in run_stamp().items() if key != "time"}
        with open(args.out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=[*results[0], *meta])
            writer.writeheader()
            writer.writerows({**r, **meta} for r in results)


if __name__ == "__main__":
    main()
