"""protocols.oracles.local_hashing: the bucket count of OLH (the shared oracle contract is in test_oracles.py)."""

import math

from protocols import OLH


def test_olh_g():
    assert OLH(epsilon=1.0, d=10).g == round(math.e) + 1
    assert OLH(epsilon=3.0, d=10).g == round(math.exp(3)) + 1
