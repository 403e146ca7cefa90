"""Keys and passwords never reach an error, a report or the judge cache, whatever field they were put in."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import context_bench
from cbench_judge import JudgeConfigError, JudgeEvaluator, MemoryJudge
from cbench_judge.wiring import build_memory_judge
from context_bench import Output, RunConfig, Scope

SECRET = "sk-live-SECRET0123456789abcdef"
ROW = {"id": "1", "question": "Where?", "answer": "Paris", "response": "Paris"}


def _files(directory) -> list[bytes]:
    return [p.read_bytes() for p in directory.rglob("*") if p.is_file()]


def test_a_key_given_as_the_key_variable_is_never_echoed(judge_server) -> None:
    url = judge_server().url
    with pytest.raises(context_bench.UsageError) as raised:
        build_memory_judge({"judge_url": url, "judge_api_key_env": SECRET})
    assert SECRET not in str(raised.value) and "SECRET" not in str(raised.value)
    assert "looks like a key" in str(raised.value)
    with pytest.raises(JudgeConfigError) as raised:
        MemoryJudge(url, api_key_env="sk-live-SECRET")
    assert "sk-live" not in str(raised.value)


def test_the_cli_never_prints_a_key_given_as_the_key_variable(judge_server, tmp_path) -> None:
    url = judge_server().url
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    command = [sys.executable, "-m", "context_bench", "score", str(data), "--judge-url", url]
    done = subprocess.run(
        [*command, "--judge-api-key-env", "sk-live-SECRET", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "sk-live-SECRET" not in done.stdout + done.stderr
    assert "looks like a key" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("field", ["api_key", "api_key_env", "url", "concurrency", "top_p"])
def test_a_key_in_any_field_of_a_judge_config_stays_out_of_its_error(judge_server, field) -> None:
    config = {
        "url": judge_server().url,
        "model": "m",
        field: SECRET,
    }  # a key as a name, a bad URL, a bad type
    with pytest.raises(JudgeConfigError) as raised:
        JudgeEvaluator(config)
    assert SECRET not in str(raised.value) and "SECRET0123" not in str(raised.value)


def test_a_numeric_key_given_as_nemos_api_key_stays_out_of_the_error(judge_server) -> None:
    with pytest.raises(JudgeConfigError) as raised:
        JudgeEvaluator({"url": judge_server().url, "model": "m", "api_key": 1234567890123})
    assert "1234567890123" not in str(raised.value)


def test_a_judge_that_echoes_the_key_in_a_200_answer_stores_no_key(judge_server, tmp_path) -> None:
    server = judge_server(lambda body: f"Your key {SECRET} works; Bearer {SECRET[:20]}.\nVERDICT: YES")
    judge = MemoryJudge(server.url, api_key=SECRET, cache_dir=tmp_path)
    assert judge.score(ROW, ROW) == {"memory_judge": 1.0, "memory_judge_raw": 1.0}
    stored = _files(tmp_path)
    assert stored and all(SECRET.encode() not in blob and SECRET[:20].encode() not in blob for blob in stored)
    assert all(SECRET[4:12].encode() not in blob for blob in stored)  # not even a run of 8 of it


def test_an_unreadable_answer_echoing_the_key_stays_out_of_the_failure(judge_server) -> None:
    server = judge_server(lambda body: f"I cannot decide. {SECRET}")
    result = MemoryJudge(server.url, api_key=SECRET, max_retries=0).score(ROW, ROW)
    assert result.failure.startswith("parse_error") and SECRET not in result.failure


def test_a_password_in_the_judge_url_reaches_no_report_and_no_cache(judge_server, tmp_path) -> None:
    server = judge_server(lambda body: "VERDICT: YES")
    host_port = server.url.split("://", 1)[1]
    url = f"http://judge:hunter2-password@{host_port}"
    judge = MemoryJudge(url, cache_dir=tmp_path / "judge")
    result = context_bench.evaluate(
        None,
        [ROW],
        RunConfig(scope=Scope(evaluators=[judge]), output=Output(progress=False, cache_dir=tmp_path / "run")),
    )
    assert result.rows[0].scores["memory_judge"] == 1.0
    assert "hunter2" not in result.to_json() and "hunter2" not in repr(judge) + str(vars(judge))
    assert judge.url == f"http://judge:***@{host_port}"
    stored = _files(tmp_path)
    assert stored and all(b"hunter2" not in blob for blob in stored)
    template_judge = JudgeEvaluator({"url": url, "model": "m"}, cache_dir=tmp_path / "template")
    public = {k: v for k, v in vars(template_judge).items() if not k.startswith("_")}  # what identities read
    assert "hunter2" not in str(public) + repr(template_judge)
    with pytest.raises(JudgeConfigError) as raised:
        JudgeEvaluator({"url": f"ftp://judge:hunter2-password@{host_port}", "model": "m"})
    assert "hunter2" not in str(raised.value)


def test_the_cli_refuses_a_dead_judge_url_without_its_password(tmp_path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "context_bench",
            "score",
            str(data),
            "--judge-url",
            "http://u:hunter2@127.0.0.1:9",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "hunter2" not in done.stderr
    assert "--judge-url" in done.stderr and "unreachable" in done.stderr


def _runs(text: str) -> list[str]:
    """The runs of 8 characters of SECRET that ``text`` still holds."""
    return [SECRET[i : i + 8] for i in range(len(SECRET) - 7) if SECRET[i : i + 8] in text]


@pytest.mark.parametrize("judge", ["MemoryJudge", "FalseMemoryRate", "LLMJudge"])
@pytest.mark.parametrize("given", [SECRET, "skliveSECRET0123456789", "f3a9b2c4d5e6f7a8b9c0d1e2f3a4b5c6"])
def test_no_judge_config_error_shows_a_key_given_as_its_variable(judge_server, judge, given) -> None:
    import cbench_judge

    with pytest.raises(JudgeConfigError) as raised:
        getattr(cbench_judge, judge)(judge_server().url, api_key_env=given)
    message = str(raised.value)
    assert message.startswith(f"{judge}: api_key_env looks like a key") and given not in message
    with pytest.raises(JudgeConfigError) as raised:
        JudgeEvaluator({"url": judge_server().url, "model": "m", "api_key": given})
    assert given not in str(raised.value) and "SECRET" not in str(raised.value)


def test_an_unset_judge_key_variable_is_named_in_the_one_wording(judge_server, monkeypatch) -> None:
    monkeypatch.delenv("CB_UNSET_JUDGE_KEY", raising=False)
    with pytest.raises(
        JudgeConfigError, match="^MemoryJudge: api_key_env CB_UNSET_JUDGE_KEY names a variable"
    ):
        MemoryJudge(judge_server().url, api_key_env="CB_UNSET_JUDGE_KEY")
    with pytest.raises(context_bench.UsageError, match="^--judge-api-key-env CB_UNSET_JUDGE_KEY names a"):
        build_memory_judge({"judge_url": judge_server().url, "judge_api_key_env": "CB_UNSET_JUDGE_KEY"})


@pytest.mark.parametrize("command", ["score", "run", "memory"])
def test_no_usage_error_of_judge_api_key_env_shows_a_key(judge_server, tmp_path, capsys, command) -> None:
    from context_bench.cli import main

    if command == "memory":
        pytest.importorskip("cbench_memory")
    url = judge_server().url
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    argv = {
        "score": ["score", str(data)],
        "run": ["run", "--proxy", url, "--dataset", str(data)],
        "memory": ["memory", "--dataset", str(data)],
    }[command]
    code = main([*argv, "--judge-url", url, "--judge-api-key-env", SECRET, "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--judge-api-key-env looks like a key" in err and not _runs(err)


def test_a_password_echoed_bare_by_the_judge_reaches_no_cache(judge_server, tmp_path) -> None:
    server = judge_server(lambda body: "hunter2-password, I remember. VERDICT: YES")
    url = server.url.replace("http://", "http://judge:hunter2-password@")
    judge = MemoryJudge(url, cache_dir=tmp_path)
    assert judge.score(ROW, ROW)["memory_judge"] == 1.0
    stored = _files(tmp_path)
    assert stored and all(b"hunter2" not in blob for blob in stored)


def test_masking() -> None:
    """The judges mask through the core's rules (context_bench.secrets), the key-prefix shapes included."""
    from context_bench.secrets import key_shaped, mask, redact

    assert mask(f"a {SECRET} b", SECRET) == "a *** b"
    assert mask(f"cut: {SECRET[:14]}", SECRET) == "cut: ***"
    assert redact("http://u:p@h:1/v1") == "http://u:***@h:1/v1"
    for shape in (
        "sk-abcdefgh",
        "pk_live_abcdef",
        "ghp_abcdefgh",
        "xoxb-123456",
        "AIzaSyAbcdef",
        "hf_abcdefgh",
    ):
        assert key_shaped(shape), shape


def test_an_answer_is_masked_of_the_secrets_only_not_scrubbed_as_free_text(judge_server, tmp_path) -> None:
    """ "bearer" followed by the verdict is a word of the answer, not a token to hide."""
    server = judge_server(lambda body: f"The ring bearer VERDICT: YES ({SECRET})")
    assert MemoryJudge(server.url, api_key=SECRET, cache_dir=tmp_path).score(ROW, ROW)["memory_judge"] == 1.0
    (stored,) = _files(tmp_path)
    assert b"The ring bearer VERDICT: YES (***)" in stored
