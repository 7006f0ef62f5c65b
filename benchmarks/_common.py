"""Timing and argument helpers shared by the benchmark scripts."""

import argparse
import statistics
import time


def emit(text, out=None):
    """Print ``text`` and, with ``out`` (a path), write it there too (UTF-8)."""
    print(text, end="")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)


def timed(fn, *args):
    """(fn(*args), seconds it took)."""
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def median_time(fn, repeats):
    """Median wall time of ``repeats`` calls of fn()."""
    return statistics.median(timed(fn)[1] for _ in range(repeats))


def workload_parser(doc, repeats=3):
    """Parser with the frequency-oracle workload options: --n, --d, --epsilon, --repeats."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=repeats)
    return ap


def bandwidth(repeats):
    """Bytes read + written per second by a numpy copy of a 512 MiB array (median; after one
    untimed copy, which maps the destination's pages)."""
    import numpy as np
    src = np.ones(1 << 26, dtype=np.float64)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    return 2 * src.nbytes / median_time(lambda: np.copyto(dst, src), repeats)


def column_counter():
    """Which column counter the benchmark runs with, loading the compiled one up front.

    The kernel is loaded as a long-running server would (:func:`protocols.bits.accel.load`), unless
    ``BFRRCE_ACCEL=numpy`` or numba is not installed. Returns "numba" or "numpy".
    """
    from protocols.bits import accel
    if accel.mode() == "numpy" or not accel.available():
        return "numpy"
    accel.load()
    return "numba"


def installed_peers(peers, name, epsilon, d):
    """{library: what its factory returns} for the peer factories that can run ``name``
    (a factory raises ImportError when its library is missing, returns None when it lacks the
    mechanism)."""
    found = {}
    for peer, factory in peers.items():
        try:
            pair = factory(name, epsilon, d)
        except ImportError:
            continue
        if pair is not None:
            found[peer] = pair
    return found


def run_stamp():
    """{"date", "time" (UTC), "commit" (with " (with local changes)" when tracked files differ
    from it), "cores"} of this run, for generated tables."""
    import datetime
    import os
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True, cwd=root).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, check=True, cwd=root).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", ""
    now = datetime.datetime.now(datetime.timezone.utc)
    return {"date": f"{now:%Y-%m-%d}", "time": f"{now:%H:%M}",
            "commit": commit + (" (with local changes)" if dirty else ""), "cores": os.cpu_count()}


def provenance():
    """"date time UTC, commit ..., cores" of this run (:func:`run_stamp`), for a table's header."""
    stamp = run_stamp()
    return f"{stamp['date']} {stamp['time']} UTC, commit {stamp['commit']}, {stamp['cores']} cores"


def stamp(command):
    """One line for a generated file: the UTC date, the commit, the machine's cores and the
    command that wrote it."""
    return f"Generated {provenance()}, by `{command}`."


def replace_section(path, name, text):
    """Replace the lines between ``<!-- begin NAME -->`` and ``<!-- end NAME -->`` of ``path``
    (appended at the end when absent) with ``text``."""
    from pathlib import Path
    path = Path(path)
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    doc = path.read_text(encoding="utf-8")
    block = f"{begin}\n{text.rstrip()}\n{end}"
    if begin in doc and end in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    path.write_text(doc, encoding="utf-8")
