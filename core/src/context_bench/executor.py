"""How rows are scheduled: the one seam between the runner and where the work happens.

An executor takes picklable :class:`RowTask` objects and returns one :class:`EvalRow` per task, in
task order, calling ``on_row`` as each finishes (the runner caches and counts there).  The local
executor below uses worker threads, or an event loop when any system or evaluator is async; a
distributed executor (Ray, say) would ship the same tasks to ``run_row`` on other machines.

With a call deadline (``call_timeout``), no call can hold the run: a sync call runs in a daemon
thread that the calling thread watches, and a row whose call is past the deadline is given up with
an error naming the stage and the deadline while the other rows go on (Python cannot stop a
thread, so the stuck call is left to finish or not in the background).
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from .errors import DeadlineExceeded
from .records import EvalRow
from .rowtask import RowTask, arun_row, run_row, timed_out_row

OnRow = Callable[[EvalRow], None]

#: A row that waits longer than this (seconds), and for more than half its time, is I/O-bound.
WAIT_THRESHOLD = 0.002


class Executor(Protocol):
    def run(self, tasks: Sequence[RowTask], on_row: OnRow) -> list[EvalRow]: ...


def _is_async(obj: Any, method: str) -> bool:
    return inspect.iscoroutinefunction(getattr(type(obj), "a" + method, None))


def needs_event_loop(tasks: Sequence[RowTask]) -> bool:
    # Alike rows share one system and one evaluator list: look at each pair once, not per row.
    pairs = {(id(t.system), id(t.evaluators)): t for t in tasks}.values()
    return any(
        _is_async(task.system, "process") or any(_is_async(e, "score") for e in task.evaluators)
        for task in pairs
    )


class LocalExecutor:
    """Runs at most ``max_concurrency`` rows at once in this process.

    ``call_timeout`` (seconds, None: no deadline) bounds every system and evaluator call.
    """

    def __init__(self, max_concurrency: int = 8, call_timeout: float | None = None) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if call_timeout is not None and not call_timeout > 0:
            raise ValueError("call_timeout must be a positive number of seconds (or None)")
        self.max_concurrency = max_concurrency
        self.call_timeout = call_timeout

    def run(self, tasks: Sequence[RowTask], on_row: OnRow) -> list[EvalRow]:
        if not tasks:
            return []
        if needs_event_loop(tasks):
            return _in_fresh_loop(lambda: self._run_async(tasks, on_row))
        if self.call_timeout is not None:
            return _Supervised(tasks, on_row, self.max_concurrency, self.call_timeout).run()
        return self._run_threads(tasks, on_row)

    def _run_threads(self, tasks: Sequence[RowTask], on_row: OnRow) -> list[EvalRow]:
        results: list[EvalRow | None] = [None] * len(tasks)
        start = self._run_inline_while_busy(tasks, results, on_row)
        positions = iter(range(start, len(tasks)))
        lock = threading.Lock()
        stop = threading.Event()
        failure: list[BaseException] = []

        def work() -> None:
            try:
                while not stop.is_set():
                    with lock:
                        position = next(positions, None)
                    if position is None:
                        return
                    row = run_row(tasks[position])
                    results[position] = row
                    on_row(row)
            except BaseException as exc:  # noqa: BLE001 - surfaced in the calling thread
                failure.append(exc)
                stop.set()

        threads = [
            threading.Thread(target=work, daemon=True, name=f"cbench-row-{i}")
            for i in range(min(self.max_concurrency, len(tasks) - start))
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
        return [row for row in results if row is not None]

    def _run_inline_while_busy(
        self, tasks: Sequence[RowTask], results: list[EvalRow | None], on_row: OnRow
    ) -> int:
        """Run rows in this thread for as long as they keep the CPU busy; return where it stopped.

        Threads only help rows that wait (a network call, a subprocess); for rows that compute,
        they cost a third more CPU in lock hand-offs.  So rows run here until one of them spends
        most of its time waiting, and the rest go to the worker threads.
        """
        inline_only = self.max_concurrency == 1
        for position, task in enumerate(tasks):
            wall, cpu = time.perf_counter(), time.thread_time()
            row = run_row(task)
            results[position] = row
            on_row(row)
            wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
            if not inline_only and wall - cpu > max(WAIT_THRESHOLD, wall / 2):
                return position + 1
        return len(tasks)

    async def _run_async(self, tasks: Sequence[RowTask], on_row: OnRow) -> list[EvalRow]:
        loop = asyncio.get_running_loop()
        results: list[EvalRow | None] = [None] * len(tasks)
        positions = iter(range(len(tasks)))
        async_methods: dict[tuple[type, str], Any] = {}
        timeout = self.call_timeout
        # With a deadline, sync calls go to daemon threads: a stuck one must not hold the exit.
        pool_kind = ThreadPoolExecutor if timeout is None else _DaemonPool
        with pool_kind(max_workers=self.max_concurrency, thread_name_prefix="cbench-sync") as pool:

            async def call(obj: Any, method: str, args: tuple) -> Any:
                """Await ``a<method>`` where the object has one, else run ``<method>`` in a worker thread."""
                key = (type(obj), method)
                if key not in async_methods:
                    candidate = getattr(type(obj), "a" + method, None)
                    async_methods[key] = candidate if inspect.iscoroutinefunction(candidate) else None
                amethod = async_methods[key]
                if timeout is None:
                    if amethod is not None:
                        return await amethod(obj, *args)
                    return await loop.run_in_executor(pool, getattr(obj, method), *args)
                if amethod is not None:
                    pending = amethod(obj, *args)
                else:
                    future = pool.submit(getattr(obj, method), *args)
                    pending = asyncio.wrap_future(future)
                try:
                    return await asyncio.wait_for(pending, timeout)
                except asyncio.TimeoutError:
                    if amethod is None:
                        pool.replace(future)
                    raise DeadlineExceeded.of_call(method, timeout) from None

            async def work() -> None:
                for position in positions:
                    row = await arun_row(tasks[position], call)
                    results[position] = row
                    on_row(row)

            await asyncio.gather(*(work() for _ in range(min(self.max_concurrency, len(tasks)))))
        return [row for row in results if row is not None]


class _DaemonPool:
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

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting row
                future.set_exception(exc)
            else:
                future.set_result(result)

        self._jobs.put(job)
        return future

    def replace(self, future: Future) -> None:
        """The call of ``future`` is past its deadline: if a thread is stuck in it, add another."""
        if not future.cancel() and not future.done():
            self._add()

    def __enter__(self) -> _DaemonPool:
        return self

    def __exit__(self, *exc: object) -> None:
        for _ in range(self._threads):  # a stuck thread never takes its None: it is a daemon
            self._jobs.put(None)


class _Slot:
    """One worker thread of a supervised run: the row and the call it is in, and since when."""

    __slots__ = ("abandoned", "call", "position")

    def __init__(self) -> None:
        self.position: int | None = None
        self.call: tuple[Any, str, float] | None = None
        self.abandoned = False


class _Supervised:
    """Sync rows in daemon worker threads while the calling thread enforces the call deadline.

    One worker starts, and keeps the CPU to itself for as long as its rows compute (threads only
    help rows that wait); when a row waits, the other workers start.  A call past the deadline
    costs its row (an error naming the stage and the deadline) and its thread (left to finish in
    the background); a new worker takes the thread's place.
    """

    def __init__(self, tasks: Sequence[RowTask], on_row: OnRow, concurrency: int, timeout: float) -> None:
        self.tasks = tasks
        self.on_row = on_row
        self.concurrency = min(concurrency, len(tasks))
        self.timeout = timeout
        self.results: list[EvalRow | None] = [None] * len(tasks)
        self.remaining = len(tasks)
        self.positions = iter(range(len(tasks)))
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.stop = threading.Event()
        self.failure: list[BaseException] = []
        self.slots: list[_Slot] = []
        self.spread = False

    def run(self) -> list[EvalRow]:
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
        return [row for row in self.results if row is not None]

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

        try:
            while not self.stop.is_set():
                with self.lock:
                    position = next(self.positions, None)
                    slot.position = position
                if position is None:
                    return
                wall, cpu = time.perf_counter(), time.thread_time()
                row = run_row(self.tasks[position], before_call)
                if not self._finish(slot, position, row):
                    return  # the supervisor gave this row up; a new worker took this one's place
                if busy_first and not self.spread:
                    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
                    if wall - cpu > max(WAIT_THRESHOLD, wall / 2):
                        self._spread()
        except BaseException as exc:  # noqa: BLE001 - surfaced in the calling thread
            self.failure.append(exc)
            self.stop.set()
            self.done.set()

    def _finish(self, slot: _Slot, position: int, row: EvalRow) -> bool:
        with self.lock:
            if slot.abandoned:
                return False
            slot.position = slot.call = None
            self.results[position] = row
        self._done_one(row)
        return True

    def _done_one(self, row: EvalRow) -> None:
        self.on_row(row)
        with self.lock:
            self.remaining -= 1
            if self.remaining == 0:
                self.done.set()

    def _expire(self, now: float) -> None:
        given_up = []
        with self.lock:
            for slot in list(self.slots):
                call, position = slot.call, slot.position
                if position is None or call is None or now - call[2] <= self.timeout:
                    continue
                slot.abandoned = True
                self.slots.remove(slot)
                row = self.results[position] = timed_out_row(
                    self.tasks[position], call[0], call[1], self.timeout
                )
                given_up.append(row)
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
