"""Which row each call belongs to, and the figures of every row until the run takes them.

A call is a row's when it carries the row's token in the ``X-Context-Bench-Row`` header, or, without
one, when exactly one row has declared itself the only one in flight (:meth:`Ledger.sole`:
a system run with concurrency 1).  Any other call is unattributed: it is counted in the totals and
in :attr:`Ledger.unattributed`, never guessed onto a row.  A row's figures are handed over once
(:meth:`Ledger.take`), after its calls still in flight have finished, so a run holds only the rows
in flight.
"""

from __future__ import annotations

import threading
from collections import Counter

from .records import MeterCall, Metered

__all__ = ["Ledger"]

#: Seconds :meth:`Ledger.take` waits for a row's calls still being relayed.
TAKE_WAIT = 30.0


class Ledger:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._rows: dict[str, Metered] = {}
        self._in_flight: Counter[str] = Counter()
        #: Rows taken while a call of theirs was still in flight: its figures come too late for them.
        self._abandoned: set[str] = set()
        self._sole: list[str] = []
        self.total = Metered()
        self.unattributed = Metered()

    def begin(self, token: str | None) -> str | None:
        """The row a call starting now belongs to (None: unattributed)."""
        with self._changed:
            row = token or (self._sole[0] if len(self._sole) == 1 else None)
            if row is not None:
                self._in_flight[row] += 1
            return row

    def finish(self, call: MeterCall) -> None:
        with self._changed:
            self.total.count(call)
            row = call.row
            if row is None:
                self.unattributed.count(call)
                return
            self._in_flight[row] -= 1
            if self._in_flight[row] <= 0:
                del self._in_flight[row]
            if row in self._abandoned:
                self.unattributed.count(call)
                if row not in self._in_flight:
                    self._abandoned.discard(row)
            else:
                self._rows.setdefault(row, Metered()).add(call)
            self._changed.notify_all()

    def take(self, row: str, wait: float = TAKE_WAIT) -> Metered:
        """The row's figures, once its calls in flight finish (at most ``wait`` seconds; a call
        still running then is counted as unattributed when it ends)."""
        with self._changed:
            self._changed.wait_for(lambda: row not in self._in_flight, timeout=wait)
            if row in self._in_flight:
                self._abandoned.add(row)
            return self._rows.pop(row, Metered())

    def enter_sole(self, row: str) -> None:
        with self._changed:
            self._sole.append(row)

    def leave_sole(self, row: str) -> None:
        with self._changed:
            self._sole.remove(row)
