"""Memoized randomness: uniforms that are a deterministic function of a user's secret and a key.

Memoized clients (Ding, Kulkarni, Yekhanin, NeurIPS 2017, Section 3; RAPPOR's permanent response)
derive all their randomness from a per-user 64-bit secret, so the same state gives the same report
in every round (docs/accountant.md). MurmurHash3 of (secret, mechanism, key): uniform, not a
cryptographic PRF. The mechanism word (:func:`mechanism_word`: its class and every parameter)
makes the memos of two mechanisms, or of one mechanism with other parameters, independent when
a user feeds them one secret: their reports then compose, ε_1 + ε_2, as the accountant charges.
"""

from __future__ import annotations


import functools
import hashlib
import json

import numpy as np
from numpy.typing import ArrayLike

from protocols.errors import LDPTypeError
from protocols.core.hashing import murmur3_fixed
from protocols.core.randomness import SystemRandom
from protocols.core.registry import mechanism_params


STREAM_ALPHA, STREAM_BIT, STREAM_SAMPLE = 0xA1, 0xB1, 0x5A


@functools.lru_cache(maxsize=256)
def _word(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little", signed=True)


def mechanism_word(mechanism) -> int:
    """A 64-bit word (signed int) naming a mechanism's class and parameters: the first 8 bytes
    of the SHA-256 of its class name and constructor arguments (:mod:`protocols.core.registry`).

    Parameters
    ----------
    mechanism : object
        A dataclass mechanism (:func:`protocols.core.registry.mechanism_params`).

    Returns
    -------
    int
        The word, a signed 64-bit integer.
    """
    params = json.dumps(mechanism_params(mechanism), sort_keys=True, default=repr)
    return _word(f"{type(mechanism).__module__}.{type(mechanism).__qualname__}:{params}")


def keyed_uniform(secrets: ArrayLike, *keys: ArrayLike) -> np.ndarray:
    """Uniforms on the 2^-53 grid, a deterministic function of (secret, *keys) (broadcast).

    Two MurmurHash3 x86_32 hashes (seeds 0x9E37, 0x85EB) of the 8-byte little-endian words
    (secret, key_1, …) give 26 + 27 bits.

    Parameters
    ----------
    secrets : array_like of uint64
        Per-user secrets.
    *keys : array_like of int
        Further 64-bit words (stream tag, memo key, ...), broadcast against ``secrets``.

    Returns
    -------
    numpy.ndarray
        float64 in [0, 1), of the broadcast shape.
    """
    cols = np.broadcast_arrays(np.asarray(secrets, dtype=np.uint64),
                               *(np.asarray(k, dtype=np.int64).astype(np.uint64) for k in keys))
    words = np.stack([c.ravel() for c in cols], axis=1).astype("<u8")
    raw = words.view(np.uint8).reshape(words.shape[0], -1)
    hi = murmur3_fixed(raw, 0x9E37).astype(np.uint64) >> np.uint64(6)
    lo = murmur3_fixed(raw, 0x85EB).astype(np.uint64) >> np.uint64(5)
    return (((hi << np.uint64(27)) | lo).astype(np.float64) * 2.0 ** -53).reshape(cols[0].shape)


def check_secrets(secrets: ArrayLike | None, n: int, src: np.random.Generator | SystemRandom) -> np.ndarray:
    """Per-user uint64 secrets; None draws fresh ones (one-shot use, nothing repeats).

    Parameters
    ----------
    secrets : array_like of int or None
        One integer per user.
    n : int
        Number of users.
    src : numpy.random.Generator or SystemRandom
        Source of fresh secrets.

    Returns
    -------
    numpy.ndarray
        uint64 (n,).

    Raises
    ------
    LDPTypeError
        Not n integers.
    """
    if secrets is None:
        return np.frombuffer(src.bytes(8 * n), dtype="<u8").copy()
    secrets = np.asarray(secrets)
    if secrets.shape != (n,) or not np.issubdtype(secrets.dtype, np.integer):
        raise LDPTypeError(f"secrets must be {n} integers, got {secrets.dtype} {secrets.shape}")
    return secrets.astype(np.uint64)
