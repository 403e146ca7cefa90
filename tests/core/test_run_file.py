"""Run files (issue 16): `run --config run.toml` states a whole run, the command line overrides it,
and a JSON report repeats its run (`--config report.json`, `--rerun report.json`)."""

from __future__ import annotations

import json

import pytest

from context_bench import PLUGIN_API_VERSION, DatasetSpec, hookimpl
from context_bench.cli import main
from context_bench.metadata import scrub_config
from context_bench.testing import FakeServer, Reply, last_user_message

KEY = "sk-runfile-0123456789abcdefXYZ"


def answer(body):
    return "Paris" if "France" in last_user_message(body) else "Rome"


@pytest.fixture
def server():
    with FakeServer(answer) as running:
        yield running


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RUN_KEY", KEY)
    rows = [
        {"id": "1", "question": "capital of France", "answer": "Paris"},
        {"id": "2", "question": "capital of Italy", "answer": "Rome"},
        {"id": "3", "question": "capital of Spain", "answer": "Madrid"},
    ]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return tmp_path


def run(capsys, *argv):
    code = main([*argv, "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def comparable(report):
    """A report without what differs between two runs of one configuration: the date, the command
    line, and how long calls took."""
    if isinstance(report, dict):
        return {
            k: comparable(v) for k, v in report.items() if "latency" not in k and k not in ("date", "command")
        }
    if isinstance(report, list):
        return [comparable(v) for v in report]
    return report


RUN_TOML = """\
[[systems]]
url = "{url}"
name = "candidate"
model = "m1"
api_key_env = "RUN_KEY"
system_prompt = "Be brief."
extra_body = {{top_p = 0.5}}
temperature = 0

[[systems]]
url = "{url}"
name = "baseline"
model = "m0"
api_key_env = "RUN_KEY"
system_prompt = "Be brief."
extra_body = {{top_p = 0.5}}
temperature = 0

[[datasets]]
path = "qa.jsonl"
name = "capitals"

[evaluators]
add = ["MultipleChoiceAccuracy"]
remove = ["MultipleChoiceAccuracy"]

[options]
max_examples = 2
max_concurrency = 2
math_timeout = 5

[output]
format = "json"
out = "{out}"

[gates]
fail_under = {{f1 = 0.5}}
baseline = "baseline"
fail_if_worse = ["f1=0.1"]
max_failure_rate = 0.5
"""

FLAGS = [
    "--api-key-env", "RUN_KEY", "--system-prompt", "Be brief.", "--extra-body", "{{\"top_p\": 0.5}}",
    "--temperature", "0",
    "--proxy", "{url}", "--name", "candidate", "--model", "m1",
    "--proxy", "{url}", "--name", "baseline", "--model", "m0",
    "--dataset", "qa.jsonl", "--dataset-name", "capitals",
    "--evaluator", "MultipleChoiceAccuracy", "--no-evaluator", "MultipleChoiceAccuracy",
    "-n", "2", "--max-concurrency", "2", "--math-timeout", "5",
    "--output", "json", "--out", "{out}",
    "--fail-under", "f1=0.5", "--baseline", "baseline", "--fail-if-worse", "f1=0.1",
    "--max-failure-rate", "0.5",
]  # fmt: skip


def test_a_run_file_gives_the_run_and_report_of_the_flags_it_replaces(capsys, server, workdir):
    (workdir / "run.toml").write_text(RUN_TOML.format(url=server.url, out="file.json"), encoding="utf-8")
    code, _, err = run(capsys, "run", "--config", "run.toml")
    assert code == 0, err
    from_file = json.loads((workdir / "file.json").read_text(encoding="utf-8"))
    asked_by_file = sorted(json.dumps(body, sort_keys=True) for body in server.requests)
    before = len(server.requests)
    code, _, err = run(capsys, "run", *[word.format(url=server.url, out="flags.json") for word in FLAGS])
    assert code == 0, err
    from_flags = json.loads((workdir / "flags.json").read_text(encoding="utf-8"))
    assert sorted(json.dumps(body, sort_keys=True) for body in server.requests[before:]) == asked_by_file
    for report in (from_file, from_flags):
        report["metadata"]["config"]["output"].pop("out")
    assert comparable(from_file) == comparable(from_flags)
    body = server.requests[0]
    assert body["top_p"] == 0.5 and body["temperature"] == 0 and body["messages"][0]["content"] == "Be brief."
    assert len(from_file["rows"]) == 4  # -n 2 of each of two systems


def test_a_report_repeats_its_run(capsys, server, workdir):
    (workdir / "run.toml").write_text(RUN_TOML.format(url=server.url, out="first.json"), encoding="utf-8")
    assert run(capsys, "run", "--config", "run.toml")[0] == 0
    first = json.loads((workdir / "first.json").read_text(encoding="utf-8"))
    for flag, out in (("--rerun", "second.json"), ("--config", "third.json")):
        code, _, err = run(capsys, "run", flag, "first.json", "--out", out, "--yes")
        assert code == 0, err
        assert "first.json is a report: the run it records would" in err
        again = json.loads((workdir / out).read_text(encoding="utf-8"))
        assert comparable(again["rows"]) == comparable(first["rows"])
        assert comparable(again["summary"]) == comparable(first["summary"])
        again["metadata"]["config"]["output"].pop("out")
        assert again["metadata"]["config"] == {**first["metadata"]["config"], "output": {"format": "json"}}


def test_the_recorded_configuration_holds_no_secret(capsys, server, workdir, monkeypatch):
    url = server.url.replace("http://", "http://user:hunter2pass@")
    code, _, err = run(
        capsys, "run", "--proxy", url, "--api-key-env", "RUN_KEY", "--system-prompt", f"key {KEY}",
        "--dataset", "qa.jsonl", "--output", "json", "--out", "r.json",
    )  # fmt: skip
    assert code == 0, err
    text = (workdir / "r.json").read_text(encoding="utf-8")
    assert KEY not in text and "hunter2pass" not in text
    (system,) = json.loads(text)["metadata"]["config"]["systems"]
    assert system["api_key_env"] == "RUN_KEY" and system["url"].startswith("http://user:***@")


def test_scrub_config_keeps_names_and_drops_keys():
    config = {
        "systems": [
            {"url": "http://u:pw@h/v1?api_key=abc", "api_key_env": "MY_KEY", "api_key": "x"},
            {"command": "agent --api-key abc --token=def --model meta-llama/Meta-Llama-3.1-8B-Instruct"},
        ],
        "options": {"judge_api_key_env": KEY, "judge_model": "meta-llama/Meta-Llama-3.1-70B-Instruct"},
        "datasets": [{"name": "qa", "path": "a/b.jsonl"}],
        "extra": ["a0b1c2d3e4f5a6b7c8d9e0f1", "plain words"],
    }
    assert scrub_config(config) == {
        "systems": [
            {"url": "http://u:***@h/v1?api_key=***", "api_key_env": "MY_KEY"},
            {"command": "agent --api-key *** --token=*** --model meta-llama/Meta-Llama-3.1-8B-Instruct"},
        ],
        "options": {"judge_model": "meta-llama/Meta-Llama-3.1-70B-Instruct"},
        "datasets": [{"name": "qa", "path": "a/b.jsonl"}],
        "extra": ["plain words"],
    }


def test_flags_on_the_command_line_override_the_file(capsys, server, workdir):
    (workdir / "run.toml").write_text(
        f'[[systems]]\nurl = "{server.url}"\n\n[[datasets]]\npath = "qa.jsonl"\nmax_examples = 3\n\n'
        '[output]\nformat = "json"\n\n[gates]\nfail_under = ["f1=0.99", "contains=0.99"]\n',
        encoding="utf-8",
    )
    code, out, err = run(capsys, "run", "--config", "run.toml")
    assert code == 3 and "f1=0.99" in err and "contains=0.99" in err  # Spain's capital is not Rome
    assert len(json.loads(out)["rows"]) == 3
    # a repeatable flag replaces the file's whole list; -n replaces each data set's own limit
    code, out, err = run(
        capsys, "run", "--config", "run.toml", "--output", "table", "--fail-under", "f1=0.5", "-n", "1"
    )
    assert code == 0, err
    assert "Key figures" in out and "0.99" not in err and len(server.requests) == 4


def test_a_file_without_systems_takes_them_from_the_command_line(capsys, server, workdir):
    (workdir / "run.json").write_text(json.dumps({"datasets": [{"path": "qa.jsonl"}]}), encoding="utf-8")
    code, out, err = run(
        capsys, "run", "--config", "run.json", "--proxy", server.url, "--model", "x", "--output", "json"
    )
    assert code == 0, err
    assert {body["model"] for body in server.requests} == {"x"} and len(json.loads(out)["rows"]) == 3


def test_a_command_system_in_a_run_file(capsys, workdir):
    (workdir / "run.toml").write_text(
        '[[systems]]\ncommand = "python3 -c \'print(\\"Paris\\")\'"\nname = "echo"\ntimeout = 30\n\n'
        '[[datasets]]\npath = "qa.jsonl"\n\n[output]\nformat = "json"\n',
        encoding="utf-8",
    )
    code, out, err = run(capsys, "run", "--config", "run.toml")
    assert code == 0, err
    report = json.loads(out)
    assert {row["response"] for row in report["rows"]} == {"Paris"}
    (system,) = report["metadata"]["config"]["systems"]
    assert system == {"command": "python3 -c 'print(\"Paris\")'", "name": "echo", "timeout": 30.0}


@pytest.mark.parametrize(
    "text, message",
    [
        ("[sytems]\nx = 1\n", "unknown key 'sytems'"),
        ('[gates]\nfail_below = ["f1=0.5"]\n', "unknown key 'gates.fail_below'"),
        ('[evaluators]\nonly = ["x"]\n', "unknown key 'evaluators.only'"),
        ('[output]\nhtml = "r.html"\n', "unknown key 'output.html'"),
        ('[options]\njudge_key = "sk-SECRETVALUE1234567"\n', "unknown key 'options.judge_key'"),
        ('[[datasets]]\npath = "qa.jsonl"\nlimit = 3\n', "data set 1: unknown key 'limit'"),
        ('[[systems]]\nurl = "{u}"\napi_key = "sk-SECRETVALUE1234567"\n', "unknown setting 'api_key'"),
        (
            '[options]\nmax_concurrency = "many"\n',
            "options.max_concurrency: must be a whole number of rows in flight from 1 to 10,000",
        ),
        ('[output]\nformat = "pdf"\n', "output.format: invalid choice: 'pdf'"),
        ("[gates]\nmax_failure_rate = [1]\n", "gates.max_failure_rate takes one value"),
        ('[evaluators]\nautowire = "no"\n', "evaluators.autowire must be true or false"),
        ('[[datasets]]\npath = "qa.jsonl"\nsplit = "test"\n', "config and split choose"),
        ('[[datasets]]\nname = "qa"\nmax_examples = 0\n', "max_examples must be a whole number"),
        ("[[systems]\n", "invalid TOML"),
    ],
)
def test_a_key_the_shape_does_not_know_is_one_line_naming_it_and_the_file(
    capsys, server, workdir, text, message
):
    (workdir / "run.toml").write_text(text.replace("{u}", server.url), encoding="utf-8")
    code, _, err = run(capsys, "run", "--config", "run.toml", "--proxy", server.url, "--dataset", "qa.jsonl")
    assert code == 2 and message in err and "run.toml" in err, err
    assert len(err.strip().splitlines()) == 1 and "SECRETVALUE" not in err
    assert server.requests == []


def test_a_run_needs_a_data_set_from_the_file_or_the_command_line(capsys, server, workdir):
    code, _, err = run(capsys, "run", "--proxy", server.url)
    assert code == 2 and "give at least one --dataset" in err


def test_a_report_written_without_a_configuration_is_refused(capsys, server, workdir):
    (workdir / "old.json").write_text(
        json.dumps({"summary": {}, "metadata": {}, "rows": []}), encoding="utf-8"
    )
    code, _, err = run(capsys, "run", "--rerun", "old.json")
    assert code == 2 and "records no run configuration" in err


def test_a_failing_run_from_a_file_still_gates(capsys, workdir):
    with FakeServer(lambda body: Reply("down", status=500)) as down:
        (workdir / "run.toml").write_text(
            f'[[systems]]\nurl = "{down.url}"\nmax_retries = 0\n\n[[datasets]]\npath = "qa.jsonl"\n',
            encoding="utf-8",
        )
        code, _, err = run(capsys, "run", "--config", "run.toml")
    assert code == 1, err  # every row errored


CAPITALS = {
    ("europe", "test"): [{"id": "fr", "question": "capital of France", "answer": "Paris"}],
    ("europe", "dev"): [
        {"id": "it", "question": "capital of Italy", "answer": "Rome"},
        {"id": "fr2", "question": "capital of France again", "answer": "Paris"},
    ],
}


def capitals(config=None, split=None):
    """A registered data set with parts: what a run file's config and split choose among."""
    return list(CAPITALS[(config or "europe", split or "test")])


class Capitals:
    CBENCH_PLUGIN_API = PLUGIN_API_VERSION

    @hookimpl
    def cbench_register_datasets(self, register):
        register(DatasetSpec("capitals", f"{__name__}:capitals"))


def test_a_registered_data_sets_config_split_and_limit_reach_its_loader(capsys, server, workdir, monkeypatch):
    from context_bench.cli import _app as app
    from context_bench.plugins import PluginHost

    def host_with_capitals(argv):
        host = PluginHost()
        host.register(Capitals(), "capitals-test")
        return host

    monkeypatch.setattr(app, "_host_for", host_with_capitals)
    (workdir / "run.toml").write_text(
        f'[[systems]]\nurl = "{server.url}"\n\n'
        '[[datasets]]\nname = "capitals"\nconfig = "europe"\nsplit = "dev"\nmax_examples = 1\n\n'
        '[output]\nformat = "json"\n',
        encoding="utf-8",
    )
    code, out, err = run(capsys, "run", "--config", "run.toml")
    assert code == 0, err
    report = json.loads(out)
    assert [row["example_id"] for row in report["rows"]] == ["it"]
    assert report["metadata"]["config"]["datasets"] == [
        {"name": "capitals", "config": "europe", "split": "dev", "max_examples": 1}
    ]
