"""Column counts of packed reports: numpy bit-sliced counter against the compiled one (numba).

    pip install -e ".[fast]"
    python -m benchmarks.aggregation [--n 200000] [--repeats 5]

For L in {256, 1024, 8192}: GB/s of packed reports counted by the numpy counter
(``BFRRCE_ACCEL=numpy``), the numba kernel on one thread, and the same kernel split over two
threads with ``prange``, each as a share of the memory bandwidth (numpy copy of a 512 MiB
array: bytes read + written), timed interleaved with them: on a shared machine both vary from
minute to minute. Medians of ``--repeats``.
Then, per batch of one ``ColumnCounter.add`` call, the numpy counter's time over the kernel's
at batch sizes 4 KiB to 4 MiB and L from 256 to 32768 (what ``protocols.bits.accel.MIN_BATCH_BYTES``
is set from). Then the fixed cost of the compiled path, each in a fresh process: importing numba alone, and
importing it, loading the kernel and counting 1,000 reports with an empty on-disk cache
(compilation) and with a warm one, and the bytes numpy counts in that time (what
``protocols.bits.accel.LOAD_AFTER_BYTES`` is set from). Last, whether a small count in the default
mode imports numba (it must not).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks._common import timed
from protocols.bits import accel, packing as bits

ROOT = Path(__file__).resolve().parents[1]

FIRST_CALL = """
import time
import numpy as np
from protocols.bits import accel
t = time.perf_counter()
count = accel.load()
count(np.zeros((1000, 128), np.uint8))
print(time.perf_counter() - t)
"""
IMPORT_NUMBA = "import time; t = time.perf_counter(); import numba; print(time.perf_counter() - t)"
SMALL_RUN = ("import sys, numpy as np; from protocols.bits import packing as bits; "
             "bits.column_sums(np.zeros((1000, 128), np.uint8), 1024); print('numba' in sys.modules)")


def two_threads():
    """The kernel over two halves of the rows in parallel (numba prange), for comparison.

    Numba's workqueue threads: OpenMP's spinning threads ran 10-50x slower than one thread on
    this shared machine, where other processes hold the cores.
    """
    import numba
    numba.config.THREADING_LAYER = "workqueue"
    from protocols.bits.numba_kernel import count_words, super_rows

    @numba.njit(parallel=True)
    def parallel(words, parts):
        outs = np.zeros((parts, 64 * words.shape[1]), np.int64)
        step = (words.shape[0] + parts - 1) // parts
        for p in numba.prange(parts):
            count_words(words[p * step:(p + 1) * step], outs[p])
        return outs.sum(axis=0)

    def count(packed):                       # n a multiple of the super-row (as in main)
        n, width = packed.shape
        m = super_rows(width)
        return parallel(packed.reshape(n // m, m * width).view(np.uint64), 2).reshape(m, -1).sum(axis=0)

    numba.set_num_threads(2)
    return count


BATCH_KIB = (4, 16, 64, 256, 1024, 4096)
BATCH_L = (256, 1000, 1024, 8192, 16384, 32768)


def batch_ratios(repeats):
    """{L: [numpy time / kernel time of ColumnCounter.add per batch size in BATCH_KIB]}; each
    time is that of 4 MiB of such batches, median of ``repeats`` interleaved runs."""
    rng = np.random.default_rng(1)
    ratios = {}
    minimum, accel.MIN_BATCH_BYTES = accel.MIN_BATCH_BYTES, 0
    for L in BATCH_L:
        ratios[L] = []
        for kib in BATCH_KIB:
            packed = rng.integers(0, 256, (max(1, (kib << 10) // bits.nbytes(L)), bits.nbytes(L)), np.uint8)
            calls = max(1, (4 << 20) // packed.nbytes)
            times = {"numpy": [], "numba": []}
            for _ in range(repeats + 1):                    # the first round warms up, untimed
                for mode, t in times.items():
                    os.environ[accel.ENV] = mode
                    counter = bits.ColumnCounter(L)
                    t.append(timed(lambda: [counter.add(packed) for _ in range(calls)])[1])
            ratios[L].append(statistics.median(times["numpy"][1:]) / statistics.median(times["numba"][1:]))
    accel.MIN_BATCH_BYTES = minimum
    del os.environ[accel.ENV]
    return ratios


def fresh(code, env=None):
    """Seconds printed by ``code`` run in a fresh interpreter (first line of its output)."""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **(env or {})},
                         capture_output=True, text=True, check=True).stdout
    return out.split()[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    if not accel.available():
        sys.exit("numba is not installed: pip install -e '.[fast]'")
    kernel, parallel = accel.load(), two_threads()
    src = np.ones(1 << 26, dtype=np.float64)
    dst = src.copy()
    print(f"n={args.n}; medians of {args.repeats} interleaved runs; share = of the memory "
          f"bandwidth (numpy copy, read+write) timed with them")
    print(f"{'L':>5} {'copy GB/s':>9} {'numpy GB/s':>10} {'share':>6} {'numba GB/s':>10} {'share':>6} "
          f"{'2 threads GB/s':>14} {'share':>6} {'numba/numpy':>11}")
    rng = np.random.default_rng(0)
    numpy_rate = {}
    for L in (256, 1024, 8192):
        packed = rng.integers(0, 256, (args.n, L // 8), dtype=np.uint8)
        expected = bits.column_sums(packed, L)
        os.environ[accel.ENV] = "numpy"
        runs = {"numpy": lambda: bits.column_sums(packed, L), "numba": lambda: kernel(packed),
                "2 threads": lambda: parallel(packed), "copy": lambda: np.copyto(dst, src)}
        assert (runs["numba"]()[0] == expected).all() and (runs["2 threads"]() == expected).all()
        times = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, run in runs.items():
                times[name].append(timed(run)[1])
        rate = {name: packed.nbytes / statistics.median(t) for name, t in times.items()}
        bw = rate.pop("copy") * 2 * src.nbytes / packed.nbytes
        numpy_rate[L] = rate["numpy"]
        print(f"{L:5d} {bw / 1e9:9.2f} " + " ".join(f"{r / 1e9:10.2f} {r / bw:6.1%}" for r in rate.values())
              + f" {rate['numba'] / rate['numpy']:11.2f}")
    del os.environ[accel.ENV]
    print(f"one ColumnCounter.add per batch: numpy time / kernel time (> 1: the kernel is faster), "
          f"medians of {args.repeats}; protocols.bits.accel.MIN_BATCH_BYTES: {accel.MIN_BATCH_BYTES >> 10} KiB")
    print(f"{'L':>5} " + " ".join(f"{f'{kib} KiB':>8}" for kib in BATCH_KIB))
    for L, row in batch_ratios(args.repeats).items():
        print(f"{L:5d} " + " ".join(f"{r:8.2f}" for r in row))
    with tempfile.TemporaryDirectory() as cache:
        env = {"NUMBA_CACHE_DIR": cache}
        cold, warm = fresh(FIRST_CALL, env), fresh(FIRST_CALL, env)
    cold, warm = float(cold), float(warm)
    print(f"fresh process: import numba {float(fresh(IMPORT_NUMBA)):.2f} s; import numba, load the "
          f"kernel and count 1,000 reports: {cold:.2f} s with an empty cache, {warm:.2f} s with a "
          f"warm one")
    print(f"numpy counts {warm * numpy_rate[1024] / 2 ** 30:.1f} GiB at L = 1024 in that time "
          f"(protocols.bits.accel.LOAD_AFTER_BYTES: {accel.LOAD_AFTER_BYTES / 2 ** 30:.1f} GiB)")
    print(f"a small count in the default mode imports numba: {fresh(SMALL_RUN)}")


if __name__ == "__main__":
    main()
