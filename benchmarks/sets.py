"""The set sketch (bfrrce.SetSketch) beside Sketch-Flip-Merge at equal bits and ε per item.

    python -m benchmarks.sets [--runs 10] [--coverage-runs 20] [--quick] [--out docs/sets-benchmark.md]
    python -m benchmarks.sets --dataset bitcoin-blocks [--runs 10] [--epsilons 1,2,4,8]
    python -m benchmarks.sets --only intersection [--runs 10]
    python -m benchmarks.sets --only flat [--runs 10]
    python -m benchmarks.sets --only speed
    python -m benchmarks.sets --only holders [--runs 10]

Both sketches have B × G = 4,096 × 24 bits per party and ε per item. Tables:

1. one party, n = 10^3 … 10^7 items, ε = 0.5 … 8: relative RMSE of our estimate, of SFM's MLE
   (benchmarks/sfm.py) and the Cramér–Rao bound (1/√Fisher information, relative), and the
   coverage of both 95% intervals. For one party the two sketches are the same mechanism, so
   both estimators read the same simulated reports (a paired comparison).
2. k = 2, 10, 100, 1,000 parties, union of 10^5 items, overlaps: disjoint (equal sizes),
   half (half the union held by every party, the rest split evenly), few common (1% held by
   every party, the rest split evenly), identical, unequal
   (disjoint, party sizes ∝ 1/rank), pairs and triples (every item held by 2 or 3 random parties;
   triples from 4 parties on): relative
   RMSE of ours against SFM's deterministic merge (OR; the better of the estimator told one
   holder or all k holders per occupied cell, an oracle choice in SFM's favour) and its
   randomized merge (balanced tree).
3. coverage of our interval over k = 1 … 1,000, union sizes 1 … 10^6 and the overlaps.
4. (``--only intersection``) |A ∩ B| of two parties (:meth:`bfrrce.SetSketch.intersection`):
   error, standard error against the spread, coverage.
5. (``--only flat``) one party: the flat Bloom filter (``BFRRCE(unit="item")``) at equal bits.
6. real sketches against the cell-level simulation (at small n), symmetric against asymmetric
   flips (Cramér–Rao bound at every fill), and sketching throughput against the SFM baseline.
7. (``--only holders``) items each held by h random parties: the overlap model's profile by its
   families of independent holders and by its exact-holders family on the same sums, and the
   estimate's error where h = 2, 3, 6 or varies (1 … 4).

The simulations draw each cell's number of holding parties m from the items' random cells,
then the sums c ~ Binomial(m, p) + Binomial(k − m, q) (the exact law of k reports given m,
:meth:`bfrrce.SetSketch.sums_from_occupancy`), and for SFM the noisy bits of the merges in
their exact law given m. With ``--dataset bitcoin-blocks`` the 610 blocks of the shipped sample
are the parties (each the set of addresses its outputs pay, 43,136 distinct in all), privatized
for real at ε = 1, 2, 4, 8.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks import sfm
from benchmarks._common import provenance
from bfrrce import SetSketch
from bfrrce.sets import _Overlap
from protocols.core.lazy import optimize

B, G = 4096, 24
SCENARIOS = ("disjoint", "half", "few common", "identical", "unequal", "pairs", "triples")
HOLDERS = {"pairs": 2, "triples": 3}       # every item held by this many random parties
PARTIES_TIMED = (10, 100, 1000)   # estimate times of unions of 10^5 items, ε = 1, disjoint and half common
ROOT = Path(__file__).resolve().parents[1]


def draw_cells(sk, n, rng):
    """Cells of n random items (iid: level by π, bucket uniform), int64."""
    levels = np.searchsorted(np.cumsum(sk.pi)[:-1], rng.random(n), side="right")
    return levels * sk.buckets + rng.integers(sk.buckets, size=n)


def occupancy(sk, union, k, scenario, rng):
    """m per cell: parties holding an item of the cell, for a union of ``union`` items."""
    if k == 1 or scenario == "identical":
        hit = np.bincount(draw_cells(sk, union, rng), minlength=sk.L) > 0
        return hit.astype(np.int64) * k
    shared = {"half": union // 2, "few common": union // 100}.get(scenario, 0)
    own = union - shared
    cells = draw_cells(sk, own, rng)
    if scenario in HOLDERS:
        parties = distinct_parties(k, HOLDERS[scenario], own, rng).ravel()
        cells = np.tile(cells, HOLDERS[scenario])
    elif scenario == "unequal":
        weights = 1.0 / np.arange(1, k + 1)
        parties = rng.choice(k, size=own, p=weights / weights.sum())
    else:
        parties = np.arange(own) % k
    m = np.bincount(np.unique(parties * sk.L + cells) % sk.L, minlength=sk.L)
    if shared:
        m[np.bincount(draw_cells(sk, shared, rng), minlength=sk.L) > 0] = k
    return m


def distinct_parties(k, h, size, rng):
    """(h, size): h distinct parties drawn at random for each of ``size`` items (h <= 3): each
    next one uniform over the parties not yet drawn, skipping them in increasing order."""
    drawn = np.empty((h, size), dtype=np.int64)
    for j in range(h):
        pick = rng.integers(k - j, size=size)
        for earlier in np.sort(drawn[:j], axis=0):
            pick += pick >= earlier
        drawn[j] = pick
    return drawn


def sfm_or(m, k, sk, rng):
    """Ones per level of the OR of k SFM sketches given m (each bit 1 w.p. p if held, q if not)."""
    zero = (1 - sk.p) ** m * (1 - sk.q) ** (k - m)
    return (rng.random(sk.L) >= zero).reshape(G, B).sum(axis=1)


def sfm_or_estimate(ones, k, sk, holders):
    r = sk.q
    return sfm.estimate(ones, B, sk.pi, 1 - (1 - r) ** k, 1 - r ** holders * (1 - r) ** (k - holders))


def sfm_random(m, k, sk, rng, flip):
    """Ones per level of the randomized merge: the union's bits flipped with ``flip``."""
    bits = (m > 0) ^ (rng.random(sk.L) < flip)
    return bits.reshape(G, B).sum(axis=1)


def rel_rmse(values, truth):
    return float(np.sqrt(np.mean((np.asarray(values) / truth - 1) ** 2))) if truth else float(np.sqrt(np.mean(np.square(values))))


def covered(intervals, truth):
    return float(np.mean([lo <= truth <= hi for lo, hi in intervals]))


def _summary(estimates, truth):
    """Relative RMSE, coverage and median upper bound / truth of a list of estimates."""
    return [rel_rmse([e.value for e in estimates], truth), covered([e.interval for e in estimates], truth),
            float(np.median([e.interval[1] for e in estimates])) / truth]


def one_party(epsilons, sizes, runs, rng):
    rows = []
    for eps in epsilons:
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        for n in sizes:
            ours, theirs = [], []
            for _ in range(runs):
                agg = sk.sums_from_occupancy(occupancy(sk, n, 1, "disjoint", rng), 1, rng)
                est = sk.estimate(agg)
                ours.append((est.value, est.interval))
                value, se = sfm.estimate(agg.counts.reshape(G, B).sum(axis=1), B, sk.pi, sk.q, sk.p)
                theirs.append((value, (value - 1.96 * se, value + 1.96 * se)))
            crb = sk.fisher_information(n) ** -0.5 / n
            a, b = rel_rmse([v for v, _ in ours], n), rel_rmse([v for v, _ in theirs], n)
            rows.append([eps, n, a, b, crb, a / b, a / crb, covered([i for _, i in ours], n),
                         covered([i for _, i in theirs], n)])
    return ["ε", "n", "ours", "SFM", "CRB", "ours/SFM", "ours/CRB", "cover ours", "cover SFM"], rows


def union(epsilons, parties, scenarios, size, runs, rng):
    rows = []
    for eps in epsilons:
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        for k in parties:
            flip = sfm.merged_flip(k, sk.q)
            for scenario in scenarios:
                if HOLDERS.get(scenario, 1) > k:          # (pairs of 2 parties: identical sets)
                    continue
                ours, cover, det1, detk, rand = [], [], [], [], []
                for _ in range(runs):
                    m = occupancy(sk, size, k, scenario, rng)
                    est = sk.estimate(sk.sums_from_occupancy(m, k, rng))
                    ours.append(est.value)
                    cover.append(est.interval)
                    ones = sfm_or(m, k, sk, rng)
                    det1.append(sfm_or_estimate(ones, k, sk, 1)[0])
                    detk.append(sfm_or_estimate(ones, k, sk, k)[0])
                    rand.append(sfm.estimate(sfm_random(m, k, sk, rng, flip), B, sk.pi, flip, 1 - flip)[0])
                errs = [rel_rmse(x, size) for x in (ours, det1, detk, rand)]
                best = min(min(errs[1], errs[2]), errs[3])
                rows.append([eps, k, scenario, errs[0], min(errs[1], errs[2]), errs[3], errs[0] / best,
                             covered(cover, size)])
    return ["ε", "k", "overlap", "ours", "SFM OR", "SFM random", "ours/best SFM", "cover ours"], rows


def coverage(epsilons, parties, sizes, scenarios, runs, rng):
    rows = []
    for eps in epsilons:
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        for k in parties:
            for scenario in (scenarios if k > 1 else ("one party",)):
                for n in sizes:
                    if HOLDERS.get(scenario, 1) >= k:      # h = k: the identical cells
                        continue
                    ests = [sk.estimate(sk.sums_from_occupancy(occupancy(sk, n, k, scenario, rng), k, rng))
                            for _ in range(runs)]
                    values = [e.value for e in ests]
                    model = [e.details.get("model_interval", e.interval) for e in ests]
                    rows.append([eps, k, scenario, n, covered([e.interval for e in ests], n), covered(model, n),
                                 float(np.median([e.interval[0] for e in ests])) / n,
                                 float(np.median([e.interval[1] for e in ests])) / n, rel_rmse(values, n),
                                 float(np.mean([e.std_error for e in ests]) / max(np.std(values), 1e-9))])
    return ["ε", "k", "overlap", "union", "coverage", "model coverage", "lower/N", "upper/N", "rel RMSE",
            "se/sd"], rows


def family_profiles(cases, ratios, rng):
    """Each case (ε, k, overlap): one draw of 10^5 items; at N = ratio·10^5 the profile of the
    families of independent holders (universe ρ, party sizes κ; Nelder–Mead from 36 starts, 300
    evaluations each) and of the exact-holders family at the true h (s on a grid of 13), relative
    to the best of all at N = 10^5: where the first rises above 0 away from ratio 1, it alone would
    put the estimate there."""
    rows = []
    for eps, k, scenario in cases:
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        agg = sk.sums_from_occupancy(occupancy(sk, 100_000, k, scenario, rng), k, rng)
        model = _Overlap(sk, agg.counts.reshape(G, B), k)
        profiles = []
        for ratio in ratios:
            union = np.array([ratio * 100_000.0])
            independent = []
            for share in (0.0, 0.3, 0.6, 0.9):
                for x0, theta in ([(math.log(r), lambda x: (x[0], min(1.0, math.exp(x[1])))) for r in (0.01, 0.05, 0.2, 0.5, 0.9)]
                                  + [(1 / kappa, lambda x: (x[0], 0.0, 1 / x[1] if x[1] > 1e-9 else math.inf))
                                     for kappa in (0.1, 0.5, 2.0, 10.0)]):
                    fit = optimize.minimize(lambda x, theta=theta: -float(model.loglik(
                        union, *theta([min(1.0, max(0.0, x[0])), x[1]]))[0]), [share, x0], method="Nelder-Mead",
                        options={"maxfev": 300})
                    independent.append(-fit.fun)
            exact = max(float(model.loglik(union, share, 0.0, math.inf, HOLDERS[scenario])[0])
                        for share in np.linspace(0.0, 0.6, 13))
            profiles.append((ratio, max(independent), exact))
        top = max(max(a, b) for r, a, b in profiles if r == 1.0)
        rows += [[eps, k, scenario, r, a - top, b - top] for r, a, b in profiles]
    return ["ε", "k", "overlap", "N/truth", "independent holders", "exact holders"], rows


def fixed_holders(epsilons, parties, holders, runs, rng):
    """Items each held by h random parties (and h drawn uniformly from 1 … 4, "1–4"), 10^5 items:
    relative RMSE and mean of value/N, the fitted h (most frequent) and the coverage of both
    intervals."""
    rows = []
    for eps in epsilons:
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        for k in parties:
            for h in holders:
                ests = []
                for _ in range(runs):
                    cells = draw_cells(sk, 100_000, rng)
                    count = rng.integers(1, 5, size=cells.size) if h == "1–4" else np.full(cells.size, h)
                    drawn = distinct_parties(k, 4 if h == "1–4" else h, cells.size, rng)
                    keep = np.arange(drawn.shape[0])[:, None] < count[None, :]
                    m = np.bincount(np.unique(drawn[keep] * sk.L + np.broadcast_to(cells, drawn.shape)[keep]) % sk.L,
                                    minlength=sk.L)
                    ests.append(sk.estimate(sk.sums_from_occupancy(m, k, rng)))
                values = np.array([e.value for e in ests])
                fitted = [e.details.get("holders", 0) for e in ests]
                rows.append([eps, k, h, rel_rmse(values, 100_000), float(values.mean() / 100_000),
                             max(set(fitted), key=fitted.count), covered([e.interval for e in ests], 100_000),
                             covered([e.details.get("model_interval", e.interval) for e in ests], 100_000)])
    return ["ε", "k", "holders", "rel RMSE", "mean value/N", "fitted h", "cover", "model cover"], rows


def real_check(runs, rng):
    """Real reports (privatize_sets, aggregate; SFM sketches and merges) against the simulation."""
    rows = []
    for eps, k, per in ((1.0, 1, 10_000), (2.0, 10, 1_000), (4.0, 10, 300)):
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        sets = [np.arange(j * per, (j + 1) * per) for j in range(k)]
        n = k * per
        real_ours, sim_ours, real_sfm, sim_sfm = [], [], [], []
        flip = sfm.merged_flip(k, sk.q)
        for _ in range(runs):
            real_ours.append(sk.estimate(sk.aggregate(sk.privatize_sets(sets, rng=rng))).value)
            sim_ours.append(sk.estimate(sk.sums_from_occupancy(occupancy(sk, n, k, "disjoint", rng), k, rng)).value)
            noisy = [sfm.sketch(s, B, G, eps, rng) for s in sets]
            merged, s = sfm.randomized_merge(noisy, [sk.q] * k, rng)
            real_sfm.append(sfm.estimate(merged.sum(axis=1), B, sk.pi, s, 1 - s)[0])
            sim_sfm.append(sfm.estimate(sfm_random(occupancy(sk, n, k, "disjoint", rng), k, sk, rng, flip),
                                        B, sk.pi, flip, 1 - flip)[0])
        rows.append([eps, k, n] + [rel_rmse(x, n) for x in (real_ours, sim_ours, real_sfm, sim_sfm)])
    return ["ε", "k", "union", "ours real", "ours simulated", "SFM random real", "SFM random simulated"], rows


def intersection(epsilons, parts, runs, rng):
    """Two parties, |A \\ B|, |B \\ A|, |A ∩ B| = parts: the intersection's error and coverage."""
    rows = []
    for eps in epsilons:
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        for only_a, only_b, both in parts:
            values, cover, ses = [], [], []
            for _ in range(runs):
                cells = [draw_cells(sk, n, rng) for n in (only_a, only_b, both)]
                occ = [np.zeros(sk.L, bool) for _ in range(2)]
                occ[0][np.concatenate([cells[0], cells[2]])] = True
                occ[1][np.concatenate([cells[1], cells[2]])] = True
                a, b = (sk.sums_from_occupancy(o.astype(np.int64), 1, rng) for o in occ)
                est = sk.intersection(a, b)
                values.append(est.value)
                cover.append(est.interval)
                ses.append(est.std_error)
            sd = float(np.std(values))
            rows.append([eps, only_a, only_b, both, float(np.mean(values)), sd, float(np.mean(ses)) / max(sd, 1e-9),
                         covered(cover, both)])
    return ["ε", "|A∖B|", "|B∖A|", "|A∩B|", "mean estimate", "sd", "se/sd", "coverage"], rows


def flat_filter(epsilons, sizes, runs, rng):
    """One party: the flat Bloom filter (BFRRCE unit="item", l = 1, L = B·G bits) beside the
    set sketch: relative RMSE (the filter's estimate: its default method), coverage and median
    upper bound / N of each."""
    from bfrrce import BFRRCE
    rows = []
    for eps in epsilons:
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        flat = BFRRCE(epsilon=eps, L=B * G, l=1, unit="item")
        for n in sizes:
            ours, theirs = [], []
            for _ in range(runs):
                items = rng.integers(0, 2 ** 62, n)
                ours.append(sk.estimate(sk.aggregate(sk.privatize(items, rng=rng))))
                theirs.append(flat.estimate(flat.aggregate(flat.privatize_sets([items], rng=rng))))
            rows.append([eps, n, *_summary(ours, n), *_summary(theirs, n)])
    return ["ε", "items", "set sketch", "cover", "upper/N", "flat filter (unit=item)", "cover", "upper/N"], rows


def flips(epsilons, sizes):
    rows = []
    for eps in epsilons:
        sym = SetSketch(epsilon=eps, buckets=B, levels=G)
        asym = SetSketch(epsilon=eps, buckets=B, levels=G, perturbation="asymmetric")
        for n in sizes:
            a, b = sym.fisher_information(n) ** -0.5 / n, asym.fisher_information(n) ** -0.5 / n
            rows.append([eps, n, a, b, b / a])
    return ["ε", "n", "CRB symmetric", "CRB asymmetric", "asymmetric/symmetric"], rows


def throughput(n, repeats):
    sk = SetSketch(epsilon=1.0, buckets=B, levels=G)
    items = np.arange(n)
    rng = np.random.default_rng(0)

    def best(fn):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)
    ours = best(lambda: sk.privatize(items))
    theirs = best(lambda: sfm.sketch(items, B, G, 1.0, rng))
    one = sk.aggregate(sk.privatize(items, rng=1))
    many = {(k, kind): sk.sums_from_occupancy(occupancy(sk, 100_000, k, kind, rng), k, rng)
            for kind in ("disjoint", "half") for k in PARTIES_TIMED}
    return (["items", "ours s (OS CSPRNG)", "SFM baseline s", "ratio", "estimate s (1 party)",
             *(f"estimate s ({k} parties, 10^5 items, {kind})" for k, kind in many)],
            [[n, ours, theirs, theirs / ours, best(lambda: sk.estimate(one)),
              *(best(lambda agg=agg: sk.estimate(agg)) for agg in many.values())]])


def bitcoin_blocks(epsilons, runs, rng):
    """The 610 blocks of the shipped sample as parties: real reports of each block's addresses."""
    path = ROOT / "datasets" / "data" / "bitcoin_outputs.csv.gz"
    blocks: dict = {}
    with gzip.open(path, "rt", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["address"]:
                blocks.setdefault(row["block_height"], set()).add(row["address"])
    sets = [sorted(s) for s in blocks.values()]
    truth = len(set().union(*blocks.values()))
    rows = []
    for eps in epsilons:
        sk = SetSketch(epsilon=eps, buckets=B, levels=G)
        k = len(sets)
        flip = sfm.merged_flip(k, sk.q)
        ours, cover, model, det1, rand = [], [], [], [], []
        for _ in range(runs):
            est = sk.estimate(sk.aggregate(sk.privatize_sets(sets, rng=rng)))
            ours.append(est.value)
            cover.append(est.interval)
            model.append(est.details.get("model_interval", est.interval))
            m = sk.occupancy(sets)
            ones = sfm_or(m, k, sk, rng)
            det1.append(min((sfm_or_estimate(ones, k, sk, h)[0] for h in (1, k)), key=lambda v: abs(v - truth)))
            rand.append(sfm.estimate(sfm_random(m, k, sk, rng, flip), B, sk.pi, flip, 1 - flip)[0])
        rows.append([eps, k, truth, rel_rmse(ours, truth), covered(cover, truth),
                     float(np.median([lo for lo, _ in cover])) / truth, float(np.median([hi for _, hi in cover])) / truth,
                     covered(model, truth), rel_rmse(det1, truth), rel_rmse(rand, truth)])
    return ["ε", "parties (blocks)", "distinct addresses", "ours", "cover ours", "lower/N", "upper/N",
            "model cover", "SFM OR (oracle h)", "SFM random"], rows


def table(title, header, rows):
    def fmt(x):
        if isinstance(x, float):
            return f"{x:,.0f}" if np.isfinite(x) and abs(x) >= 1e6 else f"{x:.3g}"
        return f"{x:,}" if isinstance(x, int) else str(x)
    lines = [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(x) for x in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="runs per cell of the one-party and union tables")
    ap.add_argument("--coverage-runs", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="a small grid (smoke test)")
    ap.add_argument("--dataset", choices=["synthetic", "bitcoin-blocks"], default="synthetic")
    ap.add_argument("--epsilons", default="0.5,1,2,4,8")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["intersection", "flat", "tables", "coverage", "speed", "holders"],
                    help="run only these tables (tables: all but coverage; speed: the throughput table)")
    ap.add_argument("--out", help="write the tables (markdown) to this file too")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    epsilons = [float(x) for x in args.epsilons.split(",")]
    out = [(f"Generated by `python -m benchmarks.sets {' '.join(argv if argv is not None else sys.argv[1:])}` on "
           f"{provenance()}; B = {B}, G = {G}.\n")]
    print(out[0])
    if args.only == "flat":
        sections = [("One party: set sketch against the flat filter at equal bits", lambda: flat_filter(
            [1.0, 4.0], [10, 100, 1_000, 10_000, 100_000], args.runs, rng))]
    elif args.only == "intersection":
        sections = [("Intersection of two parties' sets", lambda: intersection(
            [1.0, 4.0], [(10_000, 10_000, 10_000), (10_000, 10_000, 0), (100_000, 1_000, 500), (0, 0, 10_000),
                         (1_000, 1_000, 1_000), (100, 100, 50)], args.runs, rng))]
    elif args.only == "holders":
        sections = [("Profiles of pairs: independent holders against exact holders (log-likelihood)",
                     lambda: family_profiles([(4.0, 10, "pairs"), (2.0, 100, "pairs"), (4.0, 100, "triples")],
                                             [0.9, 1.0, 1.12, 1.25], rng)),
                    ("Items each held by h random parties", lambda: fixed_holders(
                        [1.0, 4.0], [10, 100], [2, 3, 6, "1–4"], args.runs, rng))]
    elif args.only == "speed":
        sections = [("Sketching throughput (best of 3) and estimate time", lambda: throughput(1_000_000, 3))]
    elif args.dataset == "bitcoin-blocks":
        sections = [("Bitcoin blocks as parties (real reports)", lambda: bitcoin_blocks(epsilons, args.runs, rng))]
    elif args.quick:
        sections = [("One party", lambda: one_party([1.0], [1000, 100_000], args.runs, rng)),
                    ("Union", lambda: union([2.0], [10], ["disjoint", "identical"], 10_000, args.runs, rng)),
                    ("Coverage", lambda: coverage([2.0], [1, 10], [10, 10_000], ["disjoint"], args.runs, rng)),
                    ("Throughput", lambda: throughput(10_000, 1))]
    else:
        tables = [
            ("One party: relative RMSE, ours vs SFM vs the Cramér–Rao bound",
             lambda: one_party(epsilons, [10 ** i for i in range(3, 8)], args.runs, rng)),
            ("Union of k parties' sets (10^5 items): relative RMSE",
             lambda: union(epsilons, [2, 10, 100, 1000], SCENARIOS, 100_000, args.runs, rng)),
            ("Real sketches against the cell-level simulation: relative RMSE",
             lambda: real_check(max(4, args.runs // 2), rng)),
            ("Symmetric against asymmetric flips: relative Cramér–Rao bound, one party",
             lambda: flips([0.5, 1.0, 4.0], [10 ** i for i in range(2, 8)])),
            ("Sketching throughput (best of 3) and estimate time", lambda: throughput(1_000_000, 3)),
        ]
        cover = [("Coverage of the 95% interval (whatever the overlap) and of the overlap model's",
                  lambda: coverage(epsilons, [1, 2, 10, 100, 1000], [1, 100, 10 ** 4, 10 ** 6],
                                   SCENARIOS, args.coverage_runs, rng))]
        sections = tables if args.only == "tables" else cover if args.only == "coverage" else tables + cover
    for title, run in sections:
        text = table(title, *run())
        print(text, flush=True)
        out.append(text)
    if args.out:
        Path(args.out).write_text("\n".join(out))


if __name__ == "__main__":
    main()
