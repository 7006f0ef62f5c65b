"""The columns users have: a pandas or polars Series, a pyarrow Array or ChunkedArray, as a
batch of values for :meth:`BFRRCE.privatize` without a Python object per value.

A text or binary column is dictionary-encoded by pyarrow (each distinct value once, as its UTF-8
or raw bytes back to back, and each row's index among them), so a value is hashed once however
many rows hold it; an integer column becomes an int64 numpy array, hashed as in-memory integers
are (8 bytes, little-endian: ``privatize(pa.array([42]))`` equals ``privatize([42])``). The keys
are those of the same values passed as a list (docs/formats.md, "Values to bits").

Nulls (None, NaN of a pandas object column, pyarrow nulls) are refused unless
``nulls="skip"`` drops them: a missing value is not a value, and counting it as one would be a
silent choice.

pyarrow is a core dependency; pandas and polars are used only when the column is one of theirs
(recognised by its type's module, so neither is imported otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from protocols.errors import LDPTypeError, LDPValueError

NULLS = ("refuse", "skip")


@dataclass(frozen=True)
class KeyColumn:
    """A dictionary-encoded column of text or binary keys.

    Attributes
    ----------
    data : numpy.ndarray
        uint8: the canonical bytes of the distinct keys, back to back.
    offsets : numpy.ndarray
        int64 (k + 1,): key i is ``data[offsets[i]:offsets[i + 1]]``.
    codes : numpy.ndarray
        intp (rows,): each row's key index; −1 for a null.
    """

    data: np.ndarray
    offsets: np.ndarray
    codes: np.ndarray

    def __len__(self) -> int:
        return len(self.codes)


def dictionary_keys(array) -> KeyColumn:
    """A pyarrow string or binary Array (or ChunkedArray) as a :class:`KeyColumn`.

    Parameters
    ----------
    array : pyarrow.Array or pyarrow.ChunkedArray
        Of a string, large string, binary or large binary type.

    Returns
    -------
    KeyColumn
        Nulls get code −1.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    encoded = pc.dictionary_encode(array)
    dictionary = encoded.dictionary.cast(pa.large_binary())
    offsets_buffer, data_buffer = dictionary.buffers()[1:3]
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[dictionary.offset:
                                                             dictionary.offset + len(dictionary) + 1]
    data = (np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None
            else np.zeros(0, dtype=np.uint8))
    indices = encoded.indices
    codes = indices.to_numpy(zero_copy_only=False) if indices.null_count == 0 else indices.fill_null(-1).to_numpy()
    return KeyColumn(data, offsets, codes.astype(np.intp, copy=False))


def _library(values):
    module = type(values).__module__.split(".")[0]
    return module if module in ("pyarrow", "pandas", "polars") else None


def is_column(values) -> bool:
    """True for a pandas or polars Series and a pyarrow Array or ChunkedArray.

    Parameters
    ----------
    values : object
        What the caller passed.

    Returns
    -------
    bool
    """
    return _library(values) is not None and hasattr(values, "__len__")


def _arrow(values):
    """The column as a pyarrow Array or ChunkedArray (zero-copy where the library allows)."""
    import pyarrow as pa
    library = _library(values)
    if library == "polars":
        return values.to_arrow()
    if library == "pandas":
        if getattr(values, "ndim", 1) != 1:
            raise LDPTypeError(f"values must be one column (a Series), got a {type(values).__name__}: "
                               "pass frame['column']")
        return pa.array(values, from_pandas=True)
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    raise LDPTypeError(f"values must be a Series or an Array, got a {type(values).__name__}: pass one column")


def column_keys(values, nulls: str = "refuse"):
    """A column as what :meth:`BloomFilter.positions` or :meth:`BloomFilter.key_positions` read.

    Parameters
    ----------
    values : pandas.Series, polars.Series, pyarrow.Array or pyarrow.ChunkedArray
        One value per user: text, bytes or integers.
    nulls : {"refuse", "skip"}
        A null is refused (:class:`LDPValueError`, with the count) or its row dropped.

    Returns
    -------
    numpy.ndarray or KeyColumn
        int64 values of an integer column; a :class:`KeyColumn` (no code −1 left) otherwise.

    Raises
    ------
    LDPValueError
        Nulls with ``nulls="refuse"``, an unknown ``nulls``, or no values left.
    LDPTypeError
        A column of another type (float, date, nested, ...), or a data frame.
    """
    import pyarrow as pa
    if nulls not in NULLS:
        raise LDPValueError(f"nulls must be one of {NULLS}, got {nulls!r}")
    array = _arrow(values)
    kind = array.type
    if pa.types.is_dictionary(kind):
        array, kind = array.cast(kind.value_type), kind.value_type
    missing = array.null_count
    if missing and nulls == "refuse":
        raise LDPValueError(f"values hold {missing:,} nulls of {len(array):,}: drop them, or pass "
                            "nulls='skip' to privatize only the others")
    if missing:
        array = array.drop_null()
    if len(array) == 0:
        raise LDPValueError("values is empty" + (" once the nulls are skipped" if missing else ""))
    if pa.types.is_integer(kind):
        if pa.types.is_uint64(kind) and pa.compute.max(array).as_py() >= 2 ** 63:
            raise LDPValueError("an unsigned 64-bit value >= 2**63 has no 8-byte signed key")
        return np.asarray(array.cast(pa.int64()).to_numpy(zero_copy_only=False))
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) \
            or pa.types.is_large_binary(kind):
        return dictionary_keys(array)
    raise LDPTypeError(f"a column of {kind} has no canonical keys: values must be text, bytes or integers "
                       "(docs/formats.md)")
