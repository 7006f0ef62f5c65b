"""protocols.errors: one hierarchy under LDPError, ValueError and TypeError kept for callers."""

import warnings

import pytest

from protocols import (FormatError, IncompatibleError, InputError, LDPError, LDPTypeError, LDPValueError,
                       PrivacyWarning)


@pytest.mark.parametrize("cls, builtin", [(LDPValueError, ValueError), (LDPTypeError, TypeError),
                                          (IncompatibleError, ValueError), (FormatError, ValueError),
                                          (InputError, ValueError)])
def test_hierarchy(cls, builtin):
    assert issubclass(cls, LDPError) and issubclass(cls, builtin)
    with pytest.raises(LDPError, match="offending 42"):
        raise cls("offending 42")


def test_privacy_warning_is_a_user_warning():
    assert issubclass(PrivacyWarning, UserWarning) and not issubclass(PrivacyWarning, LDPError)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("weaker", PrivacyWarning, stacklevel=1)
    assert caught[0].category is PrivacyWarning
