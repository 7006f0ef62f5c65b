import numpy as np
import pytest

from bfrrce import BFRRCE
from bfrrce.io.stream import aggregate_file, aggregate_files
from bfrrce.io.formats import dump_reports
from protocols import FormatError, IncompatibleError

MECH = BFRRCE(epsilon=2.0, L=100, l=2)


@pytest.fixture
def report_files(tmp_path):
    paths, reports = [], []
    for i in range(6):
        r = MECH.privatize(np.arange(i * 1000, i * 1000 + 700 + 50 * i), rng=i)
        path = tmp_path / f"batch{i}.bfr"
        path.write_bytes(dump_reports(MECH, r))
        paths.append(path)
        reports.append(r)
    return paths, MECH.aggregate(np.concatenate(reports))


def test_streamed_equals_in_memory(report_files):
    paths, whole = report_files
    agg = aggregate_files(paths, chunk_rows=97)
    assert agg.n == whole.n and np.array_equal(agg.counts, whole.counts)
    assert len(agg.batches) == 6
    with pytest.raises(IncompatibleError):
        aggregate_files(paths + paths[:1])


def test_corrupted_or_truncated_files_add_nothing(report_files, tmp_path):
    paths, _ = report_files
    data = bytearray(paths[0].read_bytes())
    data[-20] ^= 1                                   # a report bit: only the checksum sees it
    bad = tmp_path / "bad.bfr"
    bad.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="checksum"):
        aggregate_file(bad)
    data[-20] ^= 1
    data[40] ^= 0x20                                 # the header: refused before any report
    bad.write_bytes(bytes(data))
    with pytest.raises(FormatError):
        aggregate_file(bad)
    bad.write_bytes(paths[0].read_bytes()[:-10])
    with pytest.raises(FormatError):
        aggregate_file(bad)
    with pytest.raises(IncompatibleError):
        aggregate_file(paths[0], BFRRCE(epsilon=1.0, L=100, l=2))


def test_parquet_reports(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    reports = MECH.privatize(np.arange(500), rng=0)
    pq.write_table(pa.table({"report": [r.tobytes() for r in reports]}), tmp_path / "r.parquet")
    agg = aggregate_file(tmp_path / "r.parquet", MECH, chunk_rows=64)
    assert agg.n == len(reports) and np.array_equal(agg.counts, MECH.aggregate(reports).counts)
    assert len(agg.batches) == 1                     # the file's content hash
    copy = tmp_path / "copy.parquet"
    copy.write_bytes((tmp_path / "r.parquet").read_bytes())
    with pytest.raises(IncompatibleError, match="already counted"):
        aggregate_files([tmp_path / "r.parquet", copy], MECH)


def test_dask_local_cluster_equals_single_process(report_files):
    distributed = pytest.importorskip("dask.distributed")
    from bfrrce.io.distributed import aggregate_files_dask
    paths, whole = report_files
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        agg = aggregate_files_dask(paths, client=client, split_every=2)
    assert agg.n == whole.n and np.array_equal(agg.counts, whole.counts)
    assert agg == aggregate_files(paths)


def test_streamed_bit_sliced_chunks_reuse_one_buffer(tmp_path):
    """Chunks of 3 slabs + 5 rows: a slab waits in the counter across chunks, whose buffer the
    reader overwrites; the sums must still equal the in-memory ones."""
    mech = BFRRCE(epsilon=2.0, L=64, l=1)            # 8-byte reports: 8192 per 64 KiB slab
    reports = mech.privatize(np.arange(100_000) % 5000, rng=1)
    path = tmp_path / "big.bfr"
    path.write_bytes(dump_reports(mech, reports))
    streamed = aggregate_file(path, chunk_rows=3 * 8192 + 5)
    assert streamed.n == len(reports)
    np.testing.assert_array_equal(streamed.counts, mech.aggregate(reports).counts)
    with pytest.raises(ValueError):
        aggregate_file(path, chunk_rows=0)
