"""RunConfig (issue 27, part A): every run setting in one frozen record, each default named once and
each number checked once, against the range its flag has; evaluate's keywords of earlier releases
kept for a release through RunConfig.from_kwargs, with a DeprecationWarning."""

from __future__ import annotations

import ast
import inspect
import warnings
from pathlib import Path

import attrs
import pytest

from context_bench import evaluate
from context_bench.analysis import Analysis
from context_bench.bounds import BOUNDS
from context_bench.cli import RunOptions, build_parser
from context_bench.config import LEGACY_NAMES, UNSET, Limits, Output, RunConfig, Scope, from_deprecated
from context_bench.defaults import (
    API_FAIL_FAST,
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_HTML_INLINE_ROWS,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_ROW_BYTES,
)
from context_bench.execution import LocalExecutor, executor_for, run_row
from context_bench.runner import SecondPass
from context_bench.testing import isolated_host

ROOT = Path(__file__).resolve().parents[2]
ROWS = [
    {"id": "1", "question": "Where?", "answer": "Paris", "response": "Paris"},
    {"id": "2", "question": "Who?", "answer": "Alice Smith", "response": "Alice"},
]
QUIET = RunConfig(output=Output(progress=False))


def test_evaluate_takes_at_most_seven_parameters():
    parameters = inspect.signature(evaluate).parameters
    assert list(parameters) == [
        "systems",
        "datasets",
        "config",
        "host",
        "executor",
        "second_pass",
        "deprecated",
    ]


def test_the_defaults_are_the_named_constants():
    config = RunConfig()
    assert config.limits.max_concurrency is DEFAULT_MAX_CONCURRENCY
    assert config.limits.call_timeout is UNSET and config.limits.local_call_timeout is DEFAULT_CALL_TIMEOUT
    assert config.limits.fail_fast is API_FAIL_FAST
    assert config.limits.max_row_bytes is DEFAULT_MAX_ROW_BYTES
    assert config.output.html_inline_rows is DEFAULT_HTML_INLINE_ROWS
    parameters = inspect.signature(LocalExecutor).parameters
    assert parameters["max_concurrency"].default is DEFAULT_MAX_CONCURRENCY
    assert parameters["call_timeout"].default is DEFAULT_CALL_TIMEOUT
    run = build_parser(isolated_host())._subparsers._group_actions[0].choices["run"]
    assert run.get_default("max_concurrency") is DEFAULT_MAX_CONCURRENCY
    assert run.get_default("call_timeout") is DEFAULT_CALL_TIMEOUT


def _literal_defaults(name: str) -> list[str]:
    """Where the source of the core and the plugins writes a number as ``name``'s value: a
    parameter's default, a keyword argument, a field's default, a flag's default."""
    flag = "--" + name.replace("_", "-")
    found = []

    def number(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and type(node.value) in (int, float)

    for path in [*(ROOT / "core" / "src").rglob("*.py"), *(ROOT / "plugins").glob("*/src/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            values: list[ast.AST | None] = []
            if isinstance(node, ast.arguments):
                positional = [*node.posonlyargs, *node.args]
                named = zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True)
                values += [
                    d
                    for a, d in [*named, *zip(node.kwonlyargs, node.kw_defaults, strict=True)]
                    if a.arg == name
                ]
            elif isinstance(node, ast.keyword) and node.arg == name:
                values.append(node.value)
            elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == name:
                values.append(node.value)
                if isinstance(node.value, ast.Call):  # attrs.field(default=...)
                    values += [k.value for k in node.value.keywords if k.arg == "default"]
            elif isinstance(node, ast.Call) and any(getattr(a, "value", None) == flag for a in node.args):
                values += [
                    k.value for k in node.keywords if k.arg == "default"
                ]  # add_argument(flag, default=...)
            found += [f"{path.relative_to(ROOT)}:{v.lineno}" for v in values if number(v)]  # type: ignore[union-attr]
    return found


@pytest.mark.parametrize("name", ["max_concurrency", "call_timeout"])
def test_one_default_of_each_limit_in_the_code(name):
    """``max_concurrency``'s 8 was written 6 times and ``call_timeout`` was 600 on the command line
    but None in the API: now each is a name from context_bench.defaults wherever it is a default."""
    assert _literal_defaults(name) == []
    text = (ROOT / "core/src/context_bench/defaults.py").read_text(encoding="utf-8")
    assert text.count(f"DEFAULT_{name.upper()} = ") == 1


@pytest.mark.parametrize(
    ("make", "option", "shown"),
    [
        (lambda v: Limits(max_concurrency=v), "--max-concurrency", "max_concurrency"),
        (lambda v: Limits(call_timeout=v), "--call-timeout", "call_timeout"),
        (lambda v: Limits(fail_fast=v), "--fail-fast", "fail_fast"),
        (lambda v: Limits(max_row_bytes=v), "--max-row-bytes", "max_row_bytes"),
        (lambda v: Scope(max_examples=v), "--max-examples", "max_examples"),
        (lambda v: Output(html_inline_rows=v), "--html-inline-rows", "html_inline_rows"),
        (lambda v: Analysis(threshold=v), "--threshold", "threshold"),
        (lambda v: Analysis(alpha=v), "--alpha", "alpha"),
    ],
)
def test_each_number_is_held_to_its_flags_range(make, option, shown):
    bound = BOUNDS[option]
    low, high = bound.low, bound.high
    make(high)
    if not bound.above:
        make(low)
    for bad in ([low] if bound.above else []) + [high + 1, low - 1, float("nan"), True, "3"]:
        with pytest.raises(ValueError) as caught:
            make(bad)
        assert str(caught.value) == f"{shown} must be {bound.describe()} (got {bad!r})"


def test_examples_of_the_messages():
    with pytest.raises(
        ValueError,
        match=r"^max_concurrency must be a whole number of rows in flight from "
        r"1 to 10,000 \(got 0\)$",
    ):
        RunConfig(limits=Limits(max_concurrency=0))
    with pytest.raises(
        ValueError,
        match=r"^call_timeout must be a number of seconds above 0, at most "
        r"86,400 \(got 0\)$",
    ):
        Limits(call_timeout=0)
    with pytest.raises(ValueError, match=r"^max_concurrency must be .* \(got 0\)$"):
        LocalExecutor(0)  # the executor's limits are checked by the same validators
    assert Limits(max_concurrency=1).max_concurrency == 1
    assert Limits(call_timeout=None).call_timeout is None  # no deadline, said in so many words


def test_unset_is_the_executors_own_deadline_and_none_is_no_deadline():
    assert executor_for(Limits()).call_timeout == DEFAULT_CALL_TIMEOUT == 600
    assert executor_for(Limits(call_timeout=None)).call_timeout is None
    assert executor_for(Limits(call_timeout=2.5, max_concurrency=3)).call_timeout == 2.5
    own = LocalExecutor(2, 30.0)
    assert executor_for(Limits(), own) is own
    assert executor_for(Limits(call_timeout=30.0), own) is own
    with pytest.raises(ValueError, match=r"call_timeout=5\.0 differs from the deadline the executor keeps"):
        executor_for(Limits(call_timeout=5.0), own)
    with pytest.raises(ValueError, match="differs from the deadline"):
        evaluate(None, ROWS, attrs.evolve(QUIET, limits=Limits(call_timeout=5.0)), executor=own)


def test_the_config_is_frozen_and_the_plugin_options_read_only():
    config = RunConfig(plugins={"judge_url": "http://x"})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        config.limits = Limits()  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.plugins.options["judge_url"] = "http://y"  # type: ignore[index]
    assert dict(config.plugins.options) == {"judge_url": "http://x"}
    with pytest.raises(TypeError):
        RunConfig(limits=Output())  # type: ignore[arg-type]


def _scores(result):
    return [(row.example_id, row.scores) for row in result.rows], result.summary.groups[0].scores


def test_old_keywords_give_the_same_run_and_warn_by_name():
    new = evaluate(None, ROWS, attrs.evolve(QUIET, scope=Scope(max_examples=1)), host=isolated_host())
    with pytest.warns(DeprecationWarning) as caught:
        old = evaluate(None, ROWS, progress=False, max_examples=1, host=isolated_host())
    assert (
        _scores(old)
        == _scores(new)
        == (
            [("1", {"f1": 1.0, "exact_match": 1.0, "recall": 1.0, "contains": 1.0})],
            {"f1": 1.0, "exact_match": 1.0, "recall": 1.0, "contains": 1.0},
        )
    )
    [warning] = caught
    assert str(warning.message).startswith(
        "evaluate(): progress=, max_examples= are deprecated: pass a "
        "context_bench.RunConfig as evaluate(systems, datasets, config)"
    )
    assert warning.filename == __file__  # points at the caller


def test_a_list_as_the_third_argument_is_the_evaluators_of_earlier_releases():
    from context_bench.evaluators._answer import AnswerQuality

    with pytest.warns(DeprecationWarning, match="evaluators as the third argument, progress= are deprecated"):
        result = evaluate(None, ROWS, [AnswerQuality()], host=isolated_host(), progress=False)
    assert result.rows[1].scores["f1"] == pytest.approx(2 / 3)  # "alice" of "alice smith": 1/1, 1/2


def test_call_timeout_none_beside_an_executor_was_its_own_deadline():
    own = LocalExecutor(2, 30.0)
    with pytest.warns(DeprecationWarning):
        result = evaluate(None, ROWS, progress=False, call_timeout=None, executor=own, host=isolated_host())
    assert len(result.rows) == 2
    with pytest.warns(DeprecationWarning):  # without an executor, None is no deadline, as it was
        config, _ = from_deprecated("f()", None, {"call_timeout": None}, executor=False)
    assert config.limits.call_timeout is None


def test_from_kwargs_reads_every_flat_name_and_refuses_others():
    prices = Analysis(threshold=0.5)
    config = RunConfig.from_kwargs(
        evaluators=["AnswerQuality"],
        add_evaluators=["X"],
        exclude_evaluators=["Y"],
        max_examples=3,
        dataset_name="d",
        split="dev",
        hub_mirror=Path("/m"),
        max_concurrency=2,
        call_timeout=9,
        fail_fast=4,
        max_row_bytes=100,
        analysis=prices,
        metrics=["m"],
        breakdown=["qa_type"],
        exclude_errors=True,
        progress=False,
        stream=print,
        cache_dir=Path("/c"),
        output="json",
        out="o.json",
        html_inline_rows=5,
        options={"judge_url": "u"},
    )
    assert config.scope == Scope(
        evaluators=("AnswerQuality",),
        add_evaluators=("X",),
        exclude_evaluators=("Y",),
        max_examples=3,
        dataset_name="d",
        split="dev",
        hub_mirror="/m",
    )
    assert config.limits == Limits(max_concurrency=2, call_timeout=9, fail_fast=4, max_row_bytes=100)
    assert config.analysis == Analysis(
        threshold=0.5, metrics=("m",), breakdown=("qa_type",), exclude_errors=True
    )
    assert config.output == Output(
        progress=False, stream=print, cache_dir="/c", format="json", out="o.json", html_inline_rows=5
    )
    assert dict(config.plugins.options) == {"judge_url": "u"}
    assert {LEGACY_NAMES[name][0] for name in LEGACY_NAMES} == {
        "scope",
        "limits",
        "analysis",
        "output",
        "plugins",
    }
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_workers'"):
        RunConfig.from_kwargs(max_workers=3)


def test_run_options_of_earlier_releases_still_read_and_build():
    host = isolated_host()
    args = build_parser(host).parse_args(["score", "--max-concurrency", "3", "-n", "5"])
    options = RunOptions.from_args(args, host)
    assert options.config.limits.max_concurrency == 3 and options.config.scope.max_examples == 5
    with pytest.warns(DeprecationWarning, match=r"RunOptions\.max_examples is deprecated"):
        assert options.max_examples == 5
    with pytest.warns(DeprecationWarning, match=r"RunOptions\(output=, out=\) is deprecated"):
        built = RunOptions(output="json", out="x.json")
    assert (built.config.output.format, built.config.output.out) == ("json", "x.json")
    with pytest.raises(AttributeError, match="'RunOptions' object has no attribute 'nothing'"):
        options.nothing  # noqa: B018


def test_a_second_pass_is_typed_and_its_kind_checked():
    finished = []
    result = evaluate(
        None,
        ROWS,
        QUIET,
        host=isolated_host(),
        second_pass=SecondPass(kind="memory", finish_row=lambda row: finished.append(row.example_id)),
    )
    assert sorted(finished) == ["1", "2"] and len(result.rows) == 2
    with pytest.raises(ValueError):
        SecondPass(kind="conversations")
    with pytest.warns(DeprecationWarning, match="run=, finish_row=, progress= are deprecated"):
        evaluate(None, ROWS, run="memory", finish_row=finished.append, progress=False, host=isolated_host())
    assert len(finished) == 4


def test_executors_build_rows_through_row_task():
    from context_bench.execution import RowTask
    from context_bench.records import RowError

    task = RowTask(3, None, "d", "x", {}, meta={"k": 1}, record=True)
    error = RowError("system", "s", "WorkerDied", "gone")
    row = task.row(error)
    assert (row.system, row.dataset, row.example_id, row.index, row.meta) == (
        "NoneType",
        "d",
        "x",
        3,
        {"k": 1},
    )
    assert row.errors == [error] and row.fresh is None  # a given-up row is never cached
    assert run_row(attrs.evolve(task, error=error)).errors == [error]


def test_no_warning_from_the_new_form():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        evaluate(None, ROWS, QUIET, host=isolated_host())
