"""Reading values from a user's file: CSV, TSV, Parquet or newline-delimited text.

The format follows the suffix (``.csv``, ``.tsv``, ``.parquet``, anything else is text, one
value per line); ``.gz`` is decompressed on the fly. Tables need a ``column``; empty cells are
skipped. Parquet needs the ``tabular`` extra (pyarrow).
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

from protocols.errors import InputError


def _open_text(path):
    return gzip.open(path, "rt", newline="") if path.suffix == ".gz" else open(path, newline="")


def read_values(path, column: str | None = None) -> list:
    """The non-empty values of ``column``, or of every line of a text file.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.tsv``, ``.parquet`` (``tabular`` extra) or text, optionally ``.gz``.
    column : str, optional
        The column of a table (required for tables).

    Returns
    -------
    list
        The values (str, or Parquet's own types), empty cells skipped.

    Raises
    ------
    InputError
        Every problem with the file: missing, no such column, no values, or pyarrow missing.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no such file: {path}")
    kind = path.with_suffix("").suffix if path.suffix == ".gz" else path.suffix
    if kind == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError("reading Parquet needs pyarrow: pip install 'bfrrce[tabular]'") from None
        table = pq.read_table(path)
        if column not in table.column_names:
            raise InputError(f"column {column!r} not in {path.name} (columns: {table.column_names})")
        values = [v for v in table.column(column).to_pylist() if v not in (None, "")]
    elif kind in (".csv", ".tsv"):
        with _open_text(path) as fh:
            reader = csv.DictReader(fh, delimiter="\t" if kind == ".tsv" else ",")
            if column is None or column not in (reader.fieldnames or []):
                raise InputError(f"column {column!r} not in {path.name} (columns: {reader.fieldnames})")
            values = [row[column] for row in reader if row[column]]
    else:
        with _open_text(path) as fh:
            values = [line.rstrip("\r\n") for line in fh if line.strip()]
    if not values:
        raise InputError(f"{path.name} holds no values")
    return values
