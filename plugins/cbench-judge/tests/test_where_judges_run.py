"""A judge runs only where it can judge, sees what the row offers, and can be limited to data sets."""

from __future__ import annotations

import json
import subprocess
import sys

import context_bench
from cbench_judge import FalseMemoryRate, LLMJudge, MemoryJudge
from context_bench import Output, RunConfig, Scope
from context_bench.plugins import PluginHost
from context_bench.testing import Reply, last_user_message

MC_ROW = {
    "id": "mc-1",
    "question": "Which planet is largest?",
    "choices": ["Mars", "Jupiter", "Venus", "Earth"],
    "correct_letter": "B",
    "response": "The answer is B.",
}


def _host() -> PluginHost:
    return PluginHost(autoload=True, allow=["cbench-judge"], strict=True)


def _grader(body) -> str:
    prompt = last_user_message(body)
    return "GRADE: C" if "GRADE" in prompt else "RATING: 5" if "RATING" in prompt else "VERDICT: NO"


def test_the_rating_judge_sees_a_multiple_choice_rows_options(judge_server) -> None:
    server = judge_server(lambda body: "RATING: 5")
    assert LLMJudge(server.url).score(MC_ROW, MC_ROW) == {"judge_score": 1.0}
    prompt = last_user_message(server.seen[0].body)
    assert all(line in prompt for line in ("A. Mars", "B. Jupiter", "C. Venus", "D. Earth"))
    assert "Reference answer (for comparison):\nB" in prompt  # the correct letter is its reference


def test_a_template_judge_sees_the_options_too(judge_server) -> None:
    server = judge_server(_grader)
    hub_row = {**MC_ROW, "choices": {"label": ["A", "B"], "text": ["Mars", "Jupiter"]}}
    result = context_bench.evaluate(
        None,
        {"mmlu": [hub_row]},
        RunConfig(
            output=Output(progress=False), plugins={"judge_url": server.url, "judge_template": "binary_qa"}
        ),
        host=_host(),
    )
    assert result.rows[0].scores["judge_score"] == 1.0 and not result.rows[0].errors
    prompt = last_user_message(server.seen[0].body)
    assert "A. Mars\nB. Jupiter" in prompt and "Reference answer:\nB" in prompt


def test_binary_qa_judges_only_rows_with_a_reference(judge_server) -> None:
    server = judge_server(_grader)
    rows = [
        {"id": "with", "question": "Capital of France?", "answer": "Paris", "response": "Paris"},
        {"id": "without", "question": "Write a haiku.", "response": "Autumn moonlight..."},
        {"id": "nothing-asked", "text": "a row with no question", "response": "ok"},
    ]
    result = context_bench.evaluate(
        None,
        {"mixed": rows},
        RunConfig(
            output=Output(progress=False), plugins={"judge_url": server.url, "judge_template": "binary_qa"}
        ),
        host=_host(),
    )
    by_id = {row.example_id: row for row in result.rows}
    assert by_id["with"].scores["judge_score"] == 1.0
    assert "judge_score" not in by_id["without"].scores and "judge_score" not in by_id["nothing-asked"].scores
    assert not any(row.errors for row in result.rows)  # not judged, rather than an error on every row
    assert server.count == 1
    # a template that needs no reference judges the row without one; a row with no question is not judged
    result = context_bench.evaluate(
        None,
        {"mixed": rows},
        RunConfig(
            output=Output(progress=False), plugins={"judge_url": server.url, "judge_template": "likert_5"}
        ),
        host=_host(),
    )
    scored = {row.example_id for row in result.rows if "judge_score" in row.scores}
    assert scored == {"with", "without"} and not any(row.errors for row in result.rows)


def test_a_judge_named_with_evaluator_is_the_one_auto_wiring_would_build(judge_server) -> None:
    server = judge_server(_grader)
    rows = [{"id": "1", "question": "Capital of France?", "answer": "Paris", "response": "Paris"}]
    result = context_bench.evaluate(
        None,
        {"qa": rows},
        RunConfig(
            scope=Scope(add_evaluators=["LLMJudge"]),
            output=Output(progress=False),
            plugins={"judge_url": server.url, "judge_template": "binary_qa"},
        ),
        host=_host(),
    )
    assert result.rows[0].scores["judge_score"] == 1.0
    assert server.count == 1  # one judge, not two


def test_judge_dataset_limits_every_judge_to_those_data_sets(judge_server) -> None:
    server = judge_server(_grader)
    memory_row = {
        "id": "m",
        "context": "A: I live in Paris.",
        "question": "Where?",
        "answer": "Paris",
        "response": "Paris",
    }
    qa_row = {"id": "q", "question": "Capital of France?", "answer": "Paris", "response": "Paris"}
    result = context_bench.evaluate(
        None,
        {"locomo": [memory_row], "qa": [qa_row], "other": [qa_row]},
        RunConfig(output=Output(progress=False), plugins={"judge_url": server.url, "judge_dataset": ["QA"]}),
        host=_host(),
    )
    fields = {row.dataset: set(row.scores) for row in result.rows}
    assert "judge_score" in fields["qa"]
    assert not {"judge_score", "memory_judge", "false_memory"} & (fields["locomo"] | fields["other"])
    assert server.count == 1


def test_judge_dataset_on_the_command_line(judge_server, tmp_path) -> None:
    server = judge_server(_grader)
    for name in ("qa", "other"):
        (tmp_path / f"{name}.jsonl").write_text(
            json.dumps({"id": "1", "question": "Capital?", "answer": "Paris", "response": "Paris"}) + "\n"
        )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "context_bench",
            "score",
            str(tmp_path / "qa.jsonl"),
            str(tmp_path / "other.jsonl"),
            "--judge-url",
            server.url,
            "--judge-dataset",
            "qa",
            "--output",
            "json",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    judged = {row["dataset"] for row in json.loads(done.stdout)["rows"] if "judge_score" in row["scores"]}
    assert judged == {"qa"}


def test_a_failed_false_memory_call_is_never_a_clean_score(judge_server) -> None:
    server = judge_server(lambda body: Reply(status=500))
    row = {"id": "1", "context": "A: hi", "question": "q", "answer": "a", "response": "a"}
    result = FalseMemoryRate(server.url, max_retries=0).score(row, row)
    assert result == {} and result.failure.startswith("call_error")  # not false_memory 0.0, the best score
    rows = [{**row, "id": str(i)} for i in range(3)]
    summary = context_bench.evaluate(
        None,
        rows,
        RunConfig(
            scope=Scope(evaluators=[FalseMemoryRate(server.url, max_retries=0)]),
            output=Output(progress=False),
        ),
    ).summary
    assert "false_memory" not in summary.groups[0].scores
    assert summary.failures["false_memory_rate"].count == summary.failures["false_memory_rate"].rows == 3


def test_a_refused_key_names_its_variable_and_is_not_retried(judge_server, monkeypatch) -> None:
    server = judge_server(lambda body: Reply("invalid api key", status=401))
    row = {"question": "Where?", "answer": "Paris", "response": "Paris"}
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-judge-0123456789")
    result = MemoryJudge(server.url, api_key_env="MY_JUDGE_KEY", retry_base_delay=0.01).score(row, row)
    assert "the endpoint refused the key (from $MY_JUDGE_KEY)" in result.failure
    assert server.count == 1
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-0123456789")
    result = MemoryJudge(server.url, retry_base_delay=0.01).score(row, row)
    assert "the endpoint refused the key (from $OPENAI_API_KEY)" in result.failure
    monkeypatch.delenv("OPENAI_API_KEY")
    result = MemoryJudge(server.url, retry_base_delay=0.01).score(row, row)
    assert "none was sent" in result.failure and server.count == 3


def test_a_judge_that_failed_on_every_row_fails_the_command(judge_server, tmp_path) -> None:
    server = judge_server(lambda body: Reply("model not found", status=404))
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({**MC_ROW, "id": str(i)}) + "\n" for i in range(3)))
    command = [sys.executable, "-m", "context_bench", "score", str(data), "--output", "json", "--no-progress"]
    done = subprocess.run([*command, "--judge-url", server.url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 4, done.stderr  # the report is written, but the run did not pass
    assert "evaluator judge_score failed on 3 of the 3 rows it scored (100.0%" in done.stderr
    assert json.loads(done.stdout)["summary"]["failures"]["judge_score"]["rate"] == 1.0
    working = judge_server(lambda body: "RATING: 5")  # the same run with a working judge passes
    done = subprocess.run([*command, "--judge-url", working.url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
