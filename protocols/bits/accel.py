"""Choice between the numpy column counter and the optional compiled one (numba).

Column counts of packed reports (:class:`protocols.bits.packing.ColumnCounter`) have two
implementations that give identical results: the bit-sliced numpy counter, always available
and the reference, and a compiled loop (:mod:`protocols.bits.numba_kernel`, installed with
``pip install "bfrrce[fast]"``). Loading the compiled one has a fixed cost per process,
importing numba and reading the compiled code from its disk cache (compiling takes longer,
once per installation), and each call has a fixed cost that grows with the row width (a few
passes over the 8·L int64 counters). ``python -m benchmarks.aggregation`` measures the rates
on large batches, the time of one ``ColumnCounter.add`` with each counter per batch size
(4 KiB to 4 MiB) and L (256 to 32768), and how many bytes numpy counts in the time loading
takes. So by default numpy counts until the process has counted :data:`LOAD_AFTER_BYTES` with
it; then the kernel is loaded, and counts every batch of at least :data:`MIN_BATCH_BYTES`.
Small runs never import numba.

From :data:`MIN_BATCH_BYTES` on, the kernel was the faster one at every batch size measured
for L = 256, 1000, 1024, 8192 and 16384. With rows of 4 KiB (L = 32768) the kernel was slower on batches of 256 KiB (64 rows;
numpy slices bits from two 64 KiB slabs on) and faster again from 1 MiB, so batches of two
slabs or more with fewer than :data:`MIN_ROWS` rows stay with numpy; docs/measurements.md, "Speed and
scale", has the table.

The environment variable ``BFRRCE_ACCEL`` overrides the choice (read at every call):
``auto`` (the default, as above), ``numpy`` (never load numba) or ``numba`` (the kernel for
every batch of at least :data:`MIN_BATCH_BYTES` from the start; an error if numba is not
installed). :func:`load` loads the kernel at once, for a long-running server that knows it
will count a lot.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from protocols.errors import LDPValueError

ENV = "BFRRCE_ACCEL"
MODES = ("auto", "numpy", "numba")
LOAD_AFTER_BYTES = 1 << 30       # about the bytes numpy counts in the time loading the kernel takes (benchmarks/aggregation.py)
MIN_BATCH_BYTES = 1 << 16        # from 64 KiB the kernel was faster at L = 256 to 16384 (per batch)
MIN_ROWS = 128                   # below, in batches of 128 KiB or more: numpy (module docstring)
_KERNEL = "protocols.bits.numba_kernel"
_counted = 0                     # bytes counted by numpy in this process (auto mode)


def mode() -> str:
    """The accelerator mode set by the environment variable ``BFRRCE_ACCEL``.

    Returns
    -------
    str
        ``auto`` (variable unset or empty), ``numpy`` or ``numba`` (case-insensitive).

    Raises
    ------
    LDPValueError
        For any other value.
    """
    value = os.environ.get(ENV, "").strip().lower() or "auto"
    if value not in MODES:
        raise LDPValueError(f"{ENV}={os.environ[ENV]!r}: expected one of {', '.join(MODES)}")
    return value


def available() -> bool:
    """Whether numba is installed (found without importing it).

    Returns
    -------
    bool
    """
    return importlib.util.find_spec("numba") is not None


def load():
    """Import the compiled kernel now (numba, and the compiled code from its disk cache).

    Returns
    -------
    callable
        :func:`protocols.bits.numba_kernel.column_counts`.

    Raises
    ------
    ImportError
        If numba is not installed.
    """
    return importlib.import_module(_KERNEL).column_counts


def column_kernel(nbytes: int, rows: int):
    """The compiled column counter to use for a batch of ``rows`` reports in ``nbytes`` bytes,
    if any.

    In ``auto`` mode the kernel counts batches of at least :data:`MIN_BATCH_BYTES`, except few
    wide rows (fewer than :data:`MIN_ROWS` in a batch of two numpy slabs or more, where its
    fixed cost per call over the 8·L counters is not paid back; benchmarks/aggregation.py measures
    where the kernel wins, docs/measurements.md "Speed and scale"). A batch left to numpy
    adds to the bytes numpy has counted in this process; once they would reach
    :data:`LOAD_AFTER_BYTES`, the kernel is loaded (if numba is installed and imports), so that
    loading costs at most about what numpy has already spent (the rule of renting until the
    rent paid equals the price of buying). ``numba`` mode takes the kernel for every batch of
    at least :data:`MIN_BATCH_BYTES`.

    Parameters
    ----------
    nbytes : int
        Size of the batch of packed reports.
    rows : int
        Reports in the batch.

    Returns
    -------
    callable or None
        :func:`protocols.bits.numba_kernel.column_counts`, or None for the numpy counter.

    Raises
    ------
    LDPValueError
        If ``BFRRCE_ACCEL`` holds an unknown value.
    ImportError
        If ``BFRRCE_ACCEL=numba`` and numba is not installed.
    """
    global _counted
    chosen = mode()
    if chosen == "numpy" or nbytes < MIN_BATCH_BYTES:
        return None
    if chosen == "numba":
        return load()
    numpy_faster = rows < MIN_ROWS and nbytes >= 2 * MIN_BATCH_BYTES
    if _KERNEL in sys.modules and not numpy_faster:
        return load()
    if _counted + nbytes >= LOAD_AFTER_BYTES and not numpy_faster and available():
        try:
            return load()
        except ImportError:                 # a broken install: stay on numpy for good
            pass
    _counted += nbytes
    return None
