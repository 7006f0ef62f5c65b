"""RAPPOR's reported p-values on null (absent) candidates: the share below 0.05 among those
the Lasso selected (valid p-values give at most 0.05). Selection and fit use disjoint cohorts
(sample splitting, protocols.oracles.rappor).

    python -m benchmarks.rappor_null_pvalues [--trials 20]

100 cohorts, 32 bits, 2 hashes, f = 0.5, p = 0.5, q = 0.75 (RAPPOR's defaults); 20,000 users
holding 20 values (Zipf-like shares); 200 candidates: the 20 true values and 180 absent ones.
"""

import argparse
import datetime
import os
import subprocess
import warnings

import numpy as np

from protocols import RAPPOR


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    args = ap.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}, "
          f"{os.cpu_count()} cores; {args.trials} trials")
    mech = RAPPOR(num_bits=32, num_hashes=2, num_cohorts=100)
    weights = 1 / np.arange(1, 21)
    counts = np.round(20_000 * weights / weights.sum()).astype(int)
    candidates = list(range(200))
    selected = below = 0
    for t in range(args.trials):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agg = mech.simulate(np.arange(20), counts=counts, rng=t)
            est = mech.estimate(agg, candidates=candidates)
        null_p = np.asarray(est.p_values)[20:]
        chosen = np.isfinite(np.asarray(est.stderr)[20:])
        selected += int(chosen.sum())
        below += int((null_p[chosen] < 0.05).sum())
    print(f"null candidates selected: {selected}, with p < 0.05: {below} "
          f"({below / max(selected, 1):.3f}; valid p-values: <= 0.05)")


if __name__ == "__main__":
    main()
