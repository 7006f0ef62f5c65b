"""The benchmark scripts run end to end on tiny workloads (their numbers come from full runs).

The benchmarks are the package ``benchmarks`` at the repository root, run as their users run
them: ``python -m benchmarks.NAME`` from the root (a subprocess, so no import path is edited).
"""

import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(name, argv):
    done = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name, argv, expect", [
    ("frequency_oracles", ["--n", "2000", "--d", "64", "--repeats", "1"], "OLH"),
    ("bfrrce_accuracy", ["--runs", "3", "--epsilons", "8"], "corrected"),
    ("bfrrce_throughput", ["--n", "2000", "--repeats", "1"], "of bandwidth"),
    ("poisoning", ["--trials", "1", "--epsilons", "8"], "spread-max"),
    ("coverage", ["--runs", "2", "--quick", "--shapes", "uniform,zipf1.5"], "lowest coverage"),
    ("visible_curve", ["--runs", "1", "--L", "256", "--n", "2000"], "per-value test"),
    ("likelihood_search", ["--runs", "1", "--ns", "100000", "--Ls", "64", "--epsilons", "8"], "missed the peak"),
    ("deployed_peers", ["--n", "300", "--d", "16", "--repeats", "1", "--trials", "3"], "MemoizedOneBitMean"),
    ("randomness", ["--n", "2000", "--repeats", "1", "--epsilons", "4"], "secure, os.urandom"),
    ("delta_rr", ["--n", "200", "--trials", "20", "--epsilons", "1", "--deltas", "0.01"], "variance / ε-only RR"),
    ("multidimensional", ["--n", "3000", "--trials", "1", "--queries", "2", "--epsilons", "2"], "per-attribute / HIO"),
    ("shuffle", ["--exact-ns", "100", "--ns", "1000", "--epsilons", "1", "--deltas", "1e-6"], "numerical / exact"),
    ("sets", ["--quick", "--runs", "2"], "ours/best SFM"),
    ("set_information", ["--epsilons", "8", "--parties", "2", "--union", "1000"], "not told: upward"),
    ("estimate_speed", ["--L", "1024", "--n", "20000", "--repeats", "1", "--epsilons", "4"], "median estimate"),
    ("estimate_speed", ["--bitcoin", "--draws", "1", "--repeats", "1"], "class-model likelihood evaluations"),
    ("laplace_stress", ["--runs", "2"], "largest share of runs above D"),
    ("extrapolation", ["--runs", "1"], "| equal | 500 |"),
    ("frequency_classes", ["--runs", "2", "--cells", "1"], "| pairs 0.2 | 2,000 |"),
    ("calibration", ["--runs", "3", "--cells", "1"], "Located cells with value at n in under half the runs (1;"),
    ("named_cases", ["--runs", "11", "--first-seed", "3", "--only", "500 x 200, eps=8, L=1024, l=1"],
     "medians of its blocks of 10 runs"),
])
def test_benchmark_scripts_run(name, argv, expect):
    assert expect in run(name, argv)


def test_estimate_snapshot_compares_a_snapshot(tmp_path):
    snap = tmp_path / "snap.json"
    out = run("estimate_snapshot", ["--out", str(snap), "--compare", str(snap)])
    assert "120 estimates" in out and "largest relative change 0; 0 above" in out


def test_estimate_snapshot_lists_changed_and_missing_fields():
    from benchmarks.estimate_snapshot import changes
    old = {"a": {"value": 100.0, "upper": math.inf, "tau": math.nan}, "b": {"value": 1.0}}
    new = {"a": {"value": 100.0 * (1 + 1e-6), "upper": math.inf, "tau": math.nan}, "b": {}}
    found, worst = changes(old, new, 1e-9)
    assert found == [("a", "value", 100.0, 100.0 * (1 + 1e-6)), ("b", "value", 1.0, None)]
    assert worst == pytest.approx(1e-6, rel=1e-5)
    assert changes(old, new, 1e-5)[0] == [("b", "value", 1.0, None)]


def test_end_to_end_runs(tmp_path):
    out = run("end_to_end", ["--rows", "3000", "--distinct", "200", "--dir", str(tmp_path)])
    assert "+ hash distinct keys" in out and "privatize FILE: new / floor" in out


def test_versus_peers_runs_with_whatever_peers_are_installed():
    assert "bfrrce.protocols" in run("versus_peers", ["--n", "40", "--n-small", "20", "--n-large", "500",
                                                      "--d", "32", "--repeats", "1"])


@pytest.mark.benchmark
def test_aggregation_benchmark():
    pytest.importorskip("numba")
    assert "imports numba: False" in run("aggregation", ["--n", "2000", "--repeats", "1"])


@pytest.mark.benchmark
def test_scaling_benchmark(tmp_path):
    assert "stream, 1 process" in run("scaling", ["--dir", str(tmp_path), "--max-files", "2"])


def test_set_information_told_the_overlap_is_the_cramer_rao_bound():
    """For one party the "told" column of benchmarks/set_information.py, δ/√(2·KL) at a small δ,
    is the inverse Fisher information of bfrrce.SetSketch (written independently), to O(δ)."""
    import math
    from benchmarks.set_information import B, G, divergence, overlap_law, sum_laws
    from bfrrce import SetSketch
    sk = SetSketch(epsilon=1.0, buckets=B, levels=G)
    law = sum_laws(sk, 1)
    for union in (1e4, 1e5):
        truth, near = (overlap_law(sk, 1, n, 0.0, 0.0, law) for n in (union, union * math.exp(0.02)))
        assert 0.02 / math.sqrt(2 * divergence(truth, near)) == pytest.approx(
            sk.fisher_information(union) ** -0.5 / union, rel=0.01)


def test_sets_holders_tables():
    """benchmarks/sets.py --only holders: h distinct random parties per item, each h-set equally
    likely, and the exact-holders family at the truth is the best fit on the same sums."""
    import numpy as np
    from benchmarks.sets import distinct_parties, family_profiles, fixed_holders
    drawn = distinct_parties(5, 3, 100_000, np.random.default_rng(0))
    assert np.all(np.diff(np.sort(drawn, axis=0), axis=0) > 0)
    subsets = np.unique(np.sort(drawn, axis=0), axis=1, return_counts=True)[1]
    assert subsets.size == 10 and np.all(np.abs(subsets - 10_000) <= 5 * math.sqrt(10_000))
    rows = fixed_holders([4.0], [10], [3], 1, np.random.default_rng(1))[1]
    assert rows[0][5] == 3 and rows[0][6] == 1.0
    profile = family_profiles([(4.0, 10, "pairs")], [1.0], np.random.default_rng(2))[1]
    assert profile[0][5] == 0.0 > profile[0][4]


def test_coverage_random_cells_are_off_the_grid_and_seeded():
    """--random draws cells from its seed alone, every shape in turn, none of them a grid cell."""
    from benchmarks.coverage import ALL_SHAPES, grid, random_grid
    cells = random_grid(40, 5)
    assert cells == random_grid(40, 5) != random_grid(40, 6)
    assert [c[0] for c in cells[:len(ALL_SHAPES)]] == list(ALL_SHAPES)
    assert not set(cells) & set(grid(False, ALL_SHAPES))
    assert all(c[1] >= 300 and 1 <= c[5] <= 4 and c[6] == "value" for c in cells)
    out = run("coverage", ["--runs", "2", "--random", "2", "--seed", "5"])
    assert "2 cells, 2 runs each" in out


def test_coverage_se_ratio_is_not_given_where_value_reads_d_exactly():
    """Both below half a value: D (an integer) is read exactly and the ratio says nothing; nor
    where value did not vary (the same number in every run, up to a thousandth of a value, as where
    all singletons read N: a ratio over a rounding residue is any number); a spread or a
    standard error of a value or more gives the ratio, whichever way it errs."""
    import math

    from benchmarks.coverage import se_ratio
    assert math.isnan(se_ratio(0.3, 0.01)) and math.isnan(se_ratio(1.0, 0.0)) and math.isnan(se_ratio(15.0, 2e-5))
    assert se_ratio(0.3, 3.0) == pytest.approx(0.1) and se_ratio(5.0, 0.01) == pytest.approx(500.0)


def test_the_calibrated_band_holds_a_calibrated_standard_error_nine_times_in_ten():
    """benchmarks.calibration.calibrated_band: for normal errors of sd 1 and a reported se of 1,
    se/sd over 8 runs falls within the band in 90% of 4,000 trials (4 binomial sd)."""
    import numpy as np
    from benchmarks.calibration import calibrated_band
    lo, hi = calibrated_band(8)
    ratio = 1 / np.random.default_rng(0).normal(size=(4000, 8)).std(axis=1)
    share = float(np.mean((lo <= ratio) & (ratio <= hi)))
    assert abs(share - 0.9) <= 4 * math.sqrt(0.9 * 0.1 / 4000)
    assert 0.74 < lo < 0.77 and 1.9 < hi < 1.95      # 8 runs: a 0.8–1.25 window misses a calibrated se often


def test_the_calibration_cells_are_rows_of_the_frequency_class_tables():
    """benchmarks.calibration.LOCATED (indices into the frequency-class cells, and the coverage
    grid's cell last) names rows of docs/frequency-classes.md and -random.md: a change of the
    cells' generator that moved them fails here (which rows are located is a measurement, and
    not asserted)."""
    from benchmarks.calibration import LOCATED
    rows = set()
    for name in ("frequency-classes.md", "frequency-classes-random.md"):
        for line in (ROOT / "docs" / name).read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| ") and cells[0] != "frequencies":
                rows.add((cells[0], int(cells[1].replace(",", "")), float(cells[3]), int(cells[4].replace(",", ""))))
    assert {(shape, n, float(eps), L) for shape, n, eps, L in LOCATED[:-1]} <= rows
