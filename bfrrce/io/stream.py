"""Streaming aggregation of report files in bounded memory.

Each file is read in chunks of ``chunk_rows`` reports (memory O(chunk·L), whatever the file
size) by the one report reader (:func:`bfrrce.io.formats.iter_report_chunks`) and becomes a
:class:`~bfrrce.sums.ColumnSums` labelled with the identifier of its rows only after its
checksum passed, so a corrupted file adds nothing and no reports are counted twice. Files are this package's report
format or Parquet files with a binary column of packed reports (``tabular`` extra).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import numpy as np

from protocols.errors import LDPValueError

from ..mechanism import BFRRCE
from ..poisoning import concentrated_fakes, plausible_weight, report_weights, weight_bounds, weight_total_test
from ..sums import ColumnSums
from .formats import read_report_sums


class Screen:
    """The weight screen of :func:`bfrrce.poisoning.plausible_weight` applied chunk by chunk
    (bounded memory), counting what it removes: ``removed`` of ``seen`` reports, whose weight
    lay outside ``bounds`` (an honest report is removed with probability at most ``alpha``); and
    the weight-excess alarm on the reports it kept (:func:`bfrrce.poisoning.weight_total_test`
    of their total weight against the honest law truncated to ``bounds``; l = 1 only); and, with
    l = 1, the co-occurrence screen (:func:`bfrrce.poisoning.concentrated_fakes`) on each chunk
    after the weight screen, so memory stays that of one chunk: fakes concentrated on the same
    columns within a chunk are removed, fakes spread thinly over many chunks are not seen by it
    (the weight alarm, over all chunks, still adds them up).

    Parameters
    ----------
    alpha : float
        The probability that an honest report is removed, at most.

    Attributes
    ----------
    alpha : float
        As given.
    seen : int
        The reports screened so far.
    removed : int
        The reports removed so far.
    bounds : (int, int) or None
        The weight bounds (:func:`bfrrce.poisoning.weight_bounds`); None before the first chunk.
    kept_weight : float
        The total weight of the reports kept.
    concentrated : int
        Of ``removed``, the reports the co-occurrence screen removed.
    flagged_chunks : int
        The chunks whose co-occurrence test fired (each honest chunk fires with probability at
        most ``alpha``), of ``chunks``.
    """

    def __init__(self, alpha: float = 1e-3):
        self.alpha, self.seen, self.removed, self.bounds = alpha, 0, 0, None
        self.kept_weight, self._mech = 0.0, None
        self.concentrated, self.flagged_chunks, self.chunks = 0, 0, 0

    def __call__(self, mech, reports):
        weights = report_weights(reports)
        keep = plausible_weight(mech, reports, self.alpha, weights=weights)
        self.bounds, self._mech = weight_bounds(mech, self.alpha), mech
        if mech.l == 1 and int(keep.sum()) >= 2:
            inner, test = concentrated_fakes(mech, reports[keep], alpha=self.alpha, report_alpha=self.alpha)
            self.chunks += 1
            self.flagged_chunks += int(test.flagged)
            self.concentrated += int((~inner).sum())
            keep[np.flatnonzero(keep)[~inner]] = False
        self.seen += len(reports)
        self.removed += int((~keep).sum())
        self.kept_weight += float(weights[keep].sum(dtype=np.float64))
        return keep

    @property
    def alarm(self) -> tuple[float, bool] | None:
        """(z, flagged) of the weight-excess test on the kept reports; None before any, or l > 1."""
        kept = self.seen - self.removed
        if self._mech is None or self._mech.l != 1 or kept < 1:
            return None
        return weight_total_test(self._mech, self.kept_weight, kept, self.alpha, self.bounds)

    def __str__(self):
        lo, hi = self.bounds or (0, 0)
        line = (f"screen: removed {self.removed - self.concentrated:,} of {self.seen:,} reports whose weight lay "
                f"outside [{lo}, {hi}] (an honest report is removed with probability <= {self.alpha:g})")
        if self.chunks:
            line += (f"\nco-occurrence: the test fired in {self.flagged_chunks:,} of {self.chunks:,} chunk(s); "
                     f"removed {self.concentrated:,} reports with too many ones on the columns that co-occur")
        alarm = self.alarm
        if alarm is not None:
            line += (f"\nweight alarm: the kept reports' total weight is {alarm[0]:+.1f} sd from the honest law "
                     + ("— ALARM: fakes that add or remove ones in bulk" if alarm[1] else f"(no alarm at {self.alpha:g})"))
        return line


def aggregate_file(path, mechanism: BFRRCE | None = None, chunk_rows: int = 1 << 16,
                   column: str = "report", allow_seeded: bool = False, screen: Screen | None = None) -> ColumnSums:
    """Column sums of one report file, labelled with the identifier of its rows.

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
    allow_seeded : bool
        Accept a file of seeded noise (refused by default).
    screen : Screen, optional
        Count only the reports it keeps (it records what it removed).

    Returns
    -------
    ColumnSums
        With ``batches`` = {the identifier of the file's rows} (docs/formats.md, batch identity).

    Raises
    ------
    FormatError, IncompatibleError, LDPValueError
        A damaged or edited file, other parameters, duplicated reports, a seeded file
        (:class:`bfrrce.io.formats.SeededError`), or a file without reports.
    """
    total = read_report_sums(path, mechanism, chunk_rows, column, allow_seeded, screen)
    if not total.n:
        raise LDPValueError(f"{path}: no reports")
    return total


def progress_bar(total: int | None, unit: str, **options):
    """A tqdm progress bar on stderr (shown after 2 s), or None when tqdm is not installed or
    stderr is not a terminal (a log file gets no bar). ``options`` go to ``tqdm``.

    Parameters
    ----------
    total : int or None
        The number of steps, if known.
    unit : str
        The name of one step.
    **options
        Further arguments of ``tqdm``.

    Returns
    -------
    tqdm.tqdm or None
        The bar, or None.
    """
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, delay=2, leave=False, **options)


def aggregate_files(paths: Iterable, mechanism: BFRRCE | None = None, chunk_rows: int = 1 << 16,
                    progress: bool = False, allow_seeded: bool = False, screen: Screen | None = None) -> ColumnSums:
    """Column sums of many report files, merged (a batch read twice is refused).

    Parameters
    ----------
    paths : iterable of path
        The report files.
    mechanism : BFRRCE or None
        The expected parameters; None: those of the first file.
    chunk_rows : int
        Rows read at a time.
    progress : bool
        Whether to show a progress bar (:func:`progress_bar`).
    allow_seeded : bool
        Whether to accept seeded reports.
    screen : Screen or None
        The weight screen applied to every file; None counts every report.

    Returns
    -------
    ColumnSums
        The merged sums.

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
        part = aggregate_file(path, mechanism, chunk_rows, allow_seeded=allow_seeded, screen=screen)
        mechanism = mechanism or part.mechanism
        total = part if total is None else total.merge(part)
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    return total
