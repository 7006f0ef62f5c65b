"""The evaluation layer and the ``evaluate`` command: rows, tables, files, HTML, the paper's mode."""

import io
import json
import math
from html.parser import HTMLParser

import numpy as np
import pytest

from bfrrce import BFRRCE
from bfrrce.cli import main
from bfrrce.datasets import load
from bfrrce.evaluation import _Data, aare, evaluate, paper_mechanism, threshold_users
from protocols import LDPValueError

PNG = b"\x89PNG\r\n\x1a\n"


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("kwargs, message", [(dict(simulate="nope"), "simulate"), (dict(trials=0), "trials"),
                                              (dict(methods=["paper"]), "candidate"),
                                              (dict(methods=["magic"]), "unknown method 'magic'"),
                                              (dict(thresholds=["nope"]), "unknown threshold rule 'nope'"),
                                              (dict(parameters={"bits": 64}), "unknown parameter 'bits'")])
def test_evaluate_refuses_bad_arguments(kwargs, message):
    with pytest.raises(LDPValueError, match=message):
        evaluate([1, 2, 3], [1.0], **{"methods": ["fill"], **kwargs})


def test_evaluate_fixes_the_parameters_it_is_given():
    """All three fixed: every package row uses them; none: the advisor's choice for n = 300."""
    values = np.repeat(np.arange(30), 10)
    fixed = evaluate(values, [2.0, 8.0], ["fill"], 2, progress=False,
                     parameters={"L": 32, "l": 2, "perturbation": "symmetric"})
    assert {(r["L"], r["l"], r["perturbation"]) for r in fixed} == {(32, 2, "symmetric")}
    advised = evaluate(values, [8.0], ["fill"], 2, progress=False)
    assert advised[0]["L"] != 32


def test_aare():
    assert aare([9, 11], 10) == (pytest.approx(0.1), pytest.approx(0.0))


def test_threshold_rules():
    mech = BFRRCE(epsilon=2.0, L=64, perturbation="symmetric")
    assert threshold_users("z95", mech, 1000) == pytest.approx(1.6448536 * math.sqrt(mech.null_variance(1000)))
    assert threshold_users("half", mech, 1000) == 0.5 and threshold_users("zero", mech, 1000) == 0.0
    with pytest.raises(LDPValueError, match="'magic'"):
        threshold_users("magic", mech, 1000)


def test_paper_mechanism_per_bit():
    mech = paper_mechanism(0.4, 256, 2, per_bit=True)
    assert mech.epsilon == pytest.approx(2 * 2 * 0.4) and mech.p == pytest.approx(math.exp(0.4) / (1 + math.exp(0.4)))


def test_cached_columns_draw_what_simulate_draws():
    """The cached users per column give the same column sums as BFRRCE.simulate, draw for draw."""
    values = np.array(["a", "b", "b", "c", "c", "c"] * 50)
    distinct, counts = np.unique(values, return_counts=True)
    data = _Data(distinct, counts, None)
    mech = BFRRCE(epsilon=2.0, L=32, l=2)
    t = data.users_per_column(mech)
    assert data.users_per_column(mech) is t                                  # cached
    assert np.array_equal(t, mech.bloom.column_counts(mech.bloom.positions(values)))
    from protocols.core.perturbation import simulate_column_sums
    a = simulate_column_sums(t, data.n, mech.p, mech.q, np.random.default_rng(5))
    assert np.array_equal(a, mech.simulate(values, rng=np.random.default_rng(5)).counts)


def test_paper_rule_z95_falls_with_epsilon():
    """The paper's falling shape with the noise-scaled rule (synthetic-2, L = 1024, l = 1):
    AARE at ε_b = 0.1 is above AARE at ε_b = 1 by more than 5 standard errors of the difference."""
    data = load("synthetic-2")
    rows = evaluate(data.values, [0.1, 1.0], ["paper"], 20, per_bit=True, candidates=data.candidates,
                    progress=False)
    low, high = rows
    assert low["aare"] - high["aare"] > 5 * math.hypot(low["aare_se"], high["aare_se"])
    assert high["epsilon"] == pytest.approx(2.0) and high["per_bit_epsilon"] == 1.0


def test_default_output_explains_itself():
    code, out, err = run(["evaluate", "--trials", "2", "--epsilons", "4"])
    assert code == 0, err
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("ε (user)"))
    for column in ("method", "L", "perturbation", "AARE", "lower", "upper", "covered", "true D", "seen at"):
        assert column in header
    assert "per bit" not in header
    assert any(line.startswith("AARE: mean") for line in lines)
    assert "suggest_parameters" in out and "DESIGN" not in out and "README" not in out


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.rows, self.images, self.stack = 0, 0, [], []

    def handle_starttag(self, tag, attrs):
        if tag not in ("meta", "img"):                   # void elements have no end tag
            self.stack.append(tag)
        self.tables += tag == "table"
        self.rows += tag == "tr"
        if tag == "img":
            self.images.append(dict(attrs)["src"])

    def handle_endtag(self, tag):
        assert self.stack.pop() == tag                  # well nested


def test_paper_mode_writes_tables_figure_and_html(tmp_path):
    code, out, err = run(["evaluate", "--paper", "--trials", "3", "--epsilons", "0.2,1", "--threshold", "z95,half",
                          "--out", str(tmp_path), "--html"])
    assert code == 0, err
    assert "L=1024, l=1" in out and "ε per bit" in out
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert len(rows) == 2 * 2 * 3                            # datasets × ε × (two rules + corrected)
    assert {r["dataset"] for r in rows} == {"synthetic-1", "synthetic-2"}
    for r in rows:
        assert r["epsilon"] == pytest.approx(2 * 1 * (r["per_bit_epsilon"] or r["epsilon"] / 2))
        assert 0 <= r["coverage"] <= 1 and r["median_lower"] <= r["median_upper"]
    assert (tmp_path / "results.csv").read_text().startswith("dataset,epsilon,per_bit_epsilon,method")
    page = _Page()
    page.feed((tmp_path / "report.html").read_text())
    assert page.tables == 2 and page.rows == 2 + len(rows)  # a header row per table
    pytest.importorskip("matplotlib")
    assert (tmp_path / "aare-paper.png").read_bytes()[:8] == PNG
    import base64
    assert len(page.images) == 1 and page.images[0].startswith("data:image/png;base64,")
    assert base64.b64decode(page.images[0].split(",", 1)[1])[:8] == PNG


def test_methods_of_one_mechanism_read_the_same_collections():
    """corrected and fill read the same sums in each trial (a paired comparison): their bounds are
    the same trial by trial, so the median bounds and the coverage of their rows agree exactly;
    the paper's rules likewise share their own mechanism's sums."""
    values = np.repeat(np.arange(60), 20)
    rows = evaluate(values, [2.0, 6.0], ["corrected", "fill", "paper"], 6, candidates=np.arange(100),
                    thresholds=("z95", "half"), progress=False)
    assert [(r["method"], r["threshold"]) for r in rows[:4]] == [
        ("corrected", None), ("fill", None), ("paper", "z95"), ("paper", "half")]
    for eps in (0, 4):
        corrected, fill, z95, half = rows[eps:eps + 4]
        keys = ("median_lower", "median_upper", "coverage", "L", "l")
        assert [corrected[k] for k in keys] == [fill[k] for k in keys]
        assert (z95["median_lower"], z95["median_upper"]) == (half["median_lower"], half["median_upper"])


def test_evaluate_is_reproducible():
    a = run(["evaluate", "--trials", "2", "--epsilons", "2", "--methods", "fill"])[1]
    b = run(["evaluate", "--trials", "2", "--epsilons", "2", "--methods", "fill"])[1]
    strip = lambda s: [line for line in s.splitlines() if not line.startswith("wall")]  # noqa: E731
    assert strip(a) == strip(b)


@pytest.mark.parametrize("argv, message", [
    (["evaluate", "--threshold", "magic"], "unknown threshold rule 'magic'"),
    (["evaluate", "--methods", "magic"], "unknown method"),
])
def test_evaluate_errors(argv, message):
    code, out, err = run(argv)
    assert code == 2 and err.count("\n") == 1 and message in err
