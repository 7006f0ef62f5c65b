"""Time and peak memory of streamed aggregation of 10^6, 10^7 and 10^8 reports, and the same
aggregation of 10^7 and 10^8 through Dask with 1 and 2 workers.

    python -m benchmarks.scaling [--dir /tmp/bfrrce-scaling] [--max-files 100] [--L 256]

Writes ``--max-files`` report files of 10^6 reports each (L = 256: 32 MB a file; they differ
by batch identifier, the reports are the same 10^6), then aggregates 1, 10 and 100 of them,
each in a fresh Python process so that its peak resident memory (VmHWM of /proc/self/status,
reset at exec, unlike ru_maxrss) is its own. Files
are read warm from the page cache after writing. Delete ``--dir`` afterwards.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from bfrrce import BFRRCE
from bfrrce.io.formats import dump_reports

CHILD = """
import json, sys, time
paths = {paths!r}
start = time.perf_counter()
if {workers}:
    from dask.distributed import Client, LocalCluster
    from bfrrce.io.distributed import aggregate_files_dask
    with LocalCluster(n_workers={workers}, threads_per_worker=1, dashboard_address=None) as c, Client(c) as client:
        start = time.perf_counter()
        agg = aggregate_files_dask(paths, client=client)
else:
    from bfrrce.io.stream import aggregate_files
    agg = aggregate_files(paths)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(json.dumps({{"seconds": time.perf_counter() - start, "n": agg.n, "maxrss_mb": int(hwm) / 1024}}))
"""


def run(paths, workers=0):
    code = CHILD.format(paths=[str(p) for p in paths], workers=workers)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/bfrrce-scaling")
    ap.add_argument("--max-files", type=int, default=100)
    ap.add_argument("--L", type=int, default=256)
    args = ap.parse_args(argv)
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    mech = BFRRCE(epsilon=4.0, L=args.L)
    reports = mech.privatize(np.arange(10 ** 6), rng=0)
    paths = []
    for i in range(args.max_files):
        path = folder / f"reports-{i:04d}.bfr"
        if not path.exists():
            path.write_bytes(dump_reports(mech, reports, batch=f"{i:032x}"))
        paths.append(path)
    print(f"L={args.L}: {reports.nbytes / 1e6:.0f} MB per 10^6 reports")
    print(f"{'reports':>12} {'engine':18} {'seconds':>8} {'reports/s':>12} {'peak RSS MB':>12}")
    for count in (1, 10, 100):
        if count > len(paths):
            break
        r = run(paths[:count])
        print(f"{r['n']:12,d} {'stream, 1 process':18} {r['seconds']:8.2f} "
              f"{r['n'] / r['seconds']:12,.0f} {r['maxrss_mb']:12.0f}")
    for count, workers in ((10, 1), (10, 2), (100, 1), (100, 2)):
        if count > len(paths):
            break
        r = run(paths[:count], workers)
        print(f"{r['n']:12,d} {f'dask, {workers} worker(s)':18} {r['seconds']:8.2f} "
              f"{r['n'] / r['seconds']:12,.0f} {'(client)':>12}")


if __name__ == "__main__":
    main()
