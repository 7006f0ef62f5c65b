"""Bounded inputs (issue 23, items 5-8): non-regular files refused, values bounded, linear time."""

import gzip
import os
import threading
import time

import mmh3
import numpy as np
import pytest

from bfrrce import BFRRCE
from bfrrce.io import values
from bfrrce.io.formats import dump_column_sums, dump_reports
from bfrrce.io.stream import aggregate_file
from protocols import FormatError, InputError
from protocols.core.hashing import hash_keys
from tests.helpers import run


def test_fifo_and_devices_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.bfr"
    os.mkfifo(fifo)
    result = {}
    worker = threading.Thread(target=lambda: result.update(code=run(["aggregate", str(fifo), "--out",
                                                                     str(tmp_path / "s.bfr")])))
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "aggregate blocked on a FIFO"
    code, _, err = result["code"]
    assert code == 2 and "not a regular file" in err
    for argv in (["estimate", "/dev/zero", "--aggregate"], ["estimate", str(fifo), "--epsilon", "1"],
                 ["privatize", "/dev/zero", "--epsilon", "1", "--out", str(tmp_path / "r.bfr")]):
        code, _, err = run(argv)
        assert code == 2 and "not a regular file" in err and "Traceback" not in err, err
    with pytest.raises(InputError):
        aggregate_file(fifo)


def test_huge_sparse_sums_file_is_refused_before_reading(tmp_path):
    sparse = tmp_path / "big.bfr"
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 34)                                 # 16 GiB, no blocks on disk
    code, _, err = run(["estimate", str(sparse), "--aggregate"])
    # refused before reading: by the size check, or (no magic in the first bytes) as not a BFRRCE file
    assert code == 2 and ("more than any column-sums file" in err or "not a BFRRCE file" in err)
    head = tmp_path / "head.bfr"
    head.write_bytes(dump_column_sums(BFRRCE(epsilon=1.0, L=16).empty_aggregate()))
    with open(head, "r+b") as fh:
        fh.truncate(1 << 34)                                 # a valid magic, then 16 GiB of holes
    code, _, err = run(["estimate", str(head), "--aggregate"])
    assert code == 2 and "more than any column-sums file" in err


@pytest.mark.parametrize("name", ["v.txt.gz", "v.csv.gz", "v.csv"])
def test_a_value_beyond_the_limit_is_refused(tmp_path, monkeypatch, name):
    monkeypatch.setattr(values, "MAX_VALUE_BYTES", 1000)
    path = tmp_path / name
    text = ("v\n" if ".csv" in name else "") + "a" * 5000 + "\nb\n"
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(InputError, match="size limit|longer than"):
        values.read_values(path, "v" if ".csv" in name else None)


def test_max_value_option(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("a" * 200 + "\nb\n")
    code, _, err = run(["estimate", str(path), "--epsilon", "4", "--L", "64", "--max-value", "100"])
    assert code == 2 and "longer than 100" in err
    code, out, err = run(["estimate", str(path), "--epsilon", "4", "--L", "64"])
    assert code == 0, err


def test_unclosed_quote_is_refused_in_linear_time(tmp_path, monkeypatch):
    monkeypatch.setattr(values, "MAX_VALUE_BYTES", 1 << 20)
    path = tmp_path / "q.csv"
    path.write_bytes(b'v\n"open\n' + b"x,y\n" * ((6 << 20) // 4))      # 6 MiB after the quote
    start = time.perf_counter()
    with pytest.raises(InputError):
        values.read_values(path, "v")
    assert time.perf_counter() - start < 10


def test_long_values_hash_in_linear_time():
    long = [b"x" * (4 << 20), "y" * (1 << 20), "short"]
    start = time.perf_counter()
    hashed = hash_keys(long + ["a", "b"] * 50, [0, 7])
    assert time.perf_counter() - start < 2                  # was about 2.3 s per MiB
    assert hashed[0, 1] == mmh3.hash(long[0], 7, signed=False)
    assert hashed[1, 0] == mmh3.hash(long[1].encode(), 0, signed=False)


@pytest.mark.parametrize("bad", [None, 3, b"path"])
def test_read_values_refuses_what_is_not_a_path(bad):
    with pytest.raises(InputError):
        values.read_values(bad)


def test_report_reader_refuses_a_folder(tmp_path):
    with pytest.raises(InputError, match="not a regular file"):
        aggregate_file(tmp_path)
    mech = BFRRCE(epsilon=1.0, L=64)
    (tmp_path / "r.bfr").write_bytes(dump_reports(mech, mech.privatize(np.arange(5))))
    assert aggregate_file(tmp_path / "r.bfr").n == 5
    assert FormatError
