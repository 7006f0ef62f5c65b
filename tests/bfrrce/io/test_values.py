"""Reading values from users' files: every problem is an InputError naming the file or column."""

import gzip

import pytest

from bfrrce.io import values
from bfrrce.io.values import iter_key_chunks, read_values
from protocols import InputError, LDPValueError


def test_formats(tmp_path):
    (tmp_path / "a.csv").write_text("x,y\n1,a\n2,\n3,c\n")
    assert read_values(tmp_path / "a.csv", "y") == ["a", "c"]
    (tmp_path / "a.tsv").write_text("x\ty\n1\ta\n")
    assert read_values(tmp_path / "a.tsv", "y") == ["a"]
    with gzip.open(tmp_path / "a.txt.gz", "wt") as fh:
        fh.write("u\n\nv\n")
    assert read_values(tmp_path / "a.txt.gz") == ["u", "v"]


@pytest.mark.parametrize("name, content, column, message", [
    ("missing.csv", None, "x", "no such file"),
    ("a.csv", "x\n1\n", "nope", "column 'nope'"),
    ("a.csv", "x\n1\n", None, "column None"),
    ("empty.txt", "\n\n", None, "holds no values"),
])
def test_every_problem_is_an_input_error(tmp_path, reader, name, content, column, message):
    if content is not None:
        (tmp_path / name).write_text(content)
    with pytest.raises(InputError, match=message) as info:
        read_values(tmp_path / name, column)
    assert isinstance(info.value, LDPValueError)


@pytest.fixture(params=["pyarrow", "csv.reader"])
def reader(request, monkeypatch):
    """Run a test on both readers: pyarrow, and the standard library's (pyarrow missing)."""
    if request.param == "csv.reader":
        monkeypatch.setattr(values, "_arrow", lambda: None)
    return request.param


def decoded(chunks):
    """The rows of dictionary-encoded chunks, as bytes."""
    rows = []
    for c in chunks:
        keys = [c.data[a:b].tobytes() for a, b in zip(c.offsets[:-1], c.offsets[1:])]
        rows.extend(keys[i] for i in c.codes)
    return rows


def test_both_readers_give_the_same_keys(tmp_path, reader):
    text = 'id,v\n1,a\n2,""\n3,"x,y"\n4,é\n5,\n6,a\n7,"q""r"\n'
    (tmp_path / "a.csv").write_text(text, encoding="utf-8")
    with gzip.open(tmp_path / "b.csv.gz", "wt", encoding="utf-8") as fh:
        fh.write(text.replace(",", "\t").replace('"x\ty"', "xy"))
    assert read_values(tmp_path / "a.csv", "v") == ["a", "x,y", "é", "a", 'q"r']
    assert decoded(iter_key_chunks(tmp_path / "a.csv", "v", chunk_rows=2)) == [
        b"a", b"x,y", "é".encode(), b"a", b'q"r']
    (tmp_path / "b.tsv.gz").write_bytes((tmp_path / "b.csv.gz").read_bytes())
    assert read_values(tmp_path / "b.tsv.gz", "v") == ["a", "xy", "é", "a", 'q"r']


def test_chunks_are_dictionary_encoded(tmp_path, reader):
    rows = [f"k{i % 7}" for i in range(1000)]
    (tmp_path / "a.csv").write_text("v\n" + "\n".join(rows) + "\n")
    chunks = list(iter_key_chunks(tmp_path / "a.csv", "v", chunk_rows=300))
    assert all(len(c.offsets) == 8 for c in chunks)          # each key once per chunk
    assert decoded(chunks) == [r.encode() for r in rows]


def test_a_long_field_is_read(tmp_path, reader):
    big = "z" * 300_000                                        # over csv's default 131,072
    (tmp_path / "a.csv").write_text(f"v,w\n{big},1\nb,2\n")
    assert read_values(tmp_path / "a.csv", "v") == [big, "b"]


@pytest.mark.parametrize("name", ["a.csv.gz", "a.txt.gz"])
def test_truncated_gzip_is_an_input_error(tmp_path, reader, name):
    data = gzip.compress(("v\n" + "".join(f"value{i}\n" for i in range(20000))).encode())
    (tmp_path / name).write_bytes(data[:len(data) // 2])
    with pytest.raises(InputError, match="cannot be read"):
        read_values(tmp_path / name, "v")


def test_parquet_keys_are_text(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"i": pa.array([42, -7, None, 42], pa.int64()),
                             "s": ["a", "", None, "b"], "f": [1.5, 2.0, 3.0, 4.0]}), tmp_path / "t.parquet")
    assert read_values(tmp_path / "t.parquet", "i") == ["42", "-7", "42"]
    assert read_values(tmp_path / "t.parquet", "s") == ["a", "b"]
    assert decoded(iter_key_chunks(tmp_path / "t.parquet", "i", chunk_rows=2)) == [b"42", b"-7", b"42"]
    with pytest.raises(InputError, match="double"):
        read_values(tmp_path / "t.parquet", "f")


@pytest.mark.parametrize("block", [7, values._CSV_BLOCK])     # 7: every row crosses a boundary
def test_quoted_line_breaks(tmp_path, reader, monkeypatch, block):
    monkeypatch.setattr(values, "_CSV_BLOCK", block)
    rows = ['"a\nb"', "c", '"d ""e""\n\nf"', '""', "g"]
    (tmp_path / "a.csv").write_text("i,v\n" + "".join(f"{i},{r}\n" for i, r in enumerate(rows)))
    assert read_values(tmp_path / "a.csv", "v") == ["a\nb", "c", 'd "e"\n\nf', "g"]


def test_a_byte_order_mark_is_not_part_of_the_first_name(tmp_path, reader):
    (tmp_path / "a.csv").write_bytes("\ufeffv,w\nx,1\n".encode("utf-8"))
    assert read_values(tmp_path / "a.csv", "v") == ["x"]
