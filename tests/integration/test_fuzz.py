"""A derandomized slice of the fuzz benchmark, run as users run it (``python -m benchmarks.fuzz``):
mutated report and sums files are refused with a FormatError or accepted only when they are valid
files, and the classifier itself sees an accept-anything reader and a crash (its self-check)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mutated_files_are_refused_or_valid():
    done = subprocess.run([sys.executable, "-m", "benchmarks.fuzz", "--cases", "400", "--seed", "13"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "classifier self-check passed" in out
    assert "crashes and invalid acceptances: 0" in out
    assert re.search(r"total: .*refused [\d,]+", out)
    for mutation in ("flip bit", "truncate", "insert bytes"):
        assert f" {mutation} " in out


def test_cli_and_csv_reader_modes():
    """The CLI on mutated files never shows a traceback; pyarrow and csv.reader agree."""
    for mode in ("cli", "csv"):
        done = subprocess.run([sys.executable, "-m", "benchmarks.fuzz", "--mode", mode, "--cases", "150",
                               "--seed", "5"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "tracebacks and differences: 0" in done.stdout, done.stdout
