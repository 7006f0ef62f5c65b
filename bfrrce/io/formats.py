"""The one serializer of the package: versioned binary files of column sums and of report
batches, and the one reader of report files (package format and Parquet). See docs/formats.md.

Layout (all integers little-endian):

======  ======  ==========================================================================
offset  size    field
======  ======  ==========================================================================
0       8       magic ``b"BFRRCE\\x00\\x01"`` (name, format family)
8       2       version (2; readers also take version-1 report files)
10      1       kind: 1 = column sums, 2 = packed reports, 3 = the aggregate of a
                ``protocols`` mechanism (:class:`protocols.SupportCounts`)
11      4       length J of the parameter header
15      J       UTF-8 JSON: "mechanism" (epsilon, per_bit_epsilon or null, L, l, hash_seed,
                perturbation, unit, p, q; floats as hex; for a set sketch, :class:`bfrrce.SetSketch`:
                sketch = "set", epsilon, buckets, levels, hash_seed, perturbation, p, q), "seeded"
                (true when the noise came from a seeded generator) and the batch identifiers:
                "batch" (reports: the content identifier of :mod:`bfrrce.identity`, 64 hex digits,
                checked against the rows) or "batches" (column sums: every batch already counted);
                kind 3: "class" (the mechanism's class name, :mod:`protocols.core.registry`),
                "params" (its constructor arguments) and "shape" (of the counts)
15+J    8       n: reports (kind 1: reports aggregated; kind 2: rows)
23+J    P       payload: kind 1, L int64 counts; kind 2, n·ceil(L/8) packed bytes; kind 3,
                the counts as int64 in C order
23+J+P  4       CRC-32 of every byte before it
======  ======  ==========================================================================

Readers refuse, with a message that says which: a wrong magic, another version, another kind,
a truncated or over-long input, a checksum mismatch, and parameters other than the expected
mechanism's. Every size field is bounded before anything is allocated: J <= ``MAX_HEADER``
(16 MiB), and, for a report file read from disk, J and n·ceil(L/8) against the bytes the file
holds (so the count in "truncated after k of n reports" is the reports present); L <= 2**24
(:class:`bfrrce.bloom.BloomFilter`); n <= 2**53 for column sums. The header JSON nests at most
``MAX_DEPTH`` = 2 deep (checked before parsing) and has exactly the keys above (mechanism keys
included); batch identifiers are 64 lowercase hex digits, and the writers refuse what the
readers refuse.

Batch identity: a batch's identifier is the digest of its rows (:mod:`bfrrce.identity`), the
same for a report file, a Parquet file or the reports in memory; a report file's header states
it and the reader refuses a header that does not match its rows. :class:`bfrrce.sums.ColumnSums`
refuses to count a batch twice. Version 1 (random labels) report files are read with the
identifier of their rows and as not seeded (version 1 did not record it); version 1 column-sums
files are refused (their labels cannot be checked against report files: re-aggregate).

Seeded files: readers refuse a report or column-sums file whose "seeded" is true unless
``allow_seeded=True`` (:class:`SeededError`).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import struct
import warnings
import zlib
from pathlib import Path

import numpy as np

from protocols import SupportCounts
from protocols.bits import packing as bits
from protocols.core.registry import mechanism_from_params, mechanism_params
from protocols.core.validation import check_int
from protocols.errors import (FormatError, IncompatibleError, LDPError, LDPTypeError, LDPValueError,
                             PrivacyWarning)

from ..identity import BatchDigest, DuplicateReportsError, check_repeats
from ..mechanism import BFRRCE
from ..sets import SetSketch
from ..sums import ColumnSums, check_batch
from .values import check_input

MAGIC = b"BFRRCE\x00\x01"
VERSION = 2
COLUMN_SUMS, REPORTS, SUPPORT_COUNTS = 1, 2, 3
READABLE = {COLUMN_SUMS: (2,), REPORTS: (1, 2), SUPPORT_COUNTS: (1, 2)}
MAX_HEADER = 1 << 24            # bytes of JSON header (about 450,000 batch identifiers)
MAX_CHUNK_BYTES = 1 << 26      # a chunk of reports holds at most 64 MiB
MAX_DEPTH = 2                   # {"mechanism": {...}, "batches": [...]}: nothing nests deeper
_KEYS = {COLUMN_SUMS: {"mechanism", "batches", "seeded"}, REPORTS: {"mechanism", "batch", "seeded"},
         SUPPORT_COUNTS: {"class", "params", "shape"}}
_KEYS_V1 = {REPORTS: {"mechanism", "batch"}}


class SeededError(IncompatibleError):
    """A file of seeded (replayable) client noise read without ``allow_seeded=True``."""


def check_seeded(seeded: bool, allow_seeded: bool, what: str) -> None:
    """Refuse seeded reports unless allowed (docs/formats.md, seeded files).

    Parameters
    ----------
    seeded : bool
        Whether the reports come from seeded noise.
    allow_seeded : bool
        Whether seeded reports are accepted.
    what : str
        What holds the reports, for the message.

    Raises
    ------
    SeededError
        Seeded reports not allowed.
    """
    if seeded and not allow_seeded:
        raise SeededError(f"{what}: its reports come from seeded noise (replayable from the seed, "
                          "so they protect nobody); pass allow_seeded=True (CLI --allow-seeded) to "
                          "use it for a demonstration or a test")
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')


def _params(mech):
    if isinstance(mech, SetSketch):
        return {"sketch": "set", "epsilon": float(mech.epsilon).hex(), "buckets": mech.buckets,
                "levels": mech.levels, "hash_seed": mech.hash_seed, "perturbation": mech.perturbation,
                "p": float(mech.p).hex(), "q": float(mech.q).hex()}
    per_bit = None if mech.per_bit_epsilon is None else float(mech.per_bit_epsilon).hex()
    return {"epsilon": float(mech.epsilon).hex(), "per_bit_epsilon": per_bit, "L": mech.L,
            "l": mech.l, "hash_seed": mech.hash_seed, "perturbation": mech.perturbation, "unit": mech.unit,
            "p": float(mech.p).hex(), "q": float(mech.q).hex()}


def _dump(mech, kind, n, payload, **ids):
    return _container(kind, n, payload, {"mechanism": _params(mech), **ids})


def _container(kind, n, payload, fields):
    header = json.dumps(fields, sort_keys=True).encode()
    if len(header) > MAX_HEADER:
        raise LDPValueError(f"header of {len(header)} bytes exceeds the format's {MAX_HEADER}")
    body = (MAGIC + struct.pack("<HBI", VERSION, kind, len(header)) + header
            + struct.pack("<Q", n) + payload)
    return body + struct.pack("<I", zlib.crc32(body))


def _mechanism_from(params):
    if isinstance(params, dict) and "seed" in params and "hash_seed" not in params:
        params = {("hash_seed" if key == "seed" else key): value for key, value in params.items()}  # headers before 0.2
    if isinstance(params, dict) and params.get("sketch") == "set":
        if set(params) != set(_SET_KEYS):
            raise FormatError(f"set sketch parameters must have exactly the keys {sorted(_SET_KEYS)}")
        mech = SetSketch(epsilon=float.fromhex(params["epsilon"]), buckets=params["buckets"],
                         levels=params["levels"], hash_seed=params["hash_seed"],
                         perturbation=params["perturbation"])
        if _params(mech) != params:
            raise FormatError("parameters in the header are inconsistent (p, q do not match ε)")
        return mech
    if not isinstance(params, dict) or set(params) != set(_PARAM_KEYS):
        raise FormatError(f"mechanism parameters must have exactly the keys {sorted(_PARAM_KEYS)}")
    common = dict(L=params["L"], l=params["l"], hash_seed=params["hash_seed"], unit=params["unit"],
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


_PARAM_KEYS = _params(BFRRCE(epsilon=1.0, L=2))
_SET_KEYS = _params(SetSketch(epsilon=1.0, buckets=2, levels=1))


def _json_header(raw, kind, version=VERSION):
    """The header's JSON object, refused unless it has exactly the keys of ``kind`` and nests at
    most ``MAX_DEPTH`` deep (depth counted before parsing, outside strings)."""
    brackets = np.frombuffer(_STRINGS.sub(b'""', raw), dtype=np.uint8)
    depth = np.cumsum(np.isin(brackets, (91, 123)).astype(np.int64)
                      - np.isin(brackets, (93, 125)).astype(np.int64))
    if depth.size and depth.max() > MAX_DEPTH:
        raise FormatError(f"header JSON nests {int(depth.max())} deep (at most {MAX_DEPTH})")
    header = json.loads(raw.decode())
    expected = _KEYS_V1[kind] if version == 1 and kind in _KEYS_V1 else _KEYS[kind]
    if not isinstance(header, dict) or set(header) != expected:
        keys = sorted(header) if isinstance(header, dict) else type(header).__name__
        raise FormatError(f"header keys must be {sorted(expected)}, got {keys}")
    if not isinstance(header.get("seeded", False), bool):
        raise FormatError(f"seeded must be true or false, got {header['seeded']!r:.40}")
    return header


def _check_start(data, kind):
    """Check magic, version, kind and the header length of a file's first 15 bytes; returns
    (header length, version)."""
    if len(data) < 15 or data[:8] != MAGIC:
        raise FormatError("not a BFRRCE file (bad magic or too short)")
    version, got_kind, hlen = struct.unpack_from("<HBI", data, 8)
    if got_kind != kind:
        raise FormatError(f"file holds kind {got_kind}, expected kind {kind}")
    if version not in READABLE[kind]:
        hint = (": version-1 column sums carry batch labels that cannot be checked against the "
                "reports; aggregate the report files again" if kind == COLUMN_SUMS and version == 1 else "")
        raise FormatError(f"format version {version} of kind {kind} is not supported (this reader: "
                          f"{', '.join(map(str, READABLE[kind]))}){hint}")
    if hlen > MAX_HEADER:
        raise FormatError(f"header length {hlen} exceeds the format's {MAX_HEADER} bytes")
    return hlen, version


def _parse_prefix(data, kind, mechanism):
    """Check magic, version and kind and parse the header; returns (mech, n, header, offset)."""
    hlen, version = _check_start(data, kind)
    if len(data) < 23 + hlen:
        raise FormatError("truncated header")
    try:
        header = _json_header(data[15:15 + hlen], kind, version)
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
    data = _checked(data)
    mech, n, header, offset = _parse_prefix(data[:-4], kind, mechanism)
    return mech, n, data[offset:-4], header


def _checked(data):
    """``data`` as bytes, refused unless magic, version and checksum hold."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise LDPTypeError(f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < 27 or data[:8] != MAGIC:
        raise FormatError("not a BFRRCE file (bad magic or too short)")
    (version,) = struct.unpack_from("<H", data, 8)
    if version not in (1, VERSION):
        raise FormatError(f"format version {version} is not supported (this reader: 1, {VERSION})")
    if zlib.crc32(data[:-4]) != struct.unpack_from("<I", data, len(data) - 4)[0]:
        raise FormatError("checksum mismatch: the file is corrupted or truncated")
    return data


def _remaining(fh):
    """Bytes left in a seekable ``fh`` (None when it cannot seek)."""
    if not fh.seekable():
        return None
    here = fh.tell()
    end = fh.seek(0, os.SEEK_END)
    fh.seek(here)
    return end - here


def _read_report_header(fh, mechanism, what):
    """Parse a report file's prefix from ``fh``: (mechanism, n, batch stated by the header or
    None (version 1), seeded, running CRC-32).

    Every size field is checked before anything is allocated: the header length against
    ``MAX_HEADER`` and the bytes left, and n·ceil(L/8) + 4 against the bytes left.
    """
    prefix = fh.read(15)
    try:
        hlen, version = _check_start(prefix, REPORTS)
    except FormatError as exc:
        raise FormatError(f"{what}: {exc}") from None
    left = _remaining(fh)
    if left is not None and hlen + 8 > left:
        raise FormatError(f"{what}: truncated header ({hlen + 8} bytes announced, {left} left)")
    prefix += fh.read(hlen + 8)
    mech, n, header, _ = _parse_prefix(prefix, REPORTS, mechanism)
    batch = None
    if version > 1:
        try:
            batch = check_batch(header["batch"])
        except LDPError as exc:
            raise FormatError(f"{what}: bad batch identifier: {exc}") from None
    if left is not None:
        width, left = bits.nbytes(mech.L), left - hlen - 8
        if n * width + 4 != left:
            whole = left // width
            state = ("trailing bytes" if left > n * width + 4 else "truncated checksum" if whole >= n
                     else f"truncated after {whole} of {n} reports")
            raise FormatError(f"{what}: {state} ({left} bytes after the header, "
                              f"{n * width + 4} expected): the file is corrupted or truncated")
    return mech, n, batch, header.get("seeded", False), zlib.crc32(prefix)


def _read_report_rows(fh, mech, n, crc, chunk_rows, what):
    """The n reports after the header, in chunks (at most ``chunk_rows`` reports and
    ``MAX_CHUNK_BYTES``, so a forged n allocates nothing large even from a stream that cannot
    seek) that are views of one reused buffer; the checksum (and the absence of trailing bytes)
    is checked after the last chunk."""
    width = bits.nbytes(mech.L)
    chunk_rows = min(check_int(chunk_rows, "chunk_rows", 1), max(1, MAX_CHUNK_BYTES // width))
    buffer = np.empty((min(chunk_rows, n), width), dtype=np.uint8)
    remaining = n
    while remaining:
        chunk = buffer[:min(chunk_rows, remaining)]
        got = fh.readinto(chunk)
        if got != chunk.nbytes:
            raise FormatError(f"{what}: truncated after {n - remaining + got // width} of {n} reports")
        crc = zlib.crc32(chunk, crc)
        try:
            mech.check_reports(chunk)
        except LDPError as exc:
            raise FormatError(f"{what}: {exc}") from None
        remaining -= len(chunk)
        yield chunk
    tail = fh.read(5)
    if len(tail) != 4 or struct.unpack("<I", tail)[0] != crc:
        raise FormatError(f"{what}: checksum mismatch: the file is corrupted or truncated")


def _parquet_chunks(path, mechanism, column, chunk_rows):
    if mechanism is None:
        raise LDPValueError("Parquet report files carry no parameters: pass the mechanism")
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    chunk_rows = check_int(chunk_rows, "chunk_rows", 1)
    width = bits.nbytes(mechanism.L)
    try:
        parquet = pq.ParquetFile(path)
    except pa.ArrowException as exc:
        raise FormatError(f"{path}: not a Parquet file: {exc}") from None
    names = parquet.schema_arrow.names
    if names.count(column) != 1:
        raise FormatError(f"{path}: {'no' if column not in names else 'more than one'} column "
                          f"{column!r} (columns: {names})")
    kind = parquet.schema_arrow.field(column).type
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind)):
        raise FormatError(f"{path}: column {column!r} must hold packed reports as bytes, not {kind}")
    try:
        for part in parquet.iter_batches(batch_size=chunk_rows, columns=[column]):
            cells = part.column(0)                    # no Python object per report: Arrow buffers
            lengths = pc.binary_length(cells).to_numpy(zero_copy_only=False)
            if cells.null_count or (lengths != width).any():
                raise FormatError(f"{path}: column {column!r} must hold {width}-byte reports")
            fixed = cells.cast(pa.binary(width))
            data = np.frombuffer(fixed.buffers()[1], dtype=np.uint8)
            chunk = data[fixed.offset * width:(fixed.offset + len(fixed)) * width].reshape(len(fixed), width)
            try:
                yield mechanism.check_reports(chunk)
            except LDPError as exc:
                raise FormatError(f"{path}: {exc}") from None
    except (pa.ArrowException, OSError) as exc:
        raise FormatError(f"{path}: damaged Parquet file: {exc}") from None


class ReportSource:
    """An opened report file: its header facts and its chunks of reports (streamed).

    Attributes
    ----------
    mechanism : BFRRCE
        The parameters (from the header, or the expected ones for Parquet).
    stated : str or None
        The batch identifier the header states (None: Parquet and version-1 files); checked
        against the rows by :func:`read_report_sums`.
    seeded : bool
        The header says the noise came from a seeded generator (Parquet: False).
    chunks : iterator of numpy.ndarray
        uint8 chunks (rows, ceil(L/8)), views of one reused buffer; tentative until exhausted
        (the checksum is checked after the last one).
    """

    def __init__(self, path, mechanism=None, chunk_rows=1 << 16, column="report"):
        self.path = str(path)
        if Path(path).suffix == ".parquet":
            self.mechanism, self.stated, self.seeded = mechanism, None, False
            self.chunks = _parquet_chunks(path, mechanism, column, chunk_rows)
            return
        chunk_rows = check_int(chunk_rows, "chunk_rows", 1)
        fh = open(check_input(path), "rb")
        try:
            self.mechanism, n, self.stated, self.seeded, crc = _read_report_header(fh, mechanism, self.path)
        except BaseException:
            fh.close()
            raise
        self.chunks = self._rows(fh, n, crc, chunk_rows)

    def _rows(self, fh, n, crc, chunk_rows):
        with fh:
            yield from _read_report_rows(fh, self.mechanism, n, crc, chunk_rows, self.path)


def read_report_sums(path, mechanism=None, chunk_rows=1 << 16, column="report",
                     allow_seeded=False, screen=None) -> ColumnSums:
    """Column sums of one report file, streamed, labelled with the identifier of its rows.

    Parameters
    ----------
    path : str or os.PathLike
        The report file (:func:`dump_reports`, or a table with a column of reports).
    mechanism : BFRRCE or None
        The expected parameters; None: those of the file.
    chunk_rows : int
        Rows read at a time.
    column : str
        The column of reports (tables).
    allow_seeded : bool
        Whether to accept seeded reports.
    screen : callable or None
        ``screen(mechanism, reports)`` -> boolean mask of the reports to count (e.g.
        :class:`bfrrce.io.stream.Screen`); None counts every report.

    Returns
    -------
    ColumnSums
        The sums, labelled with the batch of the file's rows.

    Raises
    ------
    SeededError
        A seeded file without ``allow_seeded``.
    FormatError
        Damage, a header whose batch identifier is not that of the rows it holds, or
        duplicated reports (:func:`bfrrce.identity.check_repeats`).
    IncompatibleError
        Other parameters.
    """
    src = ReportSource(path, mechanism, chunk_rows, column)
    check_seeded(src.seeded, allow_seeded, src.path)
    try:
        sums = src.mechanism.aggregate_batches(
            src.chunks, seeded=src.seeded,
            screen=None if screen is None else (lambda reports: screen(src.mechanism, reports)))
    except DuplicateReportsError as exc:
        raise FormatError(f"{src.path}: {exc}") from None
    if src.stated is not None and sums.n and src.stated not in sums.batches:
        raise FormatError(f"{src.path}: the header's batch {src.stated} is not the identifier of the "
                          f"reports it holds ({next(iter(sums.batches))}): the file was edited")
    return sums


def iter_report_chunks(path, mechanism=None, chunk_rows=1 << 16, column="report", allow_seeded=False):
    """Stream a report file: yields (mechanism, reports chunk) in bounded memory.

    Parameters
    ----------
    path : str or Path
        A package report file (:func:`dump_reports`), or a ``.parquet`` file whose ``column``
        holds packed reports (bytes; needs the ``tabular`` extra and ``mechanism``).
    mechanism : BFRRCE, optional
        The expected parameters (required for Parquet).
    chunk_rows : int
        Reports per chunk (>= 1).
    allow_seeded : bool
        Read a file of seeded noise (refused by default: :class:`SeededError`).

    Yields
    ------
    (BFRRCE, numpy.ndarray)
        The mechanism and a uint8 chunk (rows, ceil(L/8)). A chunk is a view of one buffer that
        the next chunk overwrites: copy it to keep it. The checksum is checked after the last
        chunk, so chunks are tentative until the generator finishes. The batch identifier
        comes from the rows (:func:`read_report_sums`).

    Raises
    ------
    FormatError
        Not a valid report file (magic, version, kind, truncation, checksum, padding bits).
    IncompatibleError
        Written with parameters other than ``mechanism``'s.
    """
    src = ReportSource(path, mechanism, chunk_rows, column)
    check_seeded(src.seeded, allow_seeded, src.path)
    for chunk in src.chunks:
        yield src.mechanism, chunk


def sums_batch(agg: ColumnSums) -> str:
    """Identifier of unlabelled column sums: the SHA-256 of their parameters, n and counts
    (the same sums always get the same identifier).

    Parameters
    ----------
    agg : ColumnSums
        The sums.

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    digest = hashlib.sha256(json.dumps(_params(agg.mechanism), sort_keys=True).encode()
                            + struct.pack("<Q", agg.n) + np.ascontiguousarray(agg.counts, "<i8").tobytes())
    return digest.hexdigest()


def dump_column_sums(agg: ColumnSums) -> bytes:
    """The column-sums file of ``agg`` (kind 1), with the batches it counts and ``seeded``.

    Sums of unlabelled reports (``agg.batches`` empty, n > 0) are written as the one batch
    :func:`sums_batch`: readers require every non-empty sums file to name its batches, and the
    same sums written twice are refused when merged.

    Parameters
    ----------
    agg : ColumnSums
        The sums to write.

    Returns
    -------
    bytes
        The file's content.

    Raises
    ------
    LDPTypeError
        ``agg`` is not a :class:`ColumnSums`.
    """
    if not isinstance(agg, ColumnSums):
        raise LDPTypeError(f"expected ColumnSums, got {type(agg).__name__}")
    payload = np.ascontiguousarray(agg.counts, dtype="<i8").tobytes()
    batches = sorted(agg.batches)
    if agg.n and not batches:
        batches = [sums_batch(agg)]
    return _dump(agg.mechanism, COLUMN_SUMS, agg.n, payload, batches=batches, seeded=agg.seeded)


def load_column_sums(data: bytes, mechanism: BFRRCE | None = None, allow_seeded: bool = False) -> ColumnSums:
    """Read a column-sums file (:func:`dump_column_sums`).

    Parameters
    ----------
    data : bytes
        The file's content.
    mechanism : BFRRCE or None
        The expected parameters; None: those of the header.
    allow_seeded : bool
        Whether to accept sums of seeded reports.

    Returns
    -------
    ColumnSums
        The sums.

    Raises
    ------
    IncompatibleError
        Parameters other than ``mechanism``'s (when given).
    SeededError
        Sums of seeded reports without ``allow_seeded``.
    FormatError
        Any damage: magic, version, kind, header (length, depth, keys, parameters), checksum,
        payload length, counts outside [0, n], n > 2**53, a batch list that is not the sorted
        distinct identifiers, or no batch for n > 0.
    """
    mech, n, payload, header = _load(data, COLUMN_SUMS, mechanism)
    if len(payload) != 8 * mech.L:
        raise FormatError(f"payload has {len(payload)} bytes, expected {8 * mech.L}")
    batches = header["batches"]
    if not isinstance(batches, list) or not all(isinstance(b, str) for b in batches) \
            or batches != sorted(set(batches)) or (n > 0 and not batches):
        raise FormatError("the header's batches must be the sorted distinct identifiers of the "
                          "batches counted, at least one when n > 0")
    check_seeded(header["seeded"], allow_seeded, "column sums")
    try:
        return ColumnSums(mech, np.frombuffer(payload, dtype="<i8").astype(np.int64), n,
                          frozenset(batches), header["seeded"])
    except LDPError as exc:
        raise FormatError(f"bad column sums: {exc}") from None


MAX_SUMS_BYTES = 27 + MAX_HEADER + 8 * (1 << 24)     # the largest valid column-sums file


def read_column_sums_file(path, mechanism: BFRRCE | None = None, allow_seeded: bool = False) -> ColumnSums:
    """:func:`load_column_sums` of a file, refused before reading unless it is a regular file
    of at most ``MAX_SUMS_BYTES`` (so /dev/zero, a FIFO or a huge sparse file costs nothing).

    Parameters
    ----------
    path : str or os.PathLike
        The column-sums file.
    mechanism : BFRRCE or None
        The expected parameters; None: those of the header.
    allow_seeded : bool
        Whether to accept sums of seeded reports.

    Returns
    -------
    ColumnSums
        The sums.

    Raises
    ------
    InputError
        Not an existing regular file (:func:`bfrrce.io.values.check_input`).
    FormatError
        A file larger than ``MAX_SUMS_BYTES``, or damage (:func:`load_column_sums`).
    """
    path = check_input(path)
    size = path.stat().st_size
    if size > MAX_SUMS_BYTES:
        raise FormatError(f"{path}: {size:,} bytes, more than any column-sums file ({MAX_SUMS_BYTES:,})")
    return load_column_sums(path.read_bytes(), mechanism, allow_seeded)


def dump_reports(mech: BFRRCE, reports: np.ndarray, seeded: bool = False) -> bytes:
    """A report file (kind 2) whose header states the rows' identifier (:mod:`bfrrce.identity`)
    and ``seeded`` (the noise came from a seeded generator: say so, readers refuse it unless
    allowed).

    Parameters
    ----------
    mech : BFRRCE
        The mechanism of the reports.
    reports : numpy.ndarray
        Packed reports, uint8 (n, ceil(L/8)).
    seeded : bool
        Whether the noise came from a seeded generator.

    Returns
    -------
    bytes
        The file's content.
    """
    reports = mech.check_reports(reports)
    if not isinstance(seeded, bool):
        raise LDPTypeError(f"seeded must be a bool, got {seeded!r}")
    digest = BatchDigest(mech.L)
    digest.add(reports)
    return _dump(mech, REPORTS, len(reports), np.ascontiguousarray(reports).tobytes(),
                 batch=digest.identifier(), seeded=seeded)


def load_reports(data: bytes, mechanism: BFRRCE | None = None, allow_seeded: bool = False) -> tuple:
    """Read a report file held in memory: (mechanism, reports uint8 (n, ceil(L/8)), batch), the
    batch being the identifier of the rows (a header stating another is refused).

    Parameters
    ----------
    data : bytes
        The file's content.
    mechanism : BFRRCE or None
        The expected parameters; None: those of the header.
    allow_seeded : bool
        Whether to accept seeded reports.

    Returns
    -------
    (BFRRCE, numpy.ndarray, str)
        The mechanism, the reports and the batch identifier.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise LDPTypeError(f"expected bytes, got {type(data).__name__}")
    fh = io.BytesIO(data)
    mech, n, stated, seeded, crc = _read_report_header(fh, mechanism, "report file")
    check_seeded(seeded, allow_seeded, "report file")
    reports = np.empty((n, bits.nbytes(mech.L)), dtype=np.uint8)
    done = 0
    for chunk in _read_report_rows(fh, mech, n, crc, max(n, 1), "report file"):
        reports[done:done + len(chunk)] = chunk
        done += len(chunk)
    digest = BatchDigest(mech.L)
    digest.add(reports)
    try:
        check_repeats(mech, digest, "report file")
    except DuplicateReportsError as exc:
        raise FormatError(str(exc)) from None
    batch = digest.identifier()
    if stated is not None and stated != batch:
        raise FormatError(f"report file: the header's batch {stated} is not the identifier of the "
                          f"reports it holds ({batch}): the file was edited")
    return mech, reports, batch


def add_file(sums: ColumnSums, data: bytes, allow_seeded: bool = False) -> ColumnSums:
    """``sums`` plus the reports of a report file held in memory; refuses reports already
    counted (the same rows, in any file or in memory) and duplicated rows.

    Parameters
    ----------
    sums : ColumnSums
        The sums so far.
    data : bytes
        A report file's content (:func:`dump_reports`).
    allow_seeded : bool
        Whether to accept seeded reports.

    Returns
    -------
    ColumnSums
        The merged sums.
    """
    mech, reports, _ = load_reports(data, sums.mechanism, allow_seeded)
    seeded = _read_report_header(io.BytesIO(data), mech, "report file")[3]
    return sums.merge(mech.aggregate_batches([reports], seeded=seeded))


def dump_aggregate(aggregate: SupportCounts) -> bytes:
    """The file (kind 3) of the aggregate of a ``protocols`` mechanism.

    Parameters
    ----------
    aggregate : protocols.SupportCounts
        Counts of a registered mechanism (:mod:`protocols.core.registry`) whose constructor
        arguments are JSON numbers, strings, booleans or null.

    Returns
    -------
    bytes
    """
    if isinstance(aggregate, ColumnSums) or not isinstance(aggregate, SupportCounts):
        hint = " (column sums of BFRRCE: dump_column_sums)" if isinstance(aggregate, ColumnSums) else ""
        raise LDPTypeError(f"expected the SupportCounts of a protocols mechanism, got {type(aggregate).__name__}{hint}")
    mech = aggregate.mechanism
    counts = np.ascontiguousarray(aggregate.counts, dtype="<i8")
    return _container(SUPPORT_COUNTS, aggregate.n, counts.tobytes(),
                      {"class": type(mech).__name__, "params": mechanism_params(mech),
                       "shape": list(counts.shape)})


def load_aggregate(data: bytes) -> SupportCounts:
    """Read :func:`dump_aggregate`: the counts, with their mechanism rebuilt from the header.

    Parameters
    ----------
    data : bytes
        The file's content.

    Returns
    -------
    SupportCounts
        The counts and their mechanism.

    Raises
    ------
    FormatError
        Any damage (magic, version, kind, header, checksum, payload length), an unknown class or
        parameters the class refuses.
    IncompatibleError
        Counts whose shape does not fit the mechanism.
    """
    data = _checked(data)[:-4]
    hlen, _ = _check_start(data, SUPPORT_COUNTS)
    if len(data) < 23 + hlen:
        raise FormatError("truncated header")
    try:
        header = _json_header(data[15:15 + hlen], SUPPORT_COUNTS)
        mech = mechanism_from_params(header["class"], header["params"])
        shape = tuple(check_int(s, "shape", 0) for s in header["shape"])
    except (ValueError, KeyError, TypeError, AttributeError, ArithmeticError, LDPError) as exc:
        raise FormatError(f"bad aggregate header: {exc}") from None
    (n,) = struct.unpack_from("<Q", data, 15 + hlen)
    payload = data[23 + hlen:]
    if len(payload) != 8 * math.prod(shape):
        raise FormatError(f"payload has {len(payload)} bytes, expected {8 * math.prod(shape)}")
    expected = mech.empty_aggregate().counts.shape
    if shape != expected:
        raise IncompatibleError(f"counts of shape {shape} for {mech!r}, which needs {expected}")
    return SupportCounts(mech, np.frombuffer(payload, dtype="<i8").reshape(shape).astype(np.int64), n)
