"""Streaming aggregation of report files in bounded memory.

Each file is read in chunks of ``chunk_rows`` reports (memory O(chunk·L), whatever the file
size) and becomes a :class:`ColumnSums` only after its checksum passed, so a corrupted file
adds nothing. Files are this package's report format (:mod:`bfrrce.wire`) or Parquet files with
a binary column of packed reports (``tabular`` extra).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from protocols._validate import check_int
from protocols.errors import LDPValueError

from .aggregate import ColumnSums
from .wire import FormatError, iter_report_chunks


def aggregate_file(path, mechanism=None, chunk_rows=1 << 16, column=None):
    """Column sums of one report file (package format, or Parquet with ``column``)."""
    if Path(path).suffix == ".parquet":
        return aggregate_parquet(path, mechanism, column or "report", chunk_rows)
    chunks = iter_report_chunks(path, mechanism, chunk_rows)
    first = next(chunks, None)                 # reads and checks the header (and an empty file's CRC)
    if first is None:
        raise LDPValueError(f"{path}: no reports")
    mech, batch, _ = first
    total = mech.aggregate_batches(chunk for _, _, chunk in itertools.chain([first], chunks))
    return ColumnSums(mech, total.counts, total.n, frozenset([batch]))


def aggregate_parquet(path, mechanism, column="report", chunk_rows=1 << 16):
    """Column sums of a Parquet file whose ``column`` holds packed reports (bytes)."""
    if mechanism is None:
        raise LDPValueError("Parquet report files carry no parameters: pass the mechanism")
    import pyarrow.parquet as pq
    chunk_rows = check_int(chunk_rows, "chunk_rows", 1)
    width = (mechanism.L + 7) // 8

    def chunks():
        for batch in pq.ParquetFile(path).iter_batches(batch_size=chunk_rows, columns=[column]):
            values = batch.column(0).to_pylist()
            if any(v is None or len(v) != width for v in values):
                raise FormatError(f"{path}: column {column!r} must hold {width}-byte reports")
            yield np.frombuffer(b"".join(values), dtype=np.uint8).reshape(len(values), width)

    return mechanism.aggregate_batches(chunks())


def aggregate_files(paths, mechanism=None, chunk_rows=1 << 16, progress=False):
    """Column sums of many report files, merged (a batch read twice is refused)."""
    paths = list(paths)
    if not paths:
        raise LDPValueError("no report files")
    bar = None
    if progress:
        try:
            from tqdm import tqdm
            bar = tqdm(total=len(paths), unit="file", delay=2)
        except ImportError:
            pass
    total = None
    for path in paths:
        part = aggregate_file(path, mechanism, chunk_rows)
        mechanism = mechanism or part.mechanism
        total = part if total is None else total.merge(part)
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    return total
