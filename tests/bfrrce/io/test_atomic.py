"""Atomic writes: no output is ever half-written or clobbered (bfrrce.io.atomic, the CLI)."""

import os
import resource
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from bfrrce import BFRRCE
from bfrrce.io.atomic import check_outputs, write_atomic
from bfrrce.io.formats import dump_reports, load_column_sums
from protocols import LDPTypeError, LDPValueError
from tests.helpers import run

posix_only = pytest.mark.skipif(os.name != "posix", reason="needs POSIX resource limits and signals")


def _strays(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_write_atomic_replaces_whole_files(tmp_path):
    path = tmp_path / "out.bin"
    write_atomic(path, b"old")
    path.chmod(0o640)
    write_atomic(path, (bytes([i]) * 3 for i in range(3)))
    assert path.read_bytes() == b"\x00\x00\x00\x01\x01\x01\x02\x02\x02"
    assert path.stat().st_mode & 0o777 == 0o640                       # the mode is kept
    assert _strays(tmp_path) == []


def test_a_failing_writer_leaves_the_previous_file(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"previous")

    def chunks():
        yield b"partial"
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, chunks())
    with pytest.raises(LDPTypeError):
        write_atomic(path, ["text"])
    assert path.read_bytes() == b"previous" and _strays(tmp_path) == []


def test_an_output_that_is_an_input_is_refused(tmp_path):
    a = tmp_path / "a.bfr"
    a.write_bytes(b"x")
    for same in (a, tmp_path / "." / "a.bfr"):
        with pytest.raises(LDPValueError, match="also an input"):
            check_outputs(same, [tmp_path / "b", a])
    link = tmp_path / "link.bfr"
    link.symlink_to(a)
    with pytest.raises(LDPValueError, match="also an input"):
        check_outputs(link, [a])
    assert check_outputs(tmp_path / "c", [a]) == tmp_path / "c"
    with pytest.raises(LDPValueError, match="does not exist"):
        check_outputs(tmp_path / "no" / "c", [a])


def _reports_file(path, L=1024, seed=0):
    mech = BFRRCE(epsilon=4.0, L=L)
    path.write_bytes(dump_reports(mech, mech.privatize(np.arange(200), rng=seed)))
    return path


def test_cli_refuses_to_overwrite_its_input(tmp_path):
    data = tmp_path / "in.csv"
    data.write_text("v\n" + "".join(f"x{i}\n" for i in range(50)))
    before = data.read_bytes()
    code, _, err = run(["privatize", str(data), "--column", "v", "--epsilon", "2", "--out", str(data)])
    assert code == 2 and "also an input" in err and data.read_bytes() == before
    reports = _reports_file(tmp_path / "a.bfr")
    before = reports.read_bytes()
    code, _, err = run(["aggregate", str(reports), "--out", str(reports)])
    assert code == 2 and "also an input" in err and reports.read_bytes() == before


def _limit_file_size(limit, ignore_signal):
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        if ignore_signal:                              # write() fails with EFBIG instead of SIGXFSZ
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return preexec


@posix_only
@pytest.mark.parametrize("ignore_signal", [True, False])
def test_file_size_limit_leaves_the_previous_sums(tmp_path, ignore_signal):
    """The issue's case: aggregate under a 4 KiB file-size limit over an existing good sums file
    (the new one has 8 KiB of counts)."""
    small = _reports_file(tmp_path / "small.bfr", L=16)
    big = _reports_file(tmp_path / "big.bfr", L=1024, seed=1)
    sums = tmp_path / "sums.bfr"
    assert run(["aggregate", str(small), "--out", str(sums)])[0] == 0
    before = sums.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "bfrrce", "aggregate", str(big), "--out", str(sums)],
                          preexec_fn=_limit_file_size(4096, ignore_signal), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    if ignore_signal:                                   # a clean one-line error, nothing left behind
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert _strays(tmp_path) == []
    assert sums.read_bytes() == before
    assert load_column_sums(sums.read_bytes()).mechanism.L == 16


@posix_only
def test_kill_during_a_write_leaves_the_previous_file(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"previous")
    ready = tmp_path / "ready"
    script = ("import sys, time, pathlib\n"
              "from bfrrce.io.atomic import write_atomic\n"
              "def chunks():\n"
              "    yield b'x' * (1 << 20)\n"
              f"    pathlib.Path({str(ready)!r}).touch()\n"
              "    time.sleep(60)\n"
              "    yield b'y'\n"
              f"write_atomic({str(path)!r}, chunks())\n")
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert path.read_bytes() == b"previous"
