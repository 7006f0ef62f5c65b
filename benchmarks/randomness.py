"""Client throughput of the three randomness paths of ``privatize``.

    python benchmarks/randomness.py [--n 200000] [--L 1024] [--epsilons 4 1] [--repeats 5]
                                    [--baseline de2f48b8095ac94beef028d27b9aac6d6637d143]

For BFRRCE (``L`` bits, l = 1) and OUE (d = ``L``) at each ε, reports/s of ``privatize`` on n
values with:

* ``seeded``: a seeded numpy Generator (simulations and tests);
* ``secure``: ``rng=None``, the clients' default (:class:`protocols.randomness.SystemRandom`);
* ``os.urandom (baseline)``: the sampler of ``protocols/randomness.py`` at the git commit
  ``--baseline`` (default: the last commit that drew every byte from ``os.urandom`` and sampled
  sparse gaps with floating-point logarithms), loaded from ``git show`` and substituted for
  the perturbation step only (hashing is the same code in the three paths).

Repeats are interleaved (one call of each path per round) and medians are printed, with the
ratios secure / baseline and seeded / secure. The last column is the random bytes drawn per
report by the secure path.
"""

import argparse
import contextlib
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np

import protocols.randomness as randomness
import protocols.ue as ue
from bfrrce import BFRRCE
from protocols import OUE

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "de2f48b8095ac94beef028d27b9aac6d6637d143"


def load_baseline(ref):
    """protocols/randomness.py at git commit ``ref`` as a module of the protocols package."""
    try:
        text = subprocess.run(["git", "show", f"{ref}:protocols/randomness.py"], cwd=ROOT,
                              check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("protocols._baseline_randomness", f.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    Path(f.name).unlink()
    return module


class CountingSource(randomness.SystemRandom):
    """The secure source, counting the bytes it hands out."""

    drawn = 0

    def bytes(self, length):
        CountingSource.drawn += int(length)
        return super().bytes(length)


def paths(baseline):
    """name -> (context manager factory, rng factory) for one call of privatize."""
    out = {"seeded": (contextlib.nullcontext, lambda i: np.random.default_rng(i)),
           "secure": (contextlib.nullcontext, lambda i: None),
           "secure, os.urandom": (lambda: mock.patch.object(randomness.SystemRandom, "bytes",
                                                            lambda self, n: os.urandom(n)),
                                  lambda i: None)}
    if baseline is not None:
        def old(src, shape, ones, p, q):
            return baseline.randomized_response_packed(baseline.SystemRandom(), shape, ones, p, q)
        out["os.urandom (baseline)"] = (
            lambda: mock.patch.object(ue, "randomized_response_packed", old), lambda i: None)
    return out


def bytes_per_report(mech, values):
    CountingSource.drawn = 0
    mech.privatize(values, rng=CountingSource())
    return CountingSource.drawn / len(values)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--L", type=int, default=1024)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[4.0, 1.0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", default=BASELINE)
    args = ap.parse_args(argv)
    baseline = load_baseline(args.baseline)
    ways = paths(baseline)
    rng = np.random.default_rng(0)
    print(f"n={args.n}, L={args.L}, medians of {args.repeats} interleaved repeats; "
          f"baseline {args.baseline[:10]}: {'loaded' if baseline else 'unavailable'}")
    print(f"{'mechanism':<8} {'eps':>4} {'q':>8} " + " ".join(f"{w:>22}" for w in ways)
          + f" {'secure/base':>11} {'seeded/secure':>13} {'bytes/report':>12}")
    for eps in args.epsilons:
        for name, mech, values in [
                ("BFRRCE", BFRRCE(epsilon=eps, L=args.L), rng.integers(0, 50_000, args.n)),
                ("OUE", OUE(epsilon=eps, d=args.L), rng.integers(0, args.L, args.n))]:
            q = mech.q
            times = {w: [] for w in ways}
            for i in range(args.repeats):
                for w, (context, rng_for) in ways.items():
                    with context():
                        start = time.perf_counter()
                        mech.privatize(values, rng=rng_for(i))
                        times[w].append(time.perf_counter() - start)
            rate = {w: args.n / statistics.median(t) for w, t in times.items()}
            base = rate.get("os.urandom (baseline)", float("nan"))
            print(f"{name:<8} {eps:>4g} {q:>8.4f} " + " ".join(f"{rate[w]:>22,.0f}" for w in ways)
                  + f" {rate['secure'] / base:>11.2f} {rate['seeded'] / rate['secure']:>13.2f}"
                  f" {bytes_per_report(mech, values):>12.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
