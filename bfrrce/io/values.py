"""Reading values from a user's file: CSV, TSV, Parquet or newline-delimited text, in chunks.

The format follows the suffix (``.csv``, ``.tsv``, ``.parquet``, anything else is text, one
value per line); ``.gz`` is decompressed on the fly. Tables need a ``column``; empty cells are
skipped. CSV, TSV and Parquet are read by pyarrow (streamed, record batch by record batch); the
standard library reads text files, and CSV/TSV when pyarrow cannot be imported (``csv.reader``).

Values read from files are text keys (docs/formats.md, "Values read from files"): a CSV cell,
a line of a text file and a Parquet string are their UTF-8 bytes, a Parquet integer is its
decimal text (``42`` is the key ``"42"``, the same key as the CSV cell ``42`` and the
candidate line ``42``), a Parquet binary value is its bytes. Other Parquet types are refused.

:func:`iter_key_chunks` gives each chunk dictionary-encoded (:class:`KeyChunk`: the distinct
keys once, as canonical bytes, and each row's index among them), so a key is hashed once per
chunk; :func:`read_values` gives the values as one list of str (or bytes).
"""

from __future__ import annotations

import csv
import gzip
import itertools
import os
import stat
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from protocols.errors import InputError
from protocols.core.hashing import dictionary_encode

from ..columns import dictionary_keys

DEFAULT_MAX_VALUE = 1 << 24  # the longest value, line, cell or header read (16 MiB; CLI --max-value)
MAX_VALUE_BYTES = DEFAULT_MAX_VALUE
CHUNK_ROWS = 1 << 17        # rows per chunk (Parquet record batches, stdlib readers: ~12 MB of str)
_CSV_BLOCK = 1 << 22        # bytes of CSV lines parsed at a time: 2, 4 and 8 MiB take the same CPU
                            # time; 4 MiB keeps estimate FILE's peak RSS near 225 MB (8 MiB: 270)


def _arrow():
    """pyarrow's csv, parquet and compute modules, or None when pyarrow cannot be imported."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq
    except ImportError:
        return None
    return pa, pc, pcsv, pq


@dataclass(frozen=True)
class KeyChunk:
    """One chunk of rows, dictionary-encoded.

    Attributes
    ----------
    data : numpy.ndarray
        uint8: the canonical bytes of the chunk's distinct keys, concatenated.
    offsets : numpy.ndarray
        int64 (k + 1,): key i is ``data[offsets[i]:offsets[i + 1]]``.
    codes : numpy.ndarray
        intp (rows,): the index of each row's key.
    """

    data: np.ndarray
    offsets: np.ndarray
    codes: np.ndarray

    @classmethod
    def from_strings(cls, values: list) -> "KeyChunk":
        """Dictionary-encode a list of str (or bytes) values."""
        data, offsets, codes = dictionary_encode(values)
        return cls(data, offsets, codes)

    def __len__(self) -> int:
        return len(self.codes)


def _kind(path: Path) -> str:
    return path.with_suffix("").suffix if path.suffix == ".gz" else path.suffix


def check_input(path) -> Path:
    """``path`` as a Path, refused (:class:`InputError`) unless it names an existing regular
    file: a FIFO would block and a device such as /dev/zero never ends.

    Parameters
    ----------
    path : str or os.PathLike
        The input file.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        Not a str or path, absent, unreadable, or not a regular file.
    """
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise InputError(f"a file name must be a str or a path, got {type(path).__name__}: {path!r:.80}")
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except OSError as exc:
        raise InputError(f"{path} cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{path} is not a regular file (a FIFO, a device or a folder): "
                         "copy the data to a file first")
    return path


_check_file = check_input


def _bounded_lines(fh):
    """The lines of a text file, each refused beyond ``MAX_VALUE_BYTES`` characters before it
    is held whole (a long line of a decompressed file included)."""
    limit = MAX_VALUE_BYTES
    while line := fh.readline(limit + 1):
        if len(line) > limit and not line.endswith(("\n", "\r")):
            raise InputError(f"{getattr(fh, 'name', 'input')}: a line longer than {limit:,} characters "
                             "(the value size limit, --max-value)")
        yield line


def _open_text(path):
    opener = gzip.open if path.suffix == ".gz" else open
    return opener(path, "rt", newline="", encoding="utf-8-sig")     # a leading BOM is dropped


def _batched(values, size):
    """Lists of ``size`` values (the last one shorter) from an iterator."""
    while chunk := list(itertools.islice(values, size)):
        yield chunk


# -- raw chunks: a pyarrow string/binary array or a list of str, empty cells removed -----------
def _text_chunks(path, chunk_rows):
    with _open_text(path) as fh:
        yield from _batched((line.rstrip("\r\n") for line in _bounded_lines(fh) if line.strip()), chunk_rows)


def _stdlib_csv_chunks(path, column, chunk_rows, delimiter):
    csv.field_size_limit(MAX_VALUE_BYTES)
    with _open_text(path) as fh:
        reader = csv.reader(_bounded_lines(fh), delimiter=delimiter)
        header = next(reader)
        j = header.index(column)
        yield from _batched((row[j] for row in _full_rows(reader, len(header), path) if row[j]), chunk_rows)


def _full_rows(reader, width, path):
    """The non-blank rows of a CSV reader, refused (as pyarrow does) unless each has the
    header's number of fields (RFC 4180: every record has the same number of fields)."""
    for row in reader:
        if row:
            if len(row) != width:
                raise InputError(f"{path.name} cannot be read: row {reader.line_num} has {len(row)} "
                                 f"fields, the header {width} (RFC 4180)")
            yield row


def _header_end(fh):
    """Read a CSV file's first record (RFC 4180: a quoted field may hold line breaks; the record
    ends at CR, LF or CRLF outside quotes) from a binary file; returns the bytes after it that
    were read."""
    data, quoted, start = b"", False, 0
    while True:
        block = fh.read(1 << 16)
        data += block
        for i in range(start, len(data)):
            c = data[i]
            if c == 34:
                quoted = not quoted
            elif c in (10, 13) and not quoted:
                if c == 13 and i + 1 == len(data) and block:
                    break                          # CR at a block end: is it CRLF?
                return data[i + 2:] if data[i:i + 2] == b"\r\n" else data[i + 1:]
        else:
            if not block:
                return b""
            start = len(data)
            if len(data) > MAX_VALUE_BYTES:
                raise InputError(f"a CSV header longer than {MAX_VALUE_BYTES:,} bytes (--max-value)")
            continue
        start = i


def _too_long():
    return InputError(f"a CSV row longer than {MAX_VALUE_BYTES:,} bytes (an unclosed quote, or a value "
                      "beyond the size limit, --max-value)")


def _balanced_cut(data):
    """(index after the last CR or LF of ``data`` with an even number of quotes before it, the
    quotes before it); (0, 0) when there is none. One vectorised pass, linear in len(data)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    if data.find(b'"') < 0:                              # memchr: the common case of no quotes
        return max(data.rfind(b"\n"), data.rfind(b"\r")) + 1, 0
    parity = np.cumsum(raw == 34, dtype=np.int64)
    ends = np.flatnonzero(((raw == 10) | (raw == 13)) & (parity % 2 == 0))
    if not ends.size:
        return 0, 0
    return int(ends[-1]) + 1, int(parity[ends[-1]])


def _line_blocks(fh, size, rest=b""):
    """Blocks of whole CSV rows of about ``size`` bytes from a binary file (a longer row is one
    block of its own), each with the number of quote characters in it. A block ends at a line
    end (CR or LF) outside quotes: before it, the number of quotes is even (RFC 4180 doubles a
    quote inside a quoted value). A row longer than ``MAX_VALUE_BYTES`` is refused, so an
    unclosed quote costs at most a few passes over that many bytes."""
    while True:
        block = fh.read(size)
        if len(rest) > MAX_VALUE_BYTES:
            raise _too_long()
        if not block:
            if rest:
                yield rest, rest.count(b'"')
            return
        data = rest + block if rest else block
        cut, quotes = _balanced_cut(data)
        if cut:
            yield memoryview(data)[:cut], quotes
        rest = data[cut:]


def _parse_block(arrow, block, quotes, names, delimiter, convert):
    """One block of CSV rows as the column's pyarrow array."""
    pa, _, pcsv, _ = arrow
    buffer = pa.py_buffer(block)
    # without quotes no value holds a line break: pyarrow may then split at any line end
    parse = pcsv.ParseOptions(delimiter=delimiter, newlines_in_values=quotes > 0)
    try:
        table = pcsv.read_csv(buffer, pcsv.ReadOptions(column_names=names), parse, convert)
    except pa.ArrowInvalid as exc:
        if "straddl" not in str(exc):
            raise
        table = pcsv.read_csv(buffer, pcsv.ReadOptions(column_names=names, block_size=len(block) + 1),
                              parse, convert)
    column = table.column(0).combine_chunks()
    if len(column) and (pc_max := arrow[1].max(arrow[1].binary_length(column)).as_py() or 0) > MAX_VALUE_BYTES:
        raise InputError(f"a CSV value of {pc_max:,} bytes, longer than the size limit {MAX_VALUE_BYTES:,} "
                         "(--max-value)")
    return column


def _arrow_csv_chunks(arrow, path, column, delimiter, names):
    """The column, block of rows by block: pyarrow's own streaming reader reads ahead of the
    consumer without bound (its peak memory grows with the file), so the blocks are cut here,
    and the next block is parsed in a second thread while the consumer works on this one."""
    pa, _, pcsv, _ = arrow
    convert = pcsv.ConvertOptions(include_columns=[column], column_types={column: pa.string()})
    with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as fh, \
            ThreadPoolExecutor(1) as parser:
        rest = _header_end(fh)             # the header, parsed (and bounded) by _first_line_names
        pending = None
        for block, quotes in _line_blocks(fh, _CSV_BLOCK, rest):
            parsed = parser.submit(_parse_block, arrow, block, quotes, names, delimiter, convert)
            if pending is not None:
                yield pending.result()
            pending = parsed
        if pending is not None:
            yield pending.result()


def _first_line_names(path, delimiter):
    with _open_text(path) as fh:
        return next(csv.reader(_bounded_lines(fh), delimiter=delimiter), [])


def _parquet_chunks(arrow, path, column, chunk_rows):
    pa, pc, _, pq = arrow
    parquet = pq.ParquetFile(path)
    names = parquet.schema_arrow.names
    if names.count(column) != 1:
        raise InputError(f"column {column!r} {'not in' if column not in names else 'appears twice in'} "
                         f"{path.name} (columns: {names})")
    kind = parquet.schema_arrow.field(column).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind) or pa.types.is_integer(kind)):
        raise InputError(f"column {column!r} of {path.name} holds {kind}: values must be text, "
                         "bytes or integers (docs/formats.md)")
    for batch in parquet.iter_batches(batch_size=chunk_rows, columns=[column]):
        values = batch.column(0)
        if pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)
        yield pc.cast(values, pa.string()) if pa.types.is_integer(kind) else values


def _raw_chunks(path, column, chunk_rows):
    kind = _kind(path)
    arrow = _arrow()
    if kind == ".parquet":
        if arrow is None:
            raise InputError("reading Parquet needs pyarrow: pip install pyarrow")
        yield from _parquet_chunks(arrow, path, column, chunk_rows)
    elif kind in (".csv", ".tsv"):
        delimiter = "\t" if kind == ".tsv" else ","
        names = _first_line_names(path, delimiter)
        if names.count(column) != 1:
            raise InputError(f"column {column!r} {'not in' if column not in names else 'appears twice in'} "
                             f"{path.name} (columns: {names})")
        if arrow is None:
            yield from _stdlib_csv_chunks(path, column, chunk_rows, delimiter)
        else:
            yield from _arrow_csv_chunks(arrow, path, column, delimiter, names)
    else:
        yield from _text_chunks(path, chunk_rows)


def _guarded(path, chunks):
    """Re-raise a damaged file's errors (truncated gzip, bad CSV, bad Parquet) as InputError."""
    arrow = _arrow()
    errors = (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError, csv.Error)
    if arrow is not None:
        errors += (arrow[0].ArrowException,)
    try:
        yield from chunks
    except InputError:
        raise
    except errors as exc:
        raise InputError(f"{path.name} cannot be read: {type(exc).__name__}: {exc}") from None


def _dictionary_chunk(arrow, values) -> KeyChunk:
    """A pyarrow string or binary array as a :class:`KeyChunk` (nulls and empty cells dropped)."""
    keys = dictionary_keys(values)
    codes, empty = keys.codes, np.flatnonzero(np.diff(keys.offsets) == 0)
    keep = codes >= 0
    if empty.size:
        keep &= codes != empty[0]
    if not keep.all():
        codes = codes[keep]
    return KeyChunk(keys.data, keys.offsets, codes)


def iter_key_chunks(path, column: str | None = None,
                    chunk_rows: int = CHUNK_ROWS) -> Iterator[KeyChunk]:
    """The non-empty values of ``column`` (or the lines of a text file), chunk by chunk.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.tsv``, ``.parquet`` or text, optionally ``.gz``.
    column : str, optional
        The column of a table (required for tables).
    chunk_rows : int
        Rows per chunk for Parquet and the standard-library readers (pyarrow's CSV reader
        cuts blocks of 4 MiB).

    Yields
    ------
    KeyChunk
        The chunk's distinct keys (canonical bytes) and each row's index among them; empty
        chunks are skipped. Memory: one chunk, whatever the file's size.

    Raises
    ------
    InputError
        Missing file, no such column, no values, a value type other than text/bytes/integers, pyarrow
        missing for Parquet, or a damaged file (truncated gzip, malformed CSV or Parquet).
    """
    path = _check_file(path)
    arrow, rows = _arrow(), 0
    for raw in _guarded(path, _raw_chunks(path, column, chunk_rows)):
        chunk = KeyChunk.from_strings(raw) if isinstance(raw, list) else _dictionary_chunk(arrow, raw)
        if len(chunk):
            rows += len(chunk)
            yield chunk
    if not rows:
        raise InputError(f"{path.name} holds no values")


def read_values(path, column: str | None = None) -> list:
    """The non-empty values of ``column``, or of every line of a text file, as one list.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.tsv``, ``.parquet`` or text, optionally ``.gz``.
    column : str, optional
        The column of a table (required for tables).

    Returns
    -------
    list
        str values (bytes for a Parquet binary column; integers as decimal text), empty cells
        skipped.

    Raises
    ------
    InputError
        Every problem with the file: missing, no such column, no values, pyarrow missing for
        Parquet, or damaged.
    """
    path = _check_file(path)
    values = []
    for raw in _guarded(path, _raw_chunks(path, column, CHUNK_ROWS)):
        values.extend(v for v in (raw if isinstance(raw, list) else raw.to_pylist()) if v)
    if not values:
        raise InputError(f"{path.name} holds no values")
    return values
