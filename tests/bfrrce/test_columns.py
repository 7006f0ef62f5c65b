"""Columns users have (pyarrow, pandas, polars) give the reports of the same values as a list,
and nulls are refused or skipped as asked."""

import numpy as np
import pyarrow as pa
import pytest

from bfrrce import BFRRCE, estimate_distinct
from bfrrce.columns import column_keys
from protocols import LDPTypeError, LDPValueError

MECH = BFRRCE(epsilon=2.0, L=64, l=2)
WORDS = ["alice", "bob", "", "carol", "bob", "ünï"]
NUMBERS = [3, -7, 42, 3, 2 ** 40]


def _same(column, values):
    assert np.array_equal(MECH.privatize(column, rng=3), MECH.privatize(values, rng=3))


def test_pyarrow_arrays_match_lists():
    _same(pa.array(WORDS), WORDS)
    _same(pa.chunked_array([WORDS[:2], WORDS[2:]]), WORDS)
    _same(pa.array(WORDS).dictionary_encode(), WORDS)
    _same(pa.array([w.encode() for w in WORDS], pa.binary()), [w.encode() for w in WORDS])
    _same(pa.array(NUMBERS, pa.int64()), NUMBERS)
    _same(pa.array([3, 7], pa.uint8()), [3, 7])


def test_pandas_and_polars_series_match_lists():
    pd = pytest.importorskip("pandas")
    _same(pd.Series(WORDS), WORDS)
    _same(pd.Series(WORDS, dtype="string[pyarrow]"), WORDS)
    _same(pd.Series(NUMBERS), NUMBERS)
    with pytest.raises(LDPTypeError, match="one column"):
        MECH.privatize(pd.DataFrame({"a": WORDS}))
    pl = pytest.importorskip("polars")
    _same(pl.Series(WORDS), WORDS)
    _same(pl.Series(NUMBERS), NUMBERS)


def test_nulls_are_refused_or_skipped():
    column = pa.array(["a", None, "b", None])
    with pytest.raises(LDPValueError, match="2 nulls of 4"):
        MECH.privatize(column)
    _same_skip = MECH.privatize(column, rng=1, nulls="skip")
    assert np.array_equal(_same_skip, MECH.privatize(["a", "b"], rng=1))
    assert np.array_equal(MECH.privatize(["a", None, "b"], rng=1, nulls="skip"), _same_skip)
    with pytest.raises(LDPValueError, match="nulls must be"):
        MECH.privatize(column, nulls="keep")
    with pytest.raises(LDPValueError, match="empty once the nulls"):
        MECH.privatize(pa.array([None, None], pa.string()), nulls="skip")
    pd = pytest.importorskip("pandas")
    with pytest.raises(LDPValueError, match="1 nulls"):
        MECH.privatize(pd.Series(["a", np.nan, "b"]))
    est = estimate_distinct(pd.Series(["a", None] * 500), epsilon=4, L=64, rng=0, nulls="skip")
    assert est.parameters["n"] == 500


def test_other_types_are_refused():
    with pytest.raises(LDPTypeError, match="double"):
        MECH.privatize(pa.array([1.5, 2.5]))
    with pytest.raises(LDPValueError, match="2\\*\\*63"):
        column_keys(pa.array([2 ** 63], pa.uint64()))
