"""The driver side: ``RayExecutor`` ships a run's rows to Ray workers in batches.

Rows are taken from the runner lazily, grouped into batches sized so that one Ray task takes
about :data:`TARGET_SECONDS` (the first batches are small, the size follows the measured cost of a
row), and at most ``max_concurrency`` rows are in flight across the cluster: as many batches run
at once as the cluster has CPUs (up to ``max_concurrency``), each working its rows with the core's
local executor at the remaining concurrency (threads, or an event loop for async systems and
judges).  Every finished batch's rows are handed to ``on_row`` here, in the driver, which writes
the cache and the progress, so a run resumes exactly as a local one does.

What the rows share (a system and its evaluators) is keyed by its pickled bytes, so a worker keeps
the objects it rebuilt, and their warm processes (a sandbox server, a sympy worker), for every run
that ships the same ones; a run also starts with the batch size the last run of the same context
ended with, instead of working its way up from :data:`FIRST_BATCH` again.

A worker process that dies loses no row: its batch is split in two and both halves are run again;
a single row whose worker dies :data:`MAX_TRIES` times is given up as a row error naming it.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import pickle
import secrets
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

import attrs

from context_bench.config import Limits
from context_bench.defaults import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_CONCURRENCY
from context_bench.errors import UsageError
from context_bench.execution import EvalRow, OnRow, RowError, RowTask

#: How long one Ray task should take, in seconds: long enough that scheduling (~1-2 ms a task) is
#: under 1% of it, short enough that the last batches finish together.
TARGET_SECONDS = 0.25
#: The first batch's size, before a row's cost is known.
FIRST_BATCH = 8
#: The largest batch, whatever the rows cost.
MAX_BATCH = 4096
#: How often a single row may take its worker down before it is given up.
MAX_TRIES = 3


@attrs.define
class RunStats:
    """What the last run did on Ray: for a user's curiosity and bench/ray_scaling.py's estimates."""

    rows: int = 0
    batches: int = 0
    #: Seconds the workers spent in batches (their sum): a row's cost there, Ray's share included.
    worker_seconds: float = 0.0
    #: Batches whose worker died (each one was split, or its row run again).
    lost: int = 0
    #: Rows given up because they kept killing their worker.
    given_up: int = 0


@attrs.define
class _Batch:
    tasks: list[RowTask]
    #: For a single row run again: how many workers it has taken down so far.
    deaths: int = 0


class RayExecutor:
    """Runs rows on Ray: ``address`` None starts a local Ray with this machine's CPUs (``auto``
    joins the cluster running here, ``ray://host:10001`` a remote one); ``batch_size`` fixes the
    rows per Ray task (None: sized from the rows' cost).  ``call_timeout`` bounds every system and
    evaluator call, on the workers, as the local executor does.
    """

    def __init__(
        self,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        *,
        ray_address: str | None = None,
        ray_batch_size: int | None = None,
        num_cpus: int | None = None,
    ) -> None:
        limits = Limits(max_concurrency=max_concurrency, call_timeout=call_timeout)
        if ray_batch_size is not None and ray_batch_size < 1:
            raise ValueError("ray_batch_size must be at least 1")
        self.max_concurrency = limits.max_concurrency
        self.call_timeout = limits.local_call_timeout
        self.address = ray_address
        self.batch_size = ray_batch_size
        #: CPUs of a Ray this executor starts itself (None: this machine's).
        self.num_cpus = num_cpus
        self.started = False
        self.stats = RunStats()
        #: The batch size each context's last run ended with (its rows' cost is known).
        self.sizes: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"RayExecutor(max_concurrency={self.max_concurrency}, address={self.address!r})"

    # -- the cluster ---------------------------------------------------------------------------

    def connect(self) -> None:
        """Join (or start) Ray once; a Ray the caller already started is used as it is."""
        import ray

        if ray.is_initialized():
            return
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if self.address is None:
            kwargs["num_cpus"] = self.num_cpus or os.cpu_count() or 1
            # Ray nices its workers (15) by default; here they are the run itself, and work at the
            # priority of the command that runs them, as the local executor's threads do.
            kwargs["_system_config"] = {"worker_niceness": 0}
            if not (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")):
                # Ray keeps the token it made in memory, and its servers look for it under $HOME:
                # a process that starts Ray again after HOME changed would start servers that find
                # none.  The token of a Ray this process owns lives in its environment instead.
                os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
        ray.init(address=self.address, **kwargs)
        self.started = True

    def close(self) -> None:
        """Stop the Ray this executor started (one it joined, or the caller's, is left running)."""
        import ray

        if self.started and ray.is_initialized():
            ray.shutdown()
        self.started = False

    def slots(self) -> int:
        """Batches at once: the cluster's CPUs, at most ``max_concurrency``."""
        import ray

        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        return max(1, min(self.max_concurrency, cpus))

    # -- a run -----------------------------------------------------------------------------------

    def run(self, tasks: Iterable[RowTask], on_row: OnRow) -> None:
        self.connect()
        self.stats = RunStats()
        _Run(self, iter(tasks), on_row, self.stats).go()


class _Run:
    def __init__(
        self, executor: RayExecutor, tasks: Iterator[RowTask], on_row: OnRow, stats: RunStats
    ) -> None:
        import ray

        self.ray = ray
        self.stats = stats
        self.tasks = tasks
        self.on_row = on_row
        self.slots = executor.slots()
        self.concurrency = max(1, executor.max_concurrency // self.slots)
        self.call_timeout = executor.call_timeout
        self.fixed = executor.batch_size
        # the first batch: a few rows, but at least one whole wave of the rows a batch runs at once
        self.size = executor.batch_size or max(FIRST_BATCH, self.concurrency)
        self.sizes = executor.sizes
        # what the rows share, shipped once: (id(system), id(evaluators)) -> key, ObjectRef, objects
        self.contexts: dict[tuple[int, int], tuple[str, Any, tuple[Any, list[Any]]]] = {}
        self.retry: deque[_Batch] = deque()
        self.pending: dict[Any, _Batch] = {}
        #: Rows taken from the runner, not yet sent: as many as one batch per slot (look-ahead).
        self.ahead: deque[RowTask] = deque()
        self.exhausted = False

    def go(self) -> None:
        from .worker import run_batch

        self.remote = run_batch
        try:
            self._fill()
            while self.pending:
                done, _ = self.ray.wait(list(self.pending), num_returns=1)
                for ref in done:
                    self._finish(ref, self.pending.pop(ref))
                self._fill()
        except BaseException:
            # Ctrl-C (or a failure): no more rows start; what on_row was handed is cached already
            for ref in self.pending:
                self.ray.cancel(ref, force=True)
            self.pending.clear()
            raise

    def _fill(self) -> None:
        while len(self.pending) < self.slots:
            batch = self.retry.popleft() if self.retry else self._next_batch()
            if batch is None:
                return
            self._submit(batch)

    def _next_batch(self) -> _Batch | None:
        """The next ``size`` rows; once the runner has no more, the rows left are shared out in
        shrinking batches (half of them per free slot), so the last batches end together."""
        if not self.exhausted and not self.contexts and not self.fixed:
            first = next(self.tasks, None)  # the first batch: sized as its context's last run ended
            if first is not None:
                self.ahead.append(first)
                self.size = self.sizes.get(self._context(first)[0], self.size)
        if not self.exhausted:
            wanted = max(0, self.size * self.slots - len(self.ahead))
            taken = list(itertools.islice(self.tasks, wanted))
            self.ahead.extend(taken)
            self.exhausted = len(taken) < wanted
        if not self.ahead:
            return None
        size = self.size
        if self.exhausted and not self.fixed:
            waves = -(-len(self.ahead) // (self.slots * self.concurrency))  # of this slot's share
            size = min(size, waves * self.concurrency)
            if len(self.ahead) - size < self.concurrency:
                size = len(self.ahead)  # no fragment left to take a wave of its own
        return _Batch([self.ahead.popleft() for _ in range(min(size, len(self.ahead)))])

    def _submit(self, batch: _Batch) -> None:
        shipped, refs = [], {}
        for task in batch.tasks:
            key, ref = self._context(task)
            refs[key] = ref
            shipped.append((key, attrs.evolve(task, system=None, evaluators=[])))
        ref = self.remote.remote(shipped, refs, self.concurrency, self.call_timeout)
        self.pending[ref] = batch

    def _context(self, task: RowTask) -> tuple[str, Any]:
        pair = (id(task.system), id(task.evaluators))
        found = self.contexts.get(pair)
        if found is None:
            from ray import cloudpickle

            shared = (task.system, task.evaluators)
            try:
                blob = cloudpickle.dumps(shared)
            except (TypeError, pickle.PicklingError) as exc:
                names = ", ".join(
                    getattr(o, "name", type(o).__name__) for o in (task.system, *task.evaluators)
                )
                cause = f"{type(exc).__name__}: {exc}".splitlines()[0]
                raise UsageError(
                    f"cannot send {names} to the Ray workers (each must pickle): {cause}"
                ) from None
            key = hashlib.sha256(blob).hexdigest()
            found = self.contexts[pair] = (key, self.ray.put(blob), shared)  # kept: ids stay theirs
        return found[0], found[1]

    def _finish(self, ref: Any, batch: _Batch) -> None:
        from ray.exceptions import RayError, RayTaskError

        try:
            rows, seconds = self.ray.get(ref)
        except RayTaskError:
            raise  # the batch itself failed (a system that cannot be unpickled there): the run stops
        except RayError as exc:  # its worker (or node) died
            self.stats.lost += 1
            self._lost(batch, exc)
            return
        self.stats.batches += 1
        self.stats.rows += len(rows)
        self.stats.worker_seconds += seconds
        self._resize(len(rows), seconds)
        for row in rows:
            self.on_row(row)

    def _lost(self, batch: _Batch, exc: BaseException) -> None:
        """Run the rows of a batch whose worker died again: halves until one row is left alone,
        which may take its worker down MAX_TRIES times before it is given up."""
        tasks = batch.tasks
        if len(tasks) > 1:
            middle = len(tasks) // 2
            self.retry.extendleft([_Batch(tasks[middle:]), _Batch(tasks[:middle])])
            return
        deaths = batch.deaths + 1
        if deaths < MAX_TRIES:
            self.retry.appendleft(_Batch(tasks, deaths))
            return
        self.stats.given_up += 1
        self.on_row(_given_up(tasks[0], deaths, exc))

    def _resize(self, count: int, seconds: float) -> None:
        if self.fixed or count == 0:
            return
        per_row = max(seconds / count, 1e-6)
        # what one batch of TARGET_SECONDS holds, moving at most 4x at a time
        wanted = min(MAX_BATCH, int(TARGET_SECONDS / per_row), self.size * 4)
        # whole waves of the batch's concurrency, several of them, so no wave runs part-empty
        waves = max(4 if self.concurrency > 1 else 1, -(-wanted // self.concurrency))
        self.size = waves * self.concurrency
        for key, _, _ in self.contexts.values():
            self.sizes[key] = self.size


def _given_up(task: RowTask, deaths: int, exc: BaseException) -> EvalRow:
    system = getattr(task.system, "name", type(task.system).__name__)
    cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return task.row(
        RowError(
            "system",
            system,
            "WorkerDied",
            f"row {task.example_id!r} of data set {task.dataset!r} took its Ray worker process down "
            f"{deaths} times; given up ({cause})",
        )
    )
