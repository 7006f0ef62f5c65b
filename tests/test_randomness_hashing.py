import math

import mmh3
import numpy as np
import pytest

from protocols import LDPTypeError, LDPValueError, SystemRandom
from protocols.hashing import hash_keys, murmur3_fixed
from protocols.randomness import _expansion, bernoulli, generator, integers, source


@pytest.mark.parametrize("p", [0.5, 1 / 3, 0.01, 1e-5, 0.999, 0.0, 1.0])
def test_bernoulli_is_exact_in_mean(p):
    n = 400000
    draws = bernoulli(np.random.default_rng(0), p, n)
    assert abs(draws.mean() - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_expansion_is_exact():
    for p in [0.1, 1 / 3, 2 ** -40, 0.75]:
        e = _expansion(p)
        value = sum(int(b) * 256.0 ** -(i + 1) for i, b in enumerate(e))
        assert int.from_bytes(e.tobytes(), "big") / 2 ** (8 * e.size) == p
        assert value == pytest.approx(p)


def test_integers_unbiased_on_both_sources():
    for src in (SystemRandom(), np.random.default_rng(1)):
        x = integers(src, 3, 300000)
        counts = np.bincount(x, minlength=3)
        assert x.min() >= 0 and x.max() < 3
        assert np.all(np.abs(counts / 300000 - 1 / 3) <= 5 * math.sqrt(2 / 9 / 300000))


def test_sources():
    assert isinstance(source(None), SystemRandom)
    assert isinstance(source(3), np.random.Generator)
    assert isinstance(generator(None), np.random.Generator)
    with pytest.raises(LDPTypeError):
        source("seed")


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


@pytest.mark.parametrize("p", [0.05, 0.001, 1e-6])
def test_sparse_bernoulli_is_a_bernoulli_process(p):
    from protocols.randomness import sparse_bernoulli
    for src in (np.random.default_rng(4), SystemRandom()):
        size = 2_000_000
        draws = sparse_bernoulli(src, p, size)
        assert abs(draws.mean() - p) <= 5 * math.sqrt(p * (1 - p) / size)
    # independence: pairs of neighbours are both set with probability p²
    draws = sparse_bernoulli(np.random.default_rng(5), 0.05, 2_000_000)
    both = (draws[:-1] & draws[1:]).mean()
    assert abs(both - 0.0025) <= 5 * math.sqrt(0.0025 / 2_000_000)


@pytest.mark.parametrize("src", [np.random.default_rng(3), SystemRandom()])
def test_discrete_laplace_has_its_variance(src):
    from protocols.randomness import laplace_grid
    a = math.exp(-1 / 8)
    x = laplace_grid(src, 2.0, 0.25, 400_000)           # step/scale = 1/8
    var = 2 * a / (1 - a) ** 2
    assert abs(x.mean()) <= 5 * math.sqrt(var / x.size)
    # relative sd of a sample variance: sqrt((kurtosis − 1)/n), kurtosis 6 for (near-)Laplace noise
    assert abs(x.var() / var - 1) <= 5 * math.sqrt(5 / x.size)
