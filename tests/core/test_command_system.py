"""``run --command 'CMD ...'``: a local program per row, prompt on stdin, stdout the response."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from context_bench import Output, RunConfig, evaluate
from context_bench.cli import main
from context_bench.command_system import CommandError, CommandSystem, prompt_text
from context_bench.testing import FakeServer, last_user_message

PY = shlex.quote(sys.executable)
#: Answers "Paris" when the prompt names France, else echoes the prompt upper-cased.
ANSWER = f"""{PY} -c 'import sys; t = sys.stdin.read(); print("Paris" if "France" in t else t.upper())'"""


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "qa.jsonl"
    rows = [
        {"id": "1", "question": "capital of France", "answer": "Paris"},
        {"id": "2", "question": "capital of Italy", "answer": "Rome"},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def _run(capsys, data, *flags):
    return run_cli(capsys, "run", *flags, "--dataset", data, "--output", "json", "--no-progress")


def test_the_prompt_goes_to_stdin_and_stdout_is_the_response(capsys, data):
    code, out, _ = _run(capsys, data, "--command", ANSWER)
    report = json.loads(out)
    assert code == 0
    rows = {row["example_id"]: row for row in report["rows"]}
    assert rows["1"]["response"] == "Paris" and rows["1"]["system"] == "command"
    assert rows["2"]["response"] == "CAPITAL OF ITALY"
    assert rows["1"]["scores"]["exact_match"] == 1.0 and rows["2"]["scores"]["exact_match"] == 0.0


def test_a_non_zero_exit_status_is_the_rows_error_with_the_end_of_stderr(capsys, data):
    failing = f"""{PY} -c 'import sys; sys.stderr.write("x" * 2000 + "model not loaded"); sys.exit(3)'"""
    code, out, _ = _run(capsys, data, "--command", failing)
    rows = json.loads(out)["rows"]
    assert code == 1  # every row errored
    message = rows[0]["errors"][0]["message"]
    assert "exited with status 3" in message and message.endswith("model not loaded")
    assert len(message) < 700  # the tail, not the whole stream


def test_a_timeout_is_the_rows_error_and_ends_the_program(capsys, data):
    slow = f"{PY} -c 'import time; time.sleep(30)'"
    started = time.monotonic()
    code, out, _ = _run(capsys, data, "--command", slow, "--timeout", "0.5")
    assert time.monotonic() - started < 20
    rows = json.loads(out)["rows"]
    assert code == 1 and all("ran past its timeout of 0.5 s" in row["errors"][0]["message"] for row in rows)


def test_a_far_timeout_is_waited_for_not_an_error():
    assert CommandSystem("cat", timeout=1e308).process({"question": "q"}) == {"response": "q"}


def test_a_shell_runs_only_when_the_command_names_one(tmp_path):
    literal = CommandSystem([sys.executable, "-c", "import sys; print(sys.argv[1:])", "a|b", "$HOME"])
    assert literal.process({"question": "q"})["response"] == "['a|b', '$HOME']"
    piped = CommandSystem("sh -c 'tr a-z A-Z | rev'")
    assert piped.process({"question": "abc"})["response"] == "CBA"


def test_flags_bind_to_their_command_and_systems_mix_with_proxies(capsys, data):
    with FakeServer(lambda body: "Rome" if "Italy" in last_user_message(body) else "?") as server:
        echo = f"{PY} -c 'import sys; print(sys.stdin.read())'"
        code, out, _ = _run(
            capsys,
            data,
            "--system-prompt",
            "Be brief.",
            "--proxy",
            server.url,
            "--name",
            "endpoint",
            "--model",
            "m",
            "--command",
            echo,
            "--name",
            "echo",
        )
    rows = json.loads(out)["rows"]
    assert code == 0
    echoed = {row["example_id"]: row["response"] for row in rows if row["system"] == "echo"}
    assert echoed["1"] == "system: Be brief.\n\nuser: capital of France"
    assert sorted({row["system"] for row in rows}) == ["echo", "endpoint"]
    assert all(body["model"] == "m" for body in server.requests)
    assert all(body["messages"][0] == {"role": "system", "content": "Be brief."} for body in server.requests)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--command", "sh", "--model", "m"], "--model does not apply to --command sh"),
        (["--model", "m", "--command", "sh"], "--model does not apply to --command"),
        (["--command", "no-such-program-xyz"], "program not found or not executable: no-such-program-xyz"),
        (["--command", " "], "--command may not be empty"),
        (["--command", "sh", "--command", "sh"], None),  # named command1, command2: fine
        (["--command", "sh", "--name", "a", "--command", "sh", "--name", "a"], "two systems are named 'a'"),
    ],
)
def test_command_usage_errors(capsys, data, flags, message):
    if message is None:
        code, out, _ = _run(capsys, data, *[f if f != "sh" else "sh -c 'cat'" for f in flags])
        assert code == 0 and sorted({r["system"] for r in json.loads(out)["rows"]}) == [
            "command1",
            "command2",
        ]
        return
    code, _, err = _run(capsys, data, *flags)
    assert code == 2 and message in err, err


def test_a_default_before_the_first_system_applies_to_the_proxies_alone(capsys, data):
    with FakeServer(lambda body: "Paris") as server:
        code, out, _ = _run(capsys, data, "--model", "m", "--proxy", server.url, "--command", ANSWER)
    assert code == 0 and {body["model"] for body in server.requests} == {"m"}
    assert sorted({row["system"] for row in json.loads(out)["rows"]}) == ["command2", "proxy1"]


def test_a_run_file_does_not_mix_with_command(capsys, data, tmp_path):
    config = tmp_path / "run.json"
    config.write_text(json.dumps({"systems": [{"proxy": "http://127.0.0.1:9"}]}))
    code, _, err = _run(capsys, data, "--config", str(config), "--command", ANSWER)
    assert code == 2 and "--command does not mix with it" in err


def test_the_help_names_the_command_and_what_it_takes(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--command CMD" in out and "--max-concurrency N, --max-workers N" in out
    assert "earlier releases" in out


def test_max_workers_is_max_concurrency(capsys, data):
    code, out, _ = _run(capsys, data, "--command", ANSWER, "--max-workers", "1")
    assert code == 0 and len(json.loads(out)["rows"]) == 2
    code, _, err = _run(capsys, data, "--command", ANSWER, "--max-workers", "0")
    assert code == 2 and "must be a whole number of rows in flight from 1 to 10,000" in err


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_the_api_caches_by_command_program_directory_and_prompt_and_runs_in_evaluate(tmp_path):
    system = CommandSystem(ANSWER, name="cli-agent", system_prompt="Answer.")
    assert system.config() == {
        "command": shlex.split(ANSWER),
        "program": [sys.executable, _sha256(sys.executable)],
        "cwd": os.getcwd(),
        "system_prompt": "Answer.",
    }
    agent = tmp_path / "agent.py"
    agent.write_text("print('hi')\n")
    scripted = CommandSystem(
        ["python3", "-u", "agent.py", "--api-key", "sk-live-0123456789"], cwd=str(tmp_path)
    )
    assert scripted.config() == {
        "command": ["python3", "-u", "agent.py", "--api-key", "***"],
        "program": [shutil.which("python3"), _sha256(shutil.which("python3"))],
        "cwd": str(tmp_path),
        "script": [str(agent), _sha256(agent)],
    }
    result = evaluate(
        system,
        [{"id": "1", "question": "capital of Italy", "answer": "Rome"}],
        RunConfig(output=Output(progress=False)),
    )
    assert result.rows[0].response == "SYSTEM: ANSWER.\n\nUSER: CAPITAL OF ITALY"
    with pytest.raises(CommandError, match="exited with status 1"):
        CommandSystem([sys.executable, "-c", "raise SystemExit(1)"]).process({"question": "q"})


def test_the_same_words_are_another_system_in_another_directory_or_once_the_program_changed(
    capsys, tmp_path, monkeypatch
):
    """A command's cache entries are its program's: ./agent.sh of another directory, or edited,
    answers afresh."""
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    cache = str(tmp_path / "cache")
    for folder, answer in (("one", "first"), ("two", "second"), ("two", "edited")):
        (tmp_path / folder).mkdir(exist_ok=True)
        script = tmp_path / folder / "agent.sh"
        script.write_text(f"#!/bin/sh\necho {answer}\n")
        script.chmod(0o755)
        monkeypatch.chdir(tmp_path / folder)
        code, out, err = _run(capsys, str(data), "--command", "./agent.sh", "--cache-dir", cache)
        assert code == 0, err
        assert [row["response"] for row in json.loads(out)["rows"]] == [answer]
    (tmp_path / "agent.py").write_text("print('from the script')\n")
    monkeypatch.chdir(tmp_path)
    for answer in ("from the script", "edited script"):
        code, out, err = _run(capsys, str(data), "--command", f"{PY} agent.py", "--cache-dir", cache)
        assert [row["response"] for row in json.loads(out)["rows"]] == [answer]
        (tmp_path / "agent.py").write_text("print('edited script')\n")


def test_max_output_bytes_belongs_to_commands(capsys, data, tmp_path):
    code, out, _ = _run(capsys, data, "--command", ANSWER, "--max-output-bytes", "5")
    rows = json.loads(out)["rows"]
    assert code == 1 and all("printed more than 5 bytes" in row["errors"][0]["message"] for row in rows)
    with FakeServer(lambda body: "Paris") as server:  # a default before both: the command's alone
        code, out, _ = _run(
            capsys, data, "--max-output-bytes", "5", "--proxy", server.url, "--command", ANSWER
        )
    by_system = {(row["system"], row["example_id"]): row for row in json.loads(out)["rows"]}
    assert by_system["proxy1", "1"]["response"] == "Paris" and by_system["command2", "1"]["errors"]
    run_file = tmp_path / "run.json"
    for entry, message in (
        ({"command": ANSWER, "max_output_bytes": 5}, None),
        (
            {"url": "http://127.0.0.1:9", "max_output_bytes": 5},
            "max_output_bytes does not apply to an endpoint",
        ),
        (
            {"command": ANSWER, "max_output_bytes": 1e308},
            "must be a whole number of bytes from 1 to 1,073,741,824",
        ),
    ):
        run_file.write_text(json.dumps({"systems": [entry]}))
        code, out, err = _run(capsys, data, "--config", str(run_file))
        if message is None:
            assert (
                code == 1
                and "printed more than 5 bytes" in json.loads(out)["rows"][0]["errors"][0]["message"]
            )
        else:
            assert code == 2 and message in err, err
    for flags, message in (
        (
            ["--proxy", "http://127.0.0.1:9", "--max-output-bytes", "5"],
            "--max-output-bytes does not apply to --proxy http://127.0.0.1:9",
        ),
        (
            ["--max-output-bytes", "5", "--proxy", "http://127.0.0.1:9"],
            "--max-output-bytes does not apply to --proxy",
        ),
        (
            ["--command", ANSWER, "--max-output-bytes", "1e308"],
            "must be a whole number of bytes from 1 to 1,073,741,824 (got '1e308')",
        ),
        (
            ["--command", ANSWER, "--max-output-bytes", "0"],
            "must be a whole number of bytes from 1 to 1,073,741,824 (got '0')",
        ),
    ):
        code, _, err = _run(capsys, data, *flags)
        assert code == 2 and message in err, err


def test_prompt_text_is_the_one_turn_or_role_labelled_turns():
    assert prompt_text({"question": "q", "context": "c"}) == "c\n\nq"
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert prompt_text({"messages": messages}) == "user: hi\n\nassistant: yo"


def test_top_level_names_resolve_lazily():
    import context_bench

    assert context_bench.CommandSystem is CommandSystem
    from context_bench.systems import OpenAIProxy

    assert context_bench.OpenAIProxy is OpenAIProxy
    assert {"OpenAIProxy", "CommandSystem", "assert_scores"} <= set(context_bench.__all__)


def test_a_conversation_runs_the_program_once_per_turn_with_the_conversation_so_far():
    system = CommandSystem(ANSWER, system_prompt="Be brief.")
    (row,) = evaluate(
        system, [{"id": "1", "turns": ["hi", "capital of France?"]}], RunConfig(output=Output(progress=False))
    ).rows
    first = "SYSTEM: BE BRIEF.\n\nUSER: HI"
    assert row.meta["output"]["replies"] == [first]
    assert row.response == "Paris"  # the second prompt holds the first answer and the second turn
    assert CommandSystem(ANSWER).process({"turns": ["one"]}) == {"response": "ONE", "replies": []}


def test_claude_cli_runs_claude_p_with_its_flags(tmp_path, monkeypatch):
    """Earlier releases' ClaudeCLI: `claude -p` per row, its settings as claude's own flags."""
    fake = tmp_path / "claude"
    fake.write_text(
        f"#!{sys.executable}\nimport sys\nprint(' '.join(sys.argv[1:]) + ' | ' + sys.stdin.read())\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    from context_bench import ClaudeCLI

    system = ClaudeCLI(model="sonnet", system_prompt="Be brief.", allowed_tools="Read", max_turns=2)
    assert system.name == "claude" and system.timeout == 120.0
    assert system.process({"question": "q", "context": "c"})["response"] == (
        "-p --model sonnet --system-prompt Be brief. --allowedTools Read --max-turns 2 | c\n\nq"
    )
    custom = ClaudeCLI(build_prompt=lambda example: f"Q: {example['question']}")
    assert custom.process({"question": "q"})["response"] == "-p | Q: q"
    assert custom.config()["build_prompt"].endswith("<lambda>")
