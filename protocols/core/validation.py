"""Validation helpers shared by every mechanism; errors name the offending value."""

from __future__ import annotations

import math
from collections.abc import Mapping
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from protocols.errors import IncompatibleError, LDPTypeError, LDPValueError


MAX_EPSILON = 700.0     # e^700 ≈ 1e304: beyond, probabilities are not representable in float64


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """Validate a privacy budget.

    Parameters
    ----------
    epsilon : float
        A finite real number, 0 < ε <= :data:`MAX_EPSILON`.
    name : str
        The argument's name, for the message.

    Returns
    -------
    float

    Raises
    ------
    LDPTypeError
        Not a real number (booleans included).
    LDPValueError
        Not finite, not positive, or so large that e^ε overflows.
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise LDPTypeError(f"{name} must be a real number, got {epsilon!r}")
    epsilon = float(epsilon)
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise LDPValueError(f"{name} must be finite and > 0, got {epsilon!r}")
    if epsilon > MAX_EPSILON:
        raise LDPValueError(f"{name}={epsilon!r} is too large: e^ε overflows float64 (max {MAX_EPSILON})")
    return epsilon


def check_int(value: int, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """Validate an integer argument.

    Parameters
    ----------
    value : int
        An integer (not a bool).
    name : str
        The argument's name, for the message.
    minimum, maximum : int, optional
        Inclusive bounds.

    Returns
    -------
    int

    Raises
    ------
    LDPTypeError
        Not an integer.
    LDPValueError
        Out of bounds.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise LDPTypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise LDPValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise LDPValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_probability(value: float, name: str, open_interval: bool = True) -> float:
    """Validate a probability.

    Parameters
    ----------
    value : float
        A real number in (0, 1) (or [0, 1] if not ``open_interval``).
    name : str
        The argument's name, for the message.
    open_interval : bool
        Refuse 0 and 1.

    Returns
    -------
    float

    Raises
    ------
    LDPTypeError
        Not a real number.
    LDPValueError
        Outside the interval.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise LDPTypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    ok = 0 < value < 1 if open_interval else 0 <= value <= 1
    if not ok:
        bounds = "(0, 1)" if open_interval else "[0, 1]"
        raise LDPValueError(f"{name} must be in {bounds}, got {value!r}")
    return value


def check_values(values: ArrayLike, d: int, name: str = "values") -> np.ndarray:
    """Validate a batch of domain values.

    Floats (even integral ones), booleans and objects are refused with a TypeError, so that
    NaN and silent truncation cannot slip in; out-of-domain values raise a ValueError.

    Parameters
    ----------
    values : array_like of int
        Integers in [0, d).
    d : int
        Domain size.
    name : str
        The argument's name, for the message.

    Returns
    -------
    numpy.ndarray
        int64 (n,).

    Raises
    ------
    LDPTypeError
        Not integers.
    LDPValueError
        Empty, not 1-d, or outside [0, d).
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


def check_array(reports: ArrayLike, dtype: np.dtype | type, shape_tail: tuple[int, ...],
                name: str = "reports") -> np.ndarray:
    """Validate a report array's dtype and trailing shape.

    Parameters
    ----------
    reports : array_like
        The reports.
    dtype : numpy.dtype or type
        The exact dtype required.
    shape_tail : tuple of int
        The shape of one report.
    name : str
        The argument's name, for the message.

    Returns
    -------
    numpy.ndarray
        The reports (never copied nor modified).

    Raises
    ------
    LDPTypeError
        Another dtype.
    IncompatibleError
        Another shape.
    """
    arr = np.asarray(reports)
    if arr.dtype != np.dtype(dtype):
        raise LDPTypeError(f"{name} must have dtype {np.dtype(dtype)}, got {arr.dtype}")
    if arr.ndim != 1 + len(shape_tail) or tuple(arr.shape[1:]) != tuple(shape_tail):
        want = ("n",) + tuple(shape_tail)
        raise IncompatibleError(f"{name} must have shape {want}, got {arr.shape}")
    return arr


def check_range(arr: np.ndarray, high: int, name: str = "reports") -> None:
    """Refuse entries outside [0, high): reports of a mechanism with other parameters.

    Parameters
    ----------
    arr : numpy.ndarray
        Integer entries.
    high : int
        Exclusive upper bound.
    name : str
        The argument's name, for the message.

    Raises
    ------
    IncompatibleError
        An entry outside [0, high).
    """
    if arr.size and (arr.min() < 0 or arr.max() >= high):
        bad = arr[(arr < 0) | (arr >= high)][0].item()
        raise IncompatibleError(f"{name} entries must be in [0, {high}); found {bad!r}")


def check_value_batch(values: Any, name: str = "values") -> Any:
    """``values`` as a batch of values (one per user), refusing what is ambiguous.

    A ``str`` or ``bytes`` is one value (not one per character); a 1-D numpy array, a list, a
    tuple or any other sized sequence is a batch. Refused with :class:`LDPTypeError`: None,
    numbers, iterators and generators (no length: pass ``list(...)``), sets and dicts
    (unordered, or keys versus items), bytearray and memoryview (bytes or integers?), and
    arrays of more than one dimension (one user per row, or per cell?).

    Parameters
    ----------
    values : object
        What the caller passed.
    name : str
        Name used in error messages.

    Returns
    -------
    sequence
        ``values`` itself, or ``[values]`` for one str or bytes.

    Raises
    ------
    LDPTypeError
        An ambiguous or unsized argument (see above).
    """
    if isinstance(values, (str, bytes)):
        return [values]
    if isinstance(values, (set, frozenset, Mapping, bytearray, memoryview)) or not hasattr(values, "__len__") \
            or not hasattr(values, "__getitem__"):
        raise LDPTypeError(f"{name} must be a sequence of values (list, tuple, 1-D array) or one str "
                           f"or bytes, got {type(values).__name__}: {values!r:.80}")
    if getattr(values, "ndim", 1) != 1:
        raise LDPTypeError(f"{name} must be one-dimensional, got shape {np.shape(values)}")
    return values


def check_set_batch(sets: Any) -> Any:
    """``sets`` as a batch of item sets: a sequence (:func:`check_value_batch`) whose entries are
    collections of items (set, frozenset, list, tuple, 1-D array); a ``str`` or ``bytes`` entry
    is refused (one item or its characters?), as are numbers and dicts.

    Parameters
    ----------
    sets : object
        What the caller passed: one collection of items per party.

    Returns
    -------
    sequence
        ``sets`` itself.

    Raises
    ------
    LDPTypeError
        Not a sequence of collections.
    """
    sets = check_value_batch(sets, "sets")
    for s in sets:
        if isinstance(s, (str, bytes, Mapping)) or not hasattr(s, "__iter__") or not hasattr(s, "__len__"):
            raise LDPTypeError(f"each party's items must be a set, list or tuple, got "
                               f"{type(s).__name__}: {s!r:.80} (wrap one item as {{item}})")
    return sets
