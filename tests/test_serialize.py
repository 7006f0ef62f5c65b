"""protocols.serialize: aggregates as bytes, constructor parameters, simulation through real reports."""

import math

import numpy as np
import pytest

from protocols import GRR, OLH, SUE, IncompatibleError, LDPTypeError, LDPValueError
from protocols.serialize import (aggregate_from_bytes, aggregate_to_bytes, mechanism_params,
                                 simulate_from_reports)

from conftest import tolerance_mean


@pytest.mark.parametrize("mech", [GRR(epsilon=1.0, d=5), OLH(epsilon=2.0, d=9), SUE(epsilon=0.5, d=12)])
def test_round_trip_and_parameters(mech):
    assert type(mech)(**mechanism_params(mech)) == mech
    agg = mech.aggregate(mech.privatize(np.arange(mech.d), rng=1))
    data = aggregate_to_bytes(agg)
    assert aggregate_from_bytes(data) == agg
    assert aggregate_from_bytes(bytearray(data)).merge(agg).n == 2 * agg.n


def test_malformed_buffers_are_refused():
    data = aggregate_to_bytes(GRR(epsilon=1.0, d=4).empty_aggregate())
    with pytest.raises(LDPTypeError):
        aggregate_to_bytes(np.zeros(4, dtype=np.int64))
    with pytest.raises(LDPValueError, match="not a serialized aggregate"):
        aggregate_from_bytes(b"GARBAGE!" + data[8:])
    with pytest.raises(LDPValueError, match="body has"):
        aggregate_from_bytes(data[:-8])
    with pytest.raises(LDPValueError, match="malformed aggregate header"):
        aggregate_from_bytes(data.replace(b'"GRR"', b'"XYZ"'))
    shape = data.replace(b'"shape": [4]', b'"shape": [2]')
    with pytest.raises(IncompatibleError):
        aggregate_from_bytes(shape[:-16])


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
