"""The evaluation layer: method names and argument checks (the tables are tested through the CLI)."""

import pytest

from bfrrce import BFRRCE
from bfrrce.evaluation import aare, evaluate, mechanism_for
from protocols import LDPValueError


def test_mechanism_for():
    mech, estimator = mechanism_for("paper", 2.0, 64, 1, 3)
    assert mech == BFRRCE(epsilon=2.0, L=64, l=3, perturbation="symmetric") and estimator == "paper"
    with pytest.raises(LDPValueError, match="unknown method 'magic'"):
        mechanism_for("magic", 2.0, 64, 1, 3)


@pytest.mark.parametrize("kwargs, message", [(dict(simulate="nope"), "simulate"), (dict(trials=0), "trials"),
                                              (dict(methods=["paper"]), "candidate")])
def test_evaluate_refuses_bad_arguments(kwargs, message):
    with pytest.raises(LDPValueError, match=message):
        evaluate([1, 2, 3], [1.0], **{"methods": ["fill"], **kwargs})


def test_aare():
    assert aare([9, 11], 10) == (pytest.approx(0.1), pytest.approx(0.0))
