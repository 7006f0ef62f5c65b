"""Issue 23, items 10, 12 and 16: every listed misuse is an LDPError with a clear message."""

import warnings

import numpy as np
import pytest

from bfrrce import BFRRCE, suggest_parameters
from bfrrce.io import values
from protocols import CMS, HCMS, RAPPOR, LDPError, LDPTypeError, LDPValueError
from tests.helpers import run

MECH = BFRRCE(epsilon=2.0, L=64)
CMS8 = CMS(epsilon=2, d=10, k=8, m=64)


def aggregate():
    return MECH.simulate(["a", "b"], rng=0)


@pytest.mark.parametrize("call", [
    lambda: MECH.privatize(["\ud800"]), lambda: MECH.privatize(np.array(["\ud800", "a"])),
    lambda: MECH.simulate(np.ma.masked_array([1, 2], mask=[0, 1])),
    lambda: CMS8.privatize({1, 2}), lambda: CMS8.privatize("abc"), lambda: CMS8.privatize(np.zeros((2, 2), dtype=int)),
    lambda: HCMS(epsilon=2, d=10, k=8, m=64).privatize({1, 2}),
    lambda: CMS8.estimate(CMS8.empty_aggregate(), candidates={1, 2}),
    lambda: MECH.simulate(["a"], counts=np.array([2 ** 63], dtype=np.uint64)),
    lambda: MECH.simulate(["a"], counts=np.uint64(2 ** 63)),
    lambda: suggest_parameters(1000, 2.0, "1..100"), lambda: MECH.detection_limit(1000, levels=0.5),
    lambda: MECH.estimate(aggregate(), confidence="0.9"),
    lambda: MECH.privatize(np.array([1, 2], dtype="timedelta64[ns]")),
], ids=["surrogate", "surrogate array", "masked", "cms set", "cms str", "cms 2-D", "hcms set",
        "cms candidates set", "uint64 counts", "uint64 scalar", "suggest str range", "levels", "confidence str",
        "timedelta"])
def test_misuse_is_an_ldp_error(call):
    with pytest.raises(LDPError):
        call()


def test_tiny_epsilon_says_too_small():
    with pytest.raises(LDPValueError, match="too small"):
        BFRRCE(epsilon=1e-300, L=64)


def test_parquet_with_a_duplicate_column_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"])], names=["v", "v"])
    pq.write_table(table, tmp_path / "d.parquet")
    with pytest.raises(values.InputError, match="twice"):
        values.read_values(tmp_path / "d.parquet", "v")


def test_duplicate_candidates_count_once():
    """Issue 23, item 10: a candidate list given twice gave 398 for 100."""
    mech = BFRRCE(epsilon=4.0, L=2048)
    names = [f"v{i}" for i in range(100)]
    agg = mech.simulate(names * 10, rng=1)
    once = mech.estimate(agg, candidates=names, method="paper").value
    with pytest.warns(UserWarning, match="100 duplicated candidates ignored"):
        twice = mech.estimate(agg, candidates=names * 2, method="paper").value
    assert twice == once
    rappor = RAPPOR(num_bits=16, num_hashes=2, num_cohorts=2)
    rag = rappor.simulate([1, 2, 3] * 50, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = rappor.estimate(rag, candidates=[1, 2, 3], method="nnls")
    with pytest.warns(UserWarning, match="duplicated"):
        double = rappor.estimate(rag, candidates=[1, 2, 3, 1], method="nnls")
    assert list(double.candidates) == list(single.candidates)


def test_small_cli_items(tmp_path):
    values_file = tmp_path / "v.txt"
    values_file.write_text("a\nb\n")
    code, _, err = run(["evaluate", "--methods", "", "--trials", "1"])
    assert code == 2 and "--methods is empty" in err
    code, _, err = run(["evaluate", "--dataset", "synthetic", "--synthetic", "s=nan"])
    assert code == 2 and "finite" in err
    for option, message in (("s=-1,n=100", "positive finite"), ("n=10**12", "must be an integer"),
                            ("n=1000000000000", "in memory"), ("n=2.5", "must be an integer"),
                            ("sz=2", "unknown synthetic option")):
        code, _, err = run(["evaluate", "--dataset", "synthetic", "--synthetic", f"{option},cardinality=5"])
        assert code == 2 and message in err and "Traceback" not in err, (option, err)
    sums = tmp_path / "s.bfr"
    privatized = tmp_path / "r.bfr"
    assert run(["privatize", str(values_file), "--epsilon", "2", "--L", "64", "--out", str(privatized)])[0] == 0
    assert run(["aggregate", str(privatized), "--out", str(sums)])[0] == 0
    code, _, err = run(["estimate", str(sums), "--aggregate", "--reports"])
    assert code == 2 and "--reports does not apply" in err
    code, _, err = run(["estimate", "/dev/stdin", "--epsilon", "2"])
    assert code == 2 and "no such file" not in err
    assert LDPTypeError
