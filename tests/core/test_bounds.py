"""Numbers have bounds (issue 24): every numeric flag and run-file value has a documented range,
checked before any row runs; a figure a system reports beyond its bound is that row's error; every
report format renders any finite figure, and a report is written whatever one row held."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
from pathlib import Path

import pytest

from context_bench import PLUGIN_API_VERSION, EvaluatorSpec, hookimpl
from context_bench._summary import Summarizer
from context_bench.bounds import BOUNDS, FIGURES, flag_type
from context_bench.cli import build_parser
from context_bench.plugins import PluginHost
from context_bench.records import EvalResult, EvalRow
from context_bench.reports import formats, render
from context_bench.testing import FakeServer, Reply, isolated_host, last_user_message

#: The core's report formats (a host of the built-ins alone).
FORMATS = formats(isolated_host())

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

HUGE = ("1e308", "1" + "0" * 30)  # a float past every bound, a whole number no float can hold exactly


@pytest.fixture
def qa(workdir, write_rows):
    write_rows(
        [
            {"id": "1", "question": "capital of France", "answer": "Paris"},
            {"id": "2", "question": "capital of Italy", "answer": "Rome"},
        ]
    )
    return workdir


# -- the table -----------------------------------------------------------------------------------


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_numeric_flag_of_every_command_reads_through_the_table():
    bounded, plain = set(), []
    for parser in _parsers(build_parser(PluginHost())):
        for action in parser._actions:
            name = getattr(action.type, "__name__", "")
            if action.type in (int, float):
                plain.append(action.option_strings)
            elif name in BOUNDS:
                bounded.add(name)
    assert plain == []
    # the gates' and prices' flags carry their numbers inside text (FIELD=VALUE, MODEL=IN,OUT)
    inside = {"--fail-under", "--fail-over", "--fail-if-worse", "--require-operating-point", "--price"}
    assert bounded == set(BOUNDS) - inside


def test_a_bound_reads_its_edges_and_refuses_past_them():
    timeout = flag_type("--timeout")
    assert timeout("86400") == 86400.0 and timeout("0.001") == 0.001
    for text in ("0", "86400.5", "1e308", "inf", "nan", "-1"):
        with pytest.raises(argparse.ArgumentTypeError, match="above 0, at most 86,400"):
            timeout(text)
    concurrency = flag_type("--max-concurrency")
    assert concurrency("1") == 1 and concurrency("10000") == 10_000
    for text in ("0", "10001", "1e3", "1" + "0" * 30):
        with pytest.raises(
            argparse.ArgumentTypeError, match="whole number of rows in flight from 1 to 10,000"
        ):
            concurrency(text)
    with pytest.raises(argparse.ArgumentTypeError, match="looks like a key, not shown"):
        concurrency("sk-abcdefghijklmnopqrstuvwx")


def test_docs_list_every_bound():
    text = (Path(__file__).parents[2] / "docs" / "endpoints.md").read_text(encoding="utf-8")
    for option, bound in BOUNDS.items():
        assert f"| `{option}` | {bound.describe()} |" in text, option
    for field, bound in FIGURES.items():
        assert f"| `{field}` | {bound.describe()} |" in text, field


# -- flags and run-file values -----------------------------------------------------------------


FLAGS = {
    "--max-examples": ["-n", "{v}"],
    "--max-concurrency": ["--max-concurrency", "{v}"],
    "--html-inline-rows": ["--html-inline-rows", "{v}"],
    "--call-timeout": ["--call-timeout", "{v}"],
    "--max-row-bytes": ["--max-row-bytes", "{v}"],
    "--fail-fast": ["--fail-fast", "{v}"],
    "--max-failure-rate": ["--max-failure-rate", "{v}"],
    "--threshold": ["--threshold", "{v}"],
    "--alpha": ["--alpha", "{v}"],
    "--margin": ["--margin", "{v}"],
    "--repeats": ["--repeats", "{v}"],
    "--refine": ["--refine", "{v}"],
    "--timeout": ["--timeout", "{v}"],
    "--max-retries": ["--max-retries", "{v}"],
    "--max-tokens": ["--max-tokens", "{v}"],
    "--temperature": ["--temperature", "{v}"],
    "--meter-port": ["--meter-port", "{v}"],
    "--fail-under": ["--fail-under", "f1={v}"],
    "--fail-over": ["--fail-over", "f1={v}"],
    "--fail-if-worse": ["--baseline", "proxy", "--fail-if-worse", "f1={v}"],
    "--require-operating-point": ["--sweep", "rate=0.3", "--require-operating-point", "rate>={v}"],
    "--price": ["--price", "gpt-4o-mini={v},1"],
    "--judge-concurrency": ["--judge-concurrency", "{v}"],
    "--math-timeout": ["--math-timeout", "{v}"],
    "--math-workers": ["--math-workers", "{v}"],
    "--ray-batch-size": ["--ray-batch-size", "{v}"],
}


def test_the_flags_tested_here_are_every_bound():
    # --top-k is memory's (below); --max-output-bytes a --command's (test_command_system.py);
    # --limit is runs' (test_store_cli.py), --port view's (plugins/cbench-view/tests),
    # --min-agreement judge-check's (plugins/cbench-judge/tests/test_judge_check.py)
    assert set(FLAGS) | {"--top-k", "--max-output-bytes", "--limit", "--port", "--min-agreement"} == set(
        BOUNDS
    )


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_a_huge_number_in_any_flag_is_one_line_before_any_row_runs(cbench, qa, paris, flag, value):
    words = [word.format(v=value) for word in FLAGS[flag]]
    code, out, err = cbench("run", "--proxy", paris.url, "--dataset", "qa.jsonl", *words, "--no-progress")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert BOUNDS[flag].describe() in err and flag in err
    assert paris.requests == []


@pytest.mark.parametrize("value", HUGE)
def test_a_huge_top_k_is_one_line(cbench, qa, value):
    code, _, err = cbench("memory", "--dataset", "locomo", "--top-k", value, "--no-progress")
    assert code == 2 and len(err.strip().splitlines()) == 1 and BOUNDS["--top-k"].describe() in err, err


RUN_FILE_VALUES = {
    "options.max_examples": ("[options]\nmax_examples = {v}\n", "--max-examples"),
    "options.max_concurrency": ("[options]\nmax_concurrency = {v}\n", "--max-concurrency"),
    "options.html_inline_rows": ("[options]\nhtml_inline_rows = {v}\n", "--html-inline-rows"),
    "options.call_timeout": ("[options]\ncall_timeout = {v}\n", "--call-timeout"),
    "options.max_row_bytes": ("[options]\nmax_row_bytes = {v}\n", "--max-row-bytes"),
    "options.fail_fast": ("[options]\nfail_fast = {v}\n", "--fail-fast"),
    "options.threshold": ("[options]\nthreshold = {v}\n", "--threshold"),
    "options.price": ('[options]\nprice = ["m={v},1"]\n', "--price"),
    "options.judge_concurrency": ("[options]\njudge_concurrency = {v}\n", "--judge-concurrency"),
    "options.math_timeout": ("[options]\nmath_timeout = {v}\n", "--math-timeout"),
    "options.math_workers": ("[options]\nmath_workers = {v}\n", "--math-workers"),
    "options.ray_batch_size": ("[options]\nray_batch_size = {v}\n", "--ray-batch-size"),
    "gates.max_failure_rate": ("[gates]\nmax_failure_rate = {v}\n", "--max-failure-rate"),
    "gates.fail_under": ("[gates]\nfail_under = {{f1 = {v}}}\n", "--fail-under"),
    "gates.fail_over": ("[gates]\nfail_over = {{f1 = {v}}}\n", "--fail-over"),
    "gates.fail_if_worse": ('[gates]\nbaseline = "proxy"\nfail_if_worse = {{f1 = {v}}}\n', "--fail-if-worse"),
    "system 1: timeout": ("[[systems]]\nurl = '{u}'\ntimeout = {v}\n", "--timeout"),
    "system 1: max_retries": ("[[systems]]\nurl = '{u}'\nmax_retries = {v}\n", "--max-retries"),
    "system 1: max_tokens": ("[[systems]]\nurl = '{u}'\nmax_tokens = {v}\n", "--max-tokens"),
    "system 1: temperature": ("[[systems]]\nurl = '{u}'\ntemperature = {v}\n", "--temperature"),
    "data set 1: max_examples": ("[[datasets]]\npath = 'qa.jsonl'\nmax_examples = {v}\n", "--max-examples"),
}


@pytest.mark.parametrize("kind", ["toml", "json"])
@pytest.mark.parametrize("key", sorted(RUN_FILE_VALUES))
def test_a_huge_number_in_any_run_file_value_is_one_line_naming_it(cbench, qa, paris, key, kind):
    text, flag = RUN_FILE_VALUES[key]
    if kind == "toml":
        path = "run.toml"
        (qa / path).write_text(text.format(v="1e308", u=paris.url), encoding="utf-8")
    else:  # JSON holds whole numbers of any size
        import tomllib

        path = "run.json"
        data = tomllib.loads(text.format(v="0", u=paris.url))
        section = next(iter(data))
        entry = data[section][0] if isinstance(data[section], list) else data[section]
        name = key.rpartition(".")[2].rpartition(" ")[2]
        value = 10**30
        entry[name] = (
            {"f1": value} if isinstance(entry[name], dict) else [f"m={value},1"] if name == "price" else value
        )
        (qa / path).write_text(json.dumps(data), encoding="utf-8")
    extra = [] if "[[systems]]" in text else ["--proxy", paris.url]
    extra += [] if "[[datasets]]" in text else ["--dataset", "qa.jsonl"]
    code, out, err = cbench("run", "--config", path, *extra, "--no-progress")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    # a gate's or price's text is read with the command line's, and named by its flag
    carried = ("--fail-under", "--fail-over", "--fail-if-worse", "--price")
    named = flag if flag in carried else f"{path}: {key}"
    assert named in err and BOUNDS[flag].describe() in err, err
    assert paris.requests == []


# -- figures an endpoint reports -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (
            Reply("Rome", usage={"prompt_tokens": 1e308, "completion_tokens": 2}),
            "the system reported input_tokens = 1e+308, beyond a number of tokens from 0 to 1,000,000,000",
        ),
        (
            Reply("Rome", usage={"prompt_tokens": 3, "completion_tokens": 1e308}),
            "the system reported output_tokens = 1e+308, beyond a number of tokens from 0 to 1,000,000,000",
        ),
        (
            Reply("Rome", headers={"x-litellm-response-cost": "1e308"}),
            "the system reported cost = 1e+308, beyond a number of dollars from 0 to 1,000,000",
        ),
    ],
)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_figure_beyond_its_bound_is_a_row_error_and_every_report_is_written(cbench, qa, fmt, reply, said):
    with FakeServer(lambda body: reply if "Italy" in last_user_message(body) else "Paris") as server:
        code, out, err = cbench(
            "run", "--proxy", server.url, "--dataset", "qa.jsonl", "--output", fmt,
            "--out", f"report.{fmt}", "--max-failure-rate", "1", "--no-progress",
        )  # fmt: skip
    assert code == 0, err
    report = (qa / f"report.{fmt}").read_text(encoding="utf-8")
    if fmt == "csv":  # a row's errors are counted there
        assert (
            report.splitlines()[2].split(",")[:3] == ["proxy", "qa", "2"] and ",1," in report.splitlines()[2]
        )
    else:  # the table wraps a long message at the terminal's width
        assert said in " ".join(report.split())
    if fmt == "json":
        rows = {row["example_id"]: row for row in json.loads(report)["rows"]}
        assert rows["1"]["errors"] == [] and rows["1"]["scores"]["f1"] == 1.0
        assert rows["2"]["errors"] == [
            {"stage": "system", "source": "proxy", "type": "ValueError", "message": said}
        ]


# -- every report renders any finite figure --------------------------------------------------------


class Huge:
    """Scores at the float's limit: their sums overflow, their means are infinite."""

    name = "Huge"

    def score(self, original, processed):
        return {"huge": float(original["value"])}


class HugePlugin:
    CBENCH_PLUGIN_API = PLUGIN_API_VERSION

    @hookimpl
    def cbench_register_evaluators(self, register):
        register(EvaluatorSpec("Huge", f"{__name__}:Huge", fields=("huge",)))


@pytest.fixture
def huge_rows(qa, monkeypatch):
    from context_bench.cli import _app as app

    def host_with_huge(argv):
        host = PluginHost()
        host.register(HugePlugin(), "huge-test")
        return host

    monkeypatch.setattr(app, "_host_for", host_with_huge)
    rows = [
        {"id": str(n), "response": "x", "value": value, "system": system, "latency": 1e5, "cost": 1e6}
        for system in ("a", "b")
        for n, value in enumerate((1e308, 1.7e308, -1e308, 5e-324))
    ]
    (qa / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return qa / "rows.jsonl"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_scores_whose_sums_overflow(cbench, huge_rows, fmt):
    code, _, err = cbench(
        "score", str(huge_rows), "--no-autowire", "--evaluator", "Huge", "--output", fmt,
        "--out", f"huge.{fmt}", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    report = (huge_rows.parent / f"huge.{fmt}").read_text(encoding="utf-8")
    if fmt in ("table", "markdown"):  # the means alone: infinite, so null and said
        assert "the mean of huge for a on rows is not a finite number" in report
    else:  # a row's own score, as stored or shown
        assert "1.7e+308" in report or "1.7e308" in report


def test_every_format_renders_figures_at_the_float_limit():
    """The Python API hands any EvalResult to the reports: figures past the CLI's bounds too."""
    rows = [
        EvalRow(
            system=system, dataset="qa", example_id=str(n), index=2 * n + (system == "b"),
            scores={"f1": value, "x": 1.7e308}, response="r", latency=value,
            input_tokens=1e308, output_tokens=1.7e308, cost=1e308,
        )
        for n, value in enumerate((1e308, -1e308, 1e308))
        for system in ("a", "b")
    ]  # fmt: skip
    summarize = Summarizer()
    result = EvalResult(rows, summarize(rows), summarize, {})
    for fmt in FORMATS:
        text = render(result, fmt)
        assert "1e+308" in text or "1e308" in text, fmt
        assert not re.search(r"\d{30}", text), fmt  # never hundreds of digits


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
@pytest.mark.timeout(60)
def test_chromium_shows_the_overflowing_report_without_a_script_error(cbench, huge_rows):
    code, _, err = cbench(
        "score", str(huge_rows), "--no-autowire", "--evaluator", "Huge", "--output", "html",
        "--out", "huge.html", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    dom, errors = browser.dump_dom(huge_rows.parent / "huge.html")
    assert errors == [] and 'data-ready="1"' in dom
    assert not re.search(r'(?:x|y|x1|x2|cx|cy|width)="[^"]*(?:nan|inf)', dom)
