"""Recording one run into the store as it goes: ``begin``, ``add`` each finished row, ``finish``.

Rows are written in batches (every :data:`BATCH` rows or :data:`INTERVAL` seconds, one transaction
each), so recording holds at most a batch and a killed run loses at most the rows since its last
batch; a run that ends without ``finish`` (an exception, Ctrl-C) is marked ``unfinished`` on
``close``, and one killed outright stays ``running`` with a process id that no longer lives, which
the store reads as unfinished.  ``begin(..., resume=True)`` continues the latest unfinished run of
the same configuration on this machine, so a resumed run (``--cache-dir``) is one record: each row
it hands on again replaces the stored one (:mod:`.rows`).

A store that fails while a run records (a full disk, a lost connection) stops the recording, not
the run: :attr:`Recorder.warning` says why, for the run's summary to show.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from ..errors import UsageError
from ..evidence import loss_cause
from ..records import EvalRow, encode_compact, json_safe, jsonable
from ..secrets import scrub_config
from . import _figures as figures
from ._database import Database
from ._git import git_state
from ._rows import COLUMNS, stored
from ._urls import StoreURL

#: Rows written per transaction, at most.
BATCH = 1000
#: Seconds between writes while rows come slowly.
INTERVAL = 1.0


def upsert(run_id: int) -> str:
    """The statement writing a row of run ``run_id`` (its id written in, so a row's values are
    :func:`~.rows.stored`'s tuple as it is, with no tuple built again per row)."""
    return (
        f"INSERT INTO run_rows (run_id, {', '.join(COLUMNS)}) "
        f"VALUES ({int(run_id)}, {', '.join('?' for _ in COLUMNS)}) "
        "ON CONFLICT (run_id, system, dataset, example_id, slot) DO UPDATE SET "
        + ", ".join(f"{c} = excluded.{c}" for c in ("seq", "failed", "data", "search"))
    )


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def dumps(value: Any) -> str:
    return json.dumps(json_safe(value), ensure_ascii=False, default=jsonable)


def config_digest(config: Mapping[str, Any], kind: str) -> str:
    """What makes two runs the same run to resume: the kind and the configuration, secrets removed."""
    text = json.dumps([kind, json_safe(scrub_config(dict(config)))], sort_keys=True, default=jsonable)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Runs(Protocol):
    """What a recorder needs of its store (:class:`~context_bench.store.Store`)."""

    db: Database
    url: StoreURL

    def run(self, run_id: int) -> Any: ...


class Recorder:
    """One run's record in ``store``; ``kind`` is the command that made it (``run``, ``score``,
    ``memory``, ``import``).  A context manager: leaving it without :meth:`finish` marks the run
    unfinished."""

    def __init__(self, store: Runs, kind: str = "run", batch: int = BATCH, interval: float = INTERVAL):
        self.store = store
        self.kind = kind
        self.batch = batch
        self.interval = interval
        self.run_id: int | None = None
        #: Why recording stopped before the run ended (None while it records).
        self.warning: str | None = None
        self.added = 0
        self._pending: list[tuple[Any, ...]] = []
        self._groups: set[tuple[str, str]] = set()
        self._new_groups: list[tuple[str, str]] = []
        self._written = time.monotonic()
        self._finished = False
        self._git: Any = None
        self._upsert = ""

    def begin(
        self,
        config: Mapping[str, Any] | None,
        metadata: Mapping[str, Any],
        tags: Iterable[str] = (),
        resume: bool | int = False,
        git: bool = True,
    ) -> int:
        """Start the run's record (or continue one: ``resume=True`` the latest unfinished run of this
        configuration and kind on this machine, if any; ``resume=ID`` that run) and return its id.
        ``config`` is stored without its secrets; ``metadata`` (a report's, already masked) gains
        the working directory's git commit and branch (with ``git``: not for an imported report)."""
        db = self.store.db
        config = scrub_config(dict(config or {}))
        digest = config_digest(config, self.kind)
        metadata = dict(metadata)
        here = git_state() if git and "git" not in metadata else None
        if here is not None:
            metadata["git"] = here
        self._git = metadata.get("git")
        commit = metadata.get("git") or {}
        started = str(metadata.get("date") or now())
        with db.transaction():
            run_id = self._resumable(digest, resume)
            if run_id is not None:
                db.execute(
                    "UPDATE runs SET status = 'running', finished = NULL, updated = ?, pid = ?, host = ? "
                    "WHERE id = ?",
                    (now(), os.getpid(), socket.gethostname(), run_id),
                )
                self._groups = {
                    tuple(g)
                    for g in db.rows("SELECT system, dataset FROM run_groups WHERE run_id = ?", (run_id,))
                }
            else:
                found = db.one(
                    "INSERT INTO runs (kind, status, started, updated, config_digest, config, metadata, "
                    "git_commit, git_branch, pid, host) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "RETURNING id",
                    (
                        self.kind,
                        started,
                        now(),
                        digest,
                        dumps(config),
                        dumps(metadata),
                        commit.get("commit"),
                        commit.get("branch"),
                        os.getpid(),
                        socket.gethostname(),
                    ),
                )
                assert found is not None
                run_id = int(found[0])
            db.many(
                "INSERT INTO run_tags (run_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(run_id, tag) for tag in dict.fromkeys(tags)],
            )
        self.run_id = run_id
        self._upsert = upsert(run_id)
        return run_id

    def _resumable(self, digest: str, resume: bool | int) -> int | None:
        db = self.store.db
        if resume is False:
            return None
        if resume is not True:
            info = self.store.run(int(resume))
            if info.status == "finished":
                raise UsageError(f"run {info.id} is finished: there is nothing to resume")
            if info.status == "running":
                raise UsageError(f"run {info.id} is still running (process {info.pid} on {info.host})")
            return info.id
        candidates = db.rows(
            "SELECT id FROM runs WHERE config_digest = ? AND kind = ? AND host = ? AND status != 'finished' "
            "ORDER BY id DESC",
            (digest, self.kind, socket.gethostname()),
        )
        for (run_id,) in candidates:
            if self.store.run(int(run_id)).status == "unfinished":  # not one still running elsewhere
                return int(run_id)
        return None

    def add(self, row: EvalRow, line: str | None = None) -> None:
        """Record a finished row (written with its batch).  ``line``: the row's line of the JSONL
        report (``encode_compact(jsonl.line(row))``), when the run writes that report anyway, so the
        row is encoded once."""
        if self.warning is not None or self.run_id is None:
            return
        self._pending.append(stored(row, line))
        self.added += 1
        key = (row.system, row.dataset)
        if key not in self._groups:
            self._groups.add(key)
            self._new_groups.append(key)
        if len(self._pending) >= self.batch or time.monotonic() - self._written >= self.interval:
            self.flush()

    def flush(self) -> None:
        """Write the rows added since the last batch."""
        if self.run_id is None or self.warning is not None or not (self._pending or self._new_groups):
            return
        db, run_id = self.store.db, self.run_id
        try:
            with db.transaction():
                last = db.one("SELECT coalesce(max(id), 0) FROM run_rows") if db.index_new_rows else None
                db.many(self._upsert, self._pending)
                if last is not None:
                    db.execute(db.index_new_rows, (last[0],))
                db.many(
                    "INSERT INTO run_groups (run_id, system, dataset) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    [(run_id, system, dataset) for system, dataset in self._new_groups],
                )
                db.execute("UPDATE runs SET updated = ? WHERE id = ?", (now(), run_id))
        except UsageError as exc:  # the store failed: the run goes on, and says so
            self.warning = (
                f"recording to {self.store.url.shown} stopped after {self.added - len(self._pending)} "
                f"rows: {exc}"
            )
        self._pending.clear()
        self._new_groups.clear()
        self._written = time.monotonic()

    def mark_losses(self, lost: Mapping[tuple[str, str], set[str]]) -> None:
        """Give the stored rows that are ``lost`` (:func:`~context_bench.evidence.lost_rows`) their
        ``loss_cause``, known only once the summary is, after the rows were recorded."""
        self.flush()
        if self.run_id is None or self.warning is not None or not lost:
            return
        db, run_id = self.store.db, self.run_id
        with db.transaction():
            for (system, dataset), ids in lost.items():
                for example_id in ids:
                    found = db.rows(
                        "SELECT id, data FROM run_rows WHERE run_id = ? AND system = ? AND dataset = ? "
                        "AND example_id = ?",
                        (run_id, system, dataset, example_id),
                    )
                    for row_id, data in found:
                        row = json.loads(data)
                        row["loss_cause"] = loss_cause(row.get("evidence_kept"))
                        db.execute("UPDATE run_rows SET data = ? WHERE id = ?", (encode_compact(row), row_id))

    def finish(
        self, summary: Any, verdict: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> None:
        """Write the last rows and the run's summary (a :class:`~context_bench.records.Summary` or
        its ``to_dict``); ``verdict`` is the run list's line (by default one made from the summary);
        ``metadata``, the report's as the run ended (already masked), replaces that of ``begin``."""
        self.flush()
        if self.run_id is None or self.warning is not None:
            return
        data = json_safe(summary.to_dict() if hasattr(summary, "to_dict") else dict(summary))
        errors = figures.counts(data)[1]
        db, run_id = self.store.db, self.run_id
        with db.transaction():
            stored = db.one("SELECT count(*) FROM run_rows WHERE run_id = ?", (run_id,))
            rows = int(stored[0]) if stored else 0
            db.execute(
                "UPDATE runs SET status = 'finished', finished = ?, updated = ?, summary = ?, verdict = ?, "
                "row_count = ?, error_count = ? WHERE id = ?",
                (now(), now(), dumps(data), verdict or figures.verdict(data), rows, errors, run_id),
            )
            if metadata is not None:
                ended = {**metadata, "git": self._git} if self._git is not None else dict(metadata)
                db.execute("UPDATE runs SET metadata = ? WHERE id = ?", (dumps(ended), run_id))
            db.execute("DELETE FROM figures WHERE run_id = ?", (run_id,))
            db.many(
                "INSERT INTO figures (run_id, system, dataset, field, mean, low, high, n) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, *figure) for figure in figures.figures(data)],
            )
        self._finished = True

    def close(self) -> None:
        """Write what is pending; a run not finished is marked unfinished."""
        self.flush()
        if self.run_id is None or self._finished or self.warning is not None:
            return
        try:
            self.store.db.execute(
                "UPDATE runs SET status = 'unfinished', updated = ? WHERE id = ?", (now(), self.run_id)
            )
        except UsageError as exc:
            self.warning = f"could not mark run {self.run_id} unfinished in {self.store.url.shown}: {exc}"

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
