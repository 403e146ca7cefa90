"""The store read back: runs listed and filtered, a run's summary, metadata and configuration, its
rows paged, searched and streamed, the trend of a figure over runs; tags edited and runs deleted."""

from __future__ import annotations

import datetime
import json
import os
import re
import socket
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from ..errors import UsageError
from ..records import EvalResult, EvalRow
from ..saved import summary_from_dict
from ._database import Database
from ._recorder import Recorder
from ._rows import loaded
from ._urls import StoreURL

#: A run recorded on another machine that wrote nothing for this long is taken as unfinished.
STALE = datetime.timedelta(hours=1)
#: Rows read per query when a run's rows are streamed.
CHUNK = 2000


class UnknownRun(UsageError):
    """No run has that id in the store."""


@attrs.frozen
class RunInfo:
    """A run as the store lists it; ``status`` is ``finished``, ``running`` or ``unfinished`` (ended
    without finishing: killed, interrupted or failed).  ``config``, ``metadata`` and ``summary``
    are read by :meth:`Store.run` only (None in a listing)."""

    id: int
    kind: str
    status: str
    started: str
    finished: str | None = None
    tags: tuple[str, ...] = ()
    systems: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    rows: int = 0
    errors: int = 0
    verdict: str | None = None
    commit: str | None = None
    branch: str | None = None
    pid: int | None = None
    host: str | None = None
    config: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None


@attrs.frozen
class TrendPoint:
    """One run's mean of a (system, data set, field), with its 95% interval and what marks it."""

    run_id: int
    started: str
    mean: float | None
    low: float | None
    high: float | None
    rows: int
    tags: tuple[str, ...] = ()
    commit: str | None = None
    branch: str | None = None


_RUN_COLUMNS = (
    "id, kind, status, started, finished, verdict, git_commit, git_branch, row_count, error_count, pid, "
    "host, updated"
)


class Store:
    """A store of runs (:func:`context_bench.store.open_store`); its methods are safe to call from
    several threads."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def url(self) -> StoreURL:
        return self.db.url

    def recorder(self, kind: str = "run", **options: Any) -> Recorder:
        """A :class:`Recorder` for one run of ``kind`` (``run``, ``score``, ``memory``, ``import``)."""
        return Recorder(self, kind, **options)

    # -- runs ----------------------------------------------------------------------------------

    def runs(
        self,
        tag: str | None = None,
        system: str | None = None,
        dataset: str | None = None,
        since: str | None = None,
        limit: int | None = None,
    ) -> list[RunInfo]:
        """The runs, newest first: those with ``tag``, a group of ``system`` or ``dataset``, started
        at or after ``since`` (an ISO date or time, UTC)."""
        where, params = _conditions(
            ("id IN (SELECT run_id FROM run_tags WHERE tag = ?)", tag),
            ("id IN (SELECT run_id FROM run_groups WHERE system = ?)", system),
            ("id IN (SELECT run_id FROM run_groups WHERE dataset = ?)", dataset),
            ("started >= ?", since),
        )
        text = f"SELECT {_RUN_COLUMNS} FROM runs"
        if where:
            text += " WHERE " + " AND ".join(where)
        text += " ORDER BY started DESC, id DESC"
        if limit is not None:
            text += " LIMIT ?"
            params.append(limit)
        return self._infos(self.db.rows(text, params))

    def run(self, run_id: int) -> RunInfo:
        """The run with its configuration, metadata (tags among them) and summary; an unknown id
        is a one-line error."""
        found = self.db.one(
            f"SELECT {_RUN_COLUMNS}, config, metadata, summary FROM runs WHERE id = ?", (run_id,)
        )
        if found is None:
            raise UnknownRun(
                f"no run {run_id} in the store {self.url.shown} (`context-bench runs` lists them)"
            )
        [info] = self._infos([found[:-3]])
        config, metadata, summary = (json.loads(text) if text else None for text in found[-3:])
        metadata = {**(metadata or {}), "tags": list(info.tags)}
        return attrs.evolve(info, config=config, metadata=metadata, summary=summary)

    def _infos(self, found: Sequence[tuple]) -> list[RunInfo]:
        ids = [int(line[0]) for line in found]
        tags = self._by_run("SELECT run_id, tag FROM run_tags WHERE run_id IN ({}) ORDER BY tag", ids)
        groups = self._by_run("SELECT run_id, system, dataset FROM run_groups WHERE run_id IN ({})", ids)
        infos = []
        for (
            run_id,
            kind,
            status,
            started,
            finished,
            verdict,
            commit,
            branch,
            rows,
            errors,
            pid,
            host,
            updated,
        ) in found:
            status = _status(status, pid, host, updated)
            if rows is None:  # not finished: what it stored so far
                counted = self.db.one(
                    "SELECT count(*), coalesce(sum(failed), 0) FROM run_rows WHERE run_id = ?", (run_id,)
                )
                rows, errors = counted if counted else (0, 0)
            own = groups.get(run_id, [])
            infos.append(
                RunInfo(
                    id=int(run_id),
                    kind=kind,
                    status=status,
                    started=started,
                    finished=finished,
                    tags=tuple(t for (t,) in tags.get(run_id, [])),
                    systems=tuple(dict.fromkeys(s for s, _ in own)),
                    datasets=tuple(dict.fromkeys(d for _, d in own)),
                    rows=int(rows),
                    errors=int(errors),
                    verdict=verdict,
                    commit=commit,
                    branch=branch,
                    pid=pid,
                    host=host,
                )
            )
        return infos

    def _by_run(self, text: str, ids: list[int]) -> dict[int, list[tuple]]:
        found: dict[int, list[tuple]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for line in self.db.rows(text.format(", ".join("?" for _ in chunk)), chunk):
                found.setdefault(int(line[0]), []).append(tuple(line[1:]))
        return found

    def set_tags(self, run_id: int, tags: Sequence[str]) -> None:
        """Replace the run's tags."""
        self.run(run_id)
        with self.db.transaction():
            self.db.execute("DELETE FROM run_tags WHERE run_id = ?", (run_id,))
            self.db.many(
                "INSERT INTO run_tags (run_id, tag) VALUES (?, ?)", [(run_id, t) for t in dict.fromkeys(tags)]
            )

    def delete(self, run_id: int) -> None:
        """Delete the run and its rows."""
        self.run(run_id)
        with self.db.transaction():
            for table in ("run_rows", "run_tags", "run_groups", "figures"):
                self.db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            self.db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    # -- rows ----------------------------------------------------------------------------------

    def rows(
        self,
        run_id: int,
        offset: int = 0,
        limit: int = 50,
        search: str | None = None,
        system: str | None = None,
        dataset: str | None = None,
        example_id: str | None = None,
    ) -> list[EvalRow]:
        """A page of the run's rows in run order: those of ``system``, ``dataset`` and ``example_id``,
        and whose id, response or error messages hold every word of ``search``."""
        where, params = self._where(run_id, search, system, dataset, example_id)
        found = self.db.rows(
            f"SELECT data FROM run_rows WHERE {where} ORDER BY seq, id LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [loaded(data) for (data,) in found]

    def count(
        self,
        run_id: int,
        search: str | None = None,
        system: str | None = None,
        dataset: str | None = None,
        example_id: str | None = None,
    ) -> int:
        """How many rows :meth:`rows` pages through."""
        where, params = self._where(run_id, search, system, dataset, example_id)
        found = self.db.one(f"SELECT count(*) FROM run_rows WHERE {where}", params)
        return int(found[0]) if found else 0

    def _where(
        self,
        run_id: int,
        search: str | None,
        system: str | None,
        dataset: str | None,
        example_id: str | None = None,
    ) -> tuple[str, list[Any]]:
        words = self.db.search_text(search) if search and search.split() else None
        where, params = _conditions(
            ("run_id = ?", run_id),
            ("example_id = ?", example_id),
            ("system = ?", system),
            ("dataset = ?", dataset),
            (self.db.match, words),
        )
        return " AND ".join(where), params

    def iter_rows(
        self, run_id: int, system: str | None = None, dataset: str | None = None
    ) -> Iterator[EvalRow]:
        """Every row of the run in run order, read :data:`CHUNK` at a time."""
        where, params = self._where(run_id, None, system, dataset)
        after = (-1, -1)
        while True:
            found = self.db.rows(
                f"SELECT seq, id, data FROM run_rows WHERE {where} "
                "AND (seq > ? OR (seq = ? AND id > ?)) ORDER BY seq, id LIMIT ?",
                (*params, after[0], after[0], after[1], CHUNK),
            )
            for seq, row_id, data in found:
                after = (seq, row_id)
                yield loaded(data)
            if len(found) < CHUNK:
                return

    def result(self, run_id: int) -> EvalResult:
        """The run as a streamed run's result (its summary typed, its metadata, no rows), which every
        report format renders (:func:`context_bench.reports.render`) as it renders a live run's."""
        info = self.run(run_id)
        return EvalResult([], summary_from_dict(info.summary or {}), metadata=info.metadata or {})

    def report(self, run_id: int) -> dict[str, Any]:
        """The run as its JSON report holds it (``summary``, ``metadata``, ``rows`` as ``to_dict``
        gives them): what ``compare`` reads from a report file."""
        info = self.run(run_id)
        return {
            "summary": info.summary or {},
            "metadata": info.metadata or {},
            "rows": [row.to_dict() for row in self.iter_rows(run_id)],
        }

    # -- trends --------------------------------------------------------------------------------

    def series(self) -> list[tuple[str, str, str]]:
        """Every (system, data set, field) some finished run has a figure of."""
        return [
            tuple(line)
            for line in self.db.rows("SELECT DISTINCT system, dataset, field FROM figures ORDER BY 1, 2, 3")
        ]

    def trend(self, system: str, dataset: str, field: str) -> list[TrendPoint]:
        """The (system, data set, field)'s mean in each finished run, oldest first."""
        found = self.db.rows(
            "SELECT r.id, r.started, f.mean, f.low, f.high, f.n, r.git_commit, r.git_branch FROM figures f "
            "JOIN runs r ON r.id = f.run_id WHERE f.system = ? AND f.dataset = ? AND f.field = ? "
            "AND r.status = 'finished' ORDER BY r.started, r.id",
            (system, dataset, field),
        )
        tags = self._by_run(
            "SELECT run_id, tag FROM run_tags WHERE run_id IN ({}) ORDER BY tag", [int(f[0]) for f in found]
        )
        return [
            TrendPoint(
                int(i),
                started,
                mean,
                low,
                high,
                int(n or 0),
                tuple(t for (t,) in tags.get(int(i), [])),
                commit,
                branch,
            )
            for i, started, mean, low, high, n, commit, branch in found
        ]

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _conditions(*given: tuple[str, Any]) -> tuple[list[str], list[Any]]:
    """The SQL conditions whose value is given (not None), and their parameters."""
    chosen = [(condition, value) for condition, value in given if value is not None]
    return [condition for condition, _ in chosen], [value for _, value in chosen]


def _status(status: str, pid: int | None, host: str | None, updated: str) -> str:
    """A run recorded as running is unfinished when its process is gone (this machine), or when it
    has written nothing for :data:`STALE` (another machine, whose processes cannot be seen)."""
    if status != "running":
        return status
    if host == socket.gethostname():
        return "running" if pid is not None and _alive(int(pid)) else "unfinished"
    written = datetime.datetime.fromisoformat(updated)
    return "running" if datetime.datetime.now(datetime.timezone.utc) - written < STALE else "unfinished"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return _not_zombie(pid)


def _not_zombie(pid: int) -> bool:
    """A killed process its parent has not reaped yet is gone all the same."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return re.search(r"\)\s+Z\s", handle.read()) is None
    except OSError:
        return True


def parse_since(text: str) -> str:
    """``--since``: an ISO date or time (UTC unless it names its zone), or an age (``3d``, ``12h``,
    ``2w``), as the ISO time the runs' start is compared with."""
    match = re.fullmatch(r"\s*(\d+)\s*([hdw])\s*", text)
    if match:
        hours = int(match[1]) * {"h": 1, "d": 24, "w": 168}[match[2]]
        moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=hours)
    else:
        try:
            moment = datetime.datetime.fromisoformat(text.strip())
        except ValueError:
            raise UsageError(
                f"--since {text}: expected a date (2026-11-01), a time (2026-11-01T09:30) "
                "or an age (3d, 12h, 2w)"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc).isoformat(timespec="seconds")
