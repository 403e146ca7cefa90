"""Executors are plugins: the hook, the core's ``local`` registered through it, ``--executor NAME``
with the executor's own options, and ``evaluate(executor=...)`` with one of the streaming protocol."""

from __future__ import annotations

import argparse
import json
import types
import warnings

import pytest

from context_bench import ExecutorSpec, Output, RunConfig, UsageError, evaluate, hookimpl
from context_bench.cli import RunOptions, add_run_options
from context_bench.cli._app import main
from context_bench.execution import EvalRow, LocalExecutor, RowTask, run_row
from context_bench.plugins import PluginHost, PluginWarning
from context_bench.testing import isolated_host


class Inline:
    """An executor of the streaming protocol: every row here, in order, handed over as it finishes."""

    def __init__(self, max_concurrency: int = 8, call_timeout: float | None = None, *, inline_label=None):
        self.max_concurrency = max_concurrency
        self.call_timeout = call_timeout
        self.label = inline_label
        self.ran = 0

    def run(self, tasks, on_row) -> None:
        for task in tasks:
            self.ran += 1
            on_row(run_row(task))


def executor_plugin(name: str = "cbench-inline", executor: str = "inline"):
    module = types.ModuleType(name)
    module.CBENCH_PLUGIN_API = 1

    @hookimpl
    def cbench_register_executors(register):
        register(ExecutorSpec(executor, Inline, "every row inline", options=("inline_label",)))

    @hookimpl
    def cbench_add_options(group):
        group.add_argument("--inline-label", dest="inline_label", default=None)

    module.cbench_register_executors = cbench_register_executors
    module.cbench_add_options = cbench_add_options
    return module


def test_the_core_registers_its_local_executor_through_the_hook():
    host = isolated_host()
    [(plugin, spec)] = host.executors()
    assert (plugin, spec.name) == ("context-bench", "local")
    built = spec.build(3, 7.5, {"judge_url": "x"})
    assert isinstance(built, LocalExecutor)
    assert (built.max_concurrency, built.call_timeout) == (3, 7.5)


def test_a_plugin_executor_gets_only_its_own_options_and_none_unset():
    host = isolated_host(executor_plugin())
    spec = host.find_executor("inline")
    assert [s.name for _, s in host.executors()] == ["local", "inline"]
    assert spec.build(2, None, {"inline_label": "x", "judge_url": "y"}).label == "x"
    assert spec.build(2, None, {"inline_label": None}).label is None
    assert host.plugins["cbench-inline"].to_dict()["executors"] == [
        {"name": "inline", "description": "every row inline", "options": ["inline_label"]}
    ]


def test_an_executor_name_already_taken_fails_the_plugin_that_takes_it_second():
    host = PluginHost(autoload=False, strict=False)
    host.ensure_loaded()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        host.register(executor_plugin("cbench-twin", executor="local"), name="cbench-twin")
        host.register(executor_plugin("cbench-first"), name="cbench-first")
        host.register(executor_plugin("cbench-second"), name="cbench-second")
    assert host.plugins["cbench-twin"].status == "failed"
    assert host.plugins["cbench-second"].status == "failed"
    assert [str(w.message) for w in caught] == [
        "context-bench: plugin cbench-twin failed: executor 'local' is reserved for the core",
        "context-bench: plugin cbench-second failed: executor 'inline' is already registered by cbench-first",
    ]
    assert all(issubclass(w.category, PluginWarning) for w in caught)
    assert [(p, s.name) for p, s in host.executors()] == [
        ("context-bench", "local"),
        ("cbench-first", "inline"),
    ]


def test_an_unknown_executor_is_a_usage_error_naming_the_installed_ones():
    with pytest.raises(UsageError, match=r"no executor named 'spark'; installed: local, inline"):
        isolated_host(executor_plugin()).find_executor("spark")


def test_the_executor_flag_builds_the_executor_with_the_run_limits_and_its_options():
    host = isolated_host(executor_plugin())
    parser = argparse.ArgumentParser()
    add_run_options(parser, host)
    args = parser.parse_args(
        ["--executor", "inline", "--inline-label", "blue", "--max-concurrency", "5", "--call-timeout", "9"]
    )
    executor = RunOptions.from_args(args, host).build_executor()
    assert isinstance(executor, Inline)
    assert (executor.max_concurrency, executor.call_timeout, executor.label) == (5, 9.0, "blue")
    plain = RunOptions.from_args(parser.parse_args([]), host)
    assert plain.build_executor() is None and plain.config.limits.local_call_timeout == 600.0


def test_the_deadline_of_earlier_releases_still_reads_and_goes_to_the_executor():
    host = isolated_host(executor_plugin())
    parser = argparse.ArgumentParser()
    add_run_options(parser, host)
    args = parser.parse_args(["--executor", "inline", "--call-timeout", "9"])
    with pytest.warns(DeprecationWarning, match=r"RunOptions\.evaluate_kwargs\(\) is deprecated"):
        kwargs = RunOptions.from_args(args, host).evaluate_kwargs()
    assert isinstance(kwargs["executor"], Inline)
    assert kwargs["call_timeout"] is None  # the deadline is the executor's
    plain = RunOptions.from_args(parser.parse_args([]), host)
    with pytest.warns(DeprecationWarning, match=r"RunOptions\.evaluate_kwargs\(\) is deprecated"):
        kwargs = plain.evaluate_kwargs()
    assert "executor" not in kwargs and kwargs["call_timeout"] == 600.0
    with pytest.warns(DeprecationWarning, match=r"RunOptions\.call_timeout is deprecated"):
        assert plain.call_timeout == 600.0  # the local executor's deadline, as it was


def test_evaluate_takes_an_executor_of_the_streaming_protocol():
    rows = [{"id": f"r{i}", "question": "q", "answer": f"a{i}", "response": f"a{i}"} for i in range(5)]
    executor = Inline()
    result = evaluate(None, rows, RunConfig(output=Output(progress=False)), executor=executor)
    assert executor.ran == 5
    assert [row.example_id for row in result.rows] == [f"r{i}" for i in range(5)]
    assert all(row.scores["exact_match"] == 1.0 and row.example is not None for row in result.rows)


def test_the_public_execution_module_runs_one_row():
    row = run_row(RowTask(0, types.SimpleNamespace(process=lambda ex: {"response": "hi"}), "d", "x", {}))
    assert isinstance(row, EvalRow) and row.response == "hi" and not row.errors


def test_executor_local_reports_what_the_default_reports(capsys):
    assert main(["score", "--output", "json", "--no-progress"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert main(["score", "--output", "json", "--no-progress", "--executor", "local"]) == 0
    chosen = json.loads(capsys.readouterr().out)
    assert chosen["rows"] == default["rows"] and chosen["summary"] == default["summary"]


def test_plugins_lists_executors(capsys):
    assert main(["plugins"]) == 0
    assert "  executor local: rows in this process" in capsys.readouterr().out
