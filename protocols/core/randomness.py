"""All randomness of the package goes through this module (numpy SPEC 7 conventions).

``rng`` arguments accept None, an int seed, a :class:`numpy.random.SeedSequence`, a
:class:`numpy.random.BitGenerator` (wrapped in a Generator, its state shared), a
:class:`numpy.random.Generator` or a :class:`SystemRandom`.

* Client-side privatization (:func:`source`) with ``rng=None`` draws from :class:`SystemRandom`:
  a ChaCha20 keystream under a fresh 256-bit key from the operating system's CSPRNG
  (``os.urandom``) for every call, a cryptographically secure generator (noise an attacker
  could predict would undo the privacy). Pass a seed only for simulations and tests.
* Simulations of aggregates (:func:`generator`) need a numpy Generator; ``None`` gives a fresh
  OS-seeded one.

Sampling is exact: every draw is computed from random bits by integer comparisons, so its law
is exactly the one stated, for the float parameters as given; the only assumption is that the
source's bits are uniform and independent. Bernoulli draws compare random bytes with the binary
expansion of the probability; integers use rejection (no modulo bias); the gaps between the
ones of a sparse Bernoulli process are geometric, found by comparing random bits with a table
of the exact thresholds (1 − q)^k (16 bits decide most gaps, more bits the rest, exactly);
discrete Laplace noise uses the exact sampler of Canonne, Kamath and Steinke (2020). The one
floating-point helper is :func:`uniform` (53-bit uniforms, exact on the grid k·2^-53), used
for stochastic rounding.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import warnings
from contextlib import contextmanager
from fractions import Fraction
from typing import Union

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from protocols.bits import packing as bits
from protocols.errors import LDPTypeError, LDPValueError, PrivacyWarning, caller_level

_ZEROS = memoryview(bytes(1 << 20))     # reused: fresh zero pages would cost page faults


class SystemRandom:
    """Cryptographically secure random bytes: a ChaCha20 keystream keyed from ``os.urandom``.

    Each instance draws a 256-bit key from the operating system's CSPRNG and returns the
    ChaCha20 keystream under it (RFC 8439, from the ``cryptography`` package, a core dependency
    because ``os.urandom`` alone is too slow for the client: ``benchmarks/randomness.py``). It
    draws a new key after 2^36 bytes and in a forked child process (a copied key would repeat
    the parent's stream). :func:`source` makes a new instance, hence a new key, for every
    ``privatize`` call.

    References
    ----------
    Y. Nir, A. Langley, "ChaCha20 and Poly1305 for IETF Protocols", RFC 8439, 2018.
    """

    REKEY_BYTES = 1 << 36

    def __init__(self) -> None:
        self._rekey()

    def _rekey(self) -> None:
        self._pid = os.getpid()
        self._left = self.REKEY_BYTES
        self._stream = Cipher(algorithms.ChaCha20(os.urandom(32), bytes(16)), mode=None).encryptor()

    def bytes(self, length: int) -> bytes | bytearray:
        """``length`` uniform random bytes: the next ``length`` bytes of the ChaCha20 keystream
        (the encryption of zeros), under a new key after 2^36 bytes or in a forked child.

        Parameters
        ----------
        length : int
            Number of bytes (converted with ``int``).

        Returns
        -------
        bytes or bytearray
            ``bytes`` up to 2^20 bytes, a ``bytearray`` filled in place beyond.
        """
        length = int(length)
        if self._pid != os.getpid() or length > self._left:
            self._rekey()
        self._left -= length
        if length <= len(_ZEROS):
            return self._stream.update(_ZEROS[:length])
        out = bytearray(length)
        for start in range(0, length, len(_ZEROS)):
            piece = memoryview(out)[start:start + len(_ZEROS)]
            self._stream.update_into(_ZEROS[:len(piece)], piece)
        return out

    def __repr__(self) -> str:
        return "SystemRandom()"


Source = Union[np.random.Generator, SystemRandom]
RNG = Union[None, int, np.random.SeedSequence, np.random.BitGenerator, np.random.Generator, SystemRandom]


def source(rng: RNG = None) -> Source:
    """Random source for client-side privatization: a new :class:`SystemRandom` when ``rng`` is
    None, the ``rng`` itself if it is a Generator or SystemRandom, else :func:`generator` (rng).

    A seed or a Generator is client noise that can be replayed: a :class:`PrivacyWarning`
    says so (a simulation silences it with :func:`simulating`).

    Parameters
    ----------
    rng : None, int, SeedSequence, BitGenerator, Generator or SystemRandom
        What the caller passed.

    Returns
    -------
    numpy.random.Generator or SystemRandom
    """
    if rng is None:
        return SystemRandom()
    if isinstance(rng, SystemRandom):
        return rng
    src = rng if isinstance(rng, np.random.Generator) else generator(rng)
    warnings.warn(SEEDED_WARNING, PrivacyWarning, stacklevel=caller_level())
    return src


@contextmanager
def simulating():
    """Silence the seeded-noise :class:`PrivacyWarning` inside a simulation (server-side code that
    privatizes synthetic values with a seed on purpose).

    Returns
    -------
    contextlib.AbstractContextManager
        A context manager (used as ``with simulating(): ...``) that yields None.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="seeded client noise", category=PrivacyWarning)
        yield


SEEDED_WARNING = ("seeded client noise: whoever knows or guesses the seed replays the noise and "
                  "recovers the values; seeds are for simulations only (rng=None for real clients)")


def generator(rng: RNG = None) -> np.random.Generator:
    """A numpy Generator (for simulations): ``None`` gives a fresh OS-seeded one.

    Parameters
    ----------
    rng : None, int, SeedSequence, BitGenerator, Generator or SystemRandom
        A seed (>= 0) or a source; a SystemRandom gives a fresh OS-seeded Generator.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    LDPTypeError
        Another type.
    LDPValueError
        A negative int seed.
    """
    if isinstance(rng, SystemRandom):
        return np.random.default_rng()
    if rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise LDPValueError(f"an int seed must be >= 0 (numpy's SeedSequence), got {rng!r}")
        return np.random.default_rng(int(rng))
    raise LDPTypeError(
        f"rng must be None, an int, a SeedSequence, a BitGenerator, a Generator or SystemRandom, got {rng!r}")


def random_bytes(src: Source, size: int) -> np.ndarray:
    """``size`` uniform random bytes as a (read-only) uint8 array.

    A numpy Generator gives the raw 64-bit outputs of its bit generator, little-endian (faster
    than ``Generator.bytes``, benchmarks/randomness.py); other sources their ``bytes`` method.

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`source`).
    size : int
        Number of bytes.

    Returns
    -------
    numpy.ndarray
        uint8 (size,), read-only.
    """
    size = int(size)
    if isinstance(src, np.random.Generator):
        words = src.bit_generator.random_raw(-(-size // 8)).astype("<u8", copy=False)
        return words.view(np.uint8)[:size]
    return np.frombuffer(src.bytes(size), dtype=np.uint8)


def _words(src, dtype, size):
    """``size`` uniform unsigned integers of little-endian ``dtype`` ("<u4" or "<u8")."""
    dtype = np.dtype(dtype)
    return random_bytes(src, dtype.itemsize * int(size)).view(dtype)


def uniform(src: Source, size: int) -> np.ndarray:
    """Uniform floats on [0, 1) with 53 random bits each (exact on the grid k·2^-53).

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`source`).
    size : int
        Number of draws.

    Returns
    -------
    numpy.ndarray
        float64 (size,).
    """
    return (_words(src, "<u8", size) >> np.uint64(11)) * (2.0 ** -53)


def integers(src: Source, high, size: int) -> np.ndarray:
    """Uniform integers in [0, high), without modulo bias (rejection under a power-of-two mask).

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`source`).
    high : int or array_like of int
        Exclusive upper bound(s), >= 1 (an array: one per draw).
    size : int
        Number of draws.

    Returns
    -------
    numpy.ndarray
        int64 (size,).
    """
    size = int(size)
    high = np.asarray(high, dtype=np.int64)
    if isinstance(src, np.random.Generator):
        return src.integers(0, np.broadcast_to(high, (size,)), dtype=np.int64)
    # rejection under the smallest power-of-two mask covering high − 1 (its float rounds up, never
    # below a power of two): fewer than 2 rounds expected
    mask = (np.uint64(1) << np.frexp((high - 1).astype(float))[1].astype(np.uint64)) - np.uint64(1)
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        words = _words(src, "<u8", todo.size) & (mask if mask.ndim == 0 else mask[todo])
        ok = words < (high if high.ndim == 0 else high[todo]).astype(np.uint64)
        out[todo[ok]] = words[ok].astype(np.int64)
        todo = todo[~ok]
    return out


def _expansion(p):
    """The exact binary expansion of float ``p`` in [0, 1] as big-endian bytes (p = 1: None)."""
    num, den = float(p).as_integer_ratio()
    if num >= den:
        return None
    k = den.bit_length() - 1            # p = num / 2**k exactly
    nbytes = max(1, -(-k // 8))
    return np.frombuffer((num << (8 * nbytes - k)).to_bytes(nbytes, "big"), dtype=np.uint8)


def bernoulli(src: Source, p: float, size: int, out: np.ndarray | None = None) -> np.ndarray:
    """Exact Bernoulli(``p``) draws as a bool array of length ``size`` (written into ``out`` if
    given).

    A uniform variate U is read byte by byte and compared with the binary expansion of p;
    ``U < p`` is decided at the first differing byte, so about one random byte is used per draw
    and the probability is exactly the float ``p``.

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`source`).
    p : float
        Probability of a one, in [0, 1].
    size : int
        Number of draws.
    out : numpy.ndarray, optional
        bool (size,) buffer to write into.

    Returns
    -------
    numpy.ndarray
        bool (size,) (``out`` when given).
    """
    size = int(size)
    out = np.empty(size, dtype=bool) if out is None else out
    expansion = _expansion(p)
    if expansion is None:
        out[...] = True
        return out
    todo = None                         # None: every index (avoids an arange on the first pass)
    for threshold in expansion:
        count = size if todo is None else todo.size
        u = random_bytes(src, count)
        if todo is None:
            np.less(u, threshold, out=out)
            todo = np.flatnonzero(u == threshold)
        else:
            out[todo[u < threshold]] = True
            todo = todo[u == threshold]
        if todo.size == 0:
            break
    return out


SPARSE_BELOW = 1 / 16
_PACK_CHUNK_BITS = 1 << 23         # most bits perturbed per chunk before packing
_TABLE_MIN = 2.0 ** -10            # gaps of rarer ones: thin a Bernoulli(2^-10) process


class _GapTable:
    """Exact sampler of the geometric law Pr[G = k] = (1 − p)^k·p, k = 0, 1, ... (p >= 2^-10).

    Inverse transform with a uniform U on [0, 1): G = max{k : U < r^k}, r = 1 − p. The float
    p is a dyadic rational, so r = n/2^e and every threshold r^k = n^k/2^{ek} is exact. The
    first 32 bits u of U (U ∈ [u, u + 1)·2^-32) are compared with f_k = ⌊r^k·2^32⌋, k = 1..K,
    where K is the first k with f_k = 0: G >= k is certain when u < f_k and impossible when
    u > f_k. When u = f_k (probability about K·2^-32) more bits of U are compared with
    n^k/2^{ek} in exact integer arithmetic; U < r^K gives G = K + G' with a fresh G' (the law is
    memoryless). The top 16 bits of u are drawn first and looked up in a table of 2^16 buckets,
    which decides G unless the bucket holds a threshold (probability at most K·2^-16); only
    then are the low 16 bits drawn and searched.
    """

    _PRECISION = 96                # bits of the interval bounds used to build f_k

    def __init__(self, p):
        r = 1 - Fraction(p)
        self.n, self.e = r.numerator, r.denominator.bit_length() - 1
        thresholds = []
        lo = hi = 1 << self._PRECISION     # lo <= r^k·2^96 <= hi, rounded down and up
        shift = self._PRECISION - 32
        while not thresholds or thresholds[-1]:
            k = len(thresholds) + 1
            lo, hi = (lo * self.n) >> self.e, -((-hi * self.n) >> self.e)
            f = lo >> shift
            if f != hi >> shift:           # r^k·2^32 within k·2^-64 of an integer: exact value
                f = self._scaled(k, 32)
            thresholds.append(f)
        self.thresholds = np.array(thresholds, dtype=np.uint32)            # f_1 .. f_K
        self.ascending = self.thresholds[::-1].copy()
        starts = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
        self.lookup = self._certain(starts).astype(np.int32) + 1          # G + 1, or 0: search
        self.lookup[np.unique(self.thresholds >> np.uint32(16))] = 0

    def _scaled(self, k, bits_):
        """⌊r^k·2^bits_⌋ exactly."""
        shift = self.e * k - bits_
        return self.n ** k >> shift if shift >= 0 else self.n ** k << -shift

    def _certain(self, u):
        """#{k : f_k > u}: the k with G >= k for sure."""
        return self.thresholds.size - np.searchsorted(self.ascending, u, side="right")

    def draw(self, src, size, start=-1):
        """``size`` independent geometric draws G_i (int64) as the positions
        ``start + cumsum(G + 1)`` of the ones of a Bernoulli process that follow ``start``."""
        high = _words(src, "<u2", size)          # the top 16 of the 32 bits of each u
        steps = self.lookup.take(high).astype(np.int64)                  # G + 1
        slow = np.flatnonzero(steps <= 0)
        if slow.size:                             # draw the low 16 bits only where needed
            u = (high[slow].astype(np.uint32) << np.uint32(16)) | _words(src, "<u2", slow.size)
            certain = self._certain(u)
            steps[slow] = certain + 1
            for i in np.flatnonzero(self.thresholds[certain] == u):
                steps[slow[i]] = self._tie(src, int(u[i]), int(certain[i])) + 1
        steps[0] += start
        return np.cumsum(steps, out=steps)

    def _tie(self, src, u, k):
        """G given u = f_{k+1} (and G >= k): more bits of U against r^{k+1}, r^{k+2}, ..."""
        x, length = u, 32                  # U ∈ [x, x + 1)·2^-length
        K = self.thresholds.size
        while k < K and int(self.thresholds[k]) == u:
            num, shift = self.n ** (k + 1), self.e * (k + 1)      # r^{k+1} = num / 2^shift
            while True:
                if (x + 1) << shift <= num << length:           # U < r^{k+1} whatever follows
                    k += 1
                    break
                if x << shift >= num << length:                 # U >= r^{k+1}
                    return k
                x, length = (x << 64) | int(_words(src, "<u8", 1)[0]), length + 64
        return k if k < K else K + int(self.draw(src, 1)[0])


@functools.lru_cache(maxsize=32)
def _gap_table(p):
    return _GapTable(p)


def _one_positions(src, p, size):
    """Sorted positions of the ones among ``size`` exact Bernoulli(``p``) draws.

    Gaps between ones are geometric (:class:`_GapTable`); for p < 2^-10 the ones of a
    Bernoulli(2^-10) process are each kept with probability p·2^10 (exact: scaling by a power
    of two is exact in floating point).
    """
    if p <= 0:
        return np.empty(0, dtype=np.int64)
    rate = max(p, _TABLE_MIN)
    table = _gap_table(rate)
    found, position = [], -1
    while True:
        expected = (size - 1 - position) * rate
        steps = table.draw(src, int(expected + 6 * math.sqrt(expected) + 16), position)
        inside = np.searchsorted(steps, size)
        found.append(steps[:inside])
        if inside < steps.size:
            break
        position = int(steps[-1])
    ones = found[0] if len(found) == 1 else np.concatenate(found)
    return ones if rate == p else ones[bernoulli(src, p / rate, ones.size)]


def sparse_bernoulli(src: Source, p: float, size: int, out: np.ndarray | None = None) -> np.ndarray:
    """Exact Bernoulli(``p``) draws for small p, generating only the ones.

    The gaps between successive ones of a Bernoulli process are geometric,
    Pr[G = k] = (1 − p)^k·p; they are drawn exactly, mostly from 16 random bits each (a table
    of the thresholds (1 − p)^k, :class:`_GapTable`), so the cost is proportional to p·size:
    about 2 random bytes per one instead of one byte per draw. For p < 2^-10 a Bernoulli(2^-10)
    process is thinned exactly. Every p in [0, 1] works, down to the smallest float (gaps longer
    than ``size`` simply leave no one). Written into ``out`` if given.

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`source`).
    p : float
        Probability of a one, in [0, 1].
    size : int
        Number of draws.
    out : numpy.ndarray, optional
        bool (size,) buffer to write into (must be all False).

    Returns
    -------
    numpy.ndarray
        bool (size,).
    """
    size = int(size)
    if out is None:
        out = np.zeros(size, dtype=bool)
    else:
        out[...] = False
    out[_one_positions(src, p, size)] = True
    return out


def _randomized_response_into(src, out, ones, p, q):
    """:func:`randomized_response_bits` written into the bool matrix ``out``."""
    sampler = sparse_bernoulli if q < SPARSE_BELOW else bernoulli
    sampler(src, q, out.size, out=out.reshape(-1))
    out[ones] = bernoulli(src, p, np.size(ones[0]))


def randomized_response_bits(src: Source, bits_shape: tuple[int, int], ones, p: float,
                             q: float) -> np.ndarray:
    """Per-bit randomized response on a sparse bit matrix.

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`source`).
    bits_shape : tuple
        Shape (n, d) of the bit matrix.
    ones : tuple of index arrays
        Positions of the 1-bits (as from ``numpy.nonzero``); repeated positions are allowed.
    p, q : float
        Pr[output 1 | bit 1] and Pr[output 1 | bit 0].

    Returns
    -------
    numpy.ndarray
        Bool array of shape ``bits_shape``: Bernoulli(q) everywhere, then Bernoulli(p) redrawn
        at the 1-bits. For q < 1/16 only the flipped zeros are drawn (:func:`sparse_bernoulli`,
        about 2 random bytes per flipped bit instead of 1 byte per bit).
    """
    out = np.empty(bits_shape, dtype=bool)
    _randomized_response_into(src, out, ones, p, q)
    return out


def randomized_response_packed(src: Source, bits_shape: tuple[int, int], ones, p: float,
                               q: float) -> np.ndarray:
    """:func:`randomized_response_bits`, returned packed (uint8 rows, little-endian bit order).

    ``ones`` must be sorted by row (as ``numpy.nonzero`` gives). Rows are perturbed in one
    reused bool buffer and packed a chunk at a time: 2^20 bits, or 2^16 expected flips when
    q < 1/16, at most 2^23 bits. Fresh temporaries beyond about 1 MiB come from the operating
    system and cost page faults on every chunk; the memory beyond the packed output is O(1) in n.

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`source`).
    bits_shape : (int, int)
        (n, d): rows and bits per row of the true bit matrix.
    ones : (array_like, array_like)
        Row and column indices of its ones, sorted by row.
    p, q : float
        Pr[output 1 | bit 1] and Pr[output 1 | bit 0].

    Returns
    -------
    numpy.ndarray
        uint8 (n, ceil(d/8)).
    """
    n, d = bits_shape
    rows, cols = (np.asarray(index) for index in ones)
    out = np.empty((n, bits.nbytes(d)), dtype=np.uint8)
    chunk_bits = min(_PACK_CHUNK_BITS, 1 << 20 if q >= SPARSE_BELOW else int((1 << 16) / max(q, _TABLE_MIN)))
    step = max(1, chunk_bits // max(d, 1))
    noisy = np.empty((min(step, n), d), dtype=bool)
    starts = np.arange(0, n + step, step)
    bounds = np.searchsorted(rows, starts)
    for i, start in enumerate(starts[:-1]):
        stop = min(start + step, n)
        lo, hi = bounds[i], bounds[i + 1]
        _randomized_response_into(src, noisy[:stop - start], (rows[lo:hi] - start, cols[lo:hi]), p, q)
        out[start:stop] = bits.pack(noisy[:stop - start])
    return out


_LAPLACE_MAX = 1 << 56             # largest numerator t of scale/step = t/s


def _bernoulli_exp(src, num, den):
    """Exact Bernoulli(exp(−num/den)) draws for int arrays 0 <= num <= den (Canonne et al.,
    Algorithm 1): count K >= 1 until a Bernoulli(γ/K) failure, γ = num/den; K odd w.p. e^{-γ}."""
    k = np.ones(num.shape, dtype=np.int64)
    active = np.arange(num.size)
    while active.size:          # Bernoulli(γ/K): j uniform on [0, K) is 0 and x uniform < num
        hit = num[active] > (integers(src, den, active.size) if den > 1 else 0)
        more = k[active] > 1
        hit[more] &= integers(src, k[active[more]], int(more.sum())) == 0
        active = active[hit]
        k[active] += 1
    return k % 2 == 1


def laplace_grid(src: Source, scale: float, step: float, size: int) -> np.ndarray:
    """Exact discrete Laplace noise on the grid ``step``·ℤ: Pr[k·step] ∝ exp(−|k|·step/scale).

    The algorithm of Canonne, Kamath and Steinke (2020, Algorithm 2) with scale/step = t/s in
    lowest terms (exact: floats are rationals): U uniform on {0, ..., t − 1} kept with probability
    e^{−U/t}, V geometric with ratio e^{−1}, Y = ⌊(U + t·V)/s⌋, a random sign, −0 rejected. Only
    integer comparisons of random bits are used, so outputs are exact multiples of ``step``
    with the stated law and no floating-point artefact (the attack of Mironov, CCS 2012, reads
    the low-order bits of continuous Laplace samples). Returned as int64 multiples of ``step``.

    Parameters
    ----------
    src : numpy.random.Generator or SystemRandom
        Random source (:func:`source`).
    scale : float
        Laplace scale b (> 0).
    step : float
        Grid step (> 0).
    size : int
        Number of draws.

    Returns
    -------
    numpy.ndarray
        int64 (size,): the noise is the returned k times ``step``.

    Raises
    ------
    LDPValueError
        If t > 2^56 (for a power-of-two ``step``: scale/step an integer above 2^56), or, with
        probability below e^{-127} per draw, if a draw overflows int64.

    References
    ----------
    C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020 (arXiv:2004.00010), Algorithms 1 and 2.
    """
    ratio = Fraction(scale) / Fraction(step)
    t, s = ratio.numerator, ratio.denominator
    if t > _LAPLACE_MAX:
        raise LDPValueError(f"laplace_grid needs scale/step = t/s with t <= 2^56, got scale={scale!r}, "
                            f"step={step!r} (t = {t})")
    size = int(size)
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        u = integers(src, t, todo.size)
        kept = _bernoulli_exp(src, u, t)
        u = u[kept]
        v = np.zeros(u.size, dtype=np.int64)
        active = np.arange(u.size)
        while active.size:                     # V: Bernoulli(e^{-1}) successes before a failure
            active = active[_bernoulli_exp(src, np.ones(active.size, dtype=np.int64), 1)]
            v[active] += 1
        if v.size and v.max() > (np.iinfo(np.int64).max - t) // t:
            raise LDPValueError(f"a discrete Laplace draw with scale/step = {ratio} overflows int64")
        y = (u + t * v) // s
        negative = random_bytes(src, y.size) < 128
        accept = kept.copy()
        accept[kept] = ~(negative & (y == 0))
        out[todo[accept]] = np.where(negative, -y, y)[accept[kept]]
        todo = todo[~accept]
    return out
