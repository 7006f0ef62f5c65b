"""What a file is before it is read: a BFRRCE file of which kind, or values with which columns,
how many rows (for the advisor), and its SHA-256 (for the record of a result).

The CLI looks here first, so that a wrong turn (a report file given to ``estimate``, a table
without ``--column``, a directory) is named in one line before any loading, and so that
``estimate FILE`` can choose L, l and the perturbation for the rows' count.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

from protocols.errors import InputError

from .formats import COLUMN_SUMS, MAGIC, REPORTS, SUPPORT_COUNTS
from .values import _arrow, _first_line_names, _kind

KINDS = {COLUMN_SUMS: "column sums", REPORTS: "reports", SUPPORT_COUNTS: "oracle aggregate"}
_BLOCK = 1 << 22


def check_path(path) -> Path:
    """``path`` as a Path if it is a readable file; else one line saying what it is.

    Parameters
    ----------
    path : str or os.PathLike
        A file to read.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InputError
        A directory, a missing file, or a file that is not regular.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path} is a directory, not a file")
    if not path.exists():
        raise InputError(f"no such file: {path}")
    if not path.is_file():
        raise InputError(f"{path} is not a regular file")
    return path


def bfrrce_kind(path) -> int | None:
    """The kind byte of a BFRRCE file (1 column sums, 2 reports, 3 oracle aggregate) from its
    first 11 bytes, or None when the file does not start with the format's magic.

    Parameters
    ----------
    path : str or os.PathLike
        A file to read.

    Returns
    -------
    int or None
    """
    with open(check_path(path), "rb") as fh:
        start = fh.read(11)
    return start[10] if len(start) == 11 and start[:8] == MAGIC else None


def columns(path) -> list | None:
    """The column names of a CSV, TSV or Parquet file; None for a text file (one value a line).

    Parameters
    ----------
    path : str or os.PathLike
        A values file.

    Returns
    -------
    list of str or None
    """
    path = check_path(path)
    kind = _kind(path)
    if kind in (".csv", ".tsv"):
        return _first_line_names(path, "\t" if kind == ".tsv" else ",")
    if kind == ".parquet":
        arrow = _arrow()
        if arrow is None:
            raise InputError("reading Parquet needs pyarrow: pip install pyarrow")
        return list(arrow[3].ParquetFile(path).schema_arrow.names)
    return None


@dataclass(frozen=True)
class Survey:
    """One pass over a file's bytes.

    Attributes
    ----------
    size : int
        Bytes on disk.
    sha256 : str or None
        Hex digest of the bytes on disk (None when not asked for).
    rows : int or None
        Data rows: the line ends of a text, CSV or TSV file (less the header line), counted in
        the decompressed bytes of a ``.gz`` file, or a Parquet file's row count; an upper bound
        on the values read (empty cells are skipped; a quoted line break counts as a line).
        None when not asked for.
    """

    size: int
    sha256: str | None
    rows: int | None


class _Hashing:
    """A binary file object that feeds every byte read into a hash."""

    def __init__(self, fh, digest):
        self.fh, self.digest = fh, digest

    def read(self, size=-1):
        data = self.fh.read(size)
        if self.digest is not None:
            self.digest.update(data)
        return data


def survey(path, rows: bool = True, digest: bool = True) -> Survey:
    """Size, SHA-256 and row count of a values file in one streamed pass (memory O(1)).

    Parameters
    ----------
    path : str or Path
        The file.
    rows, digest : bool
        Count the rows, compute the digest.

    Returns
    -------
    Survey
    """
    path = check_path(path)
    size = path.stat().st_size
    sha = hashlib.sha256() if digest else None
    kind = _kind(path)
    count = None
    if rows and kind == ".parquet":
        arrow = _arrow()
        if arrow is None:
            raise InputError("reading Parquet needs pyarrow: pip install pyarrow")
        count = arrow[3].ParquetFile(path).metadata.num_rows
    if (rows and count is None) or digest:
        with open(path, "rb") as raw:
            source = _Hashing(raw, sha)
            lines, last = 0, b"\n"
            counting = rows and count is None
            stream = gzip.GzipFile(fileobj=source) if counting and path.suffix == ".gz" else source
            try:
                while block := stream.read(_BLOCK):
                    if counting:
                        lines += block.count(b"\n")
                        last = block[-1:]
            except (EOFError, OSError) as exc:
                raise InputError(f"{path.name} cannot be read: {type(exc).__name__}: {exc}") from None
            if counting:
                lines += last != b"\n"                         # a last line without its line end
                count = max(lines - (kind in (".csv", ".tsv")), 0)
    return Survey(size, None if sha is None else sha.hexdigest(), count)
