"""One canonical key for every path (issue 23, item 6): a differential test over mixed batches."""

import collections
import datetime

import mmh3
import numpy as np
import pytest

from bfrrce import BFRRCE, SetSketch
from protocols import CMS, HCMS, RAPPOR, LDPTypeError
from protocols.core.hashing import as_keys, canonical_key, distinct_keys, hash_keys

MIXED = [1, "x", b"a\x00", b"a", np.int32(7), np.uint16(7), 7, "", b"\x00\x00", -3, "é", np.int64(-3)]


def reference(values, seeds):
    return np.array([[mmh3.hash(canonical_key(v), s, signed=False) for s in seeds] for v in values],
                    dtype=np.uint32)


@pytest.mark.parametrize("container", [list, tuple, lambda v: np.fromiter(v, dtype=object, count=len(v))])
def test_every_path_hashes_the_canonical_bytes(container):
    values = container(MIXED * 30)                        # also past the few-keys shortcut
    seeds = [0, 5, 2 ** 32 - 1]
    assert np.array_equal(hash_keys(values, seeds), reference(MIXED * 30, seeds))
    cms = CMS(epsilon=2, d=10, k=8, m=64)
    rows = np.arange(len(values)) % 8
    for sketch in (cms, HCMS(epsilon=2, d=10, k=8, m=64)):      # client column = server column
        assert np.array_equal(sketch.row_columns(values, rows),
                              sketch.encode(list(MIXED * 30))[np.arange(len(values)), rows])
    rappor = RAPPOR(num_bits=32, num_hashes=2, num_cohorts=4)
    cohorts = np.arange(len(values)) % 4
    assert np.array_equal(rappor.filter_positions(values, cohorts),
                          rappor.filter_positions(list(MIXED * 30), cohorts))
    mech = BFRRCE(epsilon=2.0, L=256, l=3)
    assert np.array_equal(mech.bloom.positions(values), mech.bloom.positions(list(MIXED * 30)))
    sketch = SetSketch(epsilon=1.0, buckets=64, levels=8, hash_seed=3)
    cells = sketch.cells(values)
    assert np.array_equal(cells, sketch.cells(list(MIXED * 30)))
    low = reference(MIXED * 30, [3])[:, 0]                      # the bucket: the hash's low 6 bits
    assert np.array_equal(cells % 64, (low & 63).astype(np.int64))
    same = sketch.cells([7, np.int32(7), np.uint16(7), -3, np.int64(-3)])   # one key, one cell
    assert same[0] == same[1] == same[2] and same[3] == same[4]


def test_simulate_and_privatize_agree_on_mixed_keys():
    keys, counts = distinct_keys(MIXED)
    expected = collections.Counter(canonical_key(v) for v in MIXED)
    assert dict(zip(map(canonical_key, keys), counts.tolist())) == dict(expected)
    mech = BFRRCE(epsilon=50.0, L=512, l=1, perturbation="symmetric")
    # at ε = 50 the flips are negligible: simulated columns are the filters of the distinct keys
    sim = mech.simulate(MIXED, rng=0)
    rep = mech.aggregate(mech.privatize(MIXED, rng=0), label=False)
    assert sim.n == rep.n == len(MIXED)
    assert np.array_equal(sim.counts, rep.counts)


@pytest.mark.parametrize("bad", [
    np.array([1, 2], dtype="datetime64[ns]"), np.array([1, 2], dtype="timedelta64[s]"),
    np.array([1.0, 2.0]), np.ma.masked_array([1, 2], mask=[0, 1]), np.array([True]),
], ids=["datetime64", "timedelta64", "float", "masked", "bool"])
def test_keys_without_canonical_bytes_are_refused(bad):
    with pytest.raises(LDPTypeError):
        hash_keys(bad, [0])
    with pytest.raises(LDPTypeError):
        BFRRCE(epsilon=1.0, L=64).privatize(bad)
    with pytest.raises(LDPTypeError):
        CMS(epsilon=2, d=10, k=8, m=64).row_columns(bad, np.zeros(len(bad), dtype=np.int64))


def test_python_dates_and_floats_are_refused():
    for bad in ([datetime.date(2020, 1, 1)], [datetime.timedelta(seconds=1)], [1.5]):
        with pytest.raises(LDPTypeError):
            hash_keys(bad, [0])
    assert as_keys([1, 2]).dtype == np.int64 and as_keys([1, "a"]).dtype == object
