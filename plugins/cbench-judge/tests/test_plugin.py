"""The plugin as the core sees it: registration, CLI options, auto-wiring through evaluate()."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

import context_bench
from cbench_judge import FalseMemoryRate, JudgeEvaluator, LLMJudge, MemoryJudge
from cbench_judge.testing import memory_verdict
from cbench_judge.wiring import build_llm_judge, build_memory_judge
from context_bench import Output, RunConfig, Scope
from context_bench.plugins import PluginHost
from context_bench.testing import Reply

NAMES = {"MemoryJudge", "FalseMemoryRate", "LLMJudge", "JudgeEvaluator", "JudgePanel"}


def _host() -> PluginHost:
    return PluginHost(autoload=True, allow=["cbench-judge"], strict=True)


def test_registers_every_evaluator_lazily() -> None:
    host = _host()
    specs = {spec.name: spec for plugin, spec in host.evaluator_specs() if plugin == "cbench-judge"}
    assert set(specs) == NAMES
    assert all(isinstance(spec.factory, str) for spec in specs.values())
    from context_bench.evaluators import MemoryJudge as Resolved

    assert Resolved is MemoryJudge
    # listing evaluators and building the CLI import neither httpx nor the judges
    code = (
        "import argparse, sys; from context_bench.plugins import PluginHost; "
        "h = PluginHost(allow=['cbench-judge'], strict=True); h.evaluator_specs(); h.rules(); "
        "h.add_options(argparse.ArgumentParser().add_argument_group()); "
        "print('httpx' in sys.modules, 'cbench_judge.client' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.split() == ["False", "False"]


def test_cli_options(judge_server) -> None:
    url = judge_server().url  # a judge URL is taken once something listens there
    parser = argparse.ArgumentParser()
    _host().add_options(parser.add_argument_group("judge"))
    args = parser.parse_args(
        [
            "--judge-url",
            url,
            "--judge-model",
            "m",
            "--judge-api-key-env",
            "K",
            "--judge-concurrency",
            "8",
            "--judge-template",
            "likert_5",
            "--judge-strict",
        ]
    )
    assert (
        args.judge_url,
        args.judge_model,
        args.judge_api_key_env,
        args.judge_concurrency,
        args.judge_template,
        args.judge_strict,
    ) == (url, "m", "K", 8, "likert_5", True)
    defaults = parser.parse_args([])
    assert defaults.judge_url is None and defaults.judge_template is None
    with pytest.raises(SystemExit):
        parser.parse_args(["--judge-template", "nonsense"])


def test_builds_from_options(tmp_path, monkeypatch) -> None:
    judge = build_memory_judge(
        {"judge_url": "http://h:1", "judge_model": "m", "judge_concurrency": 8, "cache_dir": str(tmp_path)}
    )
    assert (judge.url, judge.model, judge.concurrency) == ("http://h:1", "m", 8)
    assert judge._client.cache.directory == tmp_path / "judge"  # on by default with the CLI's cache dir
    no_cache = build_memory_judge(
        {"judge_url": "http://h:1", "cache_dir": str(tmp_path), "judge_no_cache": True}
    )
    assert no_cache._client.cache is None
    assert isinstance(build_llm_judge({"judge_url": "http://h:1"}), LLMJudge)
    templated = build_llm_judge({"judge_url": "http://h:1", "judge_template": "safety"})
    assert isinstance(templated, JudgeEvaluator) and templated.template == "safety"
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(context_bench.UsageError, match="NO_SUCH_KEY_VAR"):
        build_memory_judge({"judge_url": "http://h:1", "judge_api_key_env": "NO_SUCH_KEY_VAR"})
    monkeypatch.setenv("SOME_KEY_VAR", "sk-from-var")
    keyed = build_memory_judge({"judge_url": "http://h:1", "judge_api_key_env": "SOME_KEY_VAR"})
    assert keyed._client._chat._headers["Authorization"] == "Bearer sk-from-var"


def test_autowiring_through_evaluate(judge_server) -> None:
    server = judge_server(lambda body: "RATING: 5" if "RATING" in str(body) else "VERDICT: NO")
    memory_rows = [
        {
            "id": "m1",
            "context": "Alice: I live in Paris.",
            "question": "Where does Alice live?",
            "answer": "Paris",
            "response": "Paris",
        }
    ]
    other_rows = [{"id": "o1", "instruction": "Say hi.", "response": "hi"}]
    host = _host()
    result = context_bench.evaluate(
        None,
        {"locomo": memory_rows, "alpaca-eval": other_rows},
        RunConfig(output=Output(progress=False), plugins={"judge_url": server.url}),
        host=host,
    )
    by_dataset = {row.dataset: row for row in result.rows}
    assert set(by_dataset["locomo"].scores) >= {"memory_judge", "false_memory", "judge_score"}
    assert set(by_dataset["alpaca-eval"].scores) == {"judge_score"}
    assert by_dataset["alpaca-eval"].scores["judge_score"] == 1.0
    # rows that carry a conversation, question and answer get the memory judges in any data set
    result = context_bench.evaluate(
        None,
        {"my-memory": memory_rows},
        RunConfig(output=Output(progress=False), plugins={"judge_url": server.url}),
        host=host,
    )
    assert {"memory_judge", "false_memory"} <= set(result.rows[0].scores)
    # without a judge URL nothing is wired and nothing is called
    before = server.count
    result = context_bench.evaluate(
        None, {"locomo": memory_rows}, RunConfig(output=Output(progress=False)), host=host
    )
    assert not {"memory_judge", "false_memory", "judge_score"} & set(result.rows[0].scores)
    assert server.count == before


def test_strict_failures_become_row_errors(judge_server) -> None:
    server = judge_server(lambda body: Reply(status=500))
    rows = [{"id": "1", "question": "q", "answer": "a", "response": "a", "context": "x"}]
    strict = MemoryJudge(server.url, max_retries=0, strict=True)
    lenient = FalseMemoryRate(server.url, max_retries=0)
    result = context_bench.evaluate(
        None, rows, RunConfig(scope=Scope(evaluators=[strict, lenient]), output=Output(progress=False))
    )
    row = result.rows[0]
    assert [(e.stage, e.source, e.type) for e in row.errors] == [
        ("evaluator", "memory_judge", "JudgeCallError")
    ]
    assert row.failures == {"false_memory_rate": "call_error: HTTP 500 (gave up after 1 attempt)"}
    assert result.summary.failures["false_memory_rate"].kinds == {"call_error": 1}
    assert any("false_memory_rate failed on 1 of 1 rows" in w for w in result.summary.warnings)


def test_cli_run_with_judge_options_caches_and_never_shows_the_key(judge_server, tmp_path) -> None:
    import json
    import os

    secret = "sk-cli-secret-5678"

    def respond(body):
        if "Rome" in str(body):
            return Reply(status=400)
        return "RATING: 4" if "RATING" in str(body) else memory_verdict(body)

    server = judge_server(respond)
    rows = [
        {
            "id": "1",
            "context": "Alice: I grew up in Paris.",
            "question": "Where did Alice grow up?",
            "answer": "Paris",
            "response": "Paris",
        },
        {
            "id": "2",
            "context": "Alice: I grew up in Paris.",
            "question": "Where did Alice grow up?",
            "answer": "Paris",
            "response": "Rome",
        },
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    cache = tmp_path / "cache"
    env = {**os.environ, "MY_JUDGE_KEY": secret, "CBENCH_PLUGINS": "cbench-judge"}
    command = [
        sys.executable,
        "-m",
        "context_bench",
        "score",
        str(data),
        "--dataset-name",
        "locomo",
        "--judge-url",
        server.url,
        "--judge-api-key-env",
        "MY_JUDGE_KEY",
        "--judge-model",
        "judge-m",
        "--judge-concurrency",
        "4",
        "--cache-dir",
        str(cache),
        "--output",
        "json",
        "--no-progress",
    ]
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    # the judges failed on one row of two: over --max-failure-rate, so the run fails (exit 4)
    assert first.returncode == 4, first.stderr
    assert "evaluator memory_judge failed on 1 of the 2 rows it scored (50.0%" in first.stderr
    report = json.loads(first.stdout)
    scores = {row["example_id"]: row["scores"] for row in report["rows"]}
    judged = ("memory_judge", "memory_judge_raw", "false_memory", "judge_score")
    assert [scores["1"][field] for field in judged] == [1.0, 1.0, 0.0, 0.75]
    assert scores["2"]["memory_judge"] == 0.0  # the judge failed on Rome: a counted fallback
    assert report["summary"]["failures"]["memory_judge"]["kinds"] == {"call_error": 1}
    assert all(s.headers["authorization"] == f"Bearer {secret}" for s in server.seen)
    assert {s.body["model"] for s in server.seen} == {"judge-m"}
    stored = [p.read_bytes() for p in cache.rglob("*") if p.is_file()]
    assert stored and all(secret.encode() not in blob for blob in stored)
    assert secret not in first.stdout + first.stderr
    # a re-run costs only the calls that failed the first time
    failed_calls = sum(1 for s in server.seen if "Rome" in str(s.body))
    before = server.count
    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 4, second.stderr
    retried = server.count - before
    assert 0 < retried <= failed_calls
    assert all("Rome" in str(s.body) for s in server.seen[before:])


def test_the_judge_settings_and_the_judge_flags_are_in_step() -> None:
    """Every --judge-* flag is a field of JudgeSettings and every field a flag, defaults alike: the
    record is how the judge's options are read and set (never by editing a dict of dests)."""
    from cbench_judge import plugin
    from cbench_judge.settings import JudgeSettings
    from context_bench.testing import check_settings

    check_settings(plugin, JudgeSettings)
    parser = argparse.ArgumentParser()
    _host().add_options(parser.add_argument_group())
    args = vars(parser.parse_args(["--judge-model", "m", "--judge-dataset", "a", "--judge-dataset", "b"]))
    assert JudgeSettings.read(args) == JudgeSettings(model="m", dataset=("a", "b"))
    assert JudgeSettings.dest("url") == "judge_url"
    with pytest.raises(AttributeError, match="JudgeSettings has no setting 'endpoint'"):
        JudgeSettings.dest("endpoint")
