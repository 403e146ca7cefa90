"""The command line: the bundled default, output formats, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from context_bench import AutowireRule, CommandSpec, EvaluatorSpec, UsageError, hookimpl
from context_bench.cli import (
    RunOptions,
    add_run_options,
    build_parser,
    emit,
    main,
    sample_path,
    with_default_command,
)
from context_bench.testing import FakeServer, isolated_host, last_user_message

ALL_ONE_QA = {"f1": 1.0, "exact_match": 1.0, "recall": 1.0, "contains": 1.0}


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_score_without_a_file_scores_the_bundled_sample(capsys):
    code, out, err = run_cli(capsys, "score", "--output", "json", "--no-progress")
    assert code == 0 and "bundled sample" in err
    result = json.loads(out)
    sample_ids = [json.loads(line)["id"] for line in sample_path().read_text().splitlines()]
    assert [r["example_id"] for r in result["rows"]] == sample_ids
    scores = {r["example_id"]: r["scores"] for r in result["rows"] if r["system"] == "baseline"}
    assert scores["qa-1"] == {"f1": 0.5, "exact_match": 0.0, "recall": 1.0, "contains": 1.0}
    assert scores["mc-1"]["mc_accuracy"] == 1.0 and scores["mc-3"]["mc_accuracy"] == 0.0
    assert scores["nli-1"]["nli_accuracy"] == 1.0
    assert 0.0 < scores["sum-1"]["rouge_l_f1"] < 1.0
    # the plugins' rows: math, code in the sandbox, IFEval
    assert [scores[i]["math_equiv"] for i in ("math-1", "math-2", "math-3")] == [1.0, 1.0, 0.0]
    assert scores["code-1"] == {"pass_at_1": 1.0} and scores["code-2"] == {"pass_at_1": 0.0}
    assert scores["if-1"]["ifeval_strict"] == 1.0 and scores["if-2"]["ifeval_strict"] == 0.0
    assert not any(r["errors"] or r["failures"] for r in result["rows"])
    # the second system: the same questions with shorter prompts, some answers changed
    compressed = {r["example_id"]: r["scores"] for r in result["rows"] if r["system"] == "compressed"}
    assert compressed["qa-1"]["f1"] == 1.0 and compressed["mc-1"]["mc_accuracy"] == 0.0
    summary = result["summary"]
    assert summary["baseline"] == "baseline" and summary["primary"] == {"field": None, "threshold": 0.7}
    (squad,) = [c for c in summary["comparisons"] if c["dataset"] == "squad" and c["field"] == "f1"]
    assert squad["system"] == "compressed" and squad["n"] == 3
    assert squad["compression_ratio"] == pytest.approx((157 + 120 + 191) / (412 + 388 + 455))
    assert squad["tokens_saved"] == (412 + 388 + 455) - (157 + 120 + 191)
    assert squad["gained"] == ["qa-1"] and squad["lost"] == []
    (mmlu,) = [c for c in summary["comparisons"] if c["dataset"] == "mmlu"]
    assert (mmlu["lost"], mmlu["gained"]) == (["mc-1"], ["mc-3"])
    assert (mmlu["test"], mmlu["p_value"]) == ("mcnemar", 1.0)


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "jsonl", "html"])
def test_every_output_format_renders_the_sample(capsys, fmt):
    code, out, _ = run_cli(capsys, "score", "--output", fmt, "--no-progress")
    assert code == 0
    assert "squad" in out
    if fmt not in ("table", "markdown"):  # the summaries name data sets, not rows
        assert "qa-1" in out


def test_out_writes_a_file(capsys, tmp_path):
    target = tmp_path / "report.html"
    code, out, err = run_cli(capsys, "score", "--output", "html", "--out", str(target), "--no-progress")
    assert code == 0 and out == "" and str(target) in err
    assert target.read_text().lstrip().lower().startswith("<!doctype html>")


def test_score_rows_grouped_by_their_system_field(capsys, tmp_path):
    rows = tmp_path / "two.jsonl"
    rows.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "1", "system": "a", "answer": "Paris", "response": "Paris"},
                {"id": "1", "system": "b", "answer": "Paris", "response": "Rome"},
            ]
        )
    )
    code, out, _ = run_cli(capsys, "score", str(rows), "--output", "json", "--no-progress")
    systems = json.loads(out)["summary"]["systems"]
    assert systems["a"]["scores"]["f1"] == 1.0 and systems["b"]["scores"]["f1"] == 0.0


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["run", "--proxy", "http://127.0.0.1:9", "--dataset", "no-such-set"],
            "unknown data set 'no-such-set'",
        ),
        (["run", "--proxy", "http://127.0.0.1:9", "--dataset", "missing.jsonl"], "data set file not found"),
        (["score", "/nonexistent/rows.jsonl"], "cannot read /nonexistent/rows.jsonl"),
        (["score", "--bogus-flag"], "unrecognized arguments: --bogus-flag"),
        (["score", "--output", "pdf"], "invalid choice: 'pdf'"),
        (["score", str(sample_path()), "--no-evaluator", "NoSuch"], "cannot exclude evaluator 'NoSuch'"),
        (["-p", "cbench-math", "plugins"], "-p takes no:NAME"),
        (
            ["score", "-n", "0"],
            "argument -n/--max-examples: must be a whole number of rows from 1 to 1,000,000,000",
        ),
        (["score", "--out", "/nonexistent/dir/report.json"], "no directory /nonexistent/dir"),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_refused_endpoint_is_one_line(capsys, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    code, _, err = run_cli(capsys, "run", "--proxy", "http://127.0.0.1:9", "--dataset", str(data))
    assert code == 2 and "unreachable" in err and len(err.strip().splitlines()) == 1


def test_flags_without_a_subcommand_mean_run(capsys, tmp_path):
    assert with_default_command(["--proxy", "u", "--dataset", "d"])[0] == "run"
    assert with_default_command(["-p", "no:x", "--proxy", "u"])[:3] == ["-p", "no:x", "run"]
    assert with_default_command(["--help"]) == ["--help"]
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "capital of France", "answer": "Paris"}) + "\n")
    with FakeServer(lambda body: "Paris" if "France" in last_user_message(body) else "?") as server:
        code, out, _ = run_cli(
            capsys,
            "--proxy",
            server.url,
            "--name",
            "mine",
            "--dataset",
            str(data),
            "--output",
            "json",
            "--no-progress",
        )
    row = json.loads(out)["rows"][0]
    assert code == 0 and row["system"] == "mine" and row["scores"]["exact_match"] == 1.0


def test_listing_commands(capsys):
    code, out, _ = run_cli(capsys, "plugins", "--json")
    assert code == 0
    plugins = {p["name"]: p for p in json.loads(out)}
    assert plugins["context-bench"]["status"] == "loaded"
    assert "AnswerQuality" in [e["name"] for e in plugins["context-bench"]["evaluators"]]
    code, out, _ = run_cli(capsys, "evaluators")
    assert code == 0 and "mc_accuracy" in out
    code, out, _ = run_cli(capsys, "-p", "no:cbench-math", "plugins", "--json")
    assert code == 0
    statuses = {p["name"]: p["status"] for p in json.loads(out)}
    assert statuses.get("cbench-math") == "disabled"


@pytest.mark.parametrize(
    "argv",
    [
        ["-p", "no:cbench-math", "plugins", "--json"],
        ["plugins", "-p", "no:cbench-math", "--json"],
        ["plugins", "--json", "-pno:cbench-math"],
        ["plugins", "--json", "-p=no:cbench-math"],
    ],
)
def test_p_no_name_is_taken_before_or_after_the_subcommand(capsys, argv):
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    statuses = {p["name"]: p["status"] for p in json.loads(out)}
    assert statuses["cbench-math"] == "disabled" and statuses["cbench-code"] == "loaded"


def test_p_after_run_disables_the_plugin_for_the_run_and_its_run_file(capsys, tmp_path):
    """gsm8k rows get MathEquivalence from cbench-math; with it disabled, only the core's AnswerQuality."""
    data = tmp_path / "gsm8k.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "1+1?", "answer": "2"}) + "\n")
    config = tmp_path / "run.toml"
    config.write_text(f'[[datasets]]\npath = "{data}"\n', encoding="utf-8")
    with FakeServer(lambda body: "2") as server:
        for argv in (
            ["run", "--proxy", server.url, "--dataset", str(data), "-p", "no:cbench-math"],
            ["run", "--config", str(config), "--proxy", server.url, "-p", "no:cbench-math"],
        ):
            code, out, err = run_cli(capsys, *argv, "--output", "json", "--no-progress")
            assert code == 0, err
            (row,) = json.loads(out)["rows"]
            assert row["scores"] == ALL_ONE_QA, row
        code, out, err = run_cli(
            capsys, "run", "--proxy", server.url, "--dataset", str(data), "--output", "json"
        )
        assert code == 0 and json.loads(out)["rows"][0]["scores"]["math_equiv"] == 1.0, err


def test_words_after_a_double_dash_are_not_plugin_flags():
    from context_bench.cli._argv import plugin_flags

    assert plugin_flags(["run", "-p", "no:a", "--", "-p", "x"]) == (["a"], ["run", "--", "-p", "x"])
    with pytest.raises(UsageError, match="-p takes no:NAME"):
        plugin_flags(["plugins", "-p"])


def test_module_entry_point_and_no_traceback_on_bad_flag():
    completed = subprocess.run(
        [sys.executable, "-m", "context_bench", "run", "--nope"], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 2 and "Traceback" not in completed.stderr


def test_import_stays_light():
    code = (
        "import sys, context_bench; heavy = {'httpx', 'rouge_score', 'sympy', 'nltk', 'numpy'}"
        " & set(sys.modules); plugins = [m for m in sys.modules if m.startswith('cbench_')];"
        " print(sorted(heavy), plugins)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[] []"


@pytest.mark.parametrize("content", ["", "\n\n", "[]"])
def test_a_file_without_rows_is_one_line(capsys, tmp_path, content):
    data = tmp_path / ("empty.json" if content == "[]" else "empty.jsonl")
    data.write_text(content)
    code, _, err = run_cli(capsys, "score", str(data), "--no-progress")
    assert code == 2 and "no rows to score" in err and len(err.strip().splitlines()) == 1


def test_unwritable_out_is_refused_before_any_request(capsys, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    with FakeServer(lambda body: "a") as server:
        code, _, err = run_cli(
            capsys,
            "run",
            "--proxy",
            server.url,
            "--dataset",
            str(data),
            "--out",
            str(tmp_path / "no" / "r.html"),
        )
        assert code == 2 and "--out" in err and server.requests == []


def test_a_run_where_every_row_errored_exits_1(capsys, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": str(i), "answer": "a"}) + "\n" for i in range(3)))
    code, _, err = run_cli(capsys, "score", str(data), "--no-progress", "--output", "json")
    assert code == 1 and "none of the 3 rows could be scored" in err
    data.write_text(json.dumps({"id": "1", "answer": "a", "response": "a"}) + "\n" + json.dumps({"id": "2"}))
    # some rows scored: not exit 1; one of two rows unanswered is over the default failure rate (exit 4)
    code, _, err = run_cli(capsys, "score", str(data), "--no-progress")
    assert code == 4 and "could not answer 1 of 2 rows (50.0%" in err
    assert run_cli(capsys, "score", str(data), "--no-progress", "--max-failure-rate", "0.5")[0] == 0


def test_several_systems_keep_every_notice_and_distinct_indices(capsys, tmp_path):
    data = tmp_path / "two.jsonl"
    data.write_text(
        json.dumps({"id": "1", "system": "a", "answer": "x", "response": "x"})
        + "\n"
        + json.dumps({"id": "2", "system": "b", "dataset": "gsm8k", "answer": "4", "response": "4"})
        + "\n"
    )
    code, out, err = run_cli(
        capsys, "-p", "no:cbench-math", "score", str(data), "--output", "json", "--no-progress"
    )
    result = json.loads(out)
    assert code == 0 and [r["index"] for r in result["rows"]] == [0, 1]
    assert any("cbench-math" in w for w in result["summary"]["warnings"]), result["summary"]["warnings"]


def test_a_misspelt_plugin_name_is_warned_about(capsys):
    code, _, err = run_cli(capsys, "-p", "no:cbench-mth", "plugins")
    assert code == 0 and "no plugin named 'cbench-mth'" in err


def test_an_unknown_plugin_in_cbench_plugins_is_warned_about(capsys, monkeypatch):
    monkeypatch.setenv("CBENCH_PLUGINS", "cbench-math, cbench-mth")
    code, out, err = run_cli(capsys, "plugins", "--json")
    assert code == 0 and "no plugin named 'cbench-mth'" in err
    statuses = {p["name"]: p["status"] for p in json.loads(out)}
    assert statuses["cbench-math"] == "loaded" and statuses["cbench-code"] == "disabled"


def test_no_autowire_scores_with_the_named_evaluators_only(capsys, tmp_path):
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"id": "1", "answer": "x", "correct_letter": "B", "response": "x"}) + "\n")
    code, out, _ = run_cli(
        capsys, "score", str(data), "--no-autowire", "--evaluator", "AnswerQuality", "--output", "json"
    )
    assert code == 0 and json.loads(out)["rows"][0]["scores"] == ALL_ONE_QA
    code, _, err = run_cli(capsys, "score", str(data), "--no-autowire", "--no-progress")
    assert code == 2 and err.strip() == "context-bench: error: --no-autowire needs at least one --evaluator"
    code, _, err = run_cli(
        capsys, "score", str(data), "--no-autowire", "--evaluator", "Nope", "--no-progress"
    )
    assert code == 2 and "no loaded plugin registers an evaluator named 'Nope'" in err
    assert len(err.strip().splitlines()) == 1


def test_a_closed_pipe_is_not_a_traceback():
    """`context-bench evaluators | head`: the reader is gone before the listing is written."""
    child = subprocess.Popen(
        [sys.executable, "-m", "context_bench", "evaluators"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    child.stdout.close()
    err = child.stderr.read()
    assert child.wait(timeout=60) == 0 and "Traceback" not in err and "BrokenPipe" not in err


def test_without_cbench_memory_there_is_no_memory_command(capsys):
    parser = build_parser(isolated_host())
    with pytest.raises(UsageError, match="invalid choice: 'memory'"):
        parser.parse_args(["memory", "--help"])


def test_a_plugin_command_reuses_the_run_flags(capsys, tmp_path):
    """A third party's command: its own argument, the shared run flags typed, its own options only."""
    seen: dict = {}

    class Echo:
        name = "echo"

        def score(self, original, processed):
            return {"echoed": float(processed["response"] == original["word"])}

    def configure(parser, host):
        parser.add_argument("--word", required=True)
        add_run_options(parser, host)

    def run(args, host):
        import context_bench

        options = RunOptions.from_args(args, host)
        rows = [{"id": "1", "word": args.word, "response": args.word}]
        return emit(context_bench.evaluate(None, rows, options.config, host=host), options)

    class Plugin:
        CBENCH_PLUGIN_API = 1

        @hookimpl
        def cbench_register_commands(self, register):
            register(CommandSpec("echo", "say a word back", configure, run))

        @hookimpl
        def cbench_register_evaluators(self, register):
            register(EvaluatorSpec("Echo", Echo))

        @hookimpl
        def cbench_register_autowire(self, register):
            register(
                AutowireRule("Echo", datasets=("*",), build=lambda options: seen.update(options) or Echo())
            )

        @hookimpl
        def cbench_add_options(self, group):
            group.add_argument("--echo-level", dest="echo_level", type=int)

    host = isolated_host(Plugin())
    argv = ["echo", "--word", "hi", "--echo-level", "2", "--cache-dir", str(tmp_path), "--output", "json"]
    args = build_parser(host).parse_args([*argv, "--no-progress"])
    options = RunOptions.from_args(args, host)
    assert options.config.plugins.options == {"echo_level": 2}
    assert options.config.output.cache_dir == str(tmp_path)
    assert args.handler(args, host) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["scores"]["echoed"] == 1.0
    assert seen == {"echo_level": 2, "cache_dir": str(tmp_path)}  # not max_concurrency, output, word...
    with pytest.raises(
        UsageError,
        match="--max-concurrency/--max-workers: must be a whole number of rows in flight from 1 to 10,000",
    ):
        RunOptions.from_args(
            build_parser(host).parse_args(["echo", "--word", "x", "--max-concurrency", "0"]), host
        )
