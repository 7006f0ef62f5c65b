"""protocols.core.registry: every mechanism class is found by name and rebuilt from its parameters."""

import pytest

import protocols
from protocols import GRR, OLH, SUE, LDPValueError, Mechanism
from protocols.core.registry import mechanism_class, mechanism_from_params, mechanism_params


def test_every_exported_mechanism_is_registered():
    exported = [getattr(protocols, name) for name in protocols.__all__]
    classes = [c for c in exported if isinstance(c, type) and issubclass(c, Mechanism)
               and not getattr(c, "__abstractmethods__", None)]
    assert len(classes) > 15
    for cls in classes:
        assert mechanism_class(cls.__name__) is cls


@pytest.mark.parametrize("mech", [GRR(epsilon=1.0, d=5), OLH(epsilon=2.0, d=9), SUE(epsilon=0.5, d=12)])
def test_parameters_rebuild_the_mechanism(mech):
    assert type(mech)(**mechanism_params(mech)) == mech
    assert mechanism_from_params(type(mech).__name__, mechanism_params(mech)) == mech


def test_unknown_names_are_refused():
    with pytest.raises(LDPValueError, match="no mechanism class named 'XYZ'"):
        mechanism_class("XYZ")
    with pytest.raises(LDPValueError):
        mechanism_class(None)
