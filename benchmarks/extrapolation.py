"""The optional power-law extrapolation (``BFRRCE.extrapolate``) on skewed data, beside the bounds
and ``value``.

    python -m benchmarks.extrapolation [--runs 10] [--out docs/extrapolation.md]

Each cell draws ``--runs`` data sets (new frequencies, hash seed and noise each run, seeded by
the cell) of one shape: a Zipf-ranked population (K types, n users drawn with probability
∝ rank^−s: the frequencies of the values seen follow a power law only roughly), frequencies
drawn from the model itself (Pr[f] ∝ f^−a), the model plus a block of equal light values (which
the check cannot see), lognormal frequencies, equal ones, or the frequencies of the shipped
Bitcoin sample (real addresses, 95% of them paid once); and reports
how often the model is accepted, the median D̂/D and the AARE of the accepted runs, the share
whose D̂ ± 1.96·se holds D, and beside them the median bounds and the AARE of ``value``.
"""

from __future__ import annotations

import argparse
import functools
import warnings

import numpy as np

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.datasets import load

from ._common import emit, stamp

CELLS = (   # (shape, parameter, size, ε, L): size = the types K (zipf), values D (others)
    *(("zipf", s, K, eps, L) for s in (0.8, 1.0, 1.2, 1.5, 2.0) for K in (50_000, 10 ** 6)
      for eps, L in ((4, 4096), (8, 16384))),
    *(("power", a, 30_000, eps, L) for a in (1.7, 2.0, 2.5) for eps, L in ((4, 4096), (8, 16384), (8, 65536))),
    *(("power+equal", f, 30_000, 8, 16384) for f in (5, 50)),
    *(("lognormal", sigma, 20_000, 8, 16384) for sigma in (1.0, 1.5, 2.0)),
    ("equal", 50, 2000, 8, 16384), ("equal", 500, 2000, 8, 16384),
    *(("bitcoin", 0, 0, eps, L) for eps, L in ((4, 4096), (8, 16384), (8, 65536))),
)
ZIPF_USERS = {50_000: 200_000, 10 ** 6: 10 ** 6}   # users drawn from a population of K types
BLOCK = {5: 20_000, 50: 2_000}                    # power+equal: values of f users added to a = 2


@functools.lru_cache(maxsize=1)
def bitcoin_counts() -> np.ndarray:
    """Users per address of the shipped Bitcoin sample."""
    return np.unique(np.asarray(load("bitcoin").values), return_counts=True)[1]


def counts(shape: str, parameter: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Users per value seen."""
    if shape == "zipf":
        weights = np.arange(1, size + 1, dtype=float) ** -parameter
        drawn = rng.multinomial(ZIPF_USERS[size], weights / weights.sum())
        return drawn[drawn > 0]
    if shape == "power":
        return rng.zipf(parameter, size)
    if shape == "power+equal":
        return np.concatenate([rng.zipf(2.0, size), np.full(BLOCK[int(parameter)], int(parameter))])
    if shape == "bitcoin":
        return bitcoin_counts()
    if shape == "lognormal":
        return np.maximum(1, np.round(rng.lognormal(2.0, parameter, size))).astype(np.int64)
    return np.full(size, int(parameter))


def cell(index: int, shape: str, parameter: float, size: int, eps: float, L: int, runs: int) -> list:
    rng = np.random.default_rng([2027, index])
    mech = BFRRCE(epsilon=eps, L=L)
    ratio, covered, value_err, lower, upper, truth, users = [], [], [], [], [], [], []
    for _ in range(runs):
        f = counts(shape, parameter, size, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)          # seeded simulations on purpose
            agg = mech.simulate(rng.integers(0, 2 ** 62, f.size), counts=f, rng=rng)
        est = mech.estimate(agg)
        extra = mech.extrapolate(agg, est.interval)
        D = f.size
        truth.append(D)
        users.append(agg.n)
        value_err.append(abs(est.value - D) / D)
        lower.append(est.interval[0] / D)
        upper.append(est.interval[1] / D)
        if extra.refused is None:
            ratio.append(extra.value / D)
            covered.append(abs(extra.value - D) <= 1.96 * extra.std_error)
    accepted = len(ratio)
    return [shape, "–" if shape == "bitcoin" else f"{parameter:g}", f"{int(np.median(users)):,}", f"{int(np.median(truth)):,}", f"{eps:g}", str(L),
            f"{accepted}/{runs}",
            f"{np.median(ratio):.2f}" if accepted else "–",
            f"{np.mean(np.abs(np.array(ratio) - 1)):.3f}" if accepted else "–",
            f"{np.mean(covered):.2f}" if accepted else "–",
            f"{np.mean(value_err):.3f}", f"{np.median(lower):.3f}", f"{np.median(upper):.2f}"]


HEADER = ["shape", "s, a, σ or f", "users", "D", "ε", "L", "accepted", "D̂/D", "AARE D̂", "within 1.96 se",
          "AARE value", "lower/D", "upper/D"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", help="also write the table (markdown) to this file")
    args = ap.parse_args(argv)
    lines = [stamp(f"python -m benchmarks.extrapolation --runs {args.runs}"
                   + (f" --out {args.out}" if args.out else "")), "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for index, spec in enumerate(CELLS):
        row = cell(index, *spec, args.runs)
        lines.append("| " + " | ".join(row) + " |")
        print(lines[-1], flush=True)
    emit("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
