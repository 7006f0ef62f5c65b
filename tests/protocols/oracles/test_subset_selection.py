"""protocols.oracles.subset_selection: the default k and the law of the subsets (the shared oracle contract is in
test_oracles.py)."""

import math

import numpy as np
import pytest

from protocols import SubsetSelection
from protocols.bits import packing as bits

from tests.helpers import tolerance_mean


def test_default_k():
    assert SubsetSelection(epsilon=1.0, d=1024).k == round(1024 / (math.e + 1))


@pytest.mark.parametrize("d, k, joins", [(6, 2, False), (64, None, True), (1000, None, True)])
def test_subset_position_is_uniform_and_membership_only(d, k, joins):
    """Reports are masks: there is no position. Non-true members are uniform over d − 1 values,
    whether the subsets start empty (small k) or from dyadic joins (larger k)."""
    mech = SubsetSelection(epsilon=1.0, d=d, k=k)
    assert (mech.join_probability()[0] > 0) == joins
    n = 60000
    true = 3
    reports = bits.unpack(mech.privatize(np.full(n, true), rng=5), d)
    freq = reports.mean(axis=0)
    assert abs(freq[true] - mech.p_star) <= tolerance_mean(math.sqrt(mech.p_star * (1 - mech.p_star)), n)
    q = mech.q_star
    others = np.delete(freq, true)
    # up to 999 comparisons: 5.5 standard errors keep the family-wise false alarm below 1e-4
    assert np.all(np.abs(others - q) <= tolerance_mean(math.sqrt(q * (1 - q)), n, z=5.5))
    assert (reports.sum(axis=1) == mech.k).all()
    # pairs of other values are included together at the rate of a uniform subset
    a, b = (0, 1) if true > 1 else (4, 5)
    both = (reports[:, a] & reports[:, b]).mean()
    pair = mech.p_star * (mech.k - 1) * (mech.k - 2) / ((d - 1) * (d - 2)) + \
        (1 - mech.p_star) * mech.k * (mech.k - 1) / ((d - 1) * (d - 2))
    assert abs(both - pair) <= tolerance_mean(math.sqrt(pair * (1 - pair)), n)
