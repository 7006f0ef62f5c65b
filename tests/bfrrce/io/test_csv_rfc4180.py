"""CSV per RFC 4180 (issue 23, item 7): CR, LF and CRLF, quoted headers, and one answer from
the pyarrow and the standard-library readers on a differential corpus."""

import csv
import io

import numpy as np
import pytest

from bfrrce.io import values

CASES = {
    "header ending in CR, LF rows": (b"addr\rv1\nv2\n", "addr", ["v1", "v2"]),
    "CRLF": (b"addr\r\nv1\r\nv2\r\n", "addr", ["v1", "v2"]),
    "CR only": (b"addr\rv1\rv2\r", "addr", ["v1", "v2"]),
    "quoted header with a line break": (b'"ad\ndr",x\nv1,1\nv2,2\n', "ad\ndr", ["v1", "v2"]),
    "quoted values": (b'addr\n"a,b"\n"c""d"\n"e\nf"\n', "addr", ["a,b", 'c"d', "e\nf"]),
    "no final line end": (b"addr\nv1", "addr", ["v1"]),
    "BOM": ("\ufeffaddr\nv1\n".encode(), "addr", ["v1"]),
}


def both(path, column):
    """read_values through pyarrow and through csv.reader (outcome or exception type)."""
    out = []
    for arrow in (values._arrow, lambda: None):
        original = values._arrow
        values._arrow = arrow
        try:
            out.append(values.read_values(path, column))
        except values.InputError:
            out.append("InputError")
        finally:
            values._arrow = original
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_line_endings_and_quoted_headers(tmp_path, name):
    pytest.importorskip("pyarrow")
    data, column, expected = CASES[name]
    path = tmp_path / "v.csv"
    path.write_bytes(data)
    assert both(path, column) == [expected, expected]


def test_short_rows_are_refused_by_both_readers(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "v.csv"
    path.write_bytes(b"addr,b\n\nv1,1\nv2\n,3\n")
    assert both(path, "addr") == ["InputError", "InputError"]


def test_differential_corpus(tmp_path):
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(23)
    alphabet = ["a", "b", ",", '"', "\n", "\r", " ", "é", "x" * 40]
    for case in range(60):
        rows = [["".join(rng.choice(alphabet, rng.integers(0, 4))) for _ in range(2)]
                for _ in range(rng.integers(1, 40))]
        text = io.StringIO(newline="")
        writer = csv.writer(text, lineterminator=["\n", "\r", "\r\n"][case % 3], quoting=csv.QUOTE_MINIMAL)
        writer.writerow(["v\nq" if case % 5 == 0 else "v", "w"])
        writer.writerows([r if any(r) else ["z", ""] for r in rows])
        path = tmp_path / f"c{case}.csv"
        path.write_bytes(text.getvalue().encode())
        arrow, stdlib = both(path, "v\nq" if case % 5 == 0 else "v")
        assert arrow == stdlib, (case, text.getvalue())
