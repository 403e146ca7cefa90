"""``run``'s systems: each per-system flag binds to the --proxy it follows; ambiguity is an error."""

from __future__ import annotations

import json
import sys

import pytest

from context_bench.cli import main
from context_bench.cli._system_flags import SystemSettings, bind_systems
from context_bench.errors import UsageError
from context_bench.testing import FakeServer, last_user_message


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps({"id": "1", "question": "capital of France", "answer": "Paris"}) + "\n")
    return str(path)


@pytest.fixture
def server():
    with FakeServer(lambda body: "Paris" if "France" in last_user_message(body) else "?") as running:
        yield running


def _run(capsys, server, data, *flags):
    code, out, err = run_cli(capsys, "run", *flags, "--dataset", data, "--output", "json", "--no-progress")
    return code, out, err


def _bodies(server):
    """Each request body by the model it named."""
    return {body["model"]: body for body in server.requests}


def test_two_models_through_one_proxy_each_send_their_own(capsys, server, data):
    """Issue 12 #1: the last --model no longer wins for every system."""
    code, out, _ = _run(
        capsys,
        server,
        data,
        "--proxy",
        server.url,
        "--name",
        "a",
        "--model",
        "tiny",
        "--temperature",
        "0.5",
        "--proxy",
        server.url,
        "--name",
        "b",
        "--model",
        "fixed",
        "--temperature",
        "0",
    )
    assert code == 0
    bodies = _bodies(server)
    assert sorted(bodies) == ["fixed", "tiny"]
    assert bodies["tiny"]["temperature"] == 0.5 and bodies["fixed"]["temperature"] == 0
    rows = {row["system"]: row for row in json.loads(out)["rows"]}
    assert sorted(rows) == ["a", "b"]


def test_every_per_system_setting_reaches_its_own_system(capsys, server, data):
    code, _, _ = _run(
        capsys,
        server,
        data,
        "--proxy",
        server.url,
        "--model",
        "one",
        "--system-prompt",
        "Be brief.",
        "--extra-body",
        '{"top_p": 0.5}',
        "--max-tokens",
        "7",
        "--timeout",
        "30",
        "--max-retries",
        "0",
        "--proxy",
        server.url,
        "--model",
        "two",
        "--system-prompt",
        "Be long.",
        "--extra-body",
        "{}",
        "--max-tokens",
        "9",
        "--timeout",
        "20",
        "--max-retries",
        "1",
    )
    assert code == 0
    one, two = _bodies(server)["one"], _bodies(server)["two"]
    assert one["messages"][0] == {"role": "system", "content": "Be brief."} and one["top_p"] == 0.5
    assert two["messages"][0] == {"role": "system", "content": "Be long."} and "top_p" not in two
    assert (one["max_tokens"], two["max_tokens"]) == (7, 9)
    assert "temperature" not in one and "temperature" not in two


def test_unset_temperature_and_max_tokens_are_not_sent(capsys, server, data):
    """Issue 12 #11: some reasoning models refuse them, so a field the user did not set is omitted."""
    assert _run(capsys, server, data, "--proxy", server.url)[0] == 0
    (body,) = server.requests
    assert body["model"] == "gpt-4o-mini"
    assert "temperature" not in body and "max_tokens" not in body


def test_a_setting_before_the_first_proxy_is_every_systems_default(capsys, server, data):
    code, out, _ = _run(
        capsys,
        server,
        data,
        "--model",
        "shared",
        "--proxy",
        server.url,
        "--proxy",
        server.url,
        "--model",
        "own",
    )
    assert code == 0
    assert sorted(body["model"] for body in server.requests) == ["own", "shared"]
    assert sorted(row["system"] for row in json.loads(out)["rows"]) == ["proxy1", "proxy2"]


def test_names_after_every_proxy_name_them_in_order():
    """The reading earlier releases documented: as many names as proxies, after the last --proxy."""
    flags = [("url", "http://a"), ("url", "http://b"), ("name", "first"), ("name", "second")]
    assert [s.name for s in bind_systems(flags)] == ["first", "second"]


def test_binding_reads_the_flags_in_order():
    systems = bind_systems(
        [("model", "m"), ("url", "http://a"), ("name", "x"), ("url", "http://b"), ("api_key_env", "B_KEY")]
    )
    assert systems == [
        SystemSettings(url="http://a", name="x", model="m"),
        SystemSettings(url="http://b", name="proxy2", model="m", api_key_env="B_KEY"),
    ]
    (only,) = bind_systems([("name", "solo"), ("model", "m"), ("url", "http://a")])
    assert (only.name, only.model) == ("solo", "m")


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--proxy", "{u}", "--model", "a", "--model", "b"], "--model is given twice for --proxy"),
        (["--model", "a", "--model", "b", "--proxy", "{u}"], "--model is given twice for the first --proxy"),
        (["--proxy", "{u}", "--model", "a", "--proxy", "{u}"], "--model is given for some systems but not"),
        (["--proxy", "{u}", "--timeout", "5", "--proxy", "{u}"], "--timeout is given for some systems"),
        (["--model", "a", "--proxy", "{u}", "--model", "b", "--proxy", "{u}"], "--model reads two ways"),
        (["--name", "a", "--proxy", "{u}", "--name", "b", "--proxy", "{u}"], "--name reads two ways"),
        (["--name", "a", "--proxy", "{u}", "--proxy", "{u}"], "comes before the first of several --proxy"),
        (["--proxy", "{u}", "--proxy", "{u}", "--name", "a", "--name", "b", "--name", "c"], "3 --name flags"),
        (["--proxy", "{u}", "--name", "x", "--proxy", "{u}", "--name", "x"], "two systems are named 'x'"),
        (["--proxy", "{u}", "--name", "proxy2", "--proxy", "{u}"], "two systems are named 'proxy2'"),
        (["--proxy", "{u}", "--extra-body", "[1]"], "must be a JSON object"),
        (["--proxy", "{u}", "--extra-body", '{"model": "x"}'], "may not set model"),
        (["--proxy", "{u}", "--temperature", "hot"], "--temperature: must be a number"),
        (["--proxy", "{u}", "--max-retries", "-1"], "--max-retries: must be a whole number"),
        (["--proxy", "http://127.0.0.1:99999"], "not a usable http(s) URL"),
    ],
)
def test_a_command_line_that_cannot_be_read_one_way_is_refused(capsys, server, data, flags, message):
    """Issue 12 #1 and issue 13 #8, #9: one line, exit 2, no request made."""
    code, out, err = _run(capsys, server, data, *[f.replace("{u}", server.url) for f in flags])
    assert code == 2 and out == "" and server.requests == []
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_each_system_sends_the_key_its_own_variable_holds(capsys, server, data, monkeypatch):
    """Issue 12 #6: --api-key-env after a --proxy; a system naming none then sends no key at all."""
    monkeypatch.setenv("A_KEY", "sk-aaaaaaaaaaaaaaaa")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-should-not-travel")
    code, out, err = _run(
        capsys,
        server,
        data,
        "--proxy",
        server.url,
        "--model",
        "a",
        "--api-key-env",
        "A_KEY",
        "--proxy",
        server.url,
        "--model",
        "b",
    )
    assert code == 0
    sent = {seen.body["model"]: seen.headers.get("authorization") for seen in server.seen}
    assert sent == {"a": "Bearer sk-aaaaaaaaaaaaaaaa", "b": None}
    assert "sk-" not in out + err


def test_without_any_key_variable_openai_api_key_is_sent(capsys, server, data, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-key")
    assert _run(capsys, server, data, "--proxy", server.url)[0] == 0
    assert server.seen[0].headers.get("authorization") == "Bearer sk-default-key"


@pytest.mark.parametrize(
    "variable, shown, hidden",
    [
        ("CB_TEST_UNSET_KEY", "--api-key-env CB_TEST_UNSET_KEY names a variable that is not set", None),
        ("sk-live-SECRET0123456789", "may be the key itself", "SECRET"),
        ("skliveSECRET0123456789", "its name is not shown", "SECRET"),
    ],
)
def test_a_missing_key_variable_is_one_line_that_never_shows_a_key(
    capsys, server, data, monkeypatch, variable, shown, hidden
):
    monkeypatch.delenv(variable, raising=False)
    code, _, err = _run(capsys, server, data, "--proxy", server.url, "--api-key-env", variable)
    assert code == 2 and shown in err and len(err.strip().splitlines()) == 1
    assert hidden is None or hidden not in err
    assert server.requests == []


def test_errors_do_not_repeat_the_program_name(capsys):
    """Issue 12 #10: `context-bench: error: context-bench: ...` said its name twice."""
    code, _, err = run_cli(capsys, "score", "--bogus-flag")
    assert code == 2 and err.count("context-bench") == 1
    assert err.startswith("context-bench: error: unrecognized arguments: --bogus-flag")
    code, _, err = run_cli(capsys, "--bogus")
    assert code == 2 and err.count("context-bench") == 1


def test_help_documents_the_per_system_flags(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    for flag in ("--api-key-env", "--extra-body", "--max-retries", "OPENAI_API_KEY", "docs/endpoints.md"):
        assert flag in out
    assert "each data set" in out  # -n counts per data set, however many files it spans


def test_a_run_file_lists_each_system_in_full(capsys, server, data, tmp_path, monkeypatch):
    """--config: every system stated in full, so a setting for one system only is no ambiguity."""
    monkeypatch.setenv("B_KEY", "sk-bbbbbbbbbbbbbbbb")
    config = tmp_path / "run.json"
    config.write_text(
        json.dumps(
            {
                "systems": [
                    {"proxy": server.url, "name": "a", "model": "tiny", "temperature": 0, "max_tokens": 5},
                    {"proxy": server.url, "name": "b", "model": "fixed", "api_key_env": "B_KEY"},
                ]
            }
        )
    )
    code, out, _ = _run(capsys, server, data, "--config", str(config))
    assert code == 0 and sorted(row["system"] for row in json.loads(out)["rows"]) == ["a", "b"]
    sent = {seen.body["model"]: seen for seen in server.seen}
    assert sent["tiny"].body["temperature"] == 0 and sent["tiny"].body["max_tokens"] == 5
    assert "temperature" not in sent["fixed"].body
    assert sent["tiny"].headers.get("authorization") is None
    assert sent["fixed"].headers.get("authorization") == "Bearer sk-bbbbbbbbbbbbbbbb"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is in Python 3.11+")
def test_a_run_file_may_be_toml(capsys, server, data, tmp_path):
    config = tmp_path / "run.toml"
    config.write_text(
        f'[[systems]]\nproxy = "{server.url}"\nmodel = "m1"\n\n[[systems]]\nproxy = "{server.url}"\n'
    )
    code, out, _ = _run(capsys, server, data, "--config", str(config))
    assert code == 0 and sorted(b["model"] for b in server.requests) == ["gpt-4o-mini", "m1"]
    assert sorted(row["system"] for row in json.loads(out)["rows"]) == ["proxy1", "proxy2"]


@pytest.mark.parametrize(
    "content, extra, message",
    [
        ({"systems": [{"proxy": "{u}", "api_key": "sk-SECRETVALUE123"}]}, [], "unknown setting 'api_key'"),
        ({"systems": [{"proxy": "{u}", "name": "x"}, {"proxy": "{u}", "name": "x"}]}, [], "named 'x'"),
        ({"systems": [{"proxy": "{u}", "temperature": "hot"}]}, [], "temperature must be a number"),
        ({"systems": [{"proxy": "{u}", "max_tokens": 1.5}]}, [], "max_tokens must be a whole number"),
        ({"systems": [{"model": "m"}]}, [], 'needs "url": URL (an endpoint) or "command"'),
        ({"systems": []}, [], 'expected {"systems"'),
        ({"systems": [{"proxy": "{u}"}]}, ["--model", "m"], "give --model in the run file"),
        ({"systems": [{"proxy": "{u}"}]}, ["--proxy", "{u}"], "give --proxy in the run file"),
    ],
)
def test_a_run_file_that_cannot_be_read_one_way_is_refused(
    capsys, server, data, tmp_path, content, extra, message
):
    config = tmp_path / "run.json"
    config.write_text(json.dumps(content).replace("{u}", server.url))
    argv = ["--config", str(config), *[flag.replace("{u}", server.url) for flag in extra]]
    code, _, err = _run(capsys, server, data, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert "SECRETVALUE" not in err and server.requests == []


def test_without_proxy_or_config_there_is_no_system(capsys, data):
    code, _, err = run_cli(capsys, "run", "--dataset", data)
    assert code == 2 and "give at least one --proxy URL (or a run file with --config FILE)" in err


def _documented_runs():
    """Every `context-bench run` command of README.md and docs/endpoints.md, as argv."""
    import re
    import shlex
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for doc in ("README.md", "docs/endpoints.md"):
        for block in re.findall(r"```sh\n(.*?)```", (root / doc).read_text(), re.S):
            for command in block.replace("\\\n", " ").splitlines():
                if command.startswith("context-bench run "):
                    yield doc, shlex.split(command, comments=True)[1:]


@pytest.mark.parametrize("doc, argv", list(_documented_runs()))
def test_every_documented_run_command_reads_one_way(doc, argv):
    from context_bench.cli import build_parser
    from context_bench.cli._run_file import resolve_run
    from context_bench.plugins import get_host

    systems = resolve_run(build_parser(get_host()).parse_args(argv)).systems
    assert len({system.name for system in systems}) == len(systems)


def test_the_documented_run_file_reads(tmp_path):
    import re
    from pathlib import Path

    from context_bench.cli._run_file import systems_from_file

    text = (Path(__file__).resolve().parents[2] / "docs" / "endpoints.md").read_text()
    (block,) = re.findall(r"```json\n(.*?)```", text, re.S)
    (tmp_path / "run.json").write_text(block)
    systems = systems_from_file(str(tmp_path / "run.json"))
    assert [(s.name, s.model, s.api_key_env) for s in systems] == [
        ("small", "tiny", None),
        ("large", "fixed", "LITELLM_KEY"),
    ]
    assert systems[1].extra_body == {"top_p": 0.9}


@pytest.mark.parametrize(
    "change",
    [
        {"max_tokens": 500},
        {"temperature": 0.7},
        {"system_prompt": "Be brief."},
        {"extra_body": {"top_p": 0.5}},
        {"model": "other"},
    ],
)
def test_every_setting_that_changes_answers_names_its_cache_entries(change):
    """A re-run with another --max-tokens must not reuse answers cut at the old limit."""
    from context_bench.identity import identity
    from context_bench.systems import OpenAIProxy

    base = {"max_tokens": 5, "temperature": 0.0}
    assert identity(OpenAIProxy("http://127.0.0.1:9", **base)) != identity(
        OpenAIProxy("http://127.0.0.1:9", **{**base, **change})
    )
    keyed = OpenAIProxy("http://127.0.0.1:9", api_key="sk-secret-value-123", **base)
    assert identity(keyed) == identity(OpenAIProxy("http://127.0.0.1:9", **base))


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999", "http://[::1"])
def test_an_unusable_endpoint_url_is_one_line_for_any_command(url):
    """Issue 13 #9: `--relay http://127.0.0.1:99999` (cbench-memory) went through check_reachable too."""
    from context_bench.cli import check_reachable

    with pytest.raises(UsageError, match="--relay .*not"):
        check_reachable(url, "--relay")
