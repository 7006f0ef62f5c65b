"""Aggregation of many report files on a Dask cluster (optional extra ``dask``).

Every file becomes a :class:`ColumnSums` on a worker (streamed, :func:`bfrrce.io.stream.aggregate_file`);
the parts are merged as a tree of ``split_every``-way merges. Merging is exact integer addition,
so the result equals single-process aggregation exactly, whatever the tree or the order.
"""

from __future__ import annotations

from functools import reduce

from protocols.errors import LDPValueError

from .stream import aggregate_file


def _merge_all(*parts):
    return reduce(lambda a, b: a.merge(b), parts)


def aggregate_files_dask(paths, mechanism=None, client=None, split_every=8, chunk_rows=1 << 16):
    """Column sums of ``paths`` computed on Dask (``client``: a distributed Client, or the
    default scheduler when None)."""
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
