"""The README's 30-second example runs and prints bounds that contain the truth."""

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[2] / "README.md"


def example_code():
    text = README.read_text(encoding="utf-8")
    start = text.index("## 30-second example")
    return re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)


def test_readme_example_prints_bounds_that_contain_the_truth(capsys):
    code = example_code().replace("mech.privatize(values)", "mech.privatize(values, rng=0)")
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    truth = len(np.unique(namespace["values"]))
    lower, upper = (float(x.replace(",", "")) for x in
                    re.search(r"between ([\d,]+) and ([\d,]+)", printed).groups())
    assert lower <= truth <= upper
    text = README.read_text(encoding="utf-8")
    assert printed.strip() in text          # the README shows what the code prints


def test_readme_python_section_runs():
    text = README.read_text(encoding="utf-8")
    start = text.index("## In Python")
    code = re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["mech"].L == namespace["advice"].L


def test_readme_is_short_and_links_resolve():
    """Under 250 lines; every docs/ page it names exists."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250
    for name in set(re.findall(r"docs/([a-z0-9_-]+)\.md", text)):
        assert (README.parent / "docs" / f"{name}.md").is_file(), name


def test_readme_poisoning_table_is_the_benchmark_output():
    from benchmarks.poisoning import readme_table
    table = readme_table((README.parent / "docs" / "poisoning.txt").read_text(encoding="utf-8"))
    assert table in README.read_text(encoding="utf-8")
