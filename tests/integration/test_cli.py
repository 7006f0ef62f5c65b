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
    (["evaluate", "--perturbation", "magic"], "choose from auto"),
    (["evaluate", "--L", "3"], "--L must be >= 16"),
    (["evaluate", "--html"], "give --out FOLDER"),
    (["estimate", "{csv}", "--column", "c", "--epsilon", "1", "--L", "3"], "--L must be >= 16"),
    (["estimate", "{folder}", "--epsilon", "1"], "is a directory"),
    (["estimate", "{two}", "--epsilon", "1"], "has 2 columns (a, b): choose one with --column"),
    (["estimate", "missing.bfr", "--aggregate"], "no such file: missing.bfr"),
    (["docs", "nope"], "pages are"),
    (["frobnicate"], "invalid choice"),
])
def test_errors_are_one_line_and_exit_2(tmp_path, argv, message):
    csv_path = tmp_path / "d.csv"
    csv_path.write_text("c\na\nb\n")
    empty = tmp_path / "e.csv"
    empty.write_text("c\n")
    two = tmp_path / "two.csv"
    two.write_text("a,b\n1,2\n")
    argv = [a.format(csv=csv_path, empty=empty, folder=tmp_path, two=two) for a in argv]
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


def test_version():
    import bfrrce
    code, out, err = run(["--version"])
    assert code == 0 and out.strip() == f"bfrrce {bfrrce.__version__}"


def _values(tmp_path, rows=3000, name="data.csv"):
    path = tmp_path / name
    path.write_text("user,value\n" + "".join(f"{i},v{i % 40}\n" for i in range(rows)))
    return path


def test_estimate_chooses_its_parameters_and_says_so(tmp_path):
    """Without --L the advisor picks L, l, perturbation for the rows' count; one note on stderr;
    the bounds come first on stdout; --L fixes L and the note names only what was advised."""
    path = _values(tmp_path)
    code, out, err = run(["estimate", str(path), "--column", "value", "--epsilon", "4", "--seed", "1"])
    assert code == 0, err
    assert out.startswith("distinct values: between")
    seeded, note = err.splitlines()               # --seed: the replayable-noise warning first
    assert "warning: --seed" in seeded
    assert note.startswith("bfrrce: L=") and "chosen by the advisor for 3,000 rows at ε=4" in note
    code, out, err = run(["estimate", str(path), "--column", "value", "--epsilon", "4", "--L", "256", "--seed", "1"])
    assert "L=256" in out and "l, perturbation chosen by the advisor" in err
    code, out, err = run(["estimate", str(path), "--column", "value", "--epsilon", "4", "--L", "256", "--l", "1",
                          "--perturbation", "optimized", "--seed", "1"])
    assert code == 0 and [line for line in err.splitlines() if "warning: --seed" not in line] == []


def test_estimate_json_and_out(tmp_path):
    """--json: the whole result with its provenance; --out: the same document, written to a file."""
    import hashlib
    import json
    path = _values(tmp_path, name="one.csv")
    path.write_text("value\n" + "".join(f"v{i % 40}\n" for i in range(3000)))      # one column: no --column
    argv = ["estimate", str(path), "--epsilon", "4", "--seed", "1", "--json"]
    code, out, err = run(argv)
    assert code == 0, err
    doc = json.loads(out)
    import bfrrce
    assert doc["schema"] == "bfrrce-estimate/1" and doc["bfrrce_version"] == bfrrce.__version__
    assert doc["command"] == ["bfrrce", *argv]
    assert doc["input"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert doc["input"]["column"] == "value" and doc["parameters"]["chosen_by"] == "advisor"
    result = doc["result"]
    assert result["distinct"]["lower"] <= 40 <= (result["distinct"]["upper"] or float("inf"))
    assert result["estimate"]["status"] in ("estimate", "lower bound", "not identified")
    assert set(result) >= {"visible", "detection_limit", "detection", "parameters", "warnings"}
    target = tmp_path / "result.json"
    code, out, err = run(["estimate", str(path), "--epsilon", "4", "--seed", "1", "--out", str(target)])
    assert code == 0 and out.startswith("distinct values") and f"wrote {target}" in out
    assert json.loads(target.read_text())["result"] == result            # same seed, same result
    code, out, err = run(["estimate", str(path), "--epsilon", "4", "--out", str(path)])
    assert code == 2 and "also an input" in err


def test_wrong_turns_name_the_file_and_the_fix(tmp_path):
    path = _values(tmp_path)
    reports = tmp_path / "part1.bfr"
    code, out, err = run(["privatize", str(path), "--column", "value", "--epsilon", "4", "--L", "64",
                          "--seed", "0", "--out", str(reports)])
    assert code == 0, err
    for argv in (["estimate", str(reports)], ["estimate", str(reports), "--aggregate"]):
        code, out, err = run(argv)
        assert code == 2 and "part1.bfr is a report file" in err and "bfrrce aggregate part1.bfr" in err
    code, out, err = run(["privatize", str(reports), "--epsilon", "1", "--out", str(tmp_path / "x.bfr")])
    assert code == 2 and "not values" in err
    code, out, err = run(["aggregate", str(path), "--out", str(tmp_path / "x.bfr")])
    assert code == 2 and "is not a report file: run 'bfrrce privatize" in err


class _Closed:
    """A stdout whose reader went away (``| head``)."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        pass


def test_broken_pipe_exits_quietly():
    import io
    from bfrrce.cli import main
    err = io.StringIO()
    assert main(["docs", "formats"], out=_Closed(), err=err) == 141
    assert err.getvalue() == ""


def test_docs_pages():
    code, out, err = run(["docs"])
    assert code == 0 and "formats" in out and "File formats" in out
    code, out, err = run(["docs", "docs/formats.md"])
    assert code == 0 and out.startswith("# File formats")


def test_help_explains_every_option():
    """Every option of every command has a help text; --epsilon of estimate shows in the usage line."""
    from bfrrce.cli import _parser
    parser = _parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        for action in sub._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"
    code, out, _ = run(["estimate", "--help"])
    assert "bfrrce estimate FILE --epsilon E" in out and "default auto" in out


def test_evaluate_outputs_carry_version_and_command(tmp_path):
    import json
    import bfrrce
    argv = ["evaluate", "--dataset", "synthetic", "--synthetic", "n=500,cardinality=20", "--epsilons", "4",
            "--trials", "2", "--methods", "fill", "--L", "64", "--out", str(tmp_path), "--html", "--quiet"]
    code, out, err = run(argv)
    assert code == 0, err
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["bfrrce_version"] == bfrrce.__version__ and doc["command"] == ["bfrrce", *argv]
    page = (tmp_path / "report.html").read_text()
    assert f"bfrrce {bfrrce.__version__}" in page and "bfrrce evaluate --dataset synthetic" in page


def test_quiet_drops_the_note():
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as folder:
        path = _values(Path(folder))
        code, out, err = run(["estimate", str(path), "--column", "value", "--epsilon", "4", "--seed", "1", "--quiet"])
    # --quiet drops the note of the chosen parameters, never the warning that seeded noise is replayable
    assert code == 0 and out.startswith("distinct values")
    assert [line for line in err.splitlines() if "warning: --seed" not in line] == []


def test_estimate_extrapolate_prints_a_labelled_model_or_why_not(tmp_path):
    """--extrapolate: a line that says it is a model (the power law's count, or why it is
    refused), the same in --json under "extrapolation"; refused with l = 2 (one column a value)."""
    import json

    import numpy as np
    counts = np.random.default_rng(4).zipf(2.0, 20_000)
    path = tmp_path / "zipf.txt"
    path.write_text("".join(f"v{i}\n" * int(c) for i, c in enumerate(counts)))
    code, out, err = run(["estimate", str(path), "--epsilon", "8", "--L", "16384", "--l", "1", "--seed", "1",
                          "--extrapolate"])
    assert code == 0, err
    lines = out.splitlines()
    models = [i for i, line in enumerate(lines) if line.startswith("model-based extrapolation")]
    assert len(models) == 1 and "not covered by the bounds" in lines[models[0]]
    # the count takes the place of the line that points to it, beside the bounds (before the detection limit)
    assert not any(line.startswith("a model-based count") for line in lines)
    assert models[0] < next(i for i, line in enumerate(lines) if line.startswith("detection limit"))
    code, out, err = run(["estimate", str(path), "--epsilon", "8", "--L", "16384", "--l", "1", "--seed", "1",
                          "--extrapolate", "--json"])
    extra = json.loads(out)["extrapolation"]
    assert code == 0 and set(extra) >= {"value", "std_error", "exponent", "refused"}
    assert extra["refused"] is None and 0.5 * counts.size < extra["value"] < 2 * counts.size
    code, out, err = run(["estimate", str(path), "--epsilon", "8", "--L", "1024", "--l", "2", "--seed", "1",
                          "--extrapolate"])
    assert code == 2 and "l=1" in err
    code, out, err = run(["estimate", str(path), "--epsilon", "0.5", "--seed", "1", "--extrapolate"])
    assert code == 0 and "l=1" in out and sum(line.startswith("model-based extrapolation")
                                              for line in out.splitlines()) == 1
