"""The main job streamed: a file of values → canonical keys → Bloom positions → column sums or
a report file, chunk by chunk, in memory independent of the number of rows.

Each chunk comes dictionary-encoded from :func:`bfrrce.io.values.iter_key_chunks`, so each
distinct key of a chunk is hashed once; a row's positions are its key's positions.

* :func:`filter_counts` gives t_j, the number of rows whose Bloom filter has bit j, and n.
* :func:`file_sums` gives the column sums of one report per row: by default drawn from their
  exact joint law given (t, n), c_j ~ Binomial(t_j, p) + Binomial(n − t_j, q), independent
  across j (every report bit is an independent Bernoulli: p on the row's filter bits, q
  elsewhere), which is the law of the sums of the n reports themselves; with
  ``reports=True`` every row is privatized and the reports are counted.
* :func:`privatize_file` writes one report per row to a report file (docs/formats.md), chunk
  by chunk, with a running CRC-32; the row count in the header is filled in at the end.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

import numpy as np

from protocols.core.randomness import SystemRandom, generator, source
from protocols.core.perturbation import perturb_positions, simulate_column_sums

from ..identity import BatchDigest
from ..mechanism import BFRRCE
from ..sums import ColumnSums
from .atomic import atomic_output
from .formats import REPORTS, _dump
from .values import CHUNK_ROWS, iter_key_chunks

PERTURB_ROWS = 1 << 15      # rows perturbed at a time: 4 MiB of reports at L = 1024


def position_chunks(path, column, bloom, chunk_rows: int = CHUNK_ROWS, progress=None) -> Iterator[tuple]:
    """(positions of the chunk's distinct keys (k, l), each row's key index (rows,)) per chunk;
    ``progress(rows)``, if given, is called after each chunk with its number of rows.

    Parameters
    ----------
    path : str or os.PathLike
        The input table.
    column : str
        The column of values.
    bloom : Bloom
        The filter whose positions are computed (its ``key_positions``).
    chunk_rows : int
        Rows read at a time.
    progress : callable or None
        Called with the rows of each chunk.

    Returns
    -------
    iterator of (numpy.ndarray, numpy.ndarray)
        One pair per chunk.
    """
    for chunk in iter_key_chunks(path, column, chunk_rows):
        yield bloom.key_positions(chunk.data, chunk.offsets), chunk.codes
        if progress is not None:
            progress(len(chunk.codes))


def filter_counts(path, column, bloom, chunk_rows: int = CHUNK_ROWS, progress=None) -> tuple:
    """Rows whose Bloom filter has bit j, for each j, and the number of rows, streamed.

    Parameters
    ----------
    path, column
        The file and column (:func:`bfrrce.io.values.iter_key_chunks`).
    bloom : BloomFilter
        The rows' filters (a row's repeated positions count once).
    chunk_rows : int
        Rows per chunk read.
    progress : callable, optional
        Called with the rows of each chunk once it is counted (a progress bar's ``update``).

    Returns
    -------
    (numpy.ndarray, int)
        t, int64 (L,), and n.

    Raises
    ------
    InputError
        The file cannot be read as values.
    """
    t, n = np.zeros(bloom.L, dtype=np.int64), 0
    for positions, codes in position_chunks(path, column, bloom, chunk_rows, progress):
        t += bloom.column_counts(positions, np.bincount(codes, minlength=len(positions)))
        n += len(codes)
    return t, n


def _row_positions(mech, path, column, chunk_rows, progress=None):
    """Each row's Bloom positions, PERTURB_ROWS rows at a time."""
    for positions, codes in position_chunks(path, column, mech.bloom, chunk_rows, progress):
        for start in range(0, len(codes), PERTURB_ROWS):
            yield positions[codes[start:start + PERTURB_ROWS]]


def _report_chunks(mech, path, column, rng, chunk_rows, progress=None):
    src = source(rng)                    # one stream for the whole file
    for rows in _row_positions(mech, path, column, chunk_rows, progress):
        yield perturb_positions(rows, mech.L, mech.p, mech.q, src)


def file_sums(mech: BFRRCE, path, column: str | None = None, rng=None, reports: bool = False,
              chunk_rows: int = CHUNK_ROWS, progress=None) -> ColumnSums:
    """Column sums of one report per row of a file, streamed.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism every row's user runs.
    path, column
        The file and column (:func:`bfrrce.io.values.iter_key_chunks`).
    rng : None, int or Generator
        ``reports=False``: the numpy Generator of the binomial draws (None: OS-seeded).
        ``reports=True``: the source of the reports (None: the secure default of
        :func:`protocols.core.randomness.source`).
    reports : bool
        False: draw the sums from their exact law given the filters' column counts t
        (Binomial(t_j, p) + Binomial(n − t_j, q); O(L) draws). True: privatize every row and
        count the reports (the same law, O(n·L) random bits).
    chunk_rows : int
        Rows per chunk read.
    progress : callable, optional
        Called with the rows of each chunk once it is read (:func:`filter_counts`).

    Returns
    -------
    ColumnSums
        The sums of n reports, n the number of non-empty rows.

    Raises
    ------
    InputError
        The file cannot be read as values.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
    Estimation", USENIX Security 2017 (unary encoding: independent per-bit randomized response).
    """
    if reports:
        seeded = not (rng is None or isinstance(rng, SystemRandom))
        return mech.aggregate_batches(_report_chunks(mech, path, column, rng, chunk_rows, progress), seeded=seeded)
    t, n = filter_counts(path, column, mech.bloom, chunk_rows, progress)
    return ColumnSums(mech, simulate_column_sums(t, n, mech.p, mech.q, generator(rng)), n)


def _gf2_times(matrix, vector):
    total, i = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[i]
        vector, i = vector >> 1, i + 1
    return total


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """CRC-32 of A + B from crc1 = CRC-32(A), crc2 = CRC-32(B) and len(B) (zlib's crc32_combine).

    Appending len(B) zero bytes to A acts on its CRC register as a linear map over GF(2); the
    map is applied by repeated squaring of the one-zero-bit operator (polynomial 0xEDB88320),
    in O(log len(B)) 32 × 32 products, then XORed with crc2.

    Parameters
    ----------
    crc1, crc2 : int
        CRC-32 (``zlib.crc32``) of A and of B.
    length2 : int
        len(B) in bytes.

    Returns
    -------
    int
        ``zlib.crc32(A + B)``.

    References
    ----------
    M. Adler, ``crc32_combine`` in zlib's crc32.c (https://zlib.net).
    """
    if length2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << k for k in range(31)]          # one zero bit
    even = [_gf2_times(odd, row) for row in odd]                # two zero bits
    odd = [_gf2_times(even, row) for row in even]               # four zero bits
    while length2:
        even = [_gf2_times(odd, row) for row in odd]            # first pass: one zero byte
        if length2 & 1:
            crc1 = _gf2_times(even, crc1)
        length2 >>= 1
        if not length2:
            break
        odd = [_gf2_times(even, row) for row in even]
        if length2 & 1:
            crc1 = _gf2_times(odd, crc1)
        length2 >>= 1
    return crc1 ^ crc2


def privatize_file(mech: BFRRCE, path, out, column: str | None = None, rng=None,
                   chunk_rows: int = CHUNK_ROWS, progress=None) -> int:
    """Write the report of every row of a file to the report file ``out``, streamed.

    The header is written with n = 0, the reports are appended chunk by chunk while their
    CRC-32 and their content digest run, and at the end the header gets the true n and batch
    identifier (:mod:`bfrrce.identity`) and the file its checksum (:func:`crc32_combine` of
    the header's CRC and the reports'). The bytes are those of
    :func:`bfrrce.io.formats.dump_reports` of the same reports.

    Parameters
    ----------
    mech : BFRRCE
        The mechanism every row's user runs.
    path, column
        The values (:func:`bfrrce.io.values.iter_key_chunks`).
    out : str or Path
        The report file; replaced only when every row was written.
    rng : None, int or Generator
        None: the secure default (:func:`protocols.core.randomness.source`); a seed or a
        Generator (simulations) warns (:class:`protocols.errors.PrivacyWarning`) and the file
        says ``seeded`` (readers refuse it unless allowed).
    progress : callable, optional
        Called with the rows of each chunk once it is read (:func:`filter_counts`).

    Returns
    -------
    int
        The number of reports written.

    Raises
    ------
    InputError
        The file cannot be read as values (``out`` is then left as it was).
    """
    seeded = not (rng is None or isinstance(rng, SystemRandom))
    placeholder = "0" * 64
    prefix = _dump(mech, REPORTS, 0, b"", batch=placeholder, seeded=seeded)[:-4]
    n, crc, size = 0, 0, 0
    digest = BatchDigest(mech.L)
    with atomic_output(out) as fh:
        fh.write(prefix)
        for reports in _report_chunks(mech, path, column, rng, chunk_rows, progress):
            fh.write(reports)
            digest.add(reports)
            crc = zlib.crc32(reports, crc)
            n, size = n + len(reports), size + reports.nbytes
        prefix = _dump(mech, REPORTS, n, b"", batch=digest.identifier(), seeded=seeded)[:-4]
        fh.write(struct.pack("<I", crc32_combine(zlib.crc32(prefix), crc, size)))
        fh.seek(0)
        fh.write(prefix)
    return n
