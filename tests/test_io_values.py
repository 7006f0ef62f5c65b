"""Reading values from users' files: every problem is an InputError naming the file or column."""

import gzip

import pytest

from bfrrce.io.values import read_values
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
def test_every_problem_is_an_input_error(tmp_path, name, content, column, message):
    if content is not None:
        (tmp_path / name).write_text(content)
    with pytest.raises(InputError, match=message) as info:
        read_values(tmp_path / name, column)
    assert isinstance(info.value, LDPValueError)
