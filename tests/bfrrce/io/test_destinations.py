"""Outputs (issue 23, items 4-5): only regular files are replaced; evaluate never writes its inputs."""

import os

import numpy as np
import pytest

from bfrrce.evaluation import figure_name
from bfrrce.io.atomic import check_destination, write_atomic
from protocols import LDPTypeError, LDPValueError
from tests.helpers import run


@pytest.fixture
def values(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("".join(f"v{i}\n" for i in range(50)))
    return path


def test_symlink_special_and_read_only_outputs_are_refused(tmp_path, values):
    target = tmp_path / "target.bfr"
    target.write_bytes(b"keep")
    link = tmp_path / "link.bfr"
    link.symlink_to(target)
    readonly = tmp_path / "ro.bfr"
    readonly.write_bytes(b"keep")
    readonly.chmod(0o444)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases = [(link, "symbolic link"), (fifo, "not a regular file"), (tmp_path, "not a regular file")]
    if not os.access(readonly, os.W_OK) or os.geteuid() != 0:
        cases.append((readonly, "read-only"))
    for out, reason in cases:
        code, _, err = run(["privatize", str(values), "--epsilon", "2", "--out", str(out)])
        assert code == 2 and reason in err and len(err.strip().splitlines()) == 1, err
        with pytest.raises(LDPValueError, match=reason):
            write_atomic(out, b"x")
    assert target.read_bytes() == b"keep" and link.is_symlink() and readonly.read_bytes() == b"keep"
    code, _, err = run(["privatize", str(values), "--epsilon", "2", "--out", "/dev/null"])
    assert code == 2 and "not a regular file" in err
    assert check_destination(tmp_path / "new.bfr") == tmp_path / "new.bfr"


def test_write_atomic_refuses_what_is_not_bytes(tmp_path):
    for bad in (None, "text", 3):
        with pytest.raises(LDPTypeError):
            write_atomic(tmp_path / "x", bad)


def test_evaluate_refuses_to_overwrite_its_input_and_sanitizes_the_figure(tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    results = data / "results.csv"
    results.write_text("value\n" + "".join(f"{i % 30}\n" for i in range(300)))
    code, _, err = run(["evaluate", "--dataset", str(results), "--column", "value", "--epsilons", "4",
                        "--trials", "2", "--methods", "fill", "--out", str(data)])
    assert code == 2 and "also an input" in err
    assert results.read_text().startswith("value\n")
    assert figure_name("d/sub dir/x y.csv") == "aare-x_y.csv.png" and figure_name("../..") == "aare-dataset.png"
    out = tmp_path / "out"
    code, stdout, err = run(["evaluate", "--dataset", str(results), "--column", "value", "--epsilons", "4",
                             "--trials", "2", "--methods", "fill", "--out", str(out)])
    assert code == 0, err
    assert (out / "results.csv").exists() and not any("/" in p.name for p in out.iterdir())
    assert np.all([p.parent == out for p in out.iterdir()])
