import mmh3
import numpy as np
import pytest

from bfrrce import BloomFilter
from protocols import LDPTypeError, LDPValueError


def test_positions_follow_the_documented_recipe():
    bf = BloomFilter(L=1000, l=3, seed=7)
    keys = [5, -1, "héllo", b"\x00"]
    canon = [(5).to_bytes(8, "little", signed=True), (-1).to_bytes(8, "little", signed=True),
             "héllo".encode(), b"\x00"]
    expected = [[mmh3.hash(c, 7 + k, signed=False) % 1000 for k in range(3)] for c in canon]
    assert bf.positions(keys).tolist() == expected
    ints = np.arange(-50, 50)
    assert bf.positions(ints).tolist() == bf.positions([int(i) for i in ints]).tolist()


def test_bits_and_set_filters():
    bf = BloomFilter(L=64, l=2, seed=0)
    bits = bf.bits([1, 2])
    pos = bf.positions([1, 2])
    for row in range(2):
        assert set(np.flatnonzero(bits[row])) == set(pos[row].tolist())
    union = bf.set_bits([[1, 2]])[0]
    np.testing.assert_array_equal(union, bits[0] | bits[1])
    assert bf.set_bits([[], [3]])[0].sum() == 0


def test_column_counts_count_each_row_once_per_column():
    bf = BloomFilter(L=16, l=3, seed=1)
    cands = list(range(40))
    mult = bf.column_counts(bf.positions(cands))
    expected = np.zeros(16, dtype=int)
    for c in cands:
        for j in set(bf.positions([c])[0].tolist()):
            expected[j] += 1
    np.testing.assert_array_equal(mult, expected)
    weights = np.arange(40)
    np.testing.assert_array_equal(
        bf.column_counts(bf.positions(cands), weights),
        [sum(w for c, w in zip(cands, weights) if j in set(bf.positions([c])[0].tolist()))
         for j in range(16)])


@pytest.mark.parametrize("kwargs", [dict(L=0), dict(L=1), dict(L=8, l=0), dict(L=8, l=9),
                                    dict(L=8, seed=-1)])
def test_bad_parameters(kwargs):
    with pytest.raises(LDPValueError):
        BloomFilter(**{"L": 8, **kwargs})


def test_bad_values():
    bf = BloomFilter(L=8)
    with pytest.raises(LDPValueError):
        bf.positions([])
    with pytest.raises(LDPTypeError):
        bf.positions(np.array([1.0, np.nan]))
    with pytest.raises(LDPTypeError):
        bf.positions([float("nan")])
