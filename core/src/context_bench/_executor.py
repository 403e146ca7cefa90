"""How rows are scheduled: the one seam between the runner and where the work happens.

An executor takes picklable :class:`RowTask` objects from an iterable, which it consumes lazily
(the runner builds each task as it is drawn, so a run of millions of rows never holds them all),
and hands each finished :class:`EvalRow` to ``on_row`` as it finishes, in any order (the runner
caches, counts and orders them there).  It keeps only a bounded number of rows in flight.  The
local executor below uses worker threads, or an event loop from the first row whose system or
evaluator is async; a distributed executor (Ray, say) ships the same tasks to ``run_row`` on
other machines.

With a call deadline (``call_timeout``), no call can hold the run: a sync call runs in a daemon
thread that the calling thread watches, and a row whose call is past the deadline is given up with
an error naming the stage and the deadline while the other rows go on (Python cannot stop a
thread, so the stuck call is left to finish or not in the background).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor as PoolExecutor
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from ._rowtask import RowTask, arun_row, run_row, timed_out_row
from .config import UNSET, Limits
from .defaults import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_CONCURRENCY
from .errors import DeadlineExceeded
from .records import EvalRow

OnRow = Callable[[EvalRow], None]

#: A row waited on I/O when it blocked (a voluntary context switch: a socket, a pipe, a sleep) and
#: its wall time passed its CPU time by more than this (seconds) and by more than half.
WAIT_THRESHOLD = 0.002
#: Rows one after another that must wait before the other workers start: on a busy machine one row
#: can seem to wait (the supervisor taking the interpreter's lock, then the scheduler running other
#: processes), and starting seven threads for rows that compute costs up to 2.7x their CPU.
WAITING_ROWS = 2


def _rusage_clock() -> tuple[float, float, int]:
    usage = getrusage(RUSAGE_THREAD)
    return time.perf_counter(), usage.ru_utime + usage.ru_stime, usage.ru_nvcsw


def _cpu_clock() -> tuple[float, float, int]:
    return time.perf_counter(), time.thread_time(), 1  # no switch counts here: every wait counts


# row_clock(), for the calling thread: wall seconds, its CPU seconds and its voluntary context
# switches (the times it blocked; a pre-emption is an involuntary one).  getrusage reads both in one
# call, in a fifth of the time time.thread_time takes here; without it (not Linux) a wait cannot be
# told from a pre-emption, and only the rows in a row tell them apart.
try:
    from resource import RUSAGE_THREAD, getrusage
except ImportError:  # macOS has no usage per thread, Windows no resource module
    row_clock = _cpu_clock
else:
    row_clock = _rusage_clock


class RowWaits:
    """Whether the rows one worker runs wait on I/O, so that more workers would help: true once
    :data:`WAITING_ROWS` rows in a row blocked and spent most of their time waiting (more than
    :data:`WAIT_THRESHOLD`); rows that compute never are, however often the machine pre-empts them."""

    __slots__ = ("clock", "streak")

    def __init__(self) -> None:
        self.clock = row_clock
        self.streak = 0

    def row(self, before: tuple[float, float, int]) -> bool:
        """Count the row that started at ``before`` (a :data:`row_clock` reading) and ends now."""
        wall, cpu, switches = self.clock()
        wall -= before[0]
        waited = wall - (cpu - before[1])
        if switches > before[2] and waited > WAIT_THRESHOLD and waited * 2 > wall:
            self.streak += 1
        else:
            self.streak = 0
        return self.streak >= WAITING_ROWS


class Executor(Protocol):
    """Where a run's rows are worked on: ``run`` draws the tasks lazily and hands each finished row
    to ``on_row``.  ``call_timeout`` is the deadline it keeps on every system and evaluator call, in
    seconds (None: none): a pass a plugin runs beside it (a memory run's answers) keeps the same."""

    call_timeout: float | None

    def run(self, tasks: Iterable[RowTask], on_row: OnRow) -> None: ...


def executor_for(limits: Limits, executor: Executor | None = None) -> Executor:
    """The executor of a run with these limits: ``executor`` (whose own deadline is the run's: a
    ``call_timeout`` given beside it must be that one), else a :class:`LocalExecutor` keeping them."""
    if executor is None:
        return LocalExecutor(limits.max_concurrency, limits.local_call_timeout)
    if limits.call_timeout is not UNSET and limits.call_timeout != executor.call_timeout:
        raise ValueError(
            f"call_timeout={limits.call_timeout!r} differs from the deadline the executor keeps "
            f"({executor.call_timeout!r}): give the executor its deadline, or leave call_timeout unset"
        )
    return executor


def _is_async(obj: Any, method: str) -> bool:
    return inspect.iscoroutinefunction(getattr(type(obj), "a" + method, None))


def needs_event_loop(task: RowTask) -> bool:
    """Whether the task's system or one of its evaluators is async (``aprocess``, ``ascore``)."""
    return _is_async(task.system, "process") or any(_is_async(e, "score") for e in task.evaluators)


class _Feed:
    """The tasks, drawn one at a time by any thread.

    Until ``loop`` is set, the feed stops before the first task that needs an event loop and holds
    it, so the rows before it run the sync way and it and the rest on a loop.  Alike rows share
    one system and one evaluator list: each pair is looked at once, not per row.
    """

    def __init__(self, tasks: Iterable[RowTask]) -> None:
        self._tasks: Iterator[RowTask] = iter(tasks)
        self._lock = threading.Lock()
        self._checked: dict[tuple[int, int], bool] = {}
        self.held: RowTask | None = None
        self.loop = False

    def next(self) -> RowTask | None:
        """The next task; None when there is none (or, before ``loop``, when it needs a loop)."""
        with self._lock:
            if self.held is not None:
                if not self.loop:
                    return None
                held, self.held = self.held, None
                return held
            task = next(self._tasks, None)
            if task is not None and not self.loop:
                key = (id(task.system), id(task.evaluators))
                found = self._checked.get(key)
                if found is None:
                    found = self._checked[key] = needs_event_loop(task)
                if found:
                    self.held = task
                    return None
            return task


class LocalExecutor:
    """Runs at most ``max_concurrency`` rows at once in this process.

    ``call_timeout`` (seconds, None: no deadline) bounds every system and evaluator call; both are
    checked as a run's :class:`~context_bench.config.Limits` are.
    """

    def __init__(
        self,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        limits = Limits(max_concurrency=max_concurrency, call_timeout=call_timeout)
        self.max_concurrency = limits.max_concurrency
        self.call_timeout = limits.local_call_timeout

    def run(self, tasks: Iterable[RowTask], on_row: OnRow) -> None:
        """Run every task, at most ``max_concurrency`` at once, handing each row to ``on_row``."""
        feed = _Feed(tasks)
        if self.call_timeout is not None:
            _Supervised(feed, on_row, self.max_concurrency, self.call_timeout).run()
        else:
            self._run_threads(feed, on_row)
        if feed.held is not None:  # from this row on, calls are awaited on an event loop
            feed.loop = True
            _in_fresh_loop(lambda: self._run_async(feed, on_row))

    def _run_threads(self, feed: _Feed, on_row: OnRow) -> None:
        if not self._run_inline_while_busy(feed, on_row):
            return
        stop = threading.Event()
        failure: list[BaseException] = []

        def work() -> None:
            try:
                while not stop.is_set():
                    task = feed.next()
                    if task is None:
                        return
                    on_row(run_row(task))
            except BaseException as exc:  # noqa: BLE001 - surfaced in the calling thread
                failure.append(exc)
                stop.set()

        threads = [
            threading.Thread(target=work, daemon=True, name=f"cbench-row-{i}")
            for i in range(self.max_concurrency)
        ]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.2)
        except BaseException:
            stop.set()
            raise
        if failure:
            raise failure[0]

    def _run_inline_while_busy(self, feed: _Feed, on_row: OnRow) -> bool:
        """Run rows in this thread for as long as they keep the CPU busy; True if rows are left.

        Threads only help rows that wait (a network call, a subprocess); for rows that compute,
        they cost a third more CPU in lock hand-offs.  So rows run here until they wait
        (:class:`RowWaits`), and the rest go to the worker threads.
        """
        if self.max_concurrency == 1:
            while (task := feed.next()) is not None:
                on_row(run_row(task))
            return False
        waits = RowWaits()
        while (task := feed.next()) is not None:
            before = waits.clock()
            row = run_row(task)
            waiting = waits.row(before)
            on_row(row)
            if waiting:
                return True
        return False

    async def _run_async(self, feed: _Feed, on_row: OnRow) -> None:
        loop = asyncio.get_running_loop()
        async_methods: dict[tuple[type, str], Any] = {}
        timeout = self.call_timeout
        # With a deadline, sync calls go to daemon threads: a stuck one must not hold the exit.
        pool_kind = ThreadPoolExecutor if timeout is None else _DaemonPool
        with pool_kind(max_workers=self.max_concurrency, thread_name_prefix="cbench-sync") as pool:

            async def call(obj: Any, method: str, args: tuple[Any, ...]) -> Any:
                """Await ``a<method>`` where the object has one, else run ``<method>`` in a worker thread."""
                # a sync call runs in a worker thread with the row's context (its meter link)
                run = contextvars.copy_context().run
                key = (type(obj), method)
                if key not in async_methods:
                    candidate = getattr(type(obj), "a" + method, None)
                    async_methods[key] = candidate if inspect.iscoroutinefunction(candidate) else None
                amethod = async_methods[key]
                if timeout is None:
                    if amethod is not None:
                        return await amethod(obj, *args)
                    return await loop.run_in_executor(pool, run, getattr(obj, method), *args)
                if amethod is not None:
                    pending = amethod(obj, *args)
                else:
                    future = pool.submit(run, getattr(obj, method), *args)
                    pending = asyncio.wrap_future(future)
                try:
                    return await asyncio.wait_for(pending, timeout)
                except asyncio.TimeoutError:
                    # With a deadline the pool is a _DaemonPool: a thread stuck in a sync call is replaced.
                    if amethod is None and isinstance(pool, _DaemonPool):
                        pool.replace(future)
                    raise DeadlineExceeded.of_call(method, timeout) from None

            async def work() -> None:
                while (task := feed.next()) is not None:
                    on_row(await arun_row(task, call))

            await asyncio.gather(*(work() for _ in range(self.max_concurrency)))


class _DaemonPool(PoolExecutor):
    """Worker threads that never hold the interpreter's exit; a thread stuck in a call past its
    deadline is replaced, so the pool keeps its size."""

    def __init__(self, max_workers: int, thread_name_prefix: str) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._prefix = thread_name_prefix
        self._threads = 0
        for _ in range(max_workers):
            self._add()

    def _add(self) -> None:
        self._threads += 1
        threading.Thread(target=self._serve, daemon=True, name=f"{self._prefix}-{self._threads}").start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting row
                future.set_exception(exc)
            else:
                future.set_result(result)

        self._jobs.put(job)
        return future

    def replace(self, future: Future[Any]) -> None:
        """The call of ``future`` is past its deadline: if a thread is stuck in it, add another."""
        if not future.cancel() and not future.done():
            self._add()

    def __enter__(self) -> _DaemonPool:
        return self

    def __exit__(self, *exc: object) -> None:
        for _ in range(self._threads):  # a stuck thread never takes its None: it is a daemon
            self._jobs.put(None)


class _Slot:
    """One worker thread of a supervised run: the task it runs and the call it is in, and since when."""

    __slots__ = ("abandoned", "call", "task")

    def __init__(self) -> None:
        self.task: RowTask | None = None
        self.call: tuple[Any, str, float] | None = None
        self.abandoned = False


class _Supervised:
    """Sync rows in daemon worker threads while the calling thread enforces the call deadline.

    One worker starts, and keeps the CPU to itself for as long as its rows compute (threads only
    help rows that wait); when rows wait (:class:`RowWaits`), the other workers start.  A call
    past the deadline costs its row (an error naming the stage and the deadline) and its thread
    (left to finish in the background); a new worker takes the thread's place.
    """

    def __init__(self, feed: _Feed, on_row: OnRow, concurrency: int, timeout: float) -> None:
        self.feed = feed
        self.on_row = on_row
        self.concurrency = concurrency
        self.timeout = timeout
        self.in_flight = 0
        self.exhausted = False
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.stop = threading.Event()
        self.failure: list[BaseException] = []
        self.slots: list[_Slot] = []
        self.spread = False

    def run(self) -> None:
        self._start(busy_first=True)
        tick = min(0.25, self.timeout / 4)
        try:
            while not self.done.wait(tick):
                self._expire(time.monotonic())
        except BaseException:
            self.stop.set()
            raise
        if self.failure:
            raise self.failure[0]

    def _start(self, busy_first: bool = False) -> None:
        slot = _Slot()
        with self.lock:
            self.slots.append(slot)
        threading.Thread(target=self._work, args=(slot, busy_first), daemon=True, name="cbench-row").start()

    def _spread(self) -> None:
        """A row waited: the other workers start (once)."""
        with self.lock:
            if self.spread:
                return
            self.spread = True
            count = self.concurrency - len(self.slots)
        for _ in range(count):
            self._start()

    def _work(self, slot: _Slot, busy_first: bool) -> None:
        def before_call(obj: Any, method: str) -> None:
            slot.call = (obj, method, time.monotonic())

        waits = RowWaits() if busy_first and self.concurrency > 1 else None
        try:
            while not self.stop.is_set():
                with self.lock:
                    # once the feed ran dry, a late worker draws nothing: what follows runs on a loop
                    task = slot.task = None if self.exhausted else self.feed.next()
                    if task is None:
                        self.exhausted = True
                        if not self.in_flight:
                            self.done.set()
                        return
                    self.in_flight += 1
                if waits is None or self.spread:
                    row = run_row(task, before_call)
                else:
                    before = waits.clock()
                    row = run_row(task, before_call)
                    if waits.row(before):
                        waits = None
                        self._spread()
                if not self._finish(slot, row):
                    return  # the supervisor gave this row up; a new worker took this one's place
        except BaseException as exc:  # noqa: BLE001 - surfaced in the calling thread
            self.failure.append(exc)
            self.stop.set()
            self.done.set()

    def _finish(self, slot: _Slot, row: EvalRow) -> bool:
        with self.lock:
            if slot.abandoned:
                return False
            slot.task = slot.call = None
        self._done_one(row)
        return True

    def _done_one(self, row: EvalRow) -> None:
        self.on_row(row)
        with self.lock:
            self.in_flight -= 1
            if self.exhausted and not self.in_flight:
                self.done.set()

    def _expire(self, now: float) -> None:
        given_up = []
        with self.lock:
            for slot in list(self.slots):
                call, task = slot.call, slot.task
                if task is None or call is None or now - call[2] <= self.timeout:
                    continue
                slot.abandoned = True
                self.slots.remove(slot)
                given_up.append(timed_out_row(task, call[0], call[1], self.timeout))
        for row in given_up:
            if self.spread:
                self._start()  # in the place of the stuck thread
            else:
                self._spread()  # a call that hangs is a row that waits: the other workers start
            self._done_one(row)


def _in_fresh_loop(make: Callable[[], Any]) -> Any:
    """``asyncio.run`` here, or in a helper thread when this thread already runs a loop (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    thread = threading.Thread(target=target, name="cbench-loop")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
