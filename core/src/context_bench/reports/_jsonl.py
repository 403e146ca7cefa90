"""The JSONL report: one row per line, for streaming tools and for scoring again with ``score``.

Each line is the input row's fields (its ``id``, its references such as ``answer``) with the row's
results over them (``system``, ``dataset``, ``response``, ``scores``, ...), so
``context-bench score report.jsonl`` scores a run's responses again.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

from .._encodable import repair_counted
from ..records import EvalResult, EvalRow, encode_compact, encode_row
from . import View


def render(result: EvalResult, view: View | None = None) -> str:
    """The report of every row: ``view`` changes nothing (a format's writer takes one)."""
    return "".join(encode_compact(line(row)) + "\n" for row in result.rows)


class Writer:
    """The JSONL report written as the run goes: each row appended as it finishes (a run's
    ``stream``), so a run of any size holds none of them.  Text no file can store (a lone
    surrogate) is written as U+FFFD and counted in ``replaced``.

    ``encode`` makes a row's line: the report's :func:`line` by default (``report_lines``: the
    lines a run's store keeps too); the JSON report spools its rows
    (:func:`~context_bench.records.encode_row`) the same way before it writes them after the
    summary (:func:`Writer.spool`).
    """

    def __init__(self, handle: TextIO, encode: Callable[[EvalRow], str] | None = None) -> None:
        self.handle = handle
        self.report_lines = encode is None
        self.encode = encode or (lambda row: encode_compact(line(row)))
        self.replaced = 0
        self.count = 0
        #: A spool's file (:meth:`spool`), else None.
        self.path: str | None = None

    def __call__(self, row: EvalRow) -> None:
        text, replaced = repair_counted(self.encode(row) + "\n")
        self.replaced += replaced
        self.count += 1
        self.handle.write(text)

    @classmethod
    @contextlib.contextmanager
    def to(cls, out: str | None) -> Iterator[Writer]:
        """A writer to ``out`` (a temporary file beside it, which replaces it once the run is done,
        so a failed run leaves an earlier report whole) or, when None, to stdout."""
        if out is None:
            yield cls(sys.stdout)
            return
        from ..errors import UsageError
        from ..files import atomic_writer

        try:
            with atomic_writer(out) as handle:
                yield cls(handle)
        except OSError as exc:
            raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None

    @classmethod
    @contextlib.contextmanager
    def spool(
        cls, out: str, encode: Callable[[EvalRow], str] | None = encode_row, named: bool = False
    ) -> Iterator[Writer]:
        """A writer of the rows (their JSON by default, the report's lines with ``encode`` None)
        to a temporary file beside ``out``, gone when the block ends: what the JSON report copies
        its rows from.  ``named``: a file with a name, which :meth:`keep` can move into place (the
        JSONL report, a big run's HTML rows file); otherwise one without, which not even a killed
        run leaves behind."""
        import tempfile

        from ..files import written_through

        # beside the report, on its file system; a device's or pipe's spool goes to the temporary
        # directory (never /dev)
        directory = None if written_through(out) else os.path.dirname(os.path.realpath(out))
        if not named:
            with tempfile.TemporaryFile(
                "w+", encoding="utf-8", dir=directory, prefix=".cbench-rows."
            ) as handle:
                yield cls(handle, encode)
            return
        handle = tempfile.NamedTemporaryFile(
            "w+", encoding="utf-8", dir=directory, prefix=".cbench-rows.", suffix=".jsonl", delete=False
        )
        writer = cls(handle, encode)
        writer.path = handle.name
        try:
            yield writer
        finally:
            handle.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(handle.name)

    @classmethod
    @contextlib.contextmanager
    def held(cls, encode: Callable[[EvalRow], str] = encode_row) -> Iterator[Writer]:
        """A writer of the rows (their JSON by default) to memory, a string per row (a report on
        stdout, which has no file to spool beside): a few hundred bytes a row, not the rows."""
        yield cls(_Lines(), encode)

    def keep(self, target: str) -> None:
        """Move a named spool's file, rows written and synced, to ``target`` (replacing it, with
        the permissions a report written there gets), where it stays; a ``target`` that is a
        device, FIFO or socket is written through instead."""
        import shutil

        from ..files import atomic_writer, replacing_mode, written_through

        assert self.path is not None, "only a named spool's file can be kept"
        self.handle.flush()
        if written_through(target):
            self.handle.seek(0)
            with atomic_writer(target) as through:
                shutil.copyfileobj(self.handle, through)
            return
        os.fsync(self.handle.fileno())
        self.handle.close()
        os.chmod(self.path, replacing_mode(target))
        os.replace(self.path, target)

    def lines(self) -> Iterator[str]:
        """The spooled lines, without their newlines (after the run)."""
        handle = self.handle
        if not isinstance(handle, _Lines):  # held lines end in a newline too
            handle.flush()
            handle.seek(0)
        for text in handle:
            yield text[:-1]

    def blocks(self, separator: str, size: int = 1 << 20) -> Iterator[str]:
        """The spooled lines (after the run) in blocks of about ``size`` characters, the lines of
        each joined by ``separator``: what :meth:`lines` gives joined so, read a block at a time
        rather than a call a line (a JSON report's 100,000 rows in a few dozen)."""
        handle = self.handle
        if isinstance(handle, _Lines):  # held: a string a line already
            yield from self.lines()
            return
        handle.flush()
        handle.seek(0)
        while block := handle.read(size):
            if not block.endswith("\n"):
                block += handle.readline()  # whole lines only
            yield block[:-1].replace("\n", separator)


class _Lines(list):
    """Lines written to memory, one string each."""

    write = list.append


class Discard:
    """A run's ``stream`` for reports that need the summary alone (the table, Markdown): each
    finished row is counted in the summary and let go."""

    replaced = 0

    def __call__(self, row: EvalRow) -> None:
        pass


def line(row: EvalRow) -> dict:
    """One row of the report: the input's fields, then the results, then the row's ``id``."""
    example = row.example
    if not example:
        return row.to_dict()
    return {**example, **row.to_dict(), "id": row.example_id}
