"""Validation helpers shared by every mechanism; errors name the offending value."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import IncompatibleError, LDPTypeError, LDPValueError


MAX_EPSILON = 700.0     # e^700 ≈ 1e304: beyond, probabilities are not representable in float64


def check_epsilon(epsilon, name="epsilon"):
    """Return ε as a float; it must be a finite real number > 0."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise LDPTypeError(f"{name} must be a real number, got {epsilon!r}")
    epsilon = float(epsilon)
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise LDPValueError(f"{name} must be finite and > 0, got {epsilon!r}")
    if epsilon > MAX_EPSILON:
        raise LDPValueError(f"{name}={epsilon!r} is too large: e^ε overflows float64 (max {MAX_EPSILON})")
    return epsilon


def check_int(value, name, minimum=None, maximum=None):
    """Return an int in [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise LDPTypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise LDPValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise LDPValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_probability(value, name, open_interval=True):
    """Return a probability as a float, in (0, 1) (or [0, 1] if not ``open_interval``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise LDPTypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    ok = 0 < value < 1 if open_interval else 0 <= value <= 1
    if not ok:
        bounds = "(0, 1)" if open_interval else "[0, 1]"
        raise LDPValueError(f"{name} must be in {bounds}, got {value!r}")
    return value


def check_values(values, d, name="values"):
    """Return ``values`` as a 1-d int64 array of integers in [0, d).

    Floats (even integral ones), booleans and objects are refused with a TypeError, so that
    NaN and silent truncation cannot slip in; out-of-domain values raise a ValueError.
    """
    arr = np.asarray(values)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise LDPTypeError(f"{name} must be integers in [0, {d}), got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise LDPValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise LDPValueError(f"{name} is empty")
    bad = (arr < 0) | (arr >= d)
    if bad.any():
        raise LDPValueError(f"{name} must be in [0, {d}); found {arr[bad][0].item()!r}")
    return arr.astype(np.int64, copy=False)


def check_array(reports, dtype, shape_tail, name="reports"):
    """Check a report array's dtype and trailing shape; return it (never copied nor modified)."""
    arr = np.asarray(reports)
    if arr.dtype != np.dtype(dtype):
        raise LDPTypeError(f"{name} must have dtype {np.dtype(dtype)}, got {arr.dtype}")
    if arr.ndim != 1 + len(shape_tail) or tuple(arr.shape[1:]) != tuple(shape_tail):
        want = ("n",) + tuple(shape_tail)
        raise IncompatibleError(f"{name} must have shape {want}, got {arr.shape}")
    return arr


def check_range(arr, high, name="reports"):
    """Refuse entries outside [0, high): reports of a mechanism with other parameters."""
    if arr.size and (arr.min() < 0 or arr.max() >= high):
        bad = arr[(arr < 0) | (arr >= high)][0].item()
        raise IncompatibleError(f"{name} entries must be in [0, {high}); found {bad!r}")
