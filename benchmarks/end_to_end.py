"""The main job end to end: `estimate FILE` and `privatize FILE` against the time to read the file.

    python -m benchmarks.end_to_end [--rows 10000000] [--old /work/wt/old] [--dir DIR]

Makes a CSV of ``--rows`` rows (columns ``user``, ``address``) whose addresses are drawn from
``--distinct`` Bitcoin-like addresses (base58, 33-35 characters) with Zipf(``--zipf``)
frequencies, then prints

* the stage table: passes of the streamed pipeline timed in this process, each re-reading the
  file from the page cache and stopping after one more stage (a stage's time is its pass's
  minus the pass it extends), beside the floor, the faster of two plain pyarrow reads of the
  column (``read_csv`` of the whole column, and ``read_csv`` of 4 MiB blocks of lines), and
  the standard-library reader that runs when pyarrow is not installed;
* the commands, each in a fresh subprocess: wall time, CPU time (user + system) and peak RSS
  (``resource.getrusage(RUSAGE_CHILDREN)`` in a wrapper process that runs only that command;
  on a shared machine the CPU time is the steadier of the two),
  for the floor (scripts that only read the column with pyarrow, both ways), this code, and, with
  ``--old``, the code of a worktree of an older commit (run with ``PYTHONPATH`` set to it);
* the ratios: old / new wall time, and new wall time / floor wall time.

ε = ``--epsilon``, L = ``--L``, l = 1. Medians of ``--repeats`` runs of each pass and of each
command of this code, ``--old-repeats`` of the old code's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks._common import median_time, timed

BASE58 = np.frombuffer(b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", dtype=np.uint8)
ROOT = Path(__file__).resolve().parent.parent
FLOOR_TABLE = ("import sys, pyarrow.csv as c; "
               "c.read_csv(sys.argv[1], convert_options=c.ConvertOptions(include_columns=[sys.argv[2]]))")
FLOOR_BLOCKS = ("import csv, sys, pyarrow as pa, pyarrow.csv as c\n"
                "with open(sys.argv[1], 'rb') as fh:\n"
                "    names, rest = next(csv.reader([fh.readline().decode()])), b''\n"
                "    o = c.ConvertOptions(include_columns=[sys.argv[2]], column_types={sys.argv[2]: pa.string()})\n"
                "    while block := fh.read(1 << 22):\n"
                "        data = rest + block; cut = data.rfind(b'\\n') + 1; rest = data[cut:]\n"
                "        c.read_csv(pa.py_buffer(data[:cut]), c.ReadOptions(column_names=names), convert_options=o)\n")
PEAK = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
        "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss, code)")


def make_file(path, rows, distinct, s, seed=0):
    """A CSV of ``rows`` (user, address) rows, addresses Zipf(s) over ``distinct`` of them."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    rng = np.random.default_rng(seed)
    lengths = rng.integers(33, 35, distinct, endpoint=True)
    chars = BASE58[rng.integers(0, BASE58.size, (distinct, 35))]
    chars[:, 0] = np.where(rng.random(distinct) < 0.6, ord("1"), ord("3"))
    addresses = pa.array([chars[i, :lengths[i]].tobytes().decode() for i in range(distinct)])
    weights = np.arange(1, distinct + 1, dtype=float) ** -s
    index = rng.choice(distinct, size=rows, p=weights / weights.sum()).astype(np.int32)
    table = pa.table({"user": pa.array(np.arange(rows)),
                      "address": pa.DictionaryArray.from_arrays(index, addresses).cast(pa.string())})
    pcsv.write_csv(table, path, pcsv.WriteOptions(quoting_style="none"))


def command(argv, cwd, pythonpath=None):
    """(wall seconds, CPU seconds, peak RSS in bytes) of ``argv`` run in a fresh process."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run([sys.executable, "-c", PEAK, *argv], cwd=cwd, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    if out[3] != "0":
        raise RuntimeError(f"{' '.join(argv)} exited with status {out[3]}")
    return float(out[0]), float(out[1]), int(out[2]) * 1024


def stages(path, column, epsilon, L, out, repeats):
    """Pipeline passes: [(stage, median seconds of the pass, index of the pass it extends)]."""
    import pyarrow.csv as pcsv

    from bfrrce import BFRRCE
    from bfrrce.io import pipeline, values
    mech = BFRRCE(epsilon=epsilon, L=L)
    raw = Path(path)

    def drain(iterator):
        for _ in iterator:
            pass

    def without_pyarrow():
        arrow, values._arrow = values._arrow, lambda: None
        try:
            return pipeline.filter_counts(path, column, mech.bloom)
        finally:
            values._arrow = arrow

    passes = [     # (name, pass, index of the pass it extends)
        ("pyarrow read_csv of the column",
         lambda: pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(include_columns=[column])), None),
        ("read in blocks of lines",
         lambda: drain(values._guarded(raw, values._raw_chunks(raw, column, values.CHUNK_ROWS))), None),
        ("+ dictionary-encode", lambda: drain(values.iter_key_chunks(path, column)), 1),
        ("+ hash distinct keys", lambda: drain(pipeline.position_chunks(path, column, mech.bloom)), 2),
        ("+ column counts t (estimate)", lambda: pipeline.filter_counts(path, column, mech.bloom), 3),
        ("+ perturb every row, count (estimate --reports)",
         lambda: pipeline.file_sums(mech, path, column, reports=True), 3),
        ("+ perturb every row, write (privatize)",
         lambda: pipeline.privatize_file(mech, path, out, column), 3),
        ("estimate's t without pyarrow (csv.reader)", without_pyarrow, None),
    ]
    return [(name, median_time(fn, repeats), base) for name, fn, base in passes]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--distinct", type=int, default=50_000)
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--L", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=1, help="runs of each pass and new command")
    ap.add_argument("--old-repeats", type=int, default=1, help="runs of each old command")
    ap.add_argument("--old", help="worktree of the code to compare with (e.g. main at de2f48b)")
    ap.add_argument("--dir", help="folder for the data file (kept and reused) and the reports")
    args = ap.parse_args(argv)
    folder = Path(args.dir or tempfile.mkdtemp(prefix="bfrrce-e2e-"))
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"rows{args.rows}-d{args.distinct}-s{args.zipf}.csv"
    if not data.exists():
        _, seconds = timed(make_file, data, args.rows, args.distinct, args.zipf)
        print(f"made {data} ({data.stat().st_size / 1e6:.0f} MB) in {seconds:.1f} s")
    out = folder / "reports.bfr"
    common = ["--column", "address", "--epsilon", str(args.epsilon), "--L", str(args.L)]
    print(f"{args.rows:,} rows, {args.distinct:,} distinct addresses, Zipf s = {args.zipf}; "
          f"epsilon = {args.epsilon}, L = {args.L}, l = 1")

    table = stages(str(data), "address", args.epsilon, args.L, out, args.repeats)
    floor = min(table[0][1], table[1][1])
    print(f"\n{'stage (in process)':50} {'pass s':>8} {'stage s':>8} {'x floor':>8}")
    for name, seconds, base in table:
        stage = seconds - (0 if base is None else table[base][1])
        print(f"{name:50} {seconds:8.2f} {stage:8.2f} {seconds / floor:8.2f}")

    runs = {"floor: pyarrow read_csv of the column": (["-c", FLOOR_TABLE, str(data), "address"], None),
            "floor: pyarrow, 4 MiB blocks of lines": (["-c", FLOOR_BLOCKS, str(data), "address"], None),
            "import bfrrce.cli": (["-c", "import bfrrce.cli"], None)}
    for tag, path in (("new", str(ROOT)), ("old", args.old)):
        if path is None:
            continue
        runs[f"{tag}: estimate FILE"] = (["-m", "bfrrce", "estimate", str(data), *common], path)
        runs[f"{tag}: privatize FILE"] = (["-m", "bfrrce", "privatize", str(data), *common,
                                            "--out", str(out)], path)
    results = {}
    print(f"\n{'command (fresh process)':42} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12}")
    for name, (argv, path) in runs.items():
        repeats = args.old_repeats if name.startswith("old") else args.repeats
        measured = [command([sys.executable, *argv], cwd=path or str(ROOT), pythonpath=path)
                    for _ in range(repeats)]
        wall, cpu = (statistics.median(m[i] for m in measured) for i in (0, 1))
        rss = max(m[2] for m in measured)
        results[name] = wall, cpu
        print(f"{name:42} {wall:8.2f} {cpu:8.2f} {rss / 1e6:12.0f}")
    floor = [min(results[f"floor: {f}"][i] for f in ("pyarrow read_csv of the column",
                                                      "pyarrow, 4 MiB blocks of lines")) for i in (0, 1)]
    print(f"\nfloor: the faster pyarrow read, {floor[0]:.2f} s wall, {floor[1]:.2f} s CPU")
    print("\nratios (one run; wall time, and CPU time in brackets):")
    for job in ("estimate FILE", "privatize FILE"):
        new = results[f"new: {job}"]
        if f"old: {job}" in results:
            old = results[f"old: {job}"]
            print(f"  {job}: old / new = {old[0] / new[0]:.1f}x ({old[1] / new[1]:.1f}x)")
        print(f"  {job}: new / floor = {new[0] / floor[0]:.2f}x ({new[1] / floor[1]:.2f}x)")
    out.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
