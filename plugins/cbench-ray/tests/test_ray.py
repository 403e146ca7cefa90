"""RayExecutor on a real local Ray (2 CPUs, one session for the module): rows, limits and faults.

The systems below run in Ray worker processes; they leave what the test needs to see (their
process ids, when each row ran) as files in a folder the test gives them.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from cbench_ray.executor import MAX_TRIES, RayExecutor
from context_bench import Metering, Output, RunConfig, SecondPass, UsageError, evaluate
from context_bench.execution import EvalRow, RowTask
from context_bench.systems import OpenAIProxy
from context_bench.testing import FakeServer

QUIET = RunConfig(output=Output(progress=False))


class Echo:
    """Answers each row with its answer; notes its process and the time each row ran in ``trail``."""

    name = "echo"

    def __init__(self, trail: str | None = None, delay: float = 0.0) -> None:
        self.trail = trail
        self.delay = delay
        self.calls = 0

    def config(self) -> dict:
        return {"delay": self.delay}

    def process(self, example: dict) -> dict:
        self.calls += 1
        start = time.time()
        time.sleep(self.delay)
        if self.trail:
            with open(os.path.join(self.trail, str(os.getpid())), "a") as f:
                f.write(f"{start} {time.time()}\n")
        return {"response": example["answer"]}


class Stalls(Echo):
    """Echo, but the row ``stall`` waits (its worker's pid in ``trail/stalled``) until the file
    ``trail/go`` exists: a test kills that worker while its batch is surely in flight."""

    def __init__(self, trail: str, stall: str) -> None:
        super().__init__(trail)
        self.stall = stall

    def process(self, example: dict) -> dict:
        if example["id"] == self.stall:
            go = os.path.join(self.trail, "go")
            # written whole, then renamed: the killer never reads the file half written
            with open(os.path.join(self.trail, "stalled.part"), "w") as f:
                f.write(str(os.getpid()))
            os.replace(os.path.join(self.trail, "stalled.part"), os.path.join(self.trail, "stalled"))
            deadline = time.monotonic() + 60
            while not os.path.exists(go) and time.monotonic() < deadline:
                time.sleep(0.01)
        return {"response": example["answer"]}


class Killer:
    """Takes its own worker process down on the rows named in ``kill`` (every time: a poison row)."""

    name = "killer"

    def __init__(self, kill: tuple[str, ...]) -> None:
        self.kill = kill

    def process(self, example: dict) -> dict:
        if example["id"] in self.kill:
            os.kill(os.getpid(), signal.SIGKILL)
        return {"response": example["answer"]}


class AsyncProbe:
    """An async system: says whether it ran on an event loop, and in which process."""

    name = "async-probe"

    def process(self, example: dict) -> dict:
        return {"response": "sync"}

    async def aprocess(self, example: dict) -> dict:
        await asyncio.sleep(0.01)
        asyncio.get_running_loop()
        return {"response": f"loop in {os.getpid()}"}


def rows(count: int) -> list[dict]:
    return [{"id": f"r{i}", "question": f"q{i}?", "answer": f"a{i}"} for i in range(count)]


def tasks(system: object, count: int) -> list[RowTask]:
    return [RowTask(i, system, "d", row["id"], row) for i, row in enumerate(rows(count))]


def intervals(trail: Path) -> list[tuple[float, float]]:
    return [
        tuple(map(float, line.split())) for path in trail.iterdir() for line in path.read_text().splitlines()
    ]


def most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


class Unpicklable(Echo):
    name = "locked"

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


def test_a_system_that_cannot_travel_is_one_line(ray_session):
    with pytest.raises(UsageError, match=r"cannot send locked to the Ray workers \(each must pickle\): "):
        RayExecutor().run(tasks(Unpicklable(), 3), lambda row: None)


def test_rows_scored_on_ray_match_local(ray_session):
    local = evaluate(Echo(), rows(300), QUIET)
    remote = evaluate(Echo(), rows(300), QUIET, executor=RayExecutor())
    assert [r.example_id for r in remote.rows] == [r.example_id for r in local.rows]
    assert [r.scores for r in remote.rows] == [r.scores for r in local.rows]
    assert remote.summary.to_dict()["groups"] == local.summary.to_dict()["groups"] or all(
        a["scores"] == b["scores"]
        for a, b in zip(remote.summary.to_dict()["groups"], local.summary.to_dict()["groups"], strict=True)
    )
    assert all(row.example == original for row, original in zip(remote.rows, rows(300), strict=True))


def test_every_row_reaches_on_row_once_as_batches_finish(ray_session, tmp_path):
    seen: list[EvalRow] = []
    RayExecutor(8, ray_batch_size=7).run(iter(tasks(Echo(str(tmp_path)), 50)), seen.append)
    assert sorted(row.index for row in seen) == list(range(50))
    assert all(row.response == f"a{row.index}" and not row.errors for row in seen)
    assert len({int(p.name) for p in tmp_path.iterdir()} - {os.getpid()}) >= 1  # worked elsewhere


@pytest.mark.parametrize("limit", [1, 2])
def test_max_concurrency_holds_across_the_cluster(ray_session, tmp_path, limit):
    RayExecutor(limit, ray_batch_size=3).run(tasks(Echo(str(tmp_path), delay=0.03), 18), lambda row: None)
    assert most_at_once(intervals(tmp_path)) <= limit


def test_async_systems_run_on_an_event_loop_in_the_worker(ray_session):
    seen: list[EvalRow] = []
    RayExecutor(8).run(tasks(AsyncProbe(), 20), seen.append)
    assert len(seen) == 20
    assert all(row.response.startswith("loop in ") for row in seen)
    assert {row.response for row in seen} != {f"loop in {os.getpid()}"}


def test_a_system_with_a_client_is_rebuilt_on_the_worker(ray_session):
    def reply(body):
        return "answer: " + body["messages"][-1]["content"].split("?")[0].split()[-1]

    with FakeServer(reply) as server:
        proxy = OpenAIProxy(server.url, api_key="sk-test-0123456789", max_retries=0)
        proxy.process({"question": "warm q0?"})  # a live client in the driver: never shipped
        result = evaluate(proxy, rows(24), QUIET, executor=RayExecutor())
    assert [row.response for row in result.rows] == [f"answer: q{i}" for i in range(24)]
    assert not any(row.errors for row in result.rows)


def test_a_metered_run_counts_each_rows_calls_made_on_the_workers(ray_session):
    """The meter runs beside the driver; each task carries its row's link to its worker, whose
    proxy sends the row header through the meter (docs/savings.md)."""
    with FakeServer(lambda body: "Paris") as server:
        proxy = OpenAIProxy(server.url, api_key="sk-test-0123456789", max_retries=0)
        config = RunConfig(metering=Metering(upstream=server.url), output=Output(progress=False))
        result = evaluate(proxy, rows(12), config, executor=RayExecutor())
    assert [(row.metered["calls"], row.metered["input_tokens"]) for row in result.rows] == [(1, 10)] * 12
    assert sorted(seen.headers["x-context-bench-row"] for seen in server.seen) == sorted(
        f"row-{i}" for i in range(12)
    )
    assert result.summary.metered["unattributed"]["calls"] == 0


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_no_row(ray_session, tmp_path):
    seen: list[EvalRow] = []
    killed: list[int] = []
    stalled, go = tmp_path / "stalled", tmp_path / "go"

    def kill_the_stalled_worker() -> None:
        """Kill the worker holding row r57 (its batch is in flight, by design), then let the retry go."""
        deadline = time.monotonic() + 60
        while not stalled.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        if stalled.exists():
            pid = int(stalled.read_text())
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        go.touch()

    killer = threading.Thread(target=kill_the_stalled_worker)
    killer.start()
    executor = RayExecutor(4, ray_batch_size=10)
    executor.run(tasks(Stalls(str(tmp_path), stall="r57"), 200), seen.append)
    killer.join()
    assert killed, "no worker was killed"
    assert executor.stats.lost >= 1 and executor.stats.given_up == 0
    assert sorted(row.index for row in seen) == list(range(200))  # each once, none lost
    assert not any(row.errors for row in seen)
    assert next(row.response for row in seen if row.example_id == "r57") == "a57"


@pytest.mark.slow
def test_a_row_that_keeps_killing_workers_becomes_a_row_error(ray_session):
    seen: list[EvalRow] = []
    executor = RayExecutor(2, ray_batch_size=4)
    executor.run(tasks(Killer(("r5",)), 12), seen.append)
    # the batch of 4, then its half of 2, then the row alone MAX_TRIES times
    assert (executor.stats.lost, executor.stats.given_up) == (2 + MAX_TRIES, 1)
    assert sorted(row.index for row in seen) == list(range(12))
    [poisoned] = [row for row in seen if row.errors]
    assert poisoned.example_id == "r5"
    [error] = poisoned.errors
    assert error.type == "WorkerDied"
    assert "'r5'" in error.message and f"{MAX_TRIES} times" in error.message
    assert all(row.response == f"a{row.index}" for row in seen if row is not poisoned)


@pytest.mark.slow
def test_ctrl_c_cancels_and_the_cache_resumes(ray_session, tmp_path):
    cache = tmp_path / "cache"
    finished: list[EvalRow] = []

    def ctrl_c_soon(row: EvalRow) -> None:
        finished.append(row)
        if len(finished) == 20:  # Ctrl-C in the driver, between two of Ray's waits, batches in flight
            raise KeyboardInterrupt

    trail = tmp_path / "trail"
    trail.mkdir()
    with pytest.raises(KeyboardInterrupt):
        evaluate(
            Echo(str(trail), delay=0.02),
            rows(400),
            RunConfig(output=Output(progress=False, cache_dir=cache)),
            executor=RayExecutor(2),
            second_pass=SecondPass(finish_row=ctrl_c_soon),
        )
    again = Echo(delay=0.02)  # the same identity: the trail is not part of its configuration
    result = evaluate(again, rows(400), RunConfig(output=Output(progress=False, cache_dir=cache)))
    assert again.calls == 400 - len(finished)  # each row handed over before Ctrl-C was cached, whole
    # it stopped: the batches in flight may have finished, the rest never ran on Ray (counted, not
    # timed, so a busy machine cannot fail it)
    ran_on_ray = sum(len(path.read_text().splitlines()) for path in trail.iterdir())
    assert len(finished) <= ran_on_ray < 200
    assert [row.response for row in result.rows] == [f"a{i}" for i in range(400)]
    assert all(row.scores["exact_match"] == 1.0 for row in result.rows)


class Born:
    """Answers with the process it runs in and the moment its copy there was rebuilt: a worker that
    keeps a context from run to run answers with the same moment."""

    name = "born"

    def __init__(self, setting: int = 0) -> None:
        self.setting = setting
        self.born = 0.0

    def __reduce__(self) -> tuple:
        return (_rebuilt, (self.setting,))

    def process(self, example: dict) -> dict:
        return {"response": f"{os.getpid()} {self.born}"}


def _rebuilt(setting: int) -> Born:
    born = Born(setting)
    born.born = time.time()
    return born


def births(system: Born, executor: RayExecutor) -> dict[str, str]:
    """Each worker process's rebuilt copy of ``system``: process id -> when it was rebuilt."""
    seen: list[EvalRow] = []
    executor.run(tasks(system, 200), seen.append)
    return dict(row.response.split() for row in seen)


def test_a_worker_keeps_what_the_same_bytes_rebuilt_from_run_to_run(ray_session):
    executor = RayExecutor(4)
    first = births(Born(), executor)
    again = births(Born(), executor)  # another object with the same bytes: the same context
    other = births(Born(setting=1), executor)  # other bytes: rebuilt
    shared = first.keys() & again.keys()
    assert shared, "no worker process ran rows in both runs"
    assert all(first[pid] == again[pid] for pid in shared)
    assert all(other[pid] != first[pid] for pid in other.keys() & first.keys())


def test_a_run_starts_with_the_batch_size_the_last_run_of_its_context_ended_with(ray_session):
    from cbench_ray.executor import FIRST_BATCH, _Run

    executor = RayExecutor(4)
    executor.connect()
    system = Echo()
    fresh = _Run(executor, iter(tasks(system, 500)), lambda row: None, executor.stats)
    assert len(fresh._next_batch().tasks) == max(FIRST_BATCH, fresh.concurrency)
    executor.run(tasks(Echo(), 2000), lambda row: None)  # the same bytes: its size is remembered
    assert list(executor.sizes.values()) == [executor.sizes[next(iter(executor.sizes))]]
    learned = next(iter(executor.sizes.values()))
    assert learned > max(FIRST_BATCH, fresh.concurrency)
    # more rows than its first batches take, so none is shortened to share out the last rows (the
    # learned size is timed, so it is larger on a busy machine)
    again = _Run(executor, iter(tasks(system, 3 * learned * fresh.slots)), lambda row: None, executor.stats)
    assert len(again._next_batch().tasks) == learned
