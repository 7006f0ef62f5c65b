"""protocols.core.randomness: exact laws, large ε, reproducibility and the secure default source."""

import math
from fractions import Fraction

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from scipy import stats

from bfrrce import BFRRCE
from protocols import OUE, SHE, LDPTypeError, LDPValueError, SystemRandom
from protocols.core import randomness
from protocols.core.randomness import (_expansion, bernoulli, generator, integers, laplace_grid, source,
                                  sparse_bernoulli)

Q4 = 1 / (math.exp(4) + 1)           # OUE's q at ε = 4, the default sparse case
P_VALUE = 1e-4                        # chi-square tests at fixed seeds fail below this


@pytest.fixture(autouse=True)
def keyed_os_randomness(monkeypatch):
    """The secure source keys its ChaCha20 stream from ``os.urandom``: here from a seeded stream
    (fresh bytes on every call, the same in every run), so the tests of the secure source are as
    reproducible as the seeded ones; tests of the keying itself patch ``os.urandom`` again."""
    stream = np.random.default_rng(20261201)
    monkeypatch.setattr(randomness.os, "urandom", lambda n: stream.bytes(n))


def chi_square_p(counts, probabilities, n):
    """p-value of observed counts against n·probabilities, the tail beyond the last bin pooled."""
    counts = np.append(counts, np.zeros(max(0, len(probabilities) - len(counts)), dtype=counts.dtype))
    expected = np.append(n * np.asarray(probabilities), n * (1 - np.sum(probabilities)))
    observed = np.append(counts[:len(probabilities)], counts[len(probabilities):].sum())
    keep = expected >= 5
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    if expected[-1] == 0:
        observed, expected = observed[:-1], expected[:-1]
    return stats.chisquare(observed, expected).pvalue


def gaps_of(draws):
    """The geometric gaps (zeros before each one) of a 0/1 sequence."""
    return np.diff(np.flatnonzero(draws), prepend=-1) - 1


# -- Bernoulli, integers -----------------------------------------------------------------------
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


# -- sparse Bernoulli: exact geometric gaps ----------------------------------------------------
@pytest.mark.parametrize("p", [3 / 64, Q4, 2 ** -10, 0.3])
@pytest.mark.parametrize("src", [np.random.default_rng(4), SystemRandom()], ids=["seeded", "secure"])
def test_sparse_gaps_are_geometric(p, src):
    gaps = gaps_of(sparse_bernoulli(src, p, int(50_000 / p)))
    k = np.arange(int(30 / p))
    # scipy's geom counts trials (support 1, 2, ...): zeros before a one are geom − 1
    assert chi_square_p(np.bincount(gaps), stats.geom.pmf(k + 1, p), gaps.size) > P_VALUE


def test_sparse_rows_follow_the_binomial_law():
    """q = 3/64 has a 6-bit expansion: ones per row of 64 bits are Binomial(64, 3/64)."""
    q, rows = 3 / 64, 100_000
    counts = sparse_bernoulli(np.random.default_rng(6), q, rows * 64).reshape(rows, 64).sum(axis=1)
    assert chi_square_p(np.bincount(counts), stats.binom.pmf(np.arange(8), 64, q), rows) > P_VALUE
    total = counts.sum()
    assert abs(total - rows * 64 * q) <= 5 * math.sqrt(rows * 64 * q * (1 - q))
    # independence: pairs of neighbours are both set with probability q²
    draws = sparse_bernoulli(np.random.default_rng(5), 0.05, 2_000_000)
    assert abs((draws[:-1] & draws[1:]).mean() - 0.0025) <= 5 * math.sqrt(0.0025 / 2_000_000)


@pytest.mark.parametrize("p, size", [(2 ** -11 * 1.5, 30_000_000), (1e-5, 40_000_000)])
def test_rare_ones_are_thinned_exactly(p, size):
    """Below 2^-10 the ones of a Bernoulli(2^-10) process are kept with probability p·2^10."""
    for src in (np.random.default_rng(7), SystemRandom()):
        ones = sparse_bernoulli(src, p, size).sum()
        assert abs(ones - size * p) <= 5 * math.sqrt(size * p)
    gaps = gaps_of(sparse_bernoulli(np.random.default_rng(8), p, size))
    # the gap law is geometric: deciles of the gaps against those of geom(p) − 1
    deciles = stats.geom.ppf(np.arange(1, 10) / 10, p) - 1
    counts = np.bincount(np.searchsorted(deciles, gaps, side="left"), minlength=10)
    probabilities = np.diff(stats.geom.cdf(np.append(deciles, np.inf) + 1, p), prepend=0)
    assert stats.chisquare(counts, probabilities * gaps.size).pvalue > P_VALUE


@pytest.mark.parametrize("p", [5e-324, 1e-300, 1e-20, 0.0])
def test_tiny_probabilities_never_crash(p):
    for src in (np.random.default_rng(9), SystemRandom()):
        assert not sparse_bernoulli(src, p, 3_000_000).any()


# -- the exact tie-breaking of the gap sampler, with scripted random bytes ----------------------
class Scripted:
    """A random source returning the given byte strings in turn, then 0xFF bytes.

    The first request (the 16 high bits of every gap's uniform) gets ``first`` followed by
    0xFF bytes (gaps of 0), every later request the next item of ``then``."""

    def __init__(self, first, *then):
        self.first, self.then = first, list(then)

    def bytes(self, length):
        if self.first is not None:
            head, self.first = self.first, None
        else:
            head = self.then.pop(0) if self.then else b""
        return (head + b"\xff" * length)[:length]


def first_gap(p, u, v, after=0xFFFF):
    """The first gap drawn when the 32-bit uniform is ``u`` and the next 64 bits are ``v``
    (``after``: the high 16 bits of the uniform of a further gap, if one is drawn)."""
    src = Scripted((u >> 16).to_bytes(2, "little"), (u & 0xFFFF).to_bytes(2, "little"),
                   v.to_bytes(8, "little"), after.to_bytes(2, "little"))
    return int(np.flatnonzero(sparse_bernoulli(src, p, 10_000))[0])


def exact_gap(p, x, bits_):
    """max{k : U < (1 − p)^k} for U in [x, x + 1)·2^-bits_, or None if those bits do not decide."""
    r = 1 - Fraction(p)
    lo, hi = Fraction(x, 2 ** bits_), Fraction(x + 1, 2 ** bits_)
    k, power = 0, r
    while hi <= power:
        k, power = k + 1, power * r
    return k if lo >= power else None


def floor_thresholds(p, count):
    """⌊(1 − p)^k·2^32⌋ for k = 0 .. count − 1."""
    r = 1 - Fraction(p)
    powers = [r.numerator ** 0]
    for _ in range(count - 1):
        powers.append(powers[-1] * r.numerator)
    e = r.denominator.bit_length() - 1                     # r = numerator / 2^e
    return [(power << 32) >> (e * k) for k, power in enumerate(powers)]


def floor_threshold(p, k):
    return floor_thresholds(p, k + 1)[k]


@pytest.mark.parametrize("p", [Q4, 3 / 64])
def test_ties_are_broken_by_more_bits_exactly(p):
    r = 1 - Fraction(p)
    for k in (1, 7, 40):
        u = floor_threshold(p, k)                           # U's first 32 bits tie with r^k
        exact = r ** k * 2 ** 96 - u * 2 ** 64              # where r^k falls in the next 64 bits
        for v in (math.floor(exact) - 1, math.floor(exact) + 1, 0, 2 ** 64 - 1):
            if 0 <= v < 2 ** 64:
                expected = exact_gap(p, (u << 64) | v, 96)
                assert expected is not None and first_gap(p, u, v) == expected
    # several thresholds r^k, r^(k+1), ... share the 32-bit floor 1 (their spacing is ~q·2^-32)
    shared = [k for k, f in enumerate(floor_thresholds(p, 2000)) if f == 1]
    assert len(shared) > 3
    middle = shared[len(shared) // 2]
    v = math.floor((r ** middle * 2 ** 96) % 2 ** 64) - 1
    assert first_gap(p, 1, v) == exact_gap(p, (1 << 64) | v, 96) == middle


def test_uniforms_below_the_last_threshold_continue_memorylessly():
    """u = 0 and zeros after it: U < r^K, so the gap is K plus a fresh gap (5 here: its
    uniform falls between r^6 and r^5)."""
    last = floor_thresholds(Q4, 2000).index(0)
    assert first_gap(Q4, 0, 0, after=(floor_threshold(Q4, 5) >> 16) - 1) == last + 5


# -- discrete Laplace ---------------------------------------------------------------------------
@pytest.mark.parametrize("src", [np.random.default_rng(3), SystemRandom()], ids=["seeded", "secure"])
@pytest.mark.parametrize("scale, step", [(2.0, 0.25), (2 / 3, 2.0 ** -6), (0.1, 1.0)])
def test_discrete_laplace_has_the_exact_law(src, scale, step):
    x = laplace_grid(src, scale, step, 300_000)
    a = step / scale                                     # Pr[k] ∝ exp(−a|k|): scipy's dlaplace(a)
    k = np.arange(-int(25 / a) - 1, int(25 / a) + 2)
    counts = np.bincount(x - k[0], minlength=k.size)
    assert counts.size == k.size                         # no draw beyond ±25 scales
    assert chi_square_p(counts, stats.dlaplace.pmf(k, a), x.size) > P_VALUE
    var = stats.dlaplace.var(a)
    assert abs(x.mean()) <= 5 * math.sqrt(var / x.size)


def test_discrete_laplace_refuses_grids_it_cannot_represent():
    with pytest.raises(LDPValueError, match="2\\^56"):
        laplace_grid(np.random.default_rng(0), 2.0 ** 60, 1.0, 1)


# -- every ε the validator accepts --------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [45, 200, 700])
def test_large_epsilon_privatizes(epsilon):
    for rng in (None, 0):
        assert BFRRCE(epsilon=epsilon).privatize(["a"], rng=rng).shape == (1, 128)
        assert OUE(epsilon=epsilon, d=8).privatize([1], rng=rng).shape == (1, 1)
        assert SHE(epsilon=epsilon, d=4).privatize([1], rng=rng).shape == (1, 4)
    # q < 1e-9: over 10^4 reports of 1024 bits no zero flips (probability < 0.02)
    mech = BFRRCE(epsilon=epsilon)
    reports = mech.privatize(np.arange(10_000), rng=1)
    truth = mech.bloom.bits(np.arange(10_000)).astype(bool)
    assert not (np.unpackbits(reports, axis=1, bitorder="little").astype(bool) & ~truth).any()


# -- reproducibility ----------------------------------------------------------------------------
@pytest.mark.parametrize("mech", [BFRRCE(epsilon=4), BFRRCE(epsilon=1), OUE(epsilon=4, d=64),
                                  SHE(epsilon=1, d=16)], ids=["bfrrce4", "bfrrce1", "oue", "she"])
def test_seeds_reproduce_and_differ(mech):
    values = np.arange(500) % 16
    one, again, other = (mech.privatize(values, rng=s) for s in (11, 11, 12))
    np.testing.assert_array_equal(one, again)
    assert not np.array_equal(one, other)


# -- the secure default -------------------------------------------------------------------------
def chacha20(key, length):
    return Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor().update(bytes(length))


def test_system_random_is_the_chacha20_stream_of_an_os_key(monkeypatch):
    keys = []

    def urandom(length):
        keys.append(bytes(range(len(keys), len(keys) + length)))
        return keys[-1]

    monkeypatch.setattr(randomness.os, "urandom", urandom)
    src = SystemRandom()
    stream = src.bytes(10) + src.bytes(3 << 20) + src.bytes(5)     # a long request is split
    assert [len(k) for k in keys] == [32]
    assert stream == chacha20(keys[0], len(stream))
    # every privatize with rng=None keys a new stream from os.urandom: same key, same report
    mech = BFRRCE(epsilon=4)
    keys.clear()
    first = mech.privatize(np.arange(100))
    keys.clear()
    assert np.array_equal(first, mech.privatize(np.arange(100))) and len(keys) == 1


def test_system_random_rekeys_in_a_fork_and_after_its_budget(monkeypatch):
    calls = []
    monkeypatch.setattr(randomness.os, "urandom", lambda n: calls.append(n) or bytes(n))
    src = SystemRandom()
    src.bytes(8)
    monkeypatch.setattr(randomness.os, "getpid", lambda: -1)         # as in a forked child
    src.bytes(8)
    assert calls == [32, 32]
    monkeypatch.setattr(SystemRandom, "REKEY_BYTES", 100)
    src = SystemRandom()
    src.bytes(60)
    src.bytes(60)
    assert calls == [32] * 4


def test_without_a_seed_reports_differ():
    mech = OUE(epsilon=4, d=1024)
    assert not np.array_equal(mech.privatize(np.zeros(1000, dtype=int)),
                              mech.privatize(np.zeros(1000, dtype=int)))


def test_a_bit_generator_is_an_rng():
    """numpy SPEC 7: a BitGenerator is wrapped in a Generator that shares its state."""
    mech = BFRRCE(epsilon=2.0, L=64)
    a = mech.privatize(["x", "y"], rng=np.random.PCG64(5))
    b = mech.privatize(["x", "y"], rng=np.random.Generator(np.random.PCG64(5)))
    assert np.array_equal(a, b)
    bits = np.random.PCG64(1)
    generator(bits).random()
    assert bits.state != np.random.PCG64(1).state            # the caller's stream advanced
