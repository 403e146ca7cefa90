"""context_bench.secrets: one set of rules keeps keys and passwords out of every text the project writes."""

from __future__ import annotations

import json
import sys

import pytest

from context_bench.cli import main
from context_bench.secrets import (
    check_key_variable,
    key_shaped,
    looks_like_key,
    mask,
    redact,
    redact_command,
    scrub_config,
    secret_name,
    url_password,
)
from context_bench.testing import FakeServer, Reply

SECRET = "sk-live-SECRET0123456789abcdef"


def _runs(text: str, secret: str = SECRET) -> list[str]:
    """The runs of 8 characters of ``secret`` that ``text`` still holds."""
    return [secret[i : i + 8] for i in range(len(secret) - 7) if secret[i : i + 8] in text]


def test_masking() -> None:
    assert mask(f"a {SECRET} b", SECRET) == "a *** b"
    assert mask(f"cut: {SECRET[:14]}", SECRET) == "cut: ***"
    assert mask("short sk-12 run", "sk-12345678") == "short sk-12 run"
    assert redact("http://u:p@h:1/v1") == "http://u:***@h:1/v1"
    assert redact("http://h:1") == "http://h:1"


def test_overlapping_runs_of_several_secrets_become_one_mask() -> None:
    password = "hunter2-password"
    text = f"[{SECRET[:12]}{password[3:]}] and {SECRET[-9:]}"
    assert mask(text, SECRET, password) == "[***] and ***"
    assert mask(text, None, "") == text and mask("", SECRET) == ""


def test_free_text_loses_what_reads_as_a_secret() -> None:
    assert redact("see https://u:p@ss@h.example/x?q=1") == "see https://u:***@h.example/x?q=1"
    assert redact("GET /v1?api_key=abc123&access_token=xyz&max_tokens=5") == (
        "GET /v1?api_key=***&access_token=***&max_tokens=5"
    )
    assert redact("Authorization: Bearer abc.def") == "Authorization: Bearer ***"
    assert redact("keys sk-proj-abcdef12 and ghp_abcdefgh1 and AIzaSyAbcdef") == (
        "keys sk-*** and ghp_*** and AIza***"
    )
    assert redact("max_tokens=5, sk-12, HF_TOKEN") == "max_tokens=5, sk-12, HF_TOKEN"


def test_names_that_hold_secrets() -> None:
    for name in ("api_key", "--judge-token", "password", "passwd", "Authorization", "auth", "credentials"):
        assert secret_name(name), name
    for name in ("max_tokens", "--max-tokens", "max_new_tokens", "model", "author", "url"):
        assert not secret_name(name), name


@pytest.mark.parametrize(
    "value",
    [
        SECRET,
        "sk_live_0123456789",
        "Bearer abc",
        "hf_abcdefghijklmnop",
        "skliveSECRET0123456789",  # mixed case and digits, no prefix
        "f3a9b2c4d5e6f7a8b9c0d1e2f3a4b5c6",  # a hex key (Azure's shape)
    ],
)
def test_key_shaped_values(value) -> None:
    assert key_shaped(value) and looks_like_key(value)


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "HF_TOKEN", "SK_LIVE_KEY", "my_judge_key", "GH_PAT"])
def test_variable_names_are_not_keys(name) -> None:
    assert not looks_like_key(name)


def test_a_key_variable_is_checked_in_one_wording(monkeypatch) -> None:
    monkeypatch.delenv("CB_UNSET_KEY", raising=False)
    monkeypatch.setenv("CB_SET_KEY", "value")
    assert check_key_variable(" CB_SET_KEY ", "--flag") == "CB_SET_KEY"
    with pytest.raises(ValueError, match="^--flag CB_UNSET_KEY names a variable that is not set$"):
        check_key_variable("CB_UNSET_KEY", "--flag")
    for given in (SECRET, "skliveSECRET0123456789", "x" * 65, 1234567890123, "a b"):
        monkeypatch.setenv("skliveSECRET0123456789", "set, and still refused")
        with pytest.raises(ValueError) as raised:
            check_key_variable(given, "--flag")
        message = str(raised.value)
        assert message.startswith("--flag looks like a key") and "its name is not shown" in message
        assert str(given) not in message and "SECRET" not in message
    with pytest.raises(ValueError, match="^--flag is empty"):
        check_key_variable("  ", "--flag")


def test_url_password() -> None:
    assert url_password("http://u:hunter2@h/") == "hunter2"
    assert url_password("http://h/") is None and url_password("http://[::1") is None


def test_a_command_line_keeps_its_shape_without_secrets() -> None:
    argv = ["run", "--api-key", SECRET, "--max-tokens", "5", "--api-key-env", "MY_KEY", "--author", "me"]
    argv += ["--judge-api-key-env", "skliveSECRET0123456789", f"--token={SECRET}", "--proxy", "http://u:pw@h"]
    assert redact_command(argv) == [
        "run",
        "--api-key",
        "***",
        "--max-tokens",
        "5",
        "--api-key-env",
        "MY_KEY",
        "--author",
        "me",
        "--judge-api-key-env",
        "***",
        "--token=***",
        "--proxy",
        "http://u:***@h",
    ]


def test_an_env_flag_holding_no_variables_name_is_masked_key_shaped_or_not() -> None:
    """A ``-env`` flag or setting names a variable: a value that is no variable's name (a password
    with a dash or a dot, a number) may be the secret itself, and is masked even when it is too
    short to look like a key."""
    argv = ["--api-key-env", "hunter2-pass", "--judge-api-key-env=pass.word", "--api-key-env", "MY_KEY"]
    shown = ["--api-key-env", "***", "--judge-api-key-env=***", "--api-key-env", "MY_KEY"]
    assert redact_command(argv) == shown
    config = {"api_key_env": "hunter2-pass", "judge_api_key_env": 12345678, "proxy_api_key_env": "MY_KEY"}
    assert scrub_config(config) == {"proxy_api_key_env": "MY_KEY"}


def test_keys_inside_a_commands_words_are_masked_by_the_same_rules() -> None:
    """A word that is itself a command line (``--command '...'``, ``sh -c '...'``) is masked word by
    word; a JSON word value by value; a header by its name; a key-shaped word wherever it is, but
    as the value of a flag that names a public thing (a model, a file, a data set)."""
    argv = [
        "run",
        "--command",
        "python3 agent.py --api-key sk-live-0123456789 --token=abc -H 'X-Api-Key: abc' --top-k 5",
        "--extra-body",
        '{"user": "a0b1c2d3e4f5a6b7c8d9", "api_token": "short", "n": 2}',
        "--model",
        "meta-llama/Meta-Llama-3.1-8B-Instruct",
        "--dataset",
        "data/Questions2024Final.jsonl",
        "--header=Authorization: Basic dXNlcjpwYXNz",
        "a0b1c2d3e4f5a6b7c8d9",
        "--system-prompt",
        "Be brief.",
    ]
    assert redact_command(argv) == [
        "run",
        "--command",
        "python3 agent.py --api-key *** --token=*** -H 'X-Api-Key: ***' --top-k 5",
        "--extra-body",
        '{"user": "***", "api_token": "***", "n": 2}',
        "--model",
        "meta-llama/Meta-Llama-3.1-8B-Instruct",
        "--dataset",
        "data/Questions2024Final.jsonl",
        "--header=Authorization: ***",
        "***",
        "--system-prompt",
        "Be brief.",
    ]
    after_a_switch = ["--no-progress", "--api-key", "X", "--temperature", "-1", "--token", "--odd"]
    assert redact_command(after_a_switch) == [
        "--no-progress",
        "--api-key",
        "***",
        "--temperature",
        "-1",
        "--token",
        "***",
    ]
    nested = "sh -c 'curl -H \"Authorization: Bearer abc\" --user-token=zz http://h'"
    assert redact_command(["--command", nested]) == [
        "--command",
        "sh -c 'curl -H '\\''Authorization: ***'\\'' --user-token=*** http://h'",
    ]
    unchanged = "sh -c 'tr a-z A-Z | rev'"
    assert redact_command(["--command", unchanged]) == ["--command", unchanged]
    assert redact_command(["--command", "agent --key 'unbalanced"]) == ["--command", "agent --key ***"]


# -- where a key must never arrive ------------------------------------------------------------------


@pytest.mark.parametrize("cut", [0, 170, 290, 8000])
def test_no_error_of_the_client_holds_the_key_or_the_urls_password(cut) -> None:
    """Cut or not, echoed whole, in part or bare (a password without its URL)."""
    from context_bench.client import ChatClient, EndpointError

    said = "x" * cut + f"key {SECRET} / {SECRET[5:17]} / password hunter2-password"
    with FakeServer(lambda body: Reply(said, status=400)) as server:
        url = server.url.replace("http://", "http://me:hunter2-password@")
        with pytest.raises(EndpointError) as raised:
            ChatClient(url, "m", api_key=SECRET).complete([{"role": "user", "content": "hi"}])
    message = str(raised.value)
    assert "HTTP 400" in message and not _runs(message) and "hunter2" not in message


def test_no_answer_of_the_client_holds_the_urls_password() -> None:
    from context_bench.client import ChatClient

    with FakeServer(lambda body: "you sent hunter2-password") as server:
        url = server.url.replace("http://", "http://me:hunter2-password@")
        answer = ChatClient(url, "m").complete([{"role": "user", "content": "hi"}]).content
    assert answer == "you sent ***"


def test_no_report_metadata_holds_a_key(tmp_path, monkeypatch, capsys) -> None:
    """Whatever flag a key was put in, the report's command line and systems do not show it."""
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    monkeypatch.setenv("CB_REPORT_KEY", SECRET)
    with FakeServer(lambda body: f"a {SECRET}") as server:
        url = server.url.replace("http://", "http://me:hunter2-password@")
        out = tmp_path / "report.json"
        argv = [
            "run",
            "--proxy",
            url,
            "--api-key-env",
            "CB_REPORT_KEY",
            "--system-prompt",
            f"Bearer {SECRET}",
        ]
        argv += ["--dataset", str(data), "--output", "json", "--out", str(out), "--no-progress"]
        monkeypatch.setattr(sys, "argv", ["context-bench", *argv])  # the command line the report shows
        assert main(argv) == 0
    report = out.read_text()
    command = json.loads(report)["metadata"]["command"]
    assert "--api-key-env CB_REPORT_KEY" in command and "me:***@" in command and "Bearer ***" in command
    assert not _runs(report) and "hunter2" not in report and '"a ***"' in report
    assert not _runs(capsys.readouterr().err)


#: Keys a command line carries inside its words: flags of the program under test, a header, a bare
#: key, and key-shaped or secret-named values of --extra-body.
WORD_KEYS = (
    "opensesame-1",
    "opensesame-2",
    "dXNlcjpwYXNzd29yZA",
    "a0b1c2d3e4f5a6b7c8d9e0f1a2b3",
    "Zq9XwV8uT7sR6qP5oN4m",
)


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "html"])
def test_no_report_shows_keys_inside_command_words_or_extra_body(tmp_path, capsys, fmt) -> None:
    """`--command '... --api-key X --token=Y'` and `--extra-body` values: masked in the command line
    every report's Run section prints, and in the recorded configuration."""
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    agent = tmp_path / "agent.py"
    agent.write_text("print('a')\n")
    command = (
        f"{sys.executable} {agent} --api-key {SECRET} --token=opensesame-1 --password opensesame-2 "
        "-H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' a0b1c2d3e4f5a6b7c8d9e0f1a2b3 --model "
        "meta-llama/Meta-Llama-3.1-8B-Instruct"
    )
    extra = json.dumps({"user": "Zq9XwV8uT7sR6qP5oN4m", "auth_token": "opensesame-1", "top_p": 0.5})
    out = tmp_path / f"report.{fmt}"
    with FakeServer(lambda body: "a") as server:
        argv = ["run", "--command", command, "--proxy", server.url, "--model", "m", "--extra-body", extra]
        argv += ["--dataset", str(data), "--output", fmt, "--out", str(out), "--no-progress", "--detail"]
        assert main(argv) == 0, capsys.readouterr().err
    report = out.read_text(encoding="utf-8")
    if fmt == "markdown":
        report = report.replace("\\*", "*")  # as it reads
    assert not _runs(report) and not [key for key in WORD_KEYS if key in report]
    assert "--api-key ***" in report and "--token=***" in report and "--password ***" in report
    assert "Authorization: ***" in report and "meta-llama/Meta-Llama-3.1-8B-Instruct" in report
    if fmt == "json":
        metadata = json.loads(report)["metadata"]
        assert (
            "top_p" in metadata["command"] and "--api-key ***" in metadata["config"]["systems"][0]["command"]
        )
        assert metadata["config"]["systems"][1]["extra_body"] == {"top_p": 0.5}


@pytest.mark.parametrize(
    "where, given",
    [("flag", SECRET), ("flag", "skliveSECRET0123456789"), ("file", SECRET), ("file", "CB_UNSET_KEY")],
)
def test_a_usage_error_of_the_key_variable_never_shows_a_key(tmp_path, capsys, monkeypatch, where, given):
    monkeypatch.delenv("CB_UNSET_KEY", raising=False)
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    with FakeServer(lambda body: "a") as server:
        url = server.url.replace("http://", "http://me:hunter2-password@")
        if where == "flag":
            systems = ["--proxy", url, "--api-key-env", given]
        else:
            run_file = tmp_path / "run.json"
            run_file.write_text(json.dumps({"systems": [{"proxy": url, "api_key_env": given}]}))
            systems = ["--config", str(run_file)]
        code = main(["run", *systems, "--dataset", str(data), "--no-progress"])
        assert server.requests == []
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "hunter2" not in err
    assert "SECRET" not in err and not _runs(err)
    option = "--api-key-env" if where == "flag" else "api_key_env"
    if given == "CB_UNSET_KEY":
        assert f"{option} CB_UNSET_KEY names a variable that is not set" in err
    else:
        assert f"{option} looks like a key" in err


def test_a_key_given_to_a_numeric_flag_is_not_echoed(tmp_path, capsys) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    code = main(["run", "--proxy", "http://127.0.0.1:9", "--timeout", SECRET, "--dataset", str(data)])
    err = capsys.readouterr().err
    assert code == 2 and "--timeout" in err and not _runs(err)


def test_a_program_on_disk_is_shown_whatever_its_random_parts_look_like(tmp_path):
    """mktemp's folders (tmp.EJjdzI8hEy) make a path of mixed case and digits over 20 characters,
    key-shaped; a file by its absolute path is no key (.ci/run's venv python was shown as ***)."""
    program = tmp_path / "tmp.EJjdzI8hEy" / "venv" / "bin" / "python"
    program.parent.mkdir(parents=True)
    program.write_text("")
    assert key_shaped(str(program))
    assert redact_command([str(program), "-c", "pass"]) == [str(program), "-c", "pass"]
    gone = str(tmp_path / "tmp.EJjdzI8hEy" / "elsewhere")  # not on disk: it could be anything
    assert redact_command([gone]) == ["***"]
