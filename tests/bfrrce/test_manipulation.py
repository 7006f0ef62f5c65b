"""Bounds that survive fakes (issue 23, item 3): an interval on the honest values whatever β·N
fakes sent."""

import numpy as np
import pytest

from bfrrce import BFRRCE
from bfrrce.manipulation import robust_interval
from bfrrce.poisoning import weight_bounds
from protocols import LDPValueError
from protocols.bits import packing as bits
from tests.helpers import run

MECH = BFRRCE(epsilon=4.0, L=1024)
D, N = 200, 20_000


def attacked(share, seed):
    """Honest reports of D values and ⌊share·N⌋ fakes of the honest mean weight whose ones sit on
    columns no honest value uses, each fake on its own random columns (issue 23's attack)."""
    rng = np.random.default_rng(seed)
    values = np.repeat(np.arange(D), N // D)
    honest = MECH.privatize(values, rng=rng)
    weight = int(round(bits.unpack(honest, MECH.L).sum(axis=1).mean()))
    free = np.setdiff1d(np.arange(MECH.L), MECH.bloom.positions(np.arange(D)).ravel())
    m = int(share * N)
    ones = np.zeros((m, MECH.L), dtype=np.uint8)
    for i in range(m):
        ones[i, rng.choice(free, weight, replace=False)] = 1
    fakes = bits.pack(ones)
    return MECH.aggregate(np.concatenate([honest, fakes]), label=False), m


@pytest.mark.parametrize("share", [0.002, 0.01, 0.05])
def test_robust_interval_covers_the_truth_under_the_honest_weight_attack(share):
    """The fakes pass the weight screen (honest weight), so w = the screen's upper bound."""
    hi = weight_bounds(MECH)[1]
    for seed in range(3):
        agg, m = attacked(share, seed)
        robust = robust_interval(MECH, agg, m / agg.n, max_weight=hi)
        plain = MECH.estimate(agg)
        assert robust.lower <= D <= robust.upper, (seed, robust, plain.interval)


@pytest.mark.parametrize("epsilon", [4.0, 8.0])
def test_robust_interval_holds_for_every_shape_of_fakes(epsilon):
    """The worst shapes for each side: every fake all ones (lowers every honest count the most),
    all zeros, the same w columns (w the allowed weight) on the values' own columns or on free
    ones; the bounds hold in every run (derived, not fitted: no tolerance to set)."""
    mech = BFRRCE(epsilon=epsilon, L=256)
    values = np.repeat(np.arange(40), 50)
    w = 12
    for seed in range(4):
        rng = np.random.default_rng(seed)
        honest = mech.privatize(values, rng=rng)
        own = mech.bloom.positions(np.arange(40)).ravel()
        free = np.setdiff1d(np.arange(mech.L), own)
        m = 100
        shapes = {"ones": np.ones((m, mech.L), np.uint8), "zeros": np.zeros((m, mech.L), np.uint8)}
        for name, cols in (("own", own[:w]), ("free", free[:w])):
            rows = np.zeros((m, mech.L), np.uint8)
            rows[:, cols] = 1
            shapes[name] = rows
        for name, rows in shapes.items():
            agg = mech.aggregate(np.concatenate([honest, bits.pack(rows)]), label=False)
            weight = None if name == "ones" else w
            robust = robust_interval(mech, agg, m / agg.n, max_weight=weight)
            assert robust.lower <= 40 <= robust.upper, (epsilon, seed, name, robust)


def test_refusals_and_no_fakes():
    agg, m = attacked(0.05, 0)
    zero = robust_interval(MECH, agg, 0.0)
    assert zero.fakes == 0 and zero.lower <= D + m <= zero.upper        # no fakes allowed: all count
    assert robust_interval(MECH, agg, m / agg.n).upper == agg.n       # w = L: fakes can claim any mass
    for bad in (1.0, -0.1, 2):
        with pytest.raises(LDPValueError):
            robust_interval(MECH, agg, bad)
    with pytest.raises(LDPValueError):
        robust_interval(MECH, agg, 0.01, max_weight=MECH.L + 1)
    with pytest.raises(LDPValueError):
        robust_interval(BFRRCE(epsilon=4.0, L=1024, unit="item"), agg, 0.01)


def test_cli_max_fake(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("".join(f"v{i % 50}\n" for i in range(3000)))
    code, out, err = run(["estimate", str(path), "--epsilon", "4", "--L", "256", "--max-fake", "0.02",
                          "--max-weight", "20"])
    assert code == 0 and "robust interval" in out and "at most 20 ones" in out, err
    code, _, err = run(["estimate", str(path), "--epsilon", "4", "--max-fake", "1.5"])
    assert code == 2 and "max_fake_fraction" in err
    code, _, err = run(["estimate", str(path), "--epsilon", "4", "--max-weight", "20"])
    assert code == 2 and "--max-weight goes with --max-fake" in err
    code, _, err = run(["estimate", str(path), "--epsilon", "4", "--L", "256", "--max-fake", "0.02",
                        "--max-weight", "9999"])
    assert code == 2 and "max_weight" in err and "Traceback" not in err


def test_aggregate_screen_removes_implausible_reports_in_chunks(tmp_path):
    from bfrrce.io.formats import dump_reports
    from bfrrce.io.stream import Screen, aggregate_file
    honest = MECH.privatize(np.arange(3000) % 40, rng=5)
    fakes = np.full((60, MECH.L // 8), 255, dtype=np.uint8)
    fakes[:, 0] = np.arange(60)                                      # distinct all-but-few-ones rows
    path = tmp_path / "r.bfr"
    path.write_bytes(dump_reports(MECH, np.concatenate([honest, fakes])))
    screen = Screen(1e-3)
    screened = aggregate_file(path, chunk_rows=500, screen=screen)
    assert screen.seen == 3060 and 60 <= screen.removed <= 60 + 10 and screened.n == 3060 - screen.removed
    assert screened.batches == aggregate_file(path).batches           # one batch, screened or not
    sums = tmp_path / "s.bfr"
    code, out, err = run(["aggregate", str(path), "--out", str(sums), "--screen"])
    assert code == 0 and "screen: removed" in out and "weight alarm" in out, err


def test_streaming_weight_alarm_fires_on_bulk_ones_and_not_on_honest_reports(tmp_path):
    """Fakes that each carry the screen's largest weight pass it, but their total shows: the
    alarm on the kept reports' total weight fires; on honest reports alone it does not (its
    false-alarm rate is α = 0.001)."""
    from bfrrce.io.formats import dump_reports
    from bfrrce.io.stream import Screen, aggregate_file
    hi = weight_bounds(MECH)[1]
    honest = MECH.privatize(np.arange(20_000) % 40, rng=6)
    ones = np.zeros((1_000, MECH.L), dtype=np.uint8)
    rng = np.random.default_rng(7)
    for row in ones:
        row[rng.choice(MECH.L, hi, replace=False)] = 1
    for reports, fires in ((honest, False), (np.concatenate([honest, bits.pack(ones)]), True)):
        path = tmp_path / f"{fires}.bfr"
        path.write_bytes(dump_reports(MECH, reports))
        screen = Screen(1e-3)
        aggregate_file(path, chunk_rows=4096, screen=screen)
        z, flagged = screen.alarm
        assert flagged == fires, (z, fires)


def test_streaming_cooccurrence_screen_removes_fakes_that_share_columns(tmp_path):
    """Fakes of honest weight on the same columns pass the weight screen; within each chunk the
    co-occurrence screen flags those columns and removes them; honest reports alone lose at most
    a few (each flagged chunk drops an honest report with probability <= α)."""
    from bfrrce.io.formats import dump_reports
    from bfrrce.io.stream import Screen, aggregate_file
    honest = MECH.privatize(np.arange(20_000) % 40, rng=8)
    weight = int(round(bits.unpack(honest, MECH.L).sum(axis=1).mean()))
    rng = np.random.default_rng(9)
    rows = np.zeros((1_000, MECH.L), dtype=np.uint8)
    rows[:, rng.choice(MECH.L, weight - 2, replace=False)] = 1
    for _ in range(3):                                  # distinct rows: no repeated-rows refusal
        rows[np.arange(1_000), rng.integers(MECH.L, size=1_000)] = 1
    mixed = np.concatenate([honest, bits.pack(rows)])[rng.permutation(21_000)]
    for reports, name in ((honest, "honest"), (mixed, "mixed")):
        path = tmp_path / f"{name}.bfr"
        path.write_bytes(dump_reports(MECH, reports))
        screen = Screen(1e-3)
        aggregate_file(path, chunk_rows=8192, screen=screen)
        if name == "honest":
            assert screen.concentrated <= 20 and "co-occurrence" in str(screen)
        else:
            assert screen.concentrated >= 990 and screen.flagged_chunks == screen.chunks == 3
