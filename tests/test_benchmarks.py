"""The benchmark scripts run end to end on tiny workloads (their numbers come from full runs).

The benchmarks are the package ``benchmarks`` of the repository root (``python -m pytest`` and
``python -m benchmarks.NAME`` are run from there).
"""

import importlib

import pytest


def load(name):
    return importlib.import_module(f"benchmarks.{name}")


@pytest.mark.parametrize("name, argv, expect", [
    ("frequency_oracles", ["--n", "2000", "--d", "64", "--repeats", "1"], "OLH"),
    ("bfrrce_accuracy", ["--runs", "3", "--epsilons", "8"], "corrected"),
    ("bfrrce_throughput", ["--n", "2000", "--repeats", "1"], "of bandwidth"),
    ("poisoning", ["--trials", "1", "--epsilons", "8"], "evasive"),
    ("coverage", ["--runs", "2", "--quick", "--shapes", "uniform,zipf1.5"], "lowest coverage"),
    ("randomness", ["--n", "2000", "--repeats", "1", "--epsilons", "4"], "secure, os.urandom"),
])
def test_benchmark_scripts_run(name, argv, expect, capsys):
    load(name).main(argv)
    assert expect in capsys.readouterr().out


def test_end_to_end_runs(tmp_path, capsys):
    load("end_to_end").main(["--rows", "3000", "--distinct", "200", "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "+ hash distinct keys" in out and "privatize FILE: new / floor" in out


def test_versus_peers_runs_with_whatever_peers_are_installed(capsys):
    load("versus_peers").main(["--n", "500", "--peer-n", "20", "--d", "32", "--repeats", "1"])
    assert "bfrrce.protocols" in capsys.readouterr().out


@pytest.mark.benchmark
def test_scaling_benchmark(tmp_path, capsys):
    load("scaling").main(["--dir", str(tmp_path), "--max-files", "2"])
    assert "stream, 1 process" in capsys.readouterr().out
