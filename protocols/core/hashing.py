"""Vectorised MurmurHash3 x86_32, bit-identical to ``mmh3.hash(key, seed, signed=False)``.

Canonical keys (a client in another language must reproduce them):
``bytes`` as is, ``str`` as UTF-8, integers as 8-byte little-endian signed two's complement.
Integer keys and equal-length byte strings are hashed in numpy, a whole batch at once; a list
of other keys is dictionary-encoded, and each distinct key is encoded once and hashed in numpy
per group of equal length (:func:`hash_buffer`, which also hashes keys stored back to back as
Arrow stores strings); a batch of fewer than 64 keys goes through ``mmh3``, faster there.
"""

from __future__ import annotations

import numbers
import warnings

import mmh3
import numpy as np
from numpy.typing import ArrayLike

from protocols.errors import LDPTypeError, LDPValueError, caller_level

_FEW_KEYS = 64
_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


def _rotl(x, r):
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _fmix(h):
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def murmur3_fixed(keys: ArrayLike, seed: int) -> np.ndarray:
    """MurmurHash3 x86_32 of each row of a uint8 matrix, all rows at once.

    Parameters
    ----------
    keys : array_like of uint8
        Matrix (n, w): n keys of w bytes.
    seed : int
        32-bit seed.

    Returns
    -------
    numpy.ndarray
        uint32 hashes (n,), equal to ``mmh3.hash(row, seed, signed=False)``.

    References
    ----------
    A. Appleby, MurmurHash3 (SMHasher), 2011.
    """
    keys = np.ascontiguousarray(keys, dtype=np.uint8)
    n, width = keys.shape
    h = np.full(n, np.uint32(int(seed) & 0xFFFFFFFF), dtype=np.uint32)
    nblocks = width // 4
    if nblocks:
        blocks = keys[:, :4 * nblocks].copy().view("<u4")
        for i in range(nblocks):
            k = blocks[:, i] * _C1
            k = _rotl(k, 15) * _C2
            h ^= k
            h = _rotl(h, 13) * np.uint32(5) + np.uint32(0xE6546B64)
    tail = width - 4 * nblocks
    if tail:
        k = np.zeros(n, dtype=np.uint32)
        for i in range(tail):
            k |= keys[:, 4 * nblocks + i].astype(np.uint32) << np.uint32(8 * i)
        h ^= _rotl(k * _C1, 15) * _C2
    h ^= np.uint32(width)
    return _fmix(h)


def canonical_key(value: bytes | str | int) -> bytes:
    """Canonical bytes of one key (docs/formats.md).

    Parameters
    ----------
    value : bytes, str or int
        bytes as is, str as UTF-8, integers as 8-byte little-endian two's complement.

    Returns
    -------
    bytes

    Raises
    ------
    LDPTypeError
        Another type (booleans included).
    LDPValueError
        An integer outside the signed 64-bit range.
    """
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise LDPValueError(f"str key {value[:40]!r} is not valid Unicode text ({exc.reason}: "
                                "a lone surrogate has no UTF-8 bytes)") from None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        try:
            return int(value).to_bytes(8, "little", signed=True)
        except OverflowError:
            raise LDPValueError(f"integer key {value!r} does not fit in 64 bits") from None
    raise LDPTypeError(f"keys must be bytes, str or integers, got {type(value).__name__}: {value!r}")


def as_keys(values) -> np.ndarray:
    """A batch of keys as a 1-D array that keeps every key's canonical bytes (the one
    conversion every path uses before indexing keys: privatize, simulate, candidates, CMS/HCMS
    clients and server, RAPPOR).

    ``numpy.asarray`` of a list turns ints mixed with str into text and drops trailing NULs of
    bytes; here a list of integers becomes int64 and any other list an object array of the
    values themselves. Arrays are returned as they are, after the refusals below.

    Parameters
    ----------
    values : sequence or numpy.ndarray
        The keys (str, bytes or integers), one per user.

    Returns
    -------
    numpy.ndarray
        1-D: ``values`` itself for an array, int64 for a list of integers, object otherwise.

    Raises
    ------
    LDPTypeError
        A masked array (masked entries are not users), or an array of floats, complex numbers,
        booleans, datetimes or timedeltas (their integer view would make 1 s, 1 ms and 1 one
        key: pass text or integers in an explicit unit), or more than one dimension.
    """
    if isinstance(values, (str, bytes, set, frozenset, dict)) or not hasattr(values, "__len__"):
        raise LDPTypeError(f"keys must be a sequence (list, tuple, 1-D array), got {type(values).__name__}: "
                           f"{values!r:.80} (one str or bytes key: wrap it as [key])")
    if isinstance(values, np.ndarray):
        check_key_dtype(values)
        if values.ndim != 1:
            raise LDPTypeError(f"keys must be one-dimensional, got shape {values.shape}")
        return values
    seq = list(values)
    if seq and all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in seq):
        try:
            return np.array([int(v) for v in seq], dtype=np.int64)
        except OverflowError:
            raise LDPValueError("integer keys must fit in 64 bits") from None
    return np.fromiter(seq, dtype=object, count=len(seq))


def distinct_keys(values) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys of a batch (one representative each, equal canonical bytes being one
    key) and how many times each occurs: (keys, int64 counts).

    Parameters
    ----------
    values : sequence or numpy.ndarray
        The keys (:func:`as_keys`).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The distinct keys and the int64 count of each.
    """
    keys = as_keys(values)
    if keys.dtype != object:
        return np.unique(keys, return_counts=True)
    index: dict = {}
    codes = np.fromiter((index.setdefault(canonical_key(v), i) for i, v in enumerate(keys)),
                        dtype=np.intp, count=len(keys))
    first = np.fromiter(index.values(), dtype=np.intp, count=len(index))
    order = np.unique(codes, return_inverse=True)[1]
    return keys[first], np.bincount(order, minlength=len(first)).astype(np.int64)


def deduplicate(values, name: str = "candidates") -> np.ndarray:
    """``values`` (:func:`as_keys`) with each canonical key once, in first-occurrence order; a
    ``UserWarning`` says how many repeats were dropped (a candidate listed twice would otherwise
    be counted twice by the methods that sum over candidates).

    Parameters
    ----------
    values : sequence or numpy.ndarray
        The keys (:func:`as_keys`).
    name : str
        What the values are, for the warning.

    Returns
    -------
    numpy.ndarray
        The distinct keys in first-occurrence order (``values`` as keys when none repeats).
    """
    keys = as_keys(values)
    if keys.dtype == object:
        index: dict = {}
        for i, v in enumerate(keys):
            index.setdefault(canonical_key(v), i)
        first = np.fromiter(index.values(), dtype=np.intp, count=len(index))
    else:
        first = np.sort(np.unique(keys, return_index=True)[1])
    if len(first) < len(keys):
        warnings.warn(f"{len(keys) - len(first)} duplicated {name} ignored: each value counts once",
                      UserWarning, stacklevel=caller_level())
        return keys[first]
    return keys


def check_key_dtype(arr: np.ndarray) -> None:
    """Refuse arrays whose dtype has no canonical key (:func:`as_keys`).

    Parameters
    ----------
    arr : numpy.ndarray
        The keys to check.

    Raises
    ------
    LDPTypeError
        A masked array, or a bool, float, complex, datetime or timedelta dtype.
    """
    if isinstance(arr, np.ma.MaskedArray):
        raise LDPTypeError("keys must not be a masked array (masked entries would count as users): "
                           "pass values.compressed()")
    if arr.dtype == bool or arr.dtype.kind in "fcmM":
        what = {"m": "timedeltas", "M": "datetimes"}.get(arr.dtype.kind, f"dtype {arr.dtype}")
        raise LDPTypeError(f"keys must be bytes, str or integers, got {what}"
                           + (" (convert them to text or to integers in an explicit unit)"
                              if arr.dtype.kind in "mM" else ""))


def key_matrix(values: ArrayLike) -> np.ndarray | None:
    """Canonical keys as a uint8 matrix when they all have the same width.

    Parameters
    ----------
    values : array_like
        Integers, or a numpy bytes array.

    Returns
    -------
    numpy.ndarray or None
        uint8 (n, w), or None for keys of varying width (str, mixed bytes).

    Raises
    ------
    LDPTypeError
        Booleans or floats.
    LDPValueError
        Integers outside the signed 64-bit range.
    """
    arr = values if isinstance(values, np.ndarray) else None
    if arr is not None:
        check_key_dtype(arr)
    if arr is None:
        seq = list(values)
        if seq and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in seq):
            try:
                arr = np.array(seq, dtype=np.int64)
            except OverflowError:
                raise LDPValueError("integer keys must fit in 64 bits") from None
        else:
            return None
    if arr.dtype == bool:
        raise LDPTypeError("keys must be bytes, str or integers, got booleans")
    if np.issubdtype(arr.dtype, np.integer):
        if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
            raise LDPValueError("integer keys must fit in 64 bits")
        return arr.astype("<i8").reshape(-1, 1).view(np.uint8)
    if arr.dtype.kind == "S":
        raw = arr.reshape(-1, 1).view(np.uint8)
        lengths = np.char.str_len(arr)
        if lengths.size and (lengths == arr.dtype.itemsize).all():
            return raw
        return None
    if arr.dtype.kind == "f":
        raise LDPTypeError(f"keys must be bytes, str or integers, got dtype {arr.dtype}")
    return None


_LONG_KEY = 1024          # bytes from which a rare key length is hashed by mmh3 key by key


def _check_seeds(seeds):
    seeds = [int(s) for s in np.atleast_1d(seeds)]
    for s in seeds:
        if not 0 <= s < 2 ** 32:
            raise LDPValueError(f"hash seeds must be in [0, 2**32), got {s}")
    return seeds


def hash_keys(values: ArrayLike, seeds: ArrayLike) -> np.ndarray:
    """MurmurHash3 x86_32 of the canonical bytes of every key under every seed.

    Integer keys and numpy string arrays are hashed row by row in numpy (sorting a string array
    to find its distinct keys costs more than hashing every row); a list is dictionary-encoded
    first (:func:`dictionary_encode`), so each distinct key is encoded and hashed once.

    Parameters
    ----------
    values : array_like or sequence
        Keys: integers, str or bytes (:func:`canonical_key`).
    seeds : array_like of int
        Seeds in [0, 2^32).

    Returns
    -------
    numpy.ndarray
        uint32 (n, len(seeds)).

    Raises
    ------
    LDPTypeError, LDPValueError
        A key that has no canonical bytes, or a seed out of range.
    """
    seeds = _check_seeds(seeds)
    matrix = key_matrix(values)
    if matrix is not None:
        return np.stack([murmur3_fixed(matrix, s) for s in seeds], axis=1)
    if isinstance(values, np.ndarray) and values.dtype.kind in "US":
        raw, lengths = _string_bytes(values.ravel())
        return _hash_grouped(lambda rows, width: raw[rows, :width], lengths, seeds,
                             lambda row, width: raw[row, :width].tobytes())
    values = values.tolist() if isinstance(values, np.ndarray) else list(values)
    if len(values) < _FEW_KEYS:            # numpy's per-call overhead exceeds mmh3's per-key cost
        keys = [canonical_key(v) for v in values]
        return np.array([[mmh3.hash(k, s, signed=False) for s in seeds] for k in keys],
                        dtype=np.uint32).reshape(len(keys), len(seeds))
    data, offsets, codes = dictionary_encode(values)
    hashes = hash_buffer(data, offsets, seeds)
    return hashes if codes is None else hashes[codes]


def dictionary_encode(values):
    """The canonical keys of a list, each distinct key once, stored back to back.

    Parameters
    ----------
    values : list
        The keys (str, bytes, int or other values with a canonical key).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray or None)
        ``data`` (uint8, the keys concatenated), ``offsets`` (int64, k + 1: key i is
        ``data[offsets[i]:offsets[i + 1]]``) and ``codes`` (intp: the key index of each value).
        When the values are not all of the types str, bytes and int (which never compare equal
        across types), every value is its own key and ``codes`` is None.
    """
    if set(map(type, values)) <= {str, bytes, int}:
        index: dict = {}
        codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.intp,
                            count=len(values))
        keys = [canonical_key(v) for v in index]
    else:
        keys, codes = [canonical_key(v) for v in values], None
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)), out=offsets[1:])
    return np.frombuffer(b"".join(keys), dtype=np.uint8), offsets, codes


def hash_buffer(data, offsets, seeds):
    """MurmurHash3 x86_32 of keys stored back to back (the Arrow layout): uint32 (k, len(seeds)).

    Parameters
    ----------
    data : numpy.ndarray
        uint8: the canonical bytes of the keys, concatenated.
    offsets : numpy.ndarray
        int (k + 1,), non-decreasing: key i is ``data[offsets[i]:offsets[i + 1]]``.
    seeds : int or sequence of int
        Hash seeds in [0, 2^32).

    Returns
    -------
    numpy.ndarray
        ``mmh3.hash(key_i, seed, signed=False)`` at row i, column of ``seed``; one vectorised
        pass per key length.
    """
    seeds = _check_seeds(seeds)
    data = np.asarray(data, dtype=np.uint8)
    offsets = np.asarray(offsets, dtype=np.int64)
    starts = offsets[:-1]
    return _hash_grouped(lambda rows, width: data[starts[rows, None] + np.arange(width)],
                         np.diff(offsets), seeds,
                         lambda row, width: data[starts[row]:starts[row] + width].tobytes())


def _string_bytes(arr):
    """UTF-8 bytes of a numpy str/bytes array as a zero-padded uint8 matrix, and the lengths.

    ASCII text is converted by a view of numpy's UCS-4 code points (no per-item encoding);
    other text goes through ``numpy.char.encode``. numpy strings cannot end with NUL, so the
    length is the position after the last non-zero code.
    """
    if arr.dtype.kind == "U" and arr.dtype.itemsize:
        codes = arr.view(np.uint32).reshape(arr.size, arr.dtype.itemsize // 4)
        if codes.size == 0 or codes.max() < 128:
            raw = codes.astype(np.uint8)
            nonzero = raw != 0
            last = raw.shape[1] - np.argmax(nonzero[:, ::-1], axis=1)
            return raw, np.where(nonzero.any(axis=1), last, 0).astype(np.int64)
        try:
            arr = np.char.encode(arr, "utf-8")
        except UnicodeEncodeError as exc:
            raise LDPValueError(f"str keys must be valid Unicode text ({exc.reason}: a lone surrogate "
                                "has no UTF-8 bytes)") from None
    raw = arr.view(np.uint8).reshape(arr.size, arr.dtype.itemsize)
    return raw, np.char.str_len(arr).astype(np.int64)


def _hash_grouped(matrix_of, lengths, seeds, row_bytes):
    """Hash variable-length keys with one vectorised pass per key length; a length held by few
    keys that are long (fewer keys than 4-byte blocks / 16) is hashed key by key by mmh3, in
    linear time and without a matrix of indices."""
    out = np.empty((lengths.size, len(seeds)), dtype=np.uint32)
    for width in np.unique(lengths):
        rows = np.flatnonzero(lengths == width)
        if width >= _LONG_KEY and 64 * len(rows) < width:
            for row in rows:
                key = row_bytes(int(row), int(width))
                out[row] = [mmh3.hash(key, s, signed=False) for s in seeds]
            continue
        matrix = matrix_of(rows, int(width))
        out[rows] = np.stack([murmur3_fixed(matrix, s) for s in seeds], axis=1)
    return out
