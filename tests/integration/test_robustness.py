"""Every reproduction of issue 13: bad input ends in an LDPError (library), a one-line error with
exit status 2 (CLI), or the right answer; never a traceback, a MemoryError or a silent wrong answer."""

import gzip
import json
import struct
import zlib

import numpy as np
import pytest

from bfrrce import BFRRCE, ColumnSums
from bfrrce.io.formats import (MAX_HEADER, dump_column_sums, dump_reports, iter_report_chunks,
                               load_column_sums, load_reports)
from protocols import OUE, FormatError, LDPError, LDPTypeError, LDPValueError
from tests.helpers import run

MECH = BFRRCE(epsilon=4.0, L=64)


def rewrite(data, header=None, n=None, payload=None):
    """A file with its header (a dict or raw bytes), n or payload replaced and a valid CRC."""
    hlen = struct.unpack_from("<I", data, 11)[0]
    old_header, old_n = data[15:15 + hlen], struct.unpack_from("<Q", data, 15 + hlen)[0]
    if isinstance(header, dict):
        header = json.dumps(header).encode()
    header = old_header if header is None else header
    payload = data[23 + hlen:-4] if payload is None else payload
    body = data[:11] + struct.pack("<I", len(header)) + header + struct.pack(
        "<Q", old_n if n is None else n) + payload
    return body + struct.pack("<I", zlib.crc32(body))


def header_of(data):
    return json.loads(data[15:15 + struct.unpack_from("<I", data, 11)[0]])


@pytest.fixture(scope="module")
def files():
    reports = MECH.privatize(np.arange(30), rng=0)
    return dump_reports(MECH, reports), dump_column_sums(MECH.aggregate(reports))


# -- tracebacks instead of errors ----------------------------------------------------------------

@pytest.mark.parametrize("mech", [BFRRCE(epsilon=45), OUE(epsilon=45, d=8)], ids=["BFRRCE", "OUE"])
def test_large_epsilon_privatizes(mech):
    reports = mech.privatize([1], rng=0)
    assert len(reports) == 1


def test_L_is_bounded(tmp_path):
    """The issue's --L 4294967296 (an OverflowError in the hashing): L <= 2**24 (bfrrce.bloom)."""
    with pytest.raises(LDPValueError, match="L must be <= 16777216"):
        BFRRCE(epsilon=1.0, L=2 ** 24 + 1)
    positions = BFRRCE(epsilon=1.0, L=2 ** 24).bloom.positions(["a", 5, b"c"])
    assert positions.dtype == np.int64 and (positions >= 0).all() and (positions < 2 ** 24).all()
    data = tmp_path / "v.csv"
    data.write_text("c\na\nb\n")
    for L in (2 ** 32, 2 ** 40):
        code, _, err = run(["estimate", str(data), "--column", "c", "--epsilon", "1", "--L", str(L)])
        assert code == 2 and err.count("\n") == 1 and "L must be <=" in err


def test_long_csv_field_is_read_or_refused(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("c\n" + "x" * 200_000 + "\ny\n")
    code, _, err = run(["estimate", str(path), "--column", "c", "--epsilon", "1", "--L", "16"])
    assert code == 0 or (code == 2 and err.count("\n") == 1)


def test_truncated_gzip_is_one_line_error(tmp_path):
    path = tmp_path / "v.csv.gz"
    path.write_bytes(gzip.compress(("c\n" + "".join(f"v{i}\n" for i in range(5000))).encode())[:-40])
    code, _, err = run(["estimate", str(path), "--column", "c", "--epsilon", "1", "--L", "16"])
    assert code == 2 and err.count("\n") == 1 and err.startswith("bfrrce: error:")


@pytest.mark.parametrize("L", [2 ** 40, 2 ** 32, 2 ** 24])
def test_huge_L_in_a_report_header_is_refused_before_allocation(files, tmp_path, L):
    data = files[0]
    header = header_of(data)
    header["mechanism"] = {**header["mechanism"], "L": L}
    bad = rewrite(data, header=header)
    with pytest.raises(FormatError):
        load_reports(bad)
    path = tmp_path / "bad.bfr"
    path.write_bytes(bad)
    with pytest.raises(FormatError):
        list(iter_report_chunks(path))
    code, _, err = run(["aggregate", str(path), "--out", str(tmp_path / "s.bfr")])
    assert code == 2 and err.count("\n") == 1


@pytest.mark.parametrize("which", [0, 1])
def test_deep_or_long_json_header_is_refused(files, which):
    load = (load_reports, load_column_sums)[which]
    with pytest.raises(FormatError, match="nests"):
        load(rewrite(files[which], header=b"[" * 100_000 + b"]" * 100_000))
    with pytest.raises(FormatError, match="nests"):
        load(rewrite(files[which], header=b'{"a": {"b": [1]}}'))
    body = files[which][:11] + struct.pack("<I", MAX_HEADER + 1) + files[which][15:-4]
    with pytest.raises(FormatError, match="header length"):
        load(body + struct.pack("<I", zlib.crc32(body)))


def test_sums_with_n_beyond_exact_floats_are_refused(files):
    data = files[1]
    for n in (2 ** 63, 2 ** 64 - 1, 2 ** 53 + 1):
        with pytest.raises(FormatError):
            load_column_sums(rewrite(data, n=n))
    with pytest.raises(LDPValueError):
        ColumnSums(MECH, np.zeros(64, dtype=np.int64), 2 ** 53 + 1)


def test_large_n_is_exact_and_estimated():
    mech = BFRRCE(epsilon=4.0, L=16)
    agg = mech.simulate(np.arange(2), counts=[2 ** 52, 2 ** 52], rng=0)
    assert agg.n == 2 ** 53 and load_column_sums(dump_column_sums(agg)).n == 2 ** 53
    agg = mech.simulate(np.arange(2), counts=[2 ** 43, 2 ** 43], rng=0)     # 2 s (2**53: 10 s)
    est = mech.estimate(load_column_sums(dump_column_sums(agg)))
    assert est.lower <= 2 <= est.upper


@pytest.mark.parametrize("call", [
    lambda: MECH.privatize(None), lambda: MECH.privatize(5), lambda: MECH.privatize(x for x in "ab"),
    lambda: MECH.privatize({"a", "b"}), lambda: MECH.privatize({"a": 1}),
    lambda: MECH.privatize(np.array([["a", "b"], ["c", "d"]])), lambda: MECH.privatize(bytearray(b"ab")),
    lambda: MECH.simulate(None), lambda: MECH.simulate(iter([1, 2])),
    lambda: BFRRCE(epsilon=1.0, unit="item").privatize_sets([1, 2]),
    lambda: BFRRCE(epsilon=1.0, unit="item").privatize_sets(["abc"]),
    lambda: BFRRCE(epsilon=1.0, unit="item").privatize_sets({frozenset("a")}),
    lambda: MECH.simulate(["a", "b"], counts=[1.5, 2]),
    lambda: ColumnSums(MECH, np.full(64, 1.0), 3), lambda: ColumnSums(None, np.zeros(64, dtype=int), 3),
    lambda: ColumnSums(MECH, [True] * 64, 3), lambda: dump_reports(MECH, MECH.privatize(["a"], rng=0), seeded=1),
], ids=["None", "int", "generator", "set", "dict", "2-D", "bytearray", "simulate None",
        "simulate iterator", "sets of ints", "str as a set", "set of sets", "float counts",
        "float sums", "no mechanism", "bool sums", "int seeded"])
def test_wrong_types_are_ldp_type_errors(call):
    with pytest.raises(LDPTypeError):
        call()


@pytest.mark.parametrize("call", [
    lambda: MECH.estimate(MECH.aggregate(MECH.privatize(["a"], rng=0)), alpha=2),
    lambda: MECH.estimate(MECH.aggregate(MECH.privatize(["a"], rng=0)), confidence=2),
    lambda: MECH.detection_limit(0), lambda: MECH.detection_limit(10, levels=(1.5,)),
    lambda: MECH.simulate(["a", "b"], counts=[2 ** 62, 2 ** 62]),
    lambda: MECH.estimate(MECH.aggregate(MECH.privatize(["a"], rng=0)), candidates=["a"],
                          method="paper", threshold=float("nan")),
    lambda: ColumnSums(MECH, np.full(64, 4), 3), lambda: ColumnSums(MECH, np.ones(3, dtype=int), 3),
    lambda: ColumnSums(MECH, np.zeros(64, dtype=int), 3, frozenset({"not hex"})),
    lambda: ColumnSums(MECH, np.zeros(64, dtype=int), -1),
    lambda: ColumnSums(MECH, np.zeros(64, dtype=int), 3, frozenset({"G" * 64})),
], ids=["alpha", "confidence", "detection n=0", "level", "overflowing counts", "nan threshold",
        "sums above n", "3 sums for L=64", "bad batch", "negative n", "hex batch"])
def test_wrong_values_are_ldp_value_errors(call):
    with pytest.raises(LDPValueError):
        call()


def test_negative_seed_is_an_ldp_error():
    with pytest.raises(LDPError):
        MECH.privatize(["a"], rng=-1)


# -- silent wrong answers ------------------------------------------------------------------------

def test_str_and_bytes_are_one_value():
    assert MECH.privatize("hello", rng=0).shape == (1, 8)
    np.testing.assert_array_equal(MECH.privatize("hello", rng=0), MECH.privatize(["hello"], rng=0))
    assert MECH.privatize(b"hello", rng=0).shape == (1, 8)
    assert MECH.simulate("hello", rng=0).n == 1


def test_truncation_message_counts_the_reports_present(tmp_path):
    mech = BFRRCE(epsilon=4.0, L=64)
    data = dump_reports(mech, mech.privatize(np.arange(1000), rng=0))
    hlen = struct.unpack_from("<I", data, 11)[0]
    cut = data[:23 + hlen + 8 * 400 + 3]                      # 400 whole reports and 3 bytes
    with pytest.raises(FormatError, match="truncated after 400 of 1000 reports"):
        load_reports(cut)
    path = tmp_path / "cut.bfr"
    path.write_bytes(cut)
    with pytest.raises(FormatError, match="truncated after 400 of 1000 reports"):
        list(iter_report_chunks(path, chunk_rows=1 << 16))
    with open(path, "rb") as fh:                              # a stream that cannot seek
        from bfrrce.io.formats import _read_report_header, _read_report_rows

        class Pipe:
            def __init__(self, fh):
                self.fh = fh
                self.read, self.readinto = fh.read, fh.readinto

            def seekable(self):
                return False
        pipe = Pipe(fh)
        mech_, n, _, _, crc = _read_report_header(pipe, None, "pipe")
        with pytest.raises(FormatError, match="truncated after 400 of 1000 reports"):
            list(_read_report_rows(pipe, mech_, n, crc, 1 << 16, "pipe"))


def test_trailing_bytes_are_refused(files):
    with pytest.raises(FormatError):
        load_reports(rewrite(files[0], payload=rewrite(files[0])[23 + len(json.dumps(header_of(files[0]))):-4] + b"\0"))


@pytest.mark.parametrize("change", [
    lambda h: {**h, "extra": 1},
    lambda h: {**h, "mechanism": {**h["mechanism"], "extra": 1}},
    lambda h: {k: v for k, v in h.items() if k != "batch"},
    lambda h: {**h, "batch": "not a batch"},
    lambda h: {**h, "batch": 5},
    lambda h: {**h, "batch": h["batch"].upper()},
    lambda h: {**h, "batch": "0" * 64},
    lambda h: {**h, "seeded": "no"},
], ids=["unknown key", "unknown mechanism key", "no batch", "bad batch", "int batch", "upper hex",
        "edited batch", "str seeded"])
def test_report_headers_are_strict(files, change):
    with pytest.raises(FormatError):
        load_reports(rewrite(files[0], header=change(header_of(files[0]))))


@pytest.mark.parametrize("change", [
    lambda h: {**h, "extra": 1},
    lambda h: {**h, "batches": []},
    lambda h: {**h, "batches": ["xyz"]},
    lambda h: {**h, "batches": h["batches"] * 2},
    lambda h: {**h, "batches": "0" * 32},
    lambda h: {"mechanism": h["mechanism"]},
    lambda h: {k: v for k, v in h.items() if k != "seeded"},
], ids=["unknown key", "no batches", "bad batch", "duplicate batch", "str batches", "missing", "no seeded"])
def test_sums_headers_are_strict(files, change):
    with pytest.raises(FormatError):
        load_column_sums(rewrite(files[1], header=change(header_of(files[1]))))


def test_sums_counts_above_n_are_refused(files):
    data = files[1]
    with pytest.raises(FormatError):
        load_column_sums(rewrite(data, payload=np.full(64, 31, dtype="<i8").tobytes()))
    with pytest.raises(FormatError):
        load_column_sums(rewrite(data, payload=np.full(3, 1, dtype="<i8").tobytes()))


def test_empty_sums_round_trip():
    empty = MECH.empty_aggregate()
    assert load_column_sums(dump_column_sums(empty)) == empty


def test_estimate_refuses_options_the_sums_file_fixes(tmp_path):
    sums = tmp_path / "sums.bfr"
    sums.write_bytes(dump_column_sums(MECH.aggregate(MECH.privatize(np.arange(100) % 7, rng=0))))
    for extra in (["--epsilon", "0.1"], ["--L", "16"], ["--l", "2"], ["--column", "c"], ["--seed", "1"]):
        code, _, err = run(["estimate", str(sums), "--aggregate", *extra])
        assert code == 2 and err.count("\n") == 1 and extra[0] in err, (extra, err)
    code, out, err = run(["estimate", str(sums), "--aggregate", "--epsilon", "4", "--L", "64", "--l", "1"])
    assert code == 0, err
    cands = tmp_path / "c.txt"
    cands.write_text("a\n")
    code, _, err = run(["estimate", str(sums), "--aggregate", "--candidates", str(cands), "--method", "fill"])
    assert code == 2 and "--candidates" in err


def test_parquet_and_csv_give_the_same_keys(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    values = np.arange(2000) % 200
    csv_path, pq_path, cands = tmp_path / "v.csv", tmp_path / "v.parquet", tmp_path / "c.txt"
    csv_path.write_text("c\n" + "".join(f"{v}\n" for v in values))
    pq.write_table(pa.table({"c": values}), pq_path)
    cands.write_text("".join(f"{v}\n" for v in range(300)))
    outs = [run(["estimate", str(p), "--column", "c", "--epsilon", "8", "--L", "256", "--seed", "0",
                 "--candidates", str(cands)])[1] for p in (csv_path, pq_path)]
    assert outs[0] == outs[1]


@pytest.mark.parametrize("L", [2, 7, 12])
def test_small_L_intervals_cover_the_truth(L):
    """The issue's zero-width interval (2.0 – 2.0 for a truth of 201) at L = 2, 7, 12."""
    mech = BFRRCE(epsilon=4.0, L=L)
    for seed in range(5):
        est = mech.estimate(mech.aggregate(mech.privatize(np.arange(2000) % 201, rng=seed)))
        assert est.lower <= 201 <= est.upper
        assert est.upper > est.lower


def test_forged_n_from_a_stream_allocates_little(files):
    """A stream that cannot seek: n = 2**40 in the header, the chunk buffer stays <= 64 MiB."""
    import io

    from bfrrce.io.formats import MAX_CHUNK_BYTES, _read_report_header, _read_report_rows

    class Pipe(io.BytesIO):
        def seekable(self):
            return False

    hlen = struct.unpack_from("<I", files[0], 11)[0]
    forged = bytearray(files[0])
    forged[15 + hlen:23 + hlen] = struct.pack("<Q", 2 ** 40)
    pipe = Pipe(bytes(forged))
    mech, n, _, _, crc = _read_report_header(pipe, None, "pipe")
    rows = _read_report_rows(pipe, mech, n, crc, 1 << 62, "pipe")
    with pytest.raises(FormatError, match="truncated after 30 of 1099511627776"):
        for chunk in rows:
            assert chunk.nbytes <= MAX_CHUNK_BYTES


def test_parquet_report_files_of_the_wrong_type_are_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from bfrrce.io.stream import aggregate_file
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"report": [1, 2, 3]}), path)
    with pytest.raises(FormatError, match="as bytes"):
        aggregate_file(path, MECH)
    with pytest.raises(FormatError, match="no column"):
        aggregate_file(path, MECH, column="other")
    (tmp_path / "x.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(FormatError, match="not a Parquet file"):
        aggregate_file(tmp_path / "x.parquet", MECH)
    good = tmp_path / "g.parquet"
    reports = MECH.privatize(np.arange(20), rng=0)
    pq.write_table(pa.table({"report": [r.tobytes() for r in reports]}), good)
    assert aggregate_file(good, MECH).n == 20
