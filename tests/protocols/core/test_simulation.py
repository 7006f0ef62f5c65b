"""protocols.core.simulation: simulation through real reports."""

import math

import numpy as np

from protocols import GRR
from protocols.core.simulation import simulate_from_reports

from tests.helpers import tolerance_mean


def test_simulate_from_reports_is_unbiased_in_small_chunks():
    """Chunks of 7 users: the count estimates keep the analytic mean (5σ/√trials tolerance)."""
    mech = GRR(epsilon=1.0, d=3)
    truth = np.array([40, 25, 10])
    trials = 200
    est = np.array([mech.estimate(simulate_from_reports(mech, np.arange(3), truth, rng=s, chunk=7))
                    for s in range(trials)])
    sd = np.sqrt([mech.variance(75, f) for f in truth / 75])
    assert np.all(np.abs(est.mean(axis=0) - truth) <= tolerance_mean(sd, trials))
    assert simulate_from_reports(mech, [0], [5], rng=0, chunk=1).n == 5
    assert math.isclose(est.sum(axis=1).mean(), 75, abs_tol=1e-9)
