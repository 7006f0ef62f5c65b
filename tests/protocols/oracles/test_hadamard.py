"""protocols.oracles.hadamard: the output sets (the shared oracle contract is in test_oracles.py)."""

import numpy as np

from protocols import HadamardResponse


def test_hadamard_sets_are_balanced():
    mech = HadamardResponse(epsilon=1.0, d=7)
    assert mech.K == 8
    sets = [np.array([p for p in mech.output_distribution(v).values()]) > 1 / mech.K for v in range(7)]
    for a in range(7):
        assert sets[a].sum() == 4
        for b in range(a):
            assert (sets[a] & sets[b]).sum() == 2
