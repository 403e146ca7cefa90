"""Files the project writes: always encodable, always whole.

Text from rows and endpoints may hold a lone surrogate (``"\\ud800"``, which JSON's ``\\u`` escapes
can produce) that no UTF-8 file can store; it becomes U+FFFD at this boundary instead of crashing
the write.  A file is written to a temporary file beside it, synced, then renamed over the target,
so a failure (a full disk, an interrupt) leaves what was there untouched, never a truncated file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .encodable import repair_text

__all__ = ["atomic_write_text", "atomic_writer"]


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
    encodable (see :func:`~context_bench.encodable.repair_text`)."""
    target = Path(os.path.realpath(path))  # through a symlink, not over it
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
