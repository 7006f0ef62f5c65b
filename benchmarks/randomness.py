"""Client throughput of the randomness paths of ``privatize`` and of discrete Laplace noise.

    python -m benchmarks.randomness [--n 200000] [--L 1024] [--epsilons 4 1] [--repeats 5]
                                    [--clock wall|cpu] [--baseline COMMIT]

For BFRRCE (``L`` bits, l = 1) and OUE (d = ``L``) at each ε, reports/s of ``privatize`` on n
values with:

* ``seeded``: a seeded numpy Generator (simulations and tests);
* ``secure``: ``rng=None``, the clients' default (:class:`protocols.core.randomness.SystemRandom`,
  a ChaCha20 keystream keyed from ``os.urandom``);
* ``secure, os.urandom``: the same samplers with every byte from ``os.urandom`` instead of
  ChaCha20 (what the package would do without the ``cryptography`` dependency);
* ``baseline``: the sampler of ``protocols/randomness.py`` at the git commit ``--baseline``
  (default: the last commit that drew every byte from ``os.urandom`` and sampled sparse gaps
  and Laplace noise with floating-point logarithms), loaded from ``git show`` and substituted
  for the perturbation step only (hashing is the same code in every path).

Then discrete Laplace draws/s of ``laplace_grid`` (n·16 draws) at the grids of SHE
(step 2^-6) and of LaplaceMean (step 2^-20), scale 2/ε, for the same sources.

Repeats are interleaved (one call of each path per round); medians are printed, with the ratios
secure / baseline and seeded / secure and the random bytes the secure path draws per report.
``--clock cpu`` times with ``time.process_time`` (user + system time of this process, less
disturbed by other jobs on a shared machine than wall time).
"""

import argparse
import contextlib
import importlib.util
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np

import protocols.core.randomness as randomness
import protocols.core.perturbation as perturbation
from bfrrce import BFRRCE
from protocols import OUE

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "de2f48b8095ac94beef028d27b9aac6d6637d143"
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def load_baseline(ref):
    """protocols/randomness.py at git commit ``ref`` as a module of the protocols package."""
    try:
        text = subprocess.run(["git", "show", f"{ref}:protocols/randomness.py"], cwd=ROOT,
                              check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "randomness.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location("protocols._baseline_randomness", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


class CountingSource(randomness.SystemRandom):
    """The secure source, counting the bytes it hands out."""

    drawn = 0

    def bytes(self, length):
        CountingSource.drawn += int(length)
        return super().bytes(length)


def urandom_bytes():
    return mock.patch.object(randomness.SystemRandom, "bytes", lambda self, n: os.urandom(n))


def privatize_paths(baseline):
    """name -> (context manager factory, rng for repeat i) of one privatize call."""
    paths = {"seeded": (contextlib.nullcontext, np.random.default_rng),
             "secure": (contextlib.nullcontext, lambda i: None),
             "secure, os.urandom": (urandom_bytes, lambda i: None)}
    if baseline is not None:
        def old(src, shape, ones, p, q):
            return baseline.randomized_response_packed(baseline.SystemRandom(), shape, ones, p, q)
        paths["baseline"] = (lambda: mock.patch.object(perturbation, "randomized_response_packed", old),
                             lambda i: None)
    return paths


def laplace_paths(baseline):
    """name -> draw(scale, step, size, repeat) of discrete Laplace noise."""
    paths = {"seeded": lambda *a: randomness.laplace_grid(np.random.default_rng(a[3]), *a[:3]),
             "secure": lambda *a: randomness.laplace_grid(randomness.SystemRandom(), *a[:3])}
    if baseline is not None:
        paths["baseline"] = lambda *a: baseline.laplace_grid(baseline.SystemRandom(), *a[:3])
    return paths


def medians(calls, repeats, clock):
    """Median time of each call(i), the calls interleaved over ``repeats`` rounds."""
    times = {name: [] for name in calls}
    for i in range(repeats):
        for name, call in calls.items():
            start = clock()
            call(i)
            times[name].append(clock() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def bytes_per_report(mech, values):
    CountingSource.drawn = 0
    mech.privatize(values, rng=CountingSource())
    return CountingSource.drawn / len(values)


def table(title, rows, names, per):
    print(f"\n{title}")
    print(f"{'':<16}" + "".join(f"{name:>20}" for name in names)
          + f"{'secure/base':>13}{'seeded/secure':>15}" + (f"{'bytes/report':>14}" if per else ""))
    for label, rate, extra in rows:
        base = rate.get("baseline", float("nan"))
        print(f"{label:<16}" + "".join(f"{rate[name]:>20,.0f}" for name in names)
              + f"{rate['secure'] / base:>13.2f}{rate['seeded'] / rate['secure']:>15.2f}"
              + (f"{extra:>14.1f}" if per else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--L", type=int, default=1024)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[4.0, 1.0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    ap.add_argument("--baseline", default=BASELINE)
    args = ap.parse_args(argv)
    clock = CLOCKS[args.clock]
    baseline = load_baseline(args.baseline)
    print(f"n={args.n}, L={args.L}, medians of {args.repeats} interleaved repeats, {args.clock} "
          f"clock; baseline {args.baseline[:10]}: {'loaded' if baseline else 'unavailable'}")
    rng = np.random.default_rng(0)
    paths = privatize_paths(baseline)
    rows = []
    for eps in args.epsilons:
        for name, mech, values in [
                ("BFRRCE", BFRRCE(epsilon=eps, L=args.L), rng.integers(0, 50_000, args.n)),
                ("OUE", OUE(epsilon=eps, d=args.L), rng.integers(0, args.L, args.n))]:
            def call(i, mech=mech, values=values, path=None):
                context, rng_for = paths[path]
                with context():
                    mech.privatize(values, rng=rng_for(i))
            t = medians({p: lambda i, p=p, c=call: c(i, path=p) for p in paths}, args.repeats, clock)
            rows.append((f"{name} eps={eps:g}", {p: args.n / s for p, s in t.items()},
                         bytes_per_report(mech, values)))
    table("privatize, reports/s (q = 1/(e^eps + 1) for OUE; BFRRCE's q is the same at l = 1)",
          rows, list(paths), per=True)

    draws = 16 * args.n
    lap = laplace_paths(baseline)
    rows = []
    for label, step in [("SHE 2^-6", 2.0 ** -6), ("mean 2^-20", 2.0 ** -20)]:
        for eps in args.epsilons:
            t = medians({p: lambda i, f=f: f(2 / eps, step, draws, i) for p, f in lap.items()},
                        args.repeats, clock)
            rows.append((f"{label} eps={eps:g}", {p: draws / s for p, s in t.items()}, None))
    table(f"laplace_grid, draws/s ({draws:,} per call, scale 2/eps)", rows, list(lap), per=False)


if __name__ == "__main__":
    main()
