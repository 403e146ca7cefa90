"""Durable per-row cache: every finished row is appended (JSONL, flushed) so a crash loses nothing.

One file per (system identity, data set).  A system's output and each evaluator's scores are kept
separately, under the evaluator's own identity, so adding an evaluator re-scores cached outputs
without calling the system again.  Rows with errors and scores that are soft failures are not
stored: a re-run retries exactly those.  If the cache cannot be written (a full disk), caching stops
for the rest of the run and :attr:`RunCache.failure` says why; the run itself goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from pathlib import Path
from typing import IO, Any

import attrs

from .errors import UsageError
from .identity import identity


@attrs.define
class CachedRow:
    example_hash: str
    output: dict[str, Any] | None = None
    scores: dict[str, dict[str, Any]] = attrs.Factory(dict)  # evaluator identity -> {"scores", "usage"}


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
        self._entries: dict[Path, dict[str, CachedRow]] = {}
        self._handles: dict[Path, IO[str]] = {}
        self._lock = threading.Lock()

    def path(self, system: Any, dataset: str) -> Path:
        name = getattr(system, "name", type(system).__name__)
        return self.root / f"{_slug(name)}-{identity(system)}" / f"{_slug(dataset)}.jsonl"

    def lookup(self, path: Path, example_id: str, example_hash: str) -> CachedRow | None:
        entries = self._entries.get(path)
        if entries is None:
            entries = self._entries[path] = self._read(path)
        found = entries.get(example_id)
        return found if found is not None and found.example_hash == example_hash else None

    @staticmethod
    def _read(path: Path) -> dict[str, CachedRow]:
        entries: dict[str, CachedRow] = {}
        if not path.exists():
            return entries
        with path.open(encoding="utf-8", errors="replace") as handle:  # a torn line may end mid-character
            for line in handle:
                try:
                    record = json.loads(line)
                    key, example_hash = record["id"], record["example"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line torn by a crash mid-write: that row is simply re-run
                entry = entries.get(key)
                if entry is None or entry.example_hash != example_hash:
                    entry = entries[key] = CachedRow(example_hash=example_hash)
                if record.get("output") is not None:
                    entry.output = record["output"]
                entry.scores.update(record.get("scores") or {})
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
                handle.write(line)
                handle.flush()
            except OSError as exc:
                self._fail(path, exc)
                self._close_all()

    @staticmethod
    def _open(path: Path) -> IO[str]:
        """Open for appending; a record torn by a killed run gets its own line, so the next one is intact."""
        path.parent.mkdir(parents=True, exist_ok=True)
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
