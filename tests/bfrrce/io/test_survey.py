"""bfrrce.io.survey: what a file is before it is read."""

import gzip
import hashlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bfrrce import BFRRCE
from bfrrce.io.formats import COLUMN_SUMS, REPORTS, dump_column_sums, dump_reports
from bfrrce.io.survey import bfrrce_kind, check_path, columns, survey
from protocols import InputError


def test_rows_size_and_digest(tmp_path):
    text = tmp_path / "v.txt"
    text.write_bytes(b"a\nb\nc")                          # no line end after the last value
    found = survey(text)
    assert (found.rows, found.size, found.sha256) == (3, 5, hashlib.sha256(b"a\nb\nc").hexdigest())
    table = tmp_path / "v.csv.gz"
    raw = b"x,y\n1,2\n3,4\n"
    table.write_bytes(gzip.compress(raw))
    found = survey(table)
    assert found.rows == 2 and found.sha256 == hashlib.sha256(table.read_bytes()).hexdigest()
    assert survey(table, digest=False).sha256 is None and survey(table, rows=False).rows is None
    parquet = tmp_path / "v.parquet"
    pq.write_table(pa.table({"a": ["x"] * 7, "b": list(range(7))}), parquet)
    assert survey(parquet).rows == 7 and columns(parquet) == ["a", "b"]
    assert columns(table) == ["x", "y"] and columns(text) is None


def test_kinds_and_paths(tmp_path):
    mech = BFRRCE(epsilon=1.0, L=16)
    reports = mech.privatize(["a", "b"], rng=0)
    (tmp_path / "r.bfr").write_bytes(dump_reports(mech, reports))
    (tmp_path / "s.bfr").write_bytes(dump_column_sums(mech.aggregate(reports)))
    (tmp_path / "t.txt").write_text("a\n")
    assert bfrrce_kind(tmp_path / "r.bfr") == REPORTS and bfrrce_kind(tmp_path / "s.bfr") == COLUMN_SUMS
    assert bfrrce_kind(tmp_path / "t.txt") is None
    with pytest.raises(InputError, match="is a directory"):
        check_path(tmp_path)
    with pytest.raises(InputError, match="no such file"):
        check_path(tmp_path / "missing")
