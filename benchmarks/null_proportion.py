"""Why the fill estimator tunes its Fourier kernel: AARE of null-proportion estimators.

    python benchmarks/null_proportion.py [--runs 100]

Synthetic setting (n = 10,000 users, D = 122 values, equal frequencies), optimized perturbation,
l = 1. Each estimator gives the fraction π̂₀ of empty columns, inverted to D̂ = ln π̂₀ / ln(1 − 1/L):
Fourier with a fixed kernel width γ·σ_c in {1, 2}, the two-step tuned width of
:func:`bfrrce.estimate.null_proportion`, and Storey's thresholded count (2002) with the exact
binomial null, π̂₀ = #{c_j <= τ} / (L·F₀(τ)) at τ = nq + σ_c.
"""

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bfrrce import BFRRCE  # noqa: E402
from bfrrce.estimate import _fill_inverse, fourier_psi, null_proportion  # noqa: E402


def binomial_cdf(x, n, q):
    k = np.arange(int(x) + 1)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1)))])
    logs = log_fact[n] - log_fact[k] - log_fact[n - k] + k * math.log(q) + (n - k) * math.log1p(-q)
    return float(np.exp(logs).sum())


def estimators(n, q):
    sigma = math.sqrt(n * q * (1 - q))
    tau = math.floor(n * q + sigma)
    f0 = binomial_cdf(tau, n, q)
    return {
        "fourier g=1": lambda c: fourier_psi(c, n, q, min(1 / sigma, math.pi)).mean(),
        "fourier g=2": lambda c: fourier_psi(c, n, q, min(2 / sigma, math.pi)).mean(),
        "fourier tuned": lambda c: null_proportion(c, n, 0.5, q)[0],
        "storey": lambda c: np.mean(c <= tau) / f0,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    args = ap.parse_args(argv)
    n, D = 10_000, 122
    counts = np.diff(np.linspace(0, n, D + 1).round().astype(np.int64))
    print(f"{'L':>5} {'eps':>4} " + " ".join(f"{name:>14}" for name in estimators(n, 0.1)))
    for L in (256, 1024):
        for eps in (2.0, 4.0, 8.0):
            mech = BFRRCE(epsilon=eps, L=L)
            methods = estimators(n, mech.q)
            errors = {name: [] for name in methods}
            for run in range(args.runs):
                rng = np.random.default_rng([run, L, int(eps)])
                agg = mech.simulate(rng.choice(np.arange(1, 1001), D, replace=False), rng=rng,
                                    counts=counts)
                for name, fn in methods.items():
                    errors[name].append(abs(_fill_inverse(fn(agg.counts), L, 1) - D) / D)
            print(f"{L:5d} {eps:4g} " + " ".join(f"{np.mean(e):14.3f}" for e in errors.values()))


if __name__ == "__main__":
    main()
