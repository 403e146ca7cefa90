"""Files the project writes: always encodable, always whole, and only where they point.

Text from rows and endpoints may hold a lone surrogate (``"\\ud800"``, which JSON's ``\\u`` escapes
can produce) that no UTF-8 file can store; it becomes U+FFFD at this boundary instead of crashing
the write.  A file is written to a temporary file beside it, synced, then renamed over the target,
so a failure (a full disk, an interrupt) leaves what was there untouched, never a truncated file.

A target that is not a file to replace is written through instead: a character device
(``/dev/null``, a terminal), a FIFO (a pipe a reader waits on) or a socket is opened and written,
never renamed over (as root, renaming over ``/dev/null`` replaced the system's with a regular
file).  :func:`check_target` refuses, before a run, what cannot be written at all: a directory, a
block device, a missing directory, an unwritable path.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ._encodable import repair_text

__all__ = ["atomic_write_text", "atomic_writer", "check_directory", "check_target", "written_through"]


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically: a temporary file in the same directory,
    fsync, then ``os.replace``.  Lone surrogates become U+FFFD.  An existing file keeps its
    permissions; a new one gets the usual ``0o666 & ~umask``.  On any failure the temporary file
    is removed and ``path`` is as it was; the exception propagates."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = repair_text(text).encode("utf-8")
    with atomic_writer(path, binary=True) as file:
        file.write(data)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], binary: bool = False) -> Iterator[IO[Any]]:
    """A file to write ``path`` through, bit by bit (a report written as a run goes): a temporary
    file in the same directory, synced and renamed over ``path`` when the block ends, removed
    when it raises (``path`` is then as it was).  Text mode writes UTF-8; the text must be
    encodable (see :func:`~context_bench._encodable.repair_text`)."""
    target = Path(os.path.realpath(path))  # through a symlink, not over it
    if written_through(target):
        with _through(target, binary) as file:
            yield file
        return
    mode = replacing_mode(target)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def written_through(target: str | os.PathLike[str]) -> bool:
    """Whether ``target`` exists as a character device, FIFO or socket: opened and written, never
    replaced."""
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.contextmanager
def _through(target: Path, binary: bool) -> Iterator[IO[Any]]:
    """A character device or FIFO opened for writing, or a (stream) socket connected to."""
    text = {} if binary else {"encoding": "utf-8"}
    if not stat.S_ISSOCK(os.stat(target).st_mode):
        with open(target, "wb" if binary else "w", **text) as file:
            yield file
        return
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(str(target))
        with connection.makefile("wb" if binary else "w", **text) as file:
            yield file


def check_target(path: str, flag: str = "--out") -> None:
    """Refuse, as a one-line UsageError, a ``path`` nothing can be written to: a directory, a block
    device, a path whose directory is missing, or one not writable.  A file (or a new one) is
    replaced; a character device, FIFO or socket is written through."""
    from .errors import UsageError

    target = Path(path)
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {exc.strerror or exc}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise UsageError(f"{flag} {path}: is a directory")
    if mode is not None and stat.S_ISBLK(mode):
        raise UsageError(f"{flag} {path}: is a block device (a disk), not a file to write a report to")
    if mode is not None and written_through(target):
        if not os.access(target, os.W_OK):
            raise UsageError(f"{flag} {path}: not writable")
        return
    parent = Path(os.path.realpath(target)).parent if mode is not None else target.parent
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: no directory {parent}")
    if not os.access(parent, os.W_OK | os.X_OK) or (mode is not None and not os.access(target, os.W_OK)):
        raise UsageError(f"{flag} {path}: not writable")


def check_directory(path: str, flag: str) -> None:
    """Refuse, as a one-line UsageError, a directory to fill that is something else (a file, a
    device) or that can be neither made nor written."""
    from .errors import UsageError

    target = Path(path)
    existing = target
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is" if existing == target else f"is under {existing}, which is"
        raise UsageError(f"{flag} {path}: {what} not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: not writable")


def replacing_mode(target: str | os.PathLike[str]) -> int:
    """The permissions a file written over ``target`` gets: those of the file it replaces, else
    what the umask gives a new file (a temporary file is made 0600, which a web server or a
    colleague could not read)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process umask (reading it means setting it; it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
