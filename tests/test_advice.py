"""Parameter advice."""

import pytest

from bfrrce import suggest_parameters
from protocols import LDPValueError


def test_suggest_parameters_prefers_one_hash():
    s = suggest_parameters(10_000, 4.0, (100, 150), Ls=[128, 256], trials=3)
    assert s.l == 1
    assert {row["l"] for row in s.table} == {1, 2, 3}
    assert "l=1" in s.explanation
    with pytest.raises(LDPValueError):
        suggest_parameters(100, 1.0, (50, 10))
