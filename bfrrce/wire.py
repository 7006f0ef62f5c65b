"""Versioned binary formats of BFRRCE aggregates and report batches.

Layout (all integers little-endian):

======  ======  ==========================================================================
offset  size    field
======  ======  ==========================================================================
0       8       magic ``b"BFRRCE\\x00\\x01"`` (name, format family)
8       2       version (1)
10      1       kind: 1 = column sums, 2 = packed reports
11      4       length J of the parameter header
15      J       UTF-8 JSON: "mechanism" (epsilon, per_bit_epsilon or null, L, l, seed,
                perturbation, unit, p, q; floats as hex) and the batch identifiers: "batch" (reports: 32 hex digits, random,
                one per file) or "batches" (column sums: every batch already counted)
15+J    8       n: reports (kind 1: reports aggregated; kind 2: rows)
23+J    P       payload: kind 1, L int64 counts; kind 2, n·ceil(L/8) packed bytes
23+J+P  4       CRC-32 of every byte before it
======  ======  ==========================================================================

Readers refuse, with a message that says which: a wrong magic, another version, another kind,
a truncated or over-long input, a checksum mismatch, and parameters other than the expected
mechanism's.
"""

from __future__ import annotations

import json
import os
import struct
import warnings
import zlib

import numpy as np

from protocols._validate import check_int
from protocols.errors import IncompatibleError, LDPError, LDPTypeError

from .perturb import PrivacyWarning

MAGIC = b"BFRRCE\x00\x01"
VERSION = 1
COLUMN_SUMS, REPORTS = 1, 2


class FormatError(LDPError, ValueError):
    """Bytes that are not a valid BFRRCE file of the expected kind."""


def _params(mech):
    per_bit = None if mech.per_bit_epsilon is None else float(mech.per_bit_epsilon).hex()
    return {"epsilon": float(mech.epsilon).hex(), "per_bit_epsilon": per_bit, "L": mech.L,
            "l": mech.l, "seed": mech.seed, "perturbation": mech.perturbation, "unit": mech.unit,
            "p": float(mech.p).hex(), "q": float(mech.q).hex()}


def _dump(mech, kind, n, payload, **ids):
    header = json.dumps({"mechanism": _params(mech), **ids}, sort_keys=True).encode()
    body = (MAGIC + struct.pack("<HBI", VERSION, kind, len(header)) + header
            + struct.pack("<Q", n) + payload)
    return body + struct.pack("<I", zlib.crc32(body))


def _mechanism_from(params):
    from .protocol import BFRRCE
    common = dict(L=params["L"], l=params["l"], seed=params["seed"], unit=params["unit"],
                  perturbation=params["perturbation"])
    if params["per_bit_epsilon"] is None:
        mech = BFRRCE(epsilon=float.fromhex(params["epsilon"]), **common)
    else:                                # the paper's per-bit mode; its warning was given at write time
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            mech = BFRRCE(per_bit_epsilon=float.fromhex(params["per_bit_epsilon"]), **common)
    if _params(mech) != params:
        raise FormatError("parameters in the header are inconsistent (p, q do not match ε)")
    return mech


def _parse_prefix(data, kind, mechanism):
    """Check magic, version and kind and parse the header; returns (mech, n, header, offset)."""
    if len(data) < 15 or data[:8] != MAGIC:
        raise FormatError("not a BFRRCE file (bad magic or too short)")
    version, got_kind, hlen = struct.unpack_from("<HBI", data, 8)
    if version != VERSION:
        raise FormatError(f"format version {version} is not supported (this reader: {VERSION})")
    if got_kind != kind:
        raise FormatError(f"file holds kind {got_kind}, expected kind {kind}")
    if len(data) < 23 + hlen:
        raise FormatError("truncated header")
    try:
        header = json.loads(data[15:15 + hlen].decode())
        mech = _mechanism_from(header["mechanism"])
    except FormatError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, ArithmeticError, LDPError) as exc:
        raise FormatError(f"bad parameter header: {exc}") from None
    if mechanism is not None and mechanism != mech:
        raise IncompatibleError(f"file was written by {mech!r}, expected {mechanism!r}")
    (n,) = struct.unpack_from("<Q", data, 15 + hlen)
    return mech, n, header, 23 + hlen


def _load(data, kind, mechanism):
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise LDPTypeError(f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < 27 or data[:8] != MAGIC:
        raise FormatError("not a BFRRCE file (bad magic or too short)")
    (version,) = struct.unpack_from("<H", data, 8)
    if version != VERSION:
        raise FormatError(f"format version {version} is not supported (this reader: {VERSION})")
    if zlib.crc32(data[:-4]) != struct.unpack_from("<I", data, len(data) - 4)[0]:
        raise FormatError("checksum mismatch: the file is corrupted or truncated")
    mech, n, header, offset = _parse_prefix(data[:-4], kind, mechanism)
    return mech, n, data[offset:-4], header


def iter_report_chunks(path, mechanism=None, chunk_rows=1 << 16):
    """Stream a report file: yields (mechanism, batch, reports chunk) in bounded memory.

    The checksum covers the whole file, so it is checked after the last chunk: a caller must
    treat the chunks as tentative until the generator finishes without raising (as
    :func:`bfrrce.stream.aggregate_file` does). Every chunk is a view of one buffer that the
    next chunk overwrites: copy a chunk to keep it.
    """
    chunk_rows = check_int(chunk_rows, "chunk_rows", 1)
    with open(path, "rb") as fh:
        prefix = fh.read(15)
        if len(prefix) < 15:
            raise FormatError(f"{path}: not a BFRRCE file (too short)")
        hlen = struct.unpack_from("<I", prefix, 11)[0] if prefix[:8] == MAGIC else 0
        prefix += fh.read(hlen + 8)
        mech, n, header, _ = _parse_prefix(prefix, REPORTS, mechanism)
        batch = header.get("batch")
        if not isinstance(batch, str):
            raise FormatError(f"{path}: report file without a batch identifier")
        width = (mech.L + 7) // 8
        crc = zlib.crc32(prefix)
        buffer = np.empty((min(chunk_rows, n), width), dtype=np.uint8)
        remaining = n
        while remaining:
            chunk = buffer[:min(chunk_rows, remaining)]
            if fh.readinto(chunk) != chunk.nbytes:
                raise FormatError(f"{path}: truncated after {n - remaining} of {n} reports")
            crc = zlib.crc32(chunk, crc)
            remaining -= len(chunk)
            yield mech, batch, chunk
        tail = fh.read()
        if len(tail) != 4 or struct.unpack("<I", tail)[0] != crc:
            raise FormatError(f"{path}: checksum mismatch: the file is corrupted or truncated")


def dump_column_sums(agg):
    counts = np.ascontiguousarray(agg.counts, dtype="<i8")
    return _dump(agg.mechanism, COLUMN_SUMS, agg.n, counts.tobytes(), batches=sorted(agg.batches))


def load_column_sums(data, mechanism=None):
    from .aggregate import ColumnSums
    mech, n, payload, header = _load(data, COLUMN_SUMS, mechanism)
    if len(payload) != 8 * mech.L:
        raise FormatError(f"payload has {len(payload)} bytes, expected {8 * mech.L}")
    counts = np.frombuffer(payload, dtype="<i8")
    if (counts < 0).any() or (counts > n).any():
        raise FormatError("column sums outside [0, n]")
    batches = header.get("batches", [])
    if not isinstance(batches, list) or not all(isinstance(b, str) for b in batches):
        raise FormatError("bad batch list in the header")
    return ColumnSums(mech, counts.astype(np.int64), n, frozenset(batches))


def dump_reports(mech, reports, batch=None):
    """A report file; ``batch`` (32 hex digits) defaults to a fresh random identifier."""
    reports = mech.oracle.check_reports(reports)
    batch = batch or os.urandom(16).hex()
    return _dump(mech, REPORTS, len(reports), np.ascontiguousarray(reports).tobytes(), batch=batch)


def load_reports(data, mechanism=None):
    """Returns (mechanism, reports uint8 (n, ceil(L/8)), batch identifier)."""
    mech, n, payload, header = _load(data, REPORTS, mechanism)
    batch = header.get("batch")
    if not isinstance(batch, str):
        raise FormatError("report file without a batch identifier")
    width = (mech.L + 7) // 8
    if len(payload) != n * width:
        raise FormatError(f"payload has {len(payload)} bytes, expected {n * width}")
    reports = np.frombuffer(payload, dtype=np.uint8).reshape(n, width).copy()
    try:
        mech.oracle.check_reports(reports)
    except LDPError as exc:
        raise FormatError(str(exc)) from None
    return mech, reports, batch
