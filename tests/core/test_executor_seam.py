"""The execution seam: tasks and rows survive pickling, so a distributed executor can run them."""

from __future__ import annotations

import asyncio
import io
import pickle
import threading
from concurrent.futures import ProcessPoolExecutor

import pytest

from context_bench import (
    AutowireRule,
    EvaluatorSpec,
    Limits,
    Output,
    RunConfig,
    Scope,
    UsageError,
    evaluate,
    hookimpl,
)
from context_bench._rowtask import run_row
from context_bench.progress import Progress
from context_bench.testing import isolated_host

QUIET = RunConfig(output=Output(progress=False))


class ProcessExecutor:
    """Runs every row in other processes, from pickled tasks: what a Ray executor would do."""

    def run(self, tasks, on_row):
        with ProcessPoolExecutor(max_workers=2) as pool:
            rows = list(pool.map(run_row, tasks))
        for row in rows:
            on_row(row)
        return rows


def test_rows_run_in_other_processes_match_local_rows():
    data = [
        {"id": "a", "dataset": "squad", "answer": "Paris", "response": "It is Paris."},
        {"id": "b", "dataset": "mmlu", "correct_letter": "C", "response": "(C)"},
        {
            "id": "c",
            "dataset": "dialogsum",
            "answer": "two people book a table",
            "response": "a table is booked",
        },
    ]
    host = isolated_host()
    local = evaluate(None, data, QUIET, host=host)
    remote = evaluate(None, data, QUIET, host=host, executor=ProcessExecutor())
    assert [r.scores for r in remote.rows] == [r.scores for r in local.rows]
    assert remote.summary.groups == local.summary.groups


def test_result_rows_pickle_round_trip():
    result = evaluate(None, [{"id": "a", "answer": "x", "response": "x"}], QUIET, host=isolated_host())
    clone = pickle.loads(pickle.dumps(result.rows))
    assert clone == result.rows


class Flag:
    name = "flag"

    def __init__(self, value=1.0):
        self.value = value

    def score(self, original, processed):
        return {"flag": self.value}


def build_flag(options):
    return Flag(float(options["flag_value"]))


def test_rule_requires_an_option_and_builds_from_options():
    plugin = type("P", (), {})()
    plugin.CBENCH_PLUGIN_API = 1

    @hookimpl
    def cbench_register_evaluators(register):
        register(EvaluatorSpec("Flag", Flag, fields=["flag"]))

    @hookimpl
    def cbench_register_autowire(register):
        register(AutowireRule("Flag", datasets=["*"], requires=["flag_value"], build=build_flag))

    plugin.cbench_register_evaluators = cbench_register_evaluators
    plugin.cbench_register_autowire = cbench_register_autowire
    host = isolated_host()
    host.register(plugin, name="flagger")
    rows = [{"id": "1", "response": "x"}]
    assert evaluate(None, rows, QUIET, host=host).rows[0].scores == {}
    wired = evaluate(
        None, rows, RunConfig(output=Output(progress=False), plugins={"flag_value": "0.25"}), host=host
    )
    assert wired.rows[0].scores == {"flag": 0.25}
    named = evaluate(
        None,
        rows,
        RunConfig(
            scope=Scope(evaluators=["Flag"]), output=Output(progress=False), plugins={"flag_value": "0.5"}
        ),
        host=host,
    )
    assert named.rows[0].scores == {"flag": 0.5}
    with pytest.raises(UsageError, match="cannot build evaluator Flag: KeyError"):
        evaluate(
            None, rows, RunConfig(scope=Scope(evaluators=["Flag"]), output=Output(progress=False)), host=host
        )


class TTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_draws_on_a_terminal_and_is_silent_elsewhere():
    tty = TTY()
    bar = Progress(3, stream=tty)
    for errors in (0, 1, 0):
        bar.update(errors=errors)
    bar.close()
    assert "3/3 rows" in tty.getvalue() and "errors 1" in tty.getvalue()
    plain = io.StringIO()
    quiet = Progress(3, stream=plain)
    quiet.update()
    quiet.close()
    assert plain.getvalue() == ""


class _Hangs:
    """Blocks in score() (or process()) on the rows named, until the test releases it."""

    name = "hangs"

    def __init__(self, stuck_ids, release):
        self._stuck = set(stuck_ids)
        self._release = release

    def score(self, original, processed):
        if original["id"] in self._stuck:
            self._release.wait()
        return {"ok": 1.0}

    def process(self, example):
        if example["id"] in self._stuck:
            self._release.wait()
        return {"response": "r"}


class _AsyncHangs(_Hangs):
    async def aprocess(self, example):
        if example["id"] in self._stuck:
            await asyncio.Event().wait()  # never set: only the deadline ends it
        return {"response": "r"}


def _bounded(run, limit=60):
    """Run ``run`` in a thread: a hang fails the test instead of holding the suite."""
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("result", run()), daemon=True)
    thread.start()
    thread.join(limit)
    assert not thread.is_alive(), "the run hung past its call deadline"
    return box["result"]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_hanging_score_is_a_row_error_and_the_other_rows_finish(concurrency):
    release = threading.Event()
    rows = [{"id": str(i), "response": "r"} for i in range(12)]
    try:
        result = _bounded(
            lambda: evaluate(
                None,
                rows,
                RunConfig(
                    scope=Scope(evaluators=[_Hangs({"0", "5"}, release)]),
                    limits=Limits(call_timeout=0.3, max_concurrency=concurrency),
                    output=Output(progress=False),
                ),
                host=isolated_host(),
            )
        )
    finally:
        release.set()
    assert [r.example_id for r in result.rows] == [str(i) for i in range(12)]
    for row in result.rows:
        if row.example_id in ("0", "5"):
            [error] = row.errors
            assert (error.stage, error.source, error.type) == ("evaluator", "hangs", "DeadlineExceeded")
            assert "score() did not return within 0.3 s" in error.message
        else:
            assert row.scores == {"ok": 1.0} and not row.errors


def test_a_hanging_system_call_is_a_row_error_on_the_sync_and_the_async_path():
    release = threading.Event()
    rows = [{"id": str(i)} for i in range(6)]
    try:
        for system in (_Hangs({"2"}, release), _AsyncHangs({"2"}, release)):
            result = _bounded(
                lambda system=system: evaluate(
                    system,
                    rows,
                    RunConfig(
                        scope=Scope(evaluators=[_Hangs((), release)]),
                        limits=Limits(call_timeout=0.3),
                        output=Output(progress=False),
                    ),
                    host=isolated_host(),
                )
            )
            stuck = result.rows[2]
            assert [(e.stage, e.type) for e in stuck.errors] == [("system", "DeadlineExceeded")]
            assert "process() did not return within 0.3 s" in stuck.errors[0].message
            assert all(r.scores == {"ok": 1.0} for i, r in enumerate(result.rows) if i != 2)
    finally:
        release.set()


def test_a_hanging_sync_evaluator_on_the_async_path_is_a_row_error():
    release = threading.Event()
    rows = [{"id": str(i)} for i in range(10)]
    try:
        result = _bounded(
            lambda: evaluate(
                _AsyncHangs((), release),
                rows,
                RunConfig(
                    scope=Scope(evaluators=[_Hangs({"1", "3", "4"}, release)]),
                    limits=Limits(call_timeout=0.3, max_concurrency=2),
                    output=Output(progress=False),
                ),
                host=isolated_host(),
            )
        )
    finally:
        release.set()
    errored = [r.example_id for r in result.rows if r.errors]
    assert errored == ["1", "3", "4"]
    assert all(r.errors[0].type == "DeadlineExceeded" for r in result.rows if r.errors)
    assert sum(r.scores == {"ok": 1.0} for r in result.rows) == 7


def test_the_call_deadline_is_checked():
    with pytest.raises(ValueError, match="call_timeout"):
        evaluate(
            None,
            [{"id": "a"}],
            RunConfig(limits=Limits(call_timeout=0), output=Output(progress=False)),
            host=isolated_host(),
        )
