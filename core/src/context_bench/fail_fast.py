"""Stopping a system whose first rows all fail the same way: a broken configuration, not bad luck.

A wrong key, model name or URL fails every row with one message (HTTP 401, 404, connection
refused); sending all of them only costs time and requests.  When the first ``limit`` rows a system
finishes all end in a system error with the same type and message, the run draws no more of that
system's rows (those in flight still finish and are reported) and says why once, in the summary's
warnings.  A row that was answered, or failed another way, clears the system for the rest of the
run; a row that could not be read (an input error) says nothing about the system and is not counted.
"""

from __future__ import annotations

import threading

from .defaults import DEFAULT_FAIL_FAST
from .records import EvalRow

__all__ = ["DEFAULT_FAIL_FAST", "FailFast"]


class FailFast:
    """Watches each system's first finished rows (:meth:`seen`); :meth:`stopped` says whether the
    run should draw no more of a system's rows, :attr:`lines` why, one line per stopped system."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lines: list[str] = []
        self._failing: dict[str, tuple[tuple[str, str], int]] = {}  # system -> (its error, rows)
        self._decided: set[str] = set()
        self._stopped: set[str] = set()
        self._lock = threading.Lock()

    def stopped(self, system: str) -> bool:
        return system in self._stopped

    def seen(self, row: EvalRow) -> None:
        """Count a finished row of ``row.system`` (from any thread)."""
        if not self.limit or row.system in self._decided:
            return
        failure = next(((e.type, e.message) for e in row.errors if e.stage == "system"), None)
        if failure is None and any(e.stage == "input" for e in row.errors):
            return
        with self._lock:
            if row.system in self._decided:
                return
            first, count = self._failing.get(row.system, (failure, 0))
            if failure is None or failure != first:
                self._decided.add(row.system)
                return
            self._failing[row.system] = (first, count + 1)
            if count + 1 < self.limit:
                return
            self._decided.add(row.system)
            self._stopped.add(row.system)
            self.lines.append(
                f"{row.system} was stopped: its first {self.limit} rows all failed with the same error "
                f"({first[0]}: {first[1]}); the rest of its rows were not run (--fail-fast {self.limit}; "
                "0 never stops)"
            )
