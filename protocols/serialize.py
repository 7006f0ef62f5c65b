"""Aggregates as bytes, and simulation through real reports.

Wire form of a :class:`protocols.base.SupportCounts` (``aggregate_to_bytes``)::

    b"LDPAGG1\\n" + u32 header length (little-endian) + UTF-8 JSON header + int64 counts (little-endian)

The JSON header is ``{"mechanism": class name, "params": {constructor arguments},
"shape": [...], "n": number of reports}``; the class is looked up in :mod:`protocols` and rebuilt
from its keyword arguments, so an aggregate read back merges only with aggregates of a
mechanism with equal parameters (the usual merge check).
"""

from __future__ import annotations

import dataclasses
import json
import struct
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validate import check_int
from .base import RNG, FrequencyOracle, Mechanism, SupportCounts, domain_counts
from .errors import IncompatibleError, LDPTypeError, LDPValueError
from .randomness import generator

MAGIC = b"LDPAGG1\n"
_CHUNK = 1 << 16                 # reports privatized at a time by simulate_from_reports


def mechanism_params(mechanism: Mechanism) -> dict[str, Any]:
    """The constructor keyword arguments of a dataclass mechanism.

    Parameters
    ----------
    mechanism : Mechanism
        A dataclass mechanism.

    Returns
    -------
    dict
        {field name: value} of the fields ``__init__`` takes: ``type(m)(**params) == m``.
    """
    return {f.name: getattr(mechanism, f.name) for f in dataclasses.fields(mechanism) if f.init}


def aggregate_to_bytes(aggregate: SupportCounts) -> bytes:
    """Serialize a :class:`SupportCounts` (format in the module docstring).

    Parameters
    ----------
    aggregate : SupportCounts
        The aggregate of a mechanism of :mod:`protocols`.

    Returns
    -------
    bytes

    Raises
    ------
    LDPTypeError
        Not a :class:`SupportCounts`.
    """
    if not isinstance(aggregate, SupportCounts):
        raise LDPTypeError(f"expected SupportCounts, got {type(aggregate).__name__}")
    mech = aggregate.mechanism
    header = json.dumps({"mechanism": type(mech).__name__, "params": mechanism_params(mech),
                         "shape": list(aggregate.counts.shape), "n": aggregate.n}).encode()
    body = np.ascontiguousarray(aggregate.counts, dtype="<i8").tobytes()
    return MAGIC + struct.pack("<I", len(header)) + header + body


def aggregate_from_bytes(data: bytes) -> SupportCounts:
    """Read back :func:`aggregate_to_bytes`.

    Parameters
    ----------
    data : bytes-like
        A serialized aggregate.

    Returns
    -------
    SupportCounts
        With its mechanism rebuilt from the header.

    Raises
    ------
    LDPValueError
        A malformed buffer (magic, header or body length).
    IncompatibleError
        Counts whose shape does not fit the mechanism.
    """
    import protocols

    data = bytes(data)
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise LDPValueError(f"not a serialized aggregate (starts with {data[:8]!r})")
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    try:
        header = json.loads(data[start:start + size])
        cls = getattr(protocols, header["mechanism"])
        mech = cls(**header["params"])
        shape = tuple(header["shape"])
        n = header["n"]
    except (ValueError, KeyError, AttributeError, TypeError) as exc:
        raise LDPValueError(f"malformed aggregate header: {exc}") from None
    body = data[start + size:]
    if len(body) != 8 * int(np.prod(shape)):
        raise LDPValueError(f"aggregate body has {len(body)} bytes, expected {8 * int(np.prod(shape))}")
    counts = np.frombuffer(body, dtype="<i8").reshape(shape)
    expected = mech.empty_aggregate().counts.shape
    if shape != expected:
        raise IncompatibleError(f"counts of shape {shape} for {mech!r}, which needs {expected}")
    return SupportCounts(mech, counts, n)


def simulate_from_reports(mechanism: FrequencyOracle, values: ArrayLike, counts: ArrayLike | None = None,
                          rng: RNG = None, chunk: int = _CHUNK) -> SupportCounts:
    """The aggregate of users holding ``values`` (``counts`` each) in [0, d), from real reports.

    Exact in distribution (it runs the clients), memory of one chunk of ``chunk`` users.
    Users are generated value by value; the aggregate does not depend on their order.

    Parameters
    ----------
    mechanism : FrequencyOracle
        The oracle whose clients are run.
    values : array_like of int
        Values in [0, d).
    counts : array_like of int, optional
        ``counts[i]`` users hold ``values[i]`` (default one each).
    rng : None, int or numpy.random.Generator
        Randomness of the simulation.
    chunk : int
        Users privatized at a time.

    Returns
    -------
    SupportCounts
    """
    t = domain_counts(values, counts, mechanism.d)
    chunk = check_int(chunk, "chunk", 1)
    rng = generator(rng)
    ends = np.cumsum(t)

    def batches():
        for s in range(0, int(ends[-1]), chunk):
            users = np.arange(s, min(s + chunk, int(ends[-1])))
            yield mechanism.privatize(np.searchsorted(ends, users, side="right"), rng=rng)
    return mechanism.aggregate_batches(batches())
