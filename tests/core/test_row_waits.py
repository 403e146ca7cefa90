"""When the local executor starts its other workers: only on evidence that rows wait on I/O.

The rule reads a clock of wall time, CPU time and voluntary context switches (``row_clock``); these
tests hand it a fake one that the rows move as they say they spent their time, so the decision is
exact whatever the machine's load: rows that compute never widen, however often they are
pre-empted or lose the interpreter's lock for a moment; rows that block widen.
"""

from __future__ import annotations

import threading
import time

import pytest

from context_bench import evaluate
from context_bench._executor import WAIT_THRESHOLD, WAITING_ROWS, RowWaits
from context_bench.config import Limits, Output, RunConfig, Scope
from context_bench.fake_server import FakeServer, Reply
from context_bench.systems import OpenAIProxy
from context_bench.testing import isolated_host

MS = 0.001


class FakeClock:
    """``row_clock`` as the rows say: computing moves wall and CPU time, a pre-emption only wall
    time (an involuntary switch, not counted), blocking wall time and a voluntary switch."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0
        self.switches = 0
        self._lock = threading.Lock()

    def __call__(self) -> tuple[float, float, int]:
        with self._lock:
            return self.wall, self.cpu, self.switches

    def compute(self, seconds: float) -> None:
        with self._lock:
            self.wall += seconds
            self.cpu += seconds

    def preempted(self, seconds: float) -> None:
        with self._lock:
            self.wall += seconds

    def block(self, seconds: float) -> None:
        with self._lock:
            self.wall += seconds
            self.switches += 1


def decisions(clock: FakeClock, rows: list[list[tuple[str, float]]]) -> list[bool]:
    """What :class:`RowWaits` says after each row, a row being the steps it spends its time on."""
    waits = RowWaits()
    waits.clock = clock
    said = []
    for steps in rows:
        before = clock()
        for step, seconds in steps:
            getattr(clock, step)(seconds)
        said.append(waits.row(before))
    return said


def test_rows_that_compute_never_wait_however_often_they_are_preempted():
    clock = FakeClock()
    # every other row pre-empted for 50 ms, far longer than it computes: wall time is no evidence
    rows = [[("compute", 0.04 * MS), ("preempted", 50 * MS if i % 2 else 0.0)] for i in range(1000)]
    assert decisions(clock, rows) == [False] * 1000


def test_one_row_that_blocks_now_and_then_is_not_evidence():
    clock = FakeClock()
    # the supervisor takes the interpreter's lock, then the scheduler runs another process for 30 ms:
    # one row blocked, and the next computes again, a thousand times over
    gil = [("compute", 0.04 * MS), ("block", 30 * MS)]
    rows = [gil if i % 2 else [("compute", 0.04 * MS)] for i in range(2000)]
    assert decisions(clock, rows) == [False] * 2000


def test_rows_that_block_widen_once_enough_of_them_in_a_row_did():
    clock = FakeClock()
    rows = [[("compute", 0.1 * MS), ("block", 20 * MS)]] * 5
    assert decisions(clock, rows) == [False, True, True, True, True]  # WAITING_ROWS, 2


@pytest.mark.parametrize(
    "steps",
    [
        [("compute", 0.1 * MS), ("block", WAIT_THRESHOLD / 2)],  # blocked, but briefly
        [("compute", 30 * MS), ("block", 20 * MS)],  # blocked, but mostly computed
        [("compute", 0.1 * MS), ("preempted", 20 * MS)],  # waited, but was never blocked
    ],
)
def test_a_row_waits_only_when_it_blocked_for_long_and_for_most_of_its_time(steps):
    clock = FakeClock()
    assert decisions(clock, [steps] * 10) == [False] * 10


class Spends:
    """An evaluator whose rows spend their time as ``spend(clock, number)`` says, noting the row
    threads alive; past the first rows, the first ``meet`` rows meet at a barrier, which passes only
    when that many run at once (a smaller fan-out times out instead)."""

    name = "spends"

    def __init__(self, clock: FakeClock | None, spend, meet: int = 0) -> None:
        self.clock = clock
        self.spend = spend
        self.workers: set[int] = set()
        self.row_threads = 0
        self._barrier = threading.Barrier(meet, timeout=30) if meet else None
        self._met = 0
        self._lock = threading.Lock()

    def score(self, original, processed):
        number = int(original["id"])
        with self._lock:
            self.workers.add(threading.get_ident())
            alive = sum(t.name.startswith("cbench-row") for t in threading.enumerate())
            self.row_threads = max(self.row_threads, alive)
        self.spend(self.clock, number)
        if self._barrier is not None and number >= WAITING_ROWS:
            with self._lock:
                meets = self._met < self._barrier.parties
                self._met += 1
            if meets:
                self._barrier.wait()
        return {"x": 1.0}


def run(monkeypatch, evaluator: Spends, call_timeout: float | None, rows: int = 300):
    import context_bench._executor as executor

    if evaluator.clock is not None:  # else the real one
        monkeypatch.setattr(executor, "row_clock", evaluator.clock)
    config = RunConfig(
        scope=Scope(evaluators=[evaluator]),
        limits=Limits(max_concurrency=8, call_timeout=call_timeout),
        output=Output(progress=False),
    )
    data = [{"id": str(i), "response": ""} for i in range(rows)]
    result = evaluate(None, data, config, host=isolated_host())
    assert not any(row.errors for row in result.rows), [row.errors for row in result.rows if row.errors]


def computes(clock: FakeClock, number: int) -> None:
    clock.compute(0.04 * MS)
    if number % 3 == 0:
        clock.preempted(50 * MS)
    if number % 7 == 0:
        clock.block(30 * MS)


def blocks(clock: FakeClock, number: int) -> None:
    clock.compute(0.1 * MS)
    clock.block(20 * MS)


def sleeps(clock: None, number: int) -> None:
    time.sleep(0.01)


def idles(clock: None, number: int) -> None:
    pass


# None: rows run in the calling thread until they wait; 60: in one supervised worker until then
@pytest.mark.parametrize("call_timeout", [None, 60.0])
def test_a_run_whose_rows_compute_keeps_one_worker(monkeypatch, call_timeout):
    evaluator = Spends(FakeClock(), computes)
    run(monkeypatch, evaluator, call_timeout)
    assert len(evaluator.workers) == 1
    assert evaluator.row_threads == (0 if call_timeout is None else 1)  # no other worker started


@pytest.mark.parametrize("call_timeout", [None, 60.0])
def test_a_run_whose_rows_block_starts_every_worker(monkeypatch, call_timeout):
    evaluator = Spends(FakeClock(), blocks, meet=8)
    run(monkeypatch, evaluator, call_timeout)
    assert evaluator.row_threads == 8 and len(evaluator.workers) >= 8


@pytest.mark.parametrize("call_timeout", [None, 60.0])
def test_with_the_real_clock_rows_that_sleep_start_every_worker(monkeypatch, call_timeout):
    evaluator = Spends(None, sleeps, meet=8)
    run(monkeypatch, evaluator, call_timeout, rows=40)
    assert evaluator.row_threads == 8 and len(evaluator.workers) >= 8


def test_with_the_real_clock_rows_that_compute_stay_in_the_calling_thread(monkeypatch):
    import context_bench._executor as executor

    # a generous threshold: this machine's load must not make the test flaky (the rule's own cases
    # are the fake clock's, above)
    monkeypatch.setattr(executor, "WAIT_THRESHOLD", 60.0)
    evaluator = Spends(None, idles)
    run(monkeypatch, evaluator, None, rows=40)
    assert evaluator.workers == {threading.get_ident()} and evaluator.row_threads == 0


@pytest.mark.parametrize("call_timeout", [None, 60.0])
def test_rows_that_wait_on_a_socket_start_every_worker(call_timeout):
    """The real clock: each row's system waits 20 ms for an endpoint on a socket.  Past the rows
    that are the evidence, each answer is held until four requests are in flight at once, so the
    run finishes in time only if the workers started (a held answer is given up after 30 s).  The
    system's first call sets up its HTTP client, tens of milliseconds of CPU that is rightly no
    evidence of waiting: the system makes that call before the run, so the run's rows all wait."""
    asked = 0

    def reply(body):
        nonlocal asked
        asked += 1
        return Reply("ok", delay=0.02, hold_until=4 if asked > 1 + WAITING_ROWS else 0)

    config = RunConfig(
        limits=Limits(max_concurrency=4, call_timeout=call_timeout), output=Output(progress=False)
    )
    data = [{"id": str(i), "question": "q", "answer": "ok"} for i in range(12)]
    with FakeServer(reply) as server:
        system = OpenAIProxy(server.url, api_key="k")
        system.process(data[0])  # the client's set-up, before the run
        result = evaluate(system, data, config, host=isolated_host())
    assert not any(row.errors for row in result.rows), [row.errors for row in result.rows if row.errors]
    assert server.max_in_flight == 4 and server.expired_holds == 0
