import mmh3
import numpy as np
import pytest

from protocols import LDPTypeError, LDPValueError
from protocols.core.hashing import hash_keys, murmur3_fixed


SEEDS = [0, 1, 42, 2 ** 31, 2 ** 32 - 1]


@pytest.mark.parametrize("seed", SEEDS)
def test_vectorised_murmur_matches_mmh3_on_integers(seed):
    rng = np.random.default_rng(seed % 1000)
    keys = np.concatenate([rng.integers(-2 ** 63, 2 ** 63 - 1, 500, dtype=np.int64),
                           [0, -1, 1, 2 ** 63 - 1, -2 ** 63]])
    h = hash_keys(keys, [seed])[:, 0]
    ref = [mmh3.hash(int(k).to_bytes(8, "little", signed=True), seed, signed=False) for k in keys]
    np.testing.assert_array_equal(h, ref)


@pytest.mark.parametrize("width", range(0, 13))
def test_vectorised_murmur_matches_mmh3_on_bytes(width):
    keys = np.random.default_rng(width).integers(0, 256, (64, width), dtype=np.uint8)
    for seed in SEEDS:
        np.testing.assert_array_equal(
            murmur3_fixed(keys, seed), [mmh3.hash(bytes(k), seed, signed=False) for k in keys])


def test_mixed_keys_fall_back_to_mmh3():
    keys = ["", "a", "héllo", b"\x00\x01", 7]
    h = hash_keys(keys, [5])[:, 0]
    canon = [b"", b"a", "héllo".encode(), b"\x00\x01", (7).to_bytes(8, "little", signed=True)]
    assert h.tolist() == [mmh3.hash(k, 5, signed=False) for k in canon]
    fixed = np.array([b"ab", b"cd"])
    assert hash_keys(fixed, [1])[:, 0].tolist() == [mmh3.hash(b"ab", 1, signed=False),
                                                     mmh3.hash(b"cd", 1, signed=False)]


def test_bad_keys():
    with pytest.raises(LDPTypeError):
        hash_keys(np.array([1.5]), [0])
    with pytest.raises(LDPTypeError):
        hash_keys([None], [0])
    with pytest.raises(LDPValueError):
        hash_keys([2 ** 70], [0])
    with pytest.raises(LDPValueError):
        hash_keys([1], [-1])


def test_string_arrays_are_hashed_per_length():
    rng = np.random.default_rng(0)
    for alphabet in ("abcé€", "ab\x00c"):            # non-ASCII (encoded) and ASCII (viewed) text
        words = ["".join(rng.choice(list(alphabet), size=rng.integers(0, 12))) for _ in range(300)]
        words = [w.rstrip("\x00") for w in words]    # numpy strings cannot end with NUL
        for values in (np.array(words), words, np.array([w.encode() for w in words])):
            h = hash_keys(values, [0, 9])
            ref = [[mmh3.hash(w.encode(), s, signed=False) for s in (0, 9)] for w in words]
            np.testing.assert_array_equal(h, ref)
