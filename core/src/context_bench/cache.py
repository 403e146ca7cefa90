"""Durable per-row cache: every finished row is appended (JSONL, flushed) so a crash loses nothing.

One file per (system identity, data set).  A system's output and each evaluator's scores are kept
separately, under the evaluator's own identity, so adding an evaluator re-scores cached outputs
without calling the system again.  Rows with errors and scores that are soft failures are not
stored: a re-run retries exactly those.  If the cache cannot be written (a full disk), caching stops
for the rest of the run and :attr:`RunCache.failure` says why; the run itself goes on.

Each record is one ``write`` of one line, made encodable first (a lone surrogate becomes U+FFFD),
so a record is either whole or a torn last line that the next read skips.  A record that is valid
JSON but not of the shape written here (an edited or foreign file) is skipped too, and
:attr:`RunCache.notices` says how many, so no cache file can crash a later run.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import threading
from pathlib import Path
from typing import IO, Any

import attrs

from ._encodable import LONE_SURROGATE, REPLACEMENT
from .errors import UsageError
from .identity import identity


@attrs.define
class CachedRow:
    example_hash: str
    output: dict[str, Any] | None = None
    scores: dict[str, dict[str, Any]] = attrs.Factory(dict)  # evaluator identity -> {"scores", "usage"}


def _is_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _numbers(value: Any) -> bool:
    """None, or a mapping of names to finite numbers."""
    return value is None or (
        type(value) is dict and all(type(k) is str and _is_number(v) for k, v in value.items())
    )


def _well_formed(record: Any) -> bool:
    """Whether a record has the shape :meth:`RunCache.store` writes (else it is skipped)."""
    if (
        type(record) is not dict
        or type(record.get("id")) is not str
        or type(record.get("example")) is not str
    ):
        return False
    output = record.get("output")
    if output is not None and (type(output) is not dict or "response" not in output):
        return False
    scores = record.get("scores")
    if scores is None:
        return True
    return type(scores) is dict and all(
        type(hit) is dict
        and type(hit.get("scores")) is dict
        and _numbers(hit["scores"])
        and _numbers(hit.get("usage"))
        and _numbers(hit.get("weights"))
        for hit in scores.values()
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80] or "_"


class RunCache:
    """Looks rows up before a run and appends them as they finish."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        try:  # refused here, before any row runs, rather than at the first row's store
            self.root.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise UsageError(f"cache directory {self.root} is a file, not a directory") from None
        except OSError as exc:
            reason = exc.strerror or exc
            raise UsageError(f"cannot create the cache directory {self.root}: {reason}") from None
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise UsageError(f"cache directory {self.root} is not writable")
        #: Why caching stopped mid-run (None while it works): for the run's warnings.
        self.failure: str | None = None
        #: What reading the cache skipped (records of the wrong shape): for the run's warnings.
        self.notices: list[str] = []
        #: How many rows this run has stored (what Ctrl-C leaves behind for a resumed run).
        self.stored = 0
        self._entries: dict[Path, dict[str, CachedRow]] = {}
        self._handles: dict[Path, IO[str]] = {}
        self._lock = threading.Lock()

    def path(self, system: Any, dataset: str, repeat: int = 0) -> Path:
        """The file of ``system``'s rows of ``dataset`` (a repeat after the first: its own file,
        named with ``~``, which no data set's name becomes)."""
        name = getattr(system, "name", type(system).__name__)
        suffix = f"~{repeat}" if repeat else ""
        return self.root / f"{_slug(name)}-{identity(system)}" / f"{_slug(dataset)}{suffix}.jsonl"

    def lookup(self, path: Path, example_id: str, example_hash: str) -> CachedRow | None:
        entries = self._entries.get(path)
        if entries is None:
            entries = self._entries[path] = self._read(path)
        found = entries.get(example_id)
        return found if found is not None and found.example_hash == example_hash else None

    def _read(self, path: Path) -> dict[str, CachedRow]:
        entries: dict[str, CachedRow] = {}
        if not path.exists():
            return entries
        if not path.is_file():  # a FIFO would hold the run until someone wrote to it
            self.notices.append(
                f"cache {path} is not a regular file: not read; those rows are computed again"
            )
            return entries
        skipped = 0
        with path.open(encoding="utf-8", errors="replace") as handle:  # a torn line may end mid-character
            for line in handle:
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):
                    continue  # a line torn by a crash mid-write: that row is simply re-run
                if not _well_formed(record):
                    skipped += 1
                    continue
                key, example_hash = record["id"], record["example"]
                entry = entries.get(key)
                if entry is None or entry.example_hash != example_hash:
                    entry = entries[key] = CachedRow(example_hash=example_hash)
                if record.get("output") is not None:
                    entry.output = record["output"]
                entry.scores.update(record.get("scores") or {})
        if skipped:
            self.notices.append(
                f"cache {path}: skipped {skipped} record(s) not of the cache's shape; "
                "those rows are computed again"
            )
        return entries

    def store(
        self,
        path: Path,
        example_id: str,
        example_hash: str,
        output: dict[str, Any] | None,
        scores: dict[str, dict[str, Any]],
    ) -> None:
        record = {"id": example_id, "example": example_hash, "output": output, "scores": scores}
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            if self.failure is not None:
                return
            try:
                handle = self._handles.get(path)
                if handle is None:
                    handle = self._handles[path] = self._open(path)
                try:
                    handle.write(line)
                except UnicodeEncodeError:  # nothing was written: the encoder failed first
                    handle.write(LONE_SURROGATE.sub(REPLACEMENT, line))
                handle.flush()
                self.stored += 1
            except OSError as exc:
                self._fail(path, exc)
                self._close_all()

    @staticmethod
    def _open(path: Path) -> IO[str]:
        """Open for appending; a record torn by a killed run gets its own line, so the next one is intact."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and not path.is_file():  # a FIFO, a device: never opened, never replaced
            raise OSError(0, "not a regular file")
        handle = path.open("a", encoding="utf-8")
        if handle.tell() > 0:
            with path.open("rb") as existing:
                existing.seek(-1, os.SEEK_END)
                if existing.read(1) != b"\n":
                    handle.write("\n")
        return handle

    def _fail(self, path: Path, exc: OSError) -> None:
        if self.failure is None:
            self.failure = (
                f"caching stopped: cannot write {path}: {exc.strerror or exc}; "
                "rows after that were not cached (a re-run computes them again)"
            )

    def _close_all(self) -> None:
        """Best effort: a handle that cannot be flushed is still closed, and so are the others."""
        for path, handle in self._handles.items():
            try:
                os.fsync(handle.fileno())
                handle.close()
            except OSError as exc:
                self._fail(path, exc)
                with contextlib.suppress(OSError):
                    handle.close()
        self._handles.clear()

    def close(self) -> None:
        with self._lock:
            self._close_all()
