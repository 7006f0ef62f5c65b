"""All randomness of the package goes through this module (numpy SPEC 7 conventions).

``rng`` arguments accept None, an int seed, a :class:`numpy.random.SeedSequence`, a
:class:`numpy.random.Generator` or a :class:`SystemRandom`.

* Client-side privatization (:func:`source`) with ``rng=None`` draws every random byte from the
  operating system's CSPRNG (``os.urandom``): noise an attacker could predict would undo the
  privacy. Pass a seed only for simulations and tests.
* Simulations of aggregates (:func:`generator`) need a numpy Generator; ``None`` gives a fresh
  OS-seeded one.

Sampling is exact: Bernoulli draws compare random bytes with the exact binary expansion of the
probability (no float rounding of the comparison), integers use rejection (no modulo bias).
"""

from __future__ import annotations

import numbers
import os

import numpy as np

from . import bits
from .errors import LDPTypeError


class SystemRandom:
    """Random bytes from the operating system's CSPRNG (``os.urandom``)."""

    def bytes(self, length):
        return os.urandom(length)

    def __repr__(self):
        return "SystemRandom()"


def source(rng=None):
    """Random source for client-side privatization: OS CSPRNG when ``rng`` is None."""
    if rng is None:
        return SystemRandom()
    if isinstance(rng, (SystemRandom, np.random.Generator)):
        return rng
    return generator(rng)


def generator(rng=None):
    """A numpy Generator (for simulations): ``None`` gives a fresh OS-seeded one."""
    if isinstance(rng, SystemRandom):
        return np.random.default_rng()
    if rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise LDPTypeError(
        f"rng must be None, an int, a SeedSequence, a Generator or SystemRandom, got {rng!r}")


def random_bytes(src, size):
    """``size`` uniform random bytes as a uint8 array."""
    return np.frombuffer(src.bytes(int(size)), dtype=np.uint8).copy()


def uniform(src, size):
    """Uniform floats on [0, 1) with 53 random bits each."""
    words = np.frombuffer(src.bytes(8 * int(size)), dtype="<u8")
    return (words >> np.uint64(11)) * (2.0 ** -53)


def integers(src, high, size):
    """Uniform integers in [0, high) (``high`` an int >= 1 or an int array), without modulo bias."""
    high = np.broadcast_to(np.asarray(high, dtype=np.int64), (int(size),))
    if isinstance(src, np.random.Generator):
        return src.integers(0, high, dtype=np.int64)
    # rejection sampling under a power-of-two mask: fewer than 2 rounds expected
    bits = np.ceil(np.log2(np.maximum(high, 2))).astype(np.uint64)
    mask = (np.uint64(1) << bits) - np.uint64(1)
    out = np.empty(high.shape, dtype=np.int64)
    todo = np.arange(high.size)
    while todo.size:
        words = np.frombuffer(src.bytes(8 * todo.size), dtype="<u8") & mask[todo]
        ok = words < high[todo].astype(np.uint64)
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


def bernoulli(src, p, size):
    """Exact Bernoulli(``p``) draws as a bool array of length ``size``.

    A uniform variate U is read byte by byte and compared with the binary expansion of p;
    ``U < p`` is decided at the first differing byte, so about one random byte is used per draw
    and the probability is exactly the float ``p``.
    """
    size = int(size)
    expansion = _expansion(p)
    if expansion is None:
        return np.ones(size, dtype=bool)
    out = np.zeros(size, dtype=bool)
    todo = None                         # None: every index (avoids an arange on the first pass)
    for threshold in expansion:
        count = size if todo is None else todo.size
        u = random_bytes(src, count)
        if todo is None:
            out = u < threshold
            todo = np.flatnonzero(u == threshold)
        else:
            out[todo[u < threshold]] = True
            todo = todo[u == threshold]
        if todo.size == 0:
            break
    return out


SPARSE_BELOW = 1 / 16
_PACK_CHUNK_BITS = 1 << 23         # bits perturbed per chunk before packing (8 MiB of bools)


def sparse_bernoulli(src, p, size):
    """Bernoulli(``p``) draws for small p, generating only the ones.

    The gaps between successive ones of a Bernoulli process are geometric:
    G = ⌊ln U / ln(1 − p)⌋ with U uniform on (0, 1] (53-bit), so the cost is proportional to
    p·size. The law is exact up to the 2^-53 resolution of U, and does not depend on any input.
    """
    size = int(size)
    out = np.zeros(size, dtype=bool)
    if p <= 0:
        return out
    log_q = np.log1p(-p)
    position = -1
    while True:
        expected = (size - position) * p
        count = int(expected + 6 * np.sqrt(expected) + 16)
        gaps = np.floor(np.log1p(-uniform(src, count)) / log_q).astype(np.int64) + 1
        steps = position + np.cumsum(gaps)
        inside = steps[steps < size]
        out[inside] = True
        if inside.size < steps.size:
            return out
        position = int(steps[-1])


def randomized_response_bits(src, bits_shape, ones, p, q):
    """Per-bit randomized response on a sparse bit matrix.

    Parameters
    ----------
    bits_shape : tuple
        Shape (n, d) of the bit matrix.
    ones : tuple of index arrays
        Positions of the 1-bits (as from ``numpy.nonzero``); repeated positions are allowed.
    p, q : float
        Pr[output 1 | bit 1] and Pr[output 1 | bit 0].

    Returns a bool array of shape ``bits_shape``: Bernoulli(q) everywhere, then Bernoulli(p)
    redrawn at the 1-bits. For q < 1/16 only the flipped zeros are drawn (:func:`sparse_bernoulli`,
    about 8q random bytes per bit instead of 1).
    """
    n, d = bits_shape
    sampler = sparse_bernoulli if q < SPARSE_BELOW else bernoulli
    out = sampler(src, q, n * d).reshape(n, d)
    out[ones] = bernoulli(src, p, np.size(ones[0]))
    return out


def randomized_response_packed(src, bits_shape, ones, p, q):
    """:func:`randomized_response_bits`, returned packed (uint8 rows, little-endian bit order).

    ``ones`` must be sorted by row (as ``numpy.nonzero`` gives). Rows are perturbed and packed
    ~2^23 bits at a time, so the memory beyond the packed output is O(1) in n (one bool per bit
    of a chunk, not of the whole batch).
    """
    n, d = bits_shape
    rows, cols = (np.asarray(index) for index in ones)
    out = np.empty((n, bits.nbytes(d)), dtype=np.uint8)
    step = max(1, _PACK_CHUNK_BITS // max(d, 1))
    starts = np.arange(0, n + step, step)
    bounds = np.searchsorted(rows, starts)
    for i, start in enumerate(starts[:-1]):
        stop = min(start + step, n)
        lo, hi = bounds[i], bounds[i + 1]
        noisy = randomized_response_bits(src, (stop - start, d), (rows[lo:hi] - start, cols[lo:hi]), p, q)
        out[start:stop] = bits.pack(noisy)
    return out


def laplace_grid(src, scale, step, size):
    """Discrete Laplace noise on the grid ``step``·ℤ: Pr[k·step] ∝ exp(−|k|·step/scale).

    Sampled as the difference of two geometric variables, so outputs are exact multiples of
    ``step`` and carry no floating-point artefacts (the attack of Mironov, CCS 2012, reads the
    low-order bits of continuous Laplace samples). Returned as int64 multiples of ``step``.
    """
    a = np.exp(-step / scale)
    if isinstance(src, np.random.Generator):      # numpy's sampler counts trials from 1
        g = src.geometric(1 - a, (2, int(size))).astype(np.int64) - 1
    else:   # inverse CDF of a geometric variable on {0, 1, ...} with Pr[k] = (1 - a) a^k
        u = uniform(src, 2 * int(size)).reshape(2, -1)
        g = np.floor(np.log1p(-u) / np.log(a)).astype(np.int64)
    return g[0] - g[1]
