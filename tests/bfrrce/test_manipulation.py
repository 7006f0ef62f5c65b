"""Bounds that survive fakes (issue 23, item 3): estimate's interval widened for β·N fakes."""

import numpy as np
import pytest

from bfrrce import BFRRCE
from bfrrce.manipulation import honest_extremes, robust_interval
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
    for seed in range(3):
        agg, m = attacked(share, seed)
        beta = m / agg.n
        robust = robust_interval(MECH, agg, beta)
        plain = MECH.estimate(agg)
        assert robust.lower <= D <= robust.upper, (seed, robust, plain.interval)
        assert robust.lower <= plain.interval[0]


def test_extremes_and_refusals():
    agg, m = attacked(0.05, 0)
    low, high = honest_extremes(agg, m)
    assert low.n == high.n == agg.n - m
    assert (low.counts <= high.counts).all() and (high.counts <= agg.counts).all()
    zero = robust_interval(MECH, agg, 0.0)
    assert (zero.lower, zero.upper) == tuple(MECH.estimate(agg).interval)
    for bad in (1.0, -0.1, 2):
        with pytest.raises(LDPValueError):
            robust_interval(MECH, agg, bad)


def test_cli_max_fake(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("".join(f"v{i % 50}\n" for i in range(3000)))
    code, out, err = run(["estimate", str(path), "--epsilon", "4", "--L", "256", "--max-fake", "0.02"])
    assert code == 0 and "robust interval" in out, err
    code, _, err = run(["estimate", str(path), "--epsilon", "4", "--max-fake", "1.5"])
    assert code == 2 and "max_fake_fraction" in err


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
    assert code == 0 and "screen: removed" in out, err
