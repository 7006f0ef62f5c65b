"""Choice between the numpy column counter and the optional compiled one (numba).

Column counts of packed reports (:class:`protocols.bits.ColumnCounter`) have two
implementations that give identical results: the bit-sliced numpy counter, always available,
and a compiled loop (:mod:`protocols._numba_kernel`, installed with ``pip install
"bfrrce[fast]"``), about twice as fast on large inputs. Loading the compiled one costs a
fixed ~0.3 s per process (importing numba and reading its on-disk cache; the first compilation
on a machine takes a few seconds more, once). So by default the numpy counter is used until
the process has counted :data:`LOAD_AFTER_BYTES` of reports with it (about the load time, at
numpy's speed); then numba is loaded, and used for every batch of at least
:data:`MIN_BATCH_BYTES`. Small CLI runs never import numba.

The environment variable ``BFRRCE_ACCEL`` overrides the choice (read at every call):
``auto`` (the default, as above), ``numpy`` (never load numba) or ``numba`` (use it for
every batch of at least :data:`MIN_BATCH_BYTES`; an error if numba is not installed).
:func:`load` loads the kernel at once, for a long-running server that knows it will count
a lot.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from .errors import LDPValueError

ENV = "BFRRCE_ACCEL"
MODES = ("auto", "numpy", "numba")
LOAD_AFTER_BYTES = 1 << 30       # ~0.2 s of numpy counting, about the time loading numba takes
MIN_BATCH_BYTES = 1 << 16        # below this, a compiled call saves less than its dispatch costs
_KERNEL = "protocols._numba_kernel"
_counted = 0                     # bytes counted by numpy in this process (auto mode)


def mode() -> str:
    """The accelerator mode from ``BFRRCE_ACCEL``: ``auto`` (unset or empty), ``numpy`` or ``numba``.

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
    """Whether numba can be imported (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def load():
    """Import the compiled kernel now and return its ``column_counts`` function.

    Raises
    ------
    ImportError
        If numba is not installed.
    """
    return importlib.import_module(_KERNEL).column_counts


def column_kernel(nbytes: int):
    """The compiled column counter for a batch of ``nbytes`` bytes, or None for numpy.

    In ``auto`` mode, a batch counted with numpy (None returned) adds to the bytes counted in
    this process, and once they reach :data:`LOAD_AFTER_BYTES` the kernel is loaded if numba
    is installed.

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
    if chosen == "numba" or _KERNEL in sys.modules:
        return load()
    if _counted + nbytes >= LOAD_AFTER_BYTES and available():
        try:
            return load()
        except ImportError:                 # a broken install: stay on numpy for good
            pass
    _counted += nbytes
    return None
