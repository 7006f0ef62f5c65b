"""Aggregation of many report files on a Dask cluster (optional extra ``dask``).

Every file becomes a :class:`ColumnSums` on a worker (streamed, :func:`bfrrce.io.stream.aggregate_file`);
the parts are merged as a tree of ``split_every``-way merges. Merging is exact integer addition,
so the result equals single-process aggregation exactly, whatever the tree or the order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import reduce
from typing import TYPE_CHECKING, Any

from protocols.errors import LDPValueError

from .stream import aggregate_file

if TYPE_CHECKING:
    from ..mechanism import BFRRCE
    from ..sums import ColumnSums


def _merge_all(*parts):
    return reduce(lambda a, b: a.merge(b), parts)


def aggregate_files_dask(paths: Iterable[str | os.PathLike], mechanism: BFRRCE | None = None,
                         client: Any = None, split_every: int = 8,
                         chunk_rows: int = 1 << 16) -> ColumnSums:
    """Column sums of report files computed on Dask, merged as a tree.

    Parameters
    ----------
    paths : iterable of str or path
        Report files (or Parquet files), one task each.
    mechanism : BFRRCE, optional
        Expected parameters (required for Parquet, which carries none).
    client : dask.distributed.Client, optional
        The cluster; None: Dask's default scheduler.
    split_every : int
        Parts merged per task of the tree, >= 2.
    chunk_rows : int
        Reports read at a time by each worker.

    Returns
    -------
    ColumnSums
        Equal to single-process aggregation (merging is exact integer addition).

    Raises
    ------
    ImportError
        Dask is not installed.
    LDPValueError
        No files, or ``split_every`` < 2.
    IncompatibleError, FormatError
        As :func:`bfrrce.io.stream.aggregate_file`.
    """
    try:
        from dask import delayed
    except ImportError:
        raise ImportError("distributed aggregation needs dask: pip install 'bfrrce[dask]'") from None
    paths = [str(p) for p in paths]
    if not paths:
        raise LDPValueError("no report files")
    if split_every < 2:
        raise LDPValueError(f"split_every must be >= 2, got {split_every}")
    level = [delayed(aggregate_file)(p, mechanism, chunk_rows) for p in paths]
    while len(level) > 1:
        level = [delayed(_merge_all)(*level[i:i + split_every]) for i in range(0, len(level), split_every)]
    result = level[0]
    if client is not None:
        return client.compute(result).result()
    return result.compute()
