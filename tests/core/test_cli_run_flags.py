"""The run flags for what the runner offers (``--call-timeout``, ``--max-row-bytes``) and the run
metadata every command's report carries (issue 12 #16): the command line as given, the systems."""

from __future__ import annotations

import json
import time

import pytest

from context_bench.cli import RunOptions, build_parser, main
from context_bench.cli._run_options import DEFAULT_CALL_TIMEOUT
from context_bench.datasets import MAX_ROW_BYTES
from context_bench.testing import FakeServer, isolated_host


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def qa(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps({"id": "1", "question": "Capital of France?", "answer": "Paris"}) + "\n")
    return path


# -- metadata ----------------------------------------------------------------------------------


def test_run_reports_its_command_line_and_systems_without_secrets(capsys, qa, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-live-abcdefghijklmnop")
    with FakeServer(lambda body: "Paris") as server:
        url = server.url.replace("http://", "http://user:hunter2pw@")
        argv = ["--proxy", url, "--name", "mine", "--model", "tiny", "--api-key-env", "MY_KEY"]
        argv += ["--dataset", str(qa), "--output", "json", "--no-progress"]
        code, out, err = cli(capsys, *argv)
    assert code == 0, err
    metadata = json.loads(out)["metadata"]
    shown = url.replace("hunter2pw", "***")
    assert metadata["command"] == (
        f"context-bench --proxy {shown} --name mine --model tiny --api-key-env MY_KEY "
        f"--dataset {qa} --output json --no-progress"
    )
    (system,) = metadata["systems"]
    assert system["name"] == "mine" and system["model"] == "tiny" and system["type"] == "OpenAIProxy"
    assert system["endpoint"].startswith(shown)
    assert "hunter2pw" not in out and "abcdefghijklmnop" not in out


def test_score_reports_the_command_line_given_to_main(capsys, tmp_path):
    data = tmp_path / "responses.jsonl"
    data.write_text(json.dumps({"id": "1", "answer": "Paris", "response": "Paris", "system": "a"}) + "\n")
    code, out, err = cli(capsys, "score", str(data), "--output", "json", "--no-progress")
    assert code == 0, err
    metadata = json.loads(out)["metadata"]
    assert metadata["command"] == f"context-bench score {data} --output json --no-progress"
    assert metadata["systems"] == [{"name": "a", "type": "Precomputed"}]


# -- --call-timeout ------------------------------------------------------------------------------


def test_call_timeout_defaults_to_600_seconds_and_reaches_evaluate():
    host = isolated_host()
    args = build_parser(host).parse_args(["score"])
    options = RunOptions.from_args(args, host)
    assert options.config.limits.local_call_timeout == DEFAULT_CALL_TIMEOUT == 600
    assert "default 600" in build_parser(host)._subparsers._group_actions[0].choices["run"].format_help()
    args = build_parser(host).parse_args(["score", "--call-timeout", "2.5"])
    assert RunOptions.from_args(args, host).config.limits.local_call_timeout == 2.5


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_call_timeout_of_zero_or_less_is_a_usage_error(capsys, value):
    code, _, err = cli(capsys, "score", f"--call-timeout={value}")
    assert code == 2 and err.strip() == (
        "context-bench: error: score: argument --call-timeout: must be a number of seconds above 0, "
        f"at most 86,400 (got {value!r})"
    )


def test_a_call_past_the_deadline_is_a_row_error(capsys, qa):
    with FakeServer(lambda body: "Paris", latency=5.0) as server:
        started = time.monotonic()
        code, out, err = cli(
            capsys,
            *("run", "--proxy", server.url, "--dataset", str(qa), "--call-timeout", "0.3"),
            *("--output", "json", "--no-progress"),
        )
        took = time.monotonic() - started
    (row,) = json.loads(out)["rows"]
    assert code == 1 and took < 4
    assert row["errors"][0]["type"] == "DeadlineExceeded" and "0.3 s" in row["errors"][0]["message"]


# -- --max-row-bytes -----------------------------------------------------------------------------


def test_max_row_bytes_caps_a_row_of_score_and_run(capsys, tmp_path):
    data = tmp_path / "responses.jsonl"
    small = {"id": "1", "question": "Capital?", "answer": "Paris", "response": "Paris"}
    big = {"id": "2", "question": "Capital?", "answer": "Paris", "response": "Paris " * 100}
    data.write_text(json.dumps(small) + "\n" + json.dumps(big) + "\n")
    limited = ("--max-row-bytes", "200", "--output", "json", "--no-progress")
    code, out, err = cli(capsys, "score", str(data), *limited)
    first, second = json.loads(out)["rows"]
    assert code == 4 and "could not answer 1 of 2 rows" in err, err  # over --max-failure-rate
    assert not first["errors"] and "longer than 200 bytes" in second["errors"][0]["message"]
    code, out, _ = cli(capsys, "score", str(data), "--output", "json", "--no-progress")
    assert code == 0 and not any(row["errors"] for row in json.loads(out)["rows"])  # the default: 10 MiB
    assert MAX_ROW_BYTES == 10 * 2**20
    with FakeServer(lambda body: "Paris") as server:
        code, out, _ = cli(
            capsys,
            *("run", "--proxy", server.url, "--dataset", str(data), *limited),
        )
    first, second = json.loads(out)["rows"]
    assert not first["errors"] and "longer than 200 bytes" in second["errors"][0]["message"]


def test_max_row_bytes_below_one_is_a_usage_error(capsys):
    code, _, err = cli(capsys, "score", "--max-row-bytes", "0")
    assert code == 2 and err.strip() == (
        "context-bench: error: score: argument --max-row-bytes: must be a whole number of bytes "
        "from 1 to 1,073,741,824 (got '0')"
    )
