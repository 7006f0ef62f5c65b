"""The streamed main job: file → keys → positions → column sums or a report file."""

import io
import math
import os
import zlib

import mmh3
import numpy as np
import pytest

from bfrrce import BFRRCE, bloom
from bfrrce.cli import main
from bfrrce.io import pipeline, values
from bfrrce.io.formats import SeededError, dump_reports, load_reports
from bfrrce.io.values import read_values
from protocols import InputError
from protocols.core.hashing import hash_buffer, hash_keys

MECH = BFRRCE(epsilon=3.0, L=64, l=2)


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    rows = [f"addr{k}" for k in rng.zipf(1.3, 5000) % 400]
    path = tmp_path / "d.csv"
    path.write_text("user,address\n" + "".join(f"{i},{v}\n" for i, v in enumerate(rows)))
    return path, rows


def test_hashing_mixed_keys_once_each_matches_mmh3():
    keys = ["a", "é", b"a", 1, -1, 2 ** 63 - 1, "", b"", "1"] * 30 + [f"k{i}" for i in range(100)]
    canon = [k if isinstance(k, bytes) else k.encode() if isinstance(k, str)
             else k.to_bytes(8, "little", signed=True) for k in keys]
    expected = [[mmh3.hash(c, s, signed=False) for s in (3, 4)] for c in canon]
    assert hash_keys(keys, [3, 4]).tolist() == expected
    assert hash_keys(np.array(keys, dtype=object), [3, 4]).tolist() == expected
    offsets = np.concatenate([[0], np.cumsum([len(c) for c in canon])])
    assert hash_buffer(np.frombuffer(b"".join(canon), np.uint8), offsets, [3, 4]).tolist() == expected


def test_memoized_values_are_hashed_once_per_seed(monkeypatch):
    calls = []
    real = bloom.hash_keys
    values_ = bloom.memoize([f"v{i}" for i in range(200)])
    monkeypatch.setattr(bloom, "hash_keys",
                        lambda v, s: (v is values_ and calls.append(list(s))) or real(v, s))
    assert not values_.flags.writeable
    for L in (64, 1024):
        for l in (1, 3):
            mech = BFRRCE(epsilon=2.0, L=L, l=l)
            assert mech.bloom.positions(values_).tolist() == \
                BFRRCE(epsilon=2.0, L=L, l=l).bloom.positions(list(values_)).tolist()
    assert sorted(s for c in calls for s in c) == [0, 1, 2]             # each seed hashed once


def test_filter_counts_are_the_filters_column_counts(data):
    path, rows = data
    t, n = pipeline.filter_counts(path, "address", MECH.bloom, chunk_rows=700)
    assert n == len(rows)
    np.testing.assert_array_equal(t, MECH.bloom.column_counts(MECH.bloom.positions(rows)))


def test_both_sums_follow_the_law_of_the_reports(data):
    """E c_j = t_j p + (n − t_j) q, Var c_j = t_j p(1−p) + (n − t_j) q(1−q), columns independent:
    the standardized total of each way of drawing is within 5 of 0."""
    path, rows = data
    t, n = pipeline.filter_counts(path, "address", MECH.bloom)
    mean = t * MECH.p + (n - t) * MECH.q
    var = t * MECH.p * (1 - MECH.p) + (n - t) * MECH.q * (1 - MECH.q)
    for reports in (False, True):
        sums = pipeline.file_sums(MECH, path, "address", rng=1, reports=reports, chunk_rows=999)
        assert sums.n == n
        z = (sums.counts - mean) / np.sqrt(var)
        assert abs(z.sum()) / math.sqrt(MECH.L) <= 5 and abs((z ** 2).mean() - 1) <= 5 * math.sqrt(2 / MECH.L)


def test_privatize_file_writes_the_bytes_of_dump_reports(data, tmp_path):
    path, rows = data
    out = tmp_path / "r.bfr"
    assert pipeline.privatize_file(MECH, path, out, "address", rng=5) == len(rows)
    reports = MECH.privatize(rows, rng=5)
    assert out.read_bytes() == dump_reports(MECH, reports, seeded=True)
    with pytest.raises(SeededError, match="seeded"):
        load_reports(out.read_bytes())
    mech, back, batch = load_reports(out.read_bytes(), allow_seeded=True)
    assert len(back) == len(rows) and MECH.aggregate(reports).batches == {batch}


def test_privatize_file_in_many_chunks_is_a_valid_file(data, tmp_path, monkeypatch):
    path, rows = data
    monkeypatch.setattr(pipeline, "PERTURB_ROWS", 333)
    out = tmp_path / "r.bfr"
    pipeline.privatize_file(MECH, path, out, "address", chunk_rows=1000)
    assert len(load_reports(out.read_bytes(), MECH)[1]) == len(rows)


def test_a_failed_privatize_leaves_the_output_alone(tmp_path):
    (tmp_path / "e.csv").write_text("address\n\n")
    out = tmp_path / "r.bfr"
    out.write_bytes(b"old")
    with pytest.raises(InputError, match="no values"):
        pipeline.privatize_file(MECH, tmp_path / "e.csv", out, "address")
    assert out.read_bytes() == b"old" and sorted(os.listdir(tmp_path)) == ["e.csv", "r.bfr"]


@pytest.mark.parametrize("la, lb", [(0, 0), (5, 0), (0, 7), (13, 1), (100, 12345)])
def test_crc32_combine(la, lb):
    a, b = os.urandom(la), os.urandom(lb)
    assert pipeline.crc32_combine(zlib.crc32(a), zlib.crc32(b), lb) == zlib.crc32(a + b)


def test_candidates_match_a_parquet_integer_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    ids = np.random.default_rng(1).integers(0, 30, 6000)
    pq.write_table(pa.table({"id": pa.array(ids)}), tmp_path / "t.parquet")
    (tmp_path / "c.txt").write_text("".join(f"{i}\n" for i in range(60)))
    assert read_values(tmp_path / "t.parquet", "id")[:3] == [str(i) for i in ids[:3]]
    out, err = io.StringIO(), io.StringIO()
    code = main(["estimate", str(tmp_path / "t.parquet"), "--column", "id", "--epsilon", "8",
                 "--L", "256", "--candidates", str(tmp_path / "c.txt"), "--seed", "0"], out=out, err=err)
    assert code == 0, err.getvalue()
    assert "[corrected]" in out.getvalue()
    assert len(values.read_values(tmp_path / "c.txt")) == 60


def test_cli_estimate_reports_and_privatize(data, tmp_path):
    path, rows = data
    for extra in ([], ["--reports"]):
        out, err = io.StringIO(), io.StringIO()
        argv = ["estimate", str(path), "--column", "address", "--epsilon", "4", "--L", "256", "--seed", "2"]
        assert main(argv + extra, out=out, err=err) == 0, err.getvalue()
        assert f"n={len(rows)}" in out.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert main(["privatize", str(path), "--column", "address", "--epsilon", "4", "--L", "256",
                 "--out", str(tmp_path / "r.bfr")], out=out, err=err) == 0, err.getvalue()
    assert f"wrote {len(rows):,} reports" in out.getvalue()
