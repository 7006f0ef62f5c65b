"""Streaming aggregation of report files in bounded memory.

Each file is read in chunks of ``chunk_rows`` reports (memory O(chunk·L), whatever the file
size) by the one report reader (:func:`bfrrce.io.formats.iter_report_chunks`) and becomes a
:class:`~bfrrce.sums.ColumnSums` labelled with the file's batch only after its checksum passed,
so a corrupted file adds nothing and no file is counted twice. Files are this package's report
format or Parquet files with a binary column of packed reports (``tabular`` extra).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable

from protocols.errors import LDPValueError

from ..mechanism import BFRRCE
from ..sums import ColumnSums
from .formats import iter_report_chunks


def aggregate_file(path, mechanism: BFRRCE | None = None, chunk_rows: int = 1 << 16,
                   column: str = "report") -> ColumnSums:
    """Column sums of one report file, labelled with its batch identifier.

    Parameters
    ----------
    path : str or Path
        A report file (:func:`bfrrce.io.formats.dump_reports`) or a ``.parquet`` file.
    mechanism : BFRRCE, optional
        Expected parameters (required for Parquet, which carries none).
    chunk_rows : int
        Reports read at a time.
    column : str
        Parquet column of packed reports.

    Returns
    -------
    ColumnSums
        With ``batches`` = {the file's batch} (docs/formats.md, batch identity).

    Raises
    ------
    FormatError, IncompatibleError, LDPValueError
        A damaged file, other parameters, or a file without reports.
    """
    chunks = iter_report_chunks(path, mechanism, chunk_rows, column)
    first = next(chunks, None)                 # reads and checks the header (and an empty file's CRC)
    if first is None:
        raise LDPValueError(f"{path}: no reports")
    mech, batch, _ = first
    total = mech.aggregate_batches(chunk for _, _, chunk in itertools.chain([first], chunks))
    return total.as_batch(batch)


def progress_bar(total: int | None, unit: str, **options):
    """A tqdm progress bar on stderr (shown after 2 s), or None when tqdm is not installed or
    stderr is not a terminal (a log file gets no bar). ``options`` go to ``tqdm``."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, delay=2, leave=False, **options)


def aggregate_files(paths: Iterable, mechanism: BFRRCE | None = None, chunk_rows: int = 1 << 16,
                    progress: bool = False) -> ColumnSums:
    """Column sums of many report files, merged (a batch read twice is refused).

    Raises
    ------
    LDPValueError
        No paths.
    IncompatibleError
        Files of different parameters, or one batch twice.
    """
    paths = list(paths)
    if not paths:
        raise LDPValueError("no report files")
    bar = progress_bar(len(paths), "file") if progress else None
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
