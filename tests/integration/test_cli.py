import pytest

from bfrrce.cli import CLIError
from protocols import LDPError
from tests.helpers import run


def test_estimate_on_a_file(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("user,value\n" + "".join(f"{i},v{i % 5}\n" for i in range(3000)))
    code, out, err = run(["estimate", str(path), "--column", "value", "--epsilon", "8",
                          "--seed", "1", "--L", "64"])
    assert code == 0, err
    assert out.startswith("distinct values: between") and "detection limit" in out
    cands = tmp_path / "cands.txt"
    cands.write_text("".join(f"v{i}\n" for i in range(20)))
    code, out, _ = run(["estimate", str(path), "--column", "value", "--epsilon", "8",
                        "--candidates", str(cands), "--seed", "1", "--L", "64"])
    assert code == 0 and "[corrected]" in out


@pytest.mark.parametrize("argv, message", [
    (["estimate", "missing.csv", "--column", "c", "--epsilon", "1"], "no such file"),
    (["estimate", "{csv}", "--column", "nope", "--epsilon", "1"], "column 'nope'"),
    (["estimate", "{empty}", "--column", "c", "--epsilon", "1"], "no values"),
    (["estimate", "{csv}", "--column", "c", "--epsilon", "0"], "epsilon"),
    (["estimate", "{csv}", "--column", "c"], "epsilon"),
    (["evaluate", "--dataset", "nope"], "unknown dataset"),
    (["evaluate", "--methods", "magic"], "unknown method"),
    (["evaluate", "--epsilons", "1,-2"], "epsilons"),
    (["evaluate", "--trials", "0"], "trials"),
    (["evaluate", "--synthetic", "n=100"], "--synthetic goes with --dataset synthetic"),
    (["evaluate", "--dataset", "synthetic", "--synthetic", "n"], "not key=value"),
    (["evaluate", "--dataset", "synthetic", "--synthetic", "size=100"], "size"),
    (["evaluate", "--perturbation", "magic"], "invalid choice"),
    (["frobnicate"], "invalid choice"),
])
def test_errors_are_one_line_and_exit_2(tmp_path, argv, message):
    csv_path = tmp_path / "d.csv"
    csv_path.write_text("c\na\nb\n")
    empty = tmp_path / "e.csv"
    empty.write_text("c\n")
    argv = [a.format(csv=csv_path, empty=empty) for a in argv]
    code, out, err = run(argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("bfrrce: error:") and message in err


def test_evaluate_on_a_synthetic_set_with_a_fixed_filter():
    """--dataset synthetic with --synthetic options, and --L fixing the package methods' filter
    (l and the perturbation still advised): the table's rows say L=64."""
    code, out, err = run(["evaluate", "--dataset", "synthetic", "--synthetic",
                          "n=3000,cardinality=40,distribution=zipf,s=1.2", "--epsilons", "4",
                          "--trials", "3", "--methods", "corrected,fill", "--L", "64"])
    assert code == 0, err
    assert "n=3,000 users, 40 distinct integers" in out and "zipf frequencies" in out
    assert "corrected, fill: L=64; l, perturbation from suggest_parameters" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("4 ")]
    assert len(rows) == 2 and all(row[2] == "64" for row in rows)


def test_privatize_aggregate_estimate_pipeline(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("value\n" + "".join(f"v{i % 7}\n" for i in range(4000)))
    reports = []
    for part in range(2):
        path = tmp_path / f"r{part}.bfr"
        code, out, err = run(["privatize", str(data), "--column", "value", "--epsilon", "8",
                              "--L", "64", "--seed", str(part), "--out", str(path)])
        assert code == 0, err
        assert "warning: --seed: seeded client noise" in err
        reports.append(str(path))
    sums = tmp_path / "sums.bfr"
    code, out, err = run(["aggregate", *reports, "--out", str(sums)])
    assert code == 2 and "seeded" in err and "--allow-seeded" in err
    code, out, err = run(["aggregate", *reports, "--out", str(sums), "--allow-seeded"])
    assert code == 0 and "8,000 reports from 2 batch(es)" in out
    code, out, err = run(["estimate", str(sums), "--aggregate"])
    assert code == 2 and "seeded" in err
    code, out, err = run(["estimate", str(sums), "--aggregate", "--allow-seeded"])
    assert code == 0 and "n=8000" in out and "L=64" in out
    code, out, err = run(["aggregate", reports[0], reports[0], "--out", str(sums), "--allow-seeded"])
    assert code == 2 and "already counted" in err
    code, out, err = run(["estimate", str(data), "--aggregate"])
    assert code == 2 and "not a BFRRCE file" in err


def test_cli_errors_are_ldp_errors():
    assert issubclass(CLIError, LDPError)
