"""Atomic output files: a file is either its previous content or the complete new one.

:func:`write_atomic` writes to a temporary file in the destination folder, flushes and fsyncs
it, renames it over the destination (``os.replace``, atomic on POSIX and Windows within one
file system) and fsyncs the folder. A crash, a kill or a full disk (``RLIMIT_FSIZE``, quota)
at any point leaves the previous file intact and at most a stray temporary file
``.NAME.*.tmp`` that the next successful write does not need. :func:`check_outputs` refuses an
output that is one of the inputs, before anything is read. Only regular files are replaced:
a symbolic link, a device, a FIFO, a folder or a read-only file as the destination is refused
(:func:`check_destination`), never silently turned into a new regular file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from protocols.errors import LDPTypeError, LDPValueError


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_destination(path) -> Path:
    """``path`` as a Path, refused unless it is absent or a regular file this process may write.

    Parameters
    ----------
    path : str or os.PathLike
        The output file.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    LDPValueError
        A symbolic link (replacing it would lose the link: name its target), anything but a
        regular file (a device, a FIFO, a folder), or a read-only file.
    """
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise LDPValueError(f"output {str(path)!r} cannot be examined: {exc.strerror}") from None
    if stat.S_ISLNK(mode):
        raise LDPValueError(f"output {str(path)!r} is a symbolic link: refusing to replace it (name its target)")
    if not stat.S_ISREG(mode):
        raise LDPValueError(f"output {str(path)!r} is not a regular file: refusing to replace it")
    if not os.access(path, os.W_OK):
        raise LDPValueError(f"output {str(path)!r} is read-only: refusing to replace it")
    return path


def check_outputs(output, inputs: Iterable) -> Path:
    """``output`` as a Path, refused if it names one of ``inputs`` (same file, or same path) or
    its folder does not exist (checked before any input is read).

    Parameters
    ----------
    output : str or os.PathLike
        The output file.
    inputs : iterable of path
        The input files.

    Returns
    -------
    pathlib.Path
        ``output``.

    Raises
    ------
    LDPValueError
        The output is one of the inputs (writing it would destroy that input), its folder
        does not exist, or it is not a writable regular file (:func:`check_destination`).
    """
    out = Path(output)
    if not out.absolute().parent.is_dir():
        raise LDPValueError(f"output folder {str(out.absolute().parent)!r} does not exist")
    for item in inputs:
        item = Path(item)
        if _same_file(out, item) or os.path.abspath(out) == os.path.abspath(item):
            raise LDPValueError(f"output {str(out)!r} is also an input: refusing to overwrite it")
    return check_destination(out)


@contextlib.contextmanager
def atomic_output(path):
    """A binary file handle whose content replaces ``path`` atomically when the block ends.

    The handle is a temporary file in the destination folder (it may seek, e.g. to rewrite a
    header); on success it is flushed, fsynced, given the destination's mode (or the umask's),
    renamed over ``path`` and the folder fsynced; on any exception it is removed and ``path`` is
    unchanged.

    Parameters
    ----------
    path : str or Path
        The destination; its folder must exist.

    Yields
    ------
    io.BufferedWriter
        The temporary file, open for binary writing.

    Raises
    ------
    OSError
        The folder is not writable, the disk is full, the file-size limit is hit, ...; the
        destination is then unchanged and the temporary file removed.
    """
    path = check_destination(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_folder(folder)


def write_atomic(path, data) -> Path:
    """Write ``data`` (bytes, or an iterable of bytes chunks) to ``path`` atomically
    (:func:`atomic_output`).

    Parameters
    ----------
    path : str or Path
        The destination; its folder must exist.
    data : bytes or iterable of bytes
        The content, in one piece or streamed in chunks.

    Returns
    -------
    Path
        The destination.

    Raises
    ------
    OSError
        As :func:`atomic_output`; the destination is then unchanged.
    LDPTypeError
        ``data`` is neither bytes nor an iterable of bytes.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = [data]
    elif isinstance(data, str) or not hasattr(data, "__iter__"):
        raise LDPTypeError(f"write_atomic needs bytes or an iterable of bytes, got {type(data).__name__}")
    with atomic_output(path) as fh:
        for chunk in data:
            if not isinstance(chunk, (bytes, bytearray, memoryview)):
                raise LDPTypeError(f"write_atomic needs bytes, got {type(chunk).__name__}")
            fh.write(chunk)
    return Path(path)


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
