"""A report is untrusted input (issue 24): `--rerun report.json` and `--config report.json` print the
run the report records (programs, endpoints and the key variables sent to them, files, options,
output) and run it only with --yes or a "y" typed at a terminal; the report's own output path is
never used; a hand-written run file stays trusted but its `out` never names the run file or an input."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from context_bench.testing import FakeServer

SECRET = "aws-secret-0123456789abcdefXYZ"
OPENAI = "sk-openai-0123456789abcdefXYZ"


@pytest.fixture(autouse=True)
def keys(workdir, write_rows, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_rows([{"id": "1", "question": "capital of France", "answer": "Paris"}])


@pytest.fixture
def endpoints():
    with FakeServer(lambda body: "Paris") as system, FakeServer(lambda body: "5") as judge:
        yield system, judge


def crafted(workdir, system, judge, key_env="AWS_SECRET_ACCESS_KEY"):
    """A report written to act on whoever reruns it."""
    config = {
        "systems": [
            {"url": system.url, "name": "remote", **({"api_key_env": key_env} if key_env else {})},
            {"command": f"sh -c 'touch {workdir / 'marker'}; echo Paris'", "name": "local"},
        ],
        "datasets": [{"path": "qa.jsonl"}],
        "options": {"judge_url": judge.url},
        "output": {"format": "json", "out": str(workdir / "profile.sh")},
    }
    report = {"summary": {}, "metadata": {"config": config}, "rows": []}
    (workdir / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return workdir / "report.json"


def expected_plan(workdir, system, judge, key="the key in $AWS_SECRET_ACCESS_KEY", judge_key=None):
    program = f"sh -c 'touch {workdir / 'marker'}; echo Paris'"
    judge_key = judge_key or "no key ($OPENAI_API_KEY is not set)"
    return [
        "context-bench: report.json is a report: the run it records would",
        f"  send each row to {system.url} (system remote, model gpt-4o-mini) with {key}",
        f'  run the program "{program}" on this machine, once per row (system local)',
        "  read the file qa.jsonl (its rows go to every system)",
        f"  set judge_url = '{judge.url}': an endpoint; unless a key variable is named for it, it gets "
        + judge_key,
        f"  write its report to stdout; the report's own output path, '{workdir / 'profile.sh'}', "
        "is not used",
    ]


@pytest.mark.parametrize("flag", ["--rerun", "--config"])
def test_without_yes_a_report_is_shown_and_nothing_runs(cbench, workdir, endpoints, flag):
    system, judge = endpoints
    crafted(workdir, system, judge)
    code, out, err = cbench("run", flag, "report.json")
    lines = err.splitlines()
    assert code == 2 and out == "" and lines[:-1] == expected_plan(workdir, system, judge)
    assert lines[-1] == (
        f"context-bench: error: {flag} report.json: not run: a report's run runs only with --yes (or a 'y' "
        "typed at a terminal), once its plan above is what you want"
    )
    assert not (workdir / "marker").exists() and not (workdir / "profile.sh").exists()
    assert system.requests == [] and judge.requests == []
    assert SECRET not in err


@pytest.mark.parametrize("flag", ["--rerun", "--config"])
def test_with_yes_it_runs_as_shown_and_the_report_goes_to_stdout(cbench, workdir, endpoints, flag):
    system, judge = endpoints
    crafted(workdir, system, judge)
    code, out, err = cbench("run", flag, "report.json", "--yes", "--max-failure-rate", "1")
    assert code == 0, err
    assert err.splitlines()[:6] == expected_plan(workdir, system, judge)
    assert (workdir / "marker").exists()  # the program ran: the user said so
    assert {seen.headers["authorization"] for seen in system.seen} == {f"Bearer {SECRET}"}  # as shown
    assert judge.requests and all("authorization" not in seen.headers for seen in judge.seen)
    assert not (workdir / "profile.sh").exists()
    assert {row["system"] for row in json.loads(out)["rows"]} == {"remote", "local"}


def test_with_no_key_variable_named_the_plan_names_openai_api_key(cbench, workdir, endpoints, monkeypatch):
    system, judge = endpoints
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    crafted(workdir, system, judge, key_env=None)
    code, _, err = cbench("run", "--rerun", "report.json", "--yes", "--max-failure-rate", "1")
    assert code == 0, err
    shown = "the key in $OPENAI_API_KEY"
    assert err.splitlines()[:6] == expected_plan(workdir, system, judge, key=shown, judge_key=shown)
    assert {seen.headers["authorization"] for seen in system.seen + judge.seen} == {f"Bearer {OPENAI}"}
    assert OPENAI not in err


def _first_report(cbench, workdir, system):
    argv = ["run", "--proxy", system.url, "--dataset", "qa.jsonl", "--output", "json", "--out", "report.json"]
    assert cbench(*argv)[0] == 0
    return (workdir / "report.json").read_bytes()


def test_rerun_never_overwrites_the_report_it_reads(cbench, workdir, endpoints):
    system, _ = endpoints
    first = _first_report(cbench, workdir, system)
    assert json.loads(first)["metadata"]["config"]["output"]["out"] == "report.json"  # it names itself
    code, out, err = cbench("run", "--rerun", "report.json", "--yes")
    assert code == 0, err
    assert (workdir / "report.json").read_bytes() == first and json.loads(out)["rows"]
    code, _, err = cbench("run", "--rerun", "report.json", "--yes", "--out", "report.json")
    assert code == 2 and "--out report.json is an input file of this command" in err
    assert (workdir / "report.json").read_bytes() == first


def test_a_terminal_answer_runs_it_or_not(workdir, endpoints):
    system, judge = endpoints
    crafted(workdir, system, judge)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for answer, status in ((b"n\n", 2), (b"y\n", 0)):
        controller, terminal = pty.openpty()
        os.write(controller, answer)
        done = subprocess.run(
            [sys.executable, "-m", "context_bench", "run", "--rerun", "report.json", "--no-progress",
             "--max-failure-rate", "1"],
            stdin=terminal, capture_output=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        os.close(terminal)
        os.close(controller)
        assert done.returncode == status, done.stderr
        assert b"run it? [y/N]" in done.stderr
        assert (workdir / "marker").exists() == (status == 0)


def test_piped_input_is_no_answer(workdir, endpoints):
    system, judge = endpoints
    crafted(workdir, system, judge)
    done = subprocess.run(
        [sys.executable, "-m", "context_bench", "run", "--rerun", "report.json", "--no-progress"],
        input=b"y\n", capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and b"run it?" not in done.stderr and not (workdir / "marker").exists()


def test_a_report_cannot_answer_for_the_user(cbench, workdir, endpoints):
    system, judge = endpoints
    report = crafted(workdir, system, judge)
    data = json.loads(report.read_text(encoding="utf-8"))
    data["metadata"]["config"]["options"]["yes"] = True
    report.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = cbench("run", "--config", "report.json", "--yes")
    assert code == 2 and "report.json: unknown key 'options.yes'" in err
    code, _, err = cbench("run", "--config", "report.json", "--rerun", "report.json")
    assert code == 2 and "give --config FILE or --rerun REPORT, not both" in err


@pytest.mark.parametrize("out", ["run.toml", "qa.jsonl", "prices.toml"])
def test_a_run_files_out_never_names_the_run_file_or_an_input(cbench, workdir, endpoints, out):
    system, _ = endpoints
    (workdir / "prices.toml").write_text("[m]\ninput = 1\noutput = 2\n", encoding="utf-8")
    text = (
        f'[[systems]]\nurl = "{system.url}"\n\n[[datasets]]\npath = "qa.jsonl"\n\n'
        f'[options]\nprices = "prices.toml"\n\n[output]\nformat = "json"\nout = "{out}"\n'
    )
    (workdir / "run.toml").write_text(text, encoding="utf-8")
    before = {name: (workdir / name).read_bytes() for name in ("run.toml", "qa.jsonl", "prices.toml")}
    code, _, err = cbench("run", "--config", "run.toml")
    assert code == 2 and f"--out {out} is an input file of this command" in err
    assert {name: (workdir / name).read_bytes() for name in before} == before and system.requests == []


def test_a_hand_written_run_file_stays_trusted(cbench, workdir):
    (workdir / "run.toml").write_text(
        f"[[systems]]\ncommand = \"sh -c 'touch {workdir / 'marker'}; echo Paris'\"\n\n"
        '[[datasets]]\npath = "qa.jsonl"\n\n[output]\nformat = "json"\nout = "mine.json"\n',
        encoding="utf-8",
    )
    code, _, err = cbench("run", "--config", "run.toml")
    assert code == 0 and "is a report" not in err and (workdir / "marker").exists()
    assert json.loads((workdir / "mine.json").read_text(encoding="utf-8"))["rows"][0]["response"] == "Paris"


def test_the_documented_plan_is_what_a_report_gets(monkeypatch):
    """docs/ci.md's plan, line for line, from the run it describes."""
    import re
    from pathlib import Path

    from context_bench.cli._report_plan import plan

    text = (Path(__file__).parents[2] / "docs" / "ci.md").read_text(encoding="utf-8")
    (shown,) = re.findall(r"```text\n(.*?)```", text, re.S)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    config = {
        "systems": [
            {"url": "http://10.0.0.5:4000", "name": "candidate", "api_key_env": "LITELLM_KEY"},
            {"command": "./agent.sh --fast", "name": "agent"},
        ],
        "datasets": [{"path": "evals/qa.jsonl"}],
        "options": {"judge_url": "http://10.0.0.5:8080"},
    }
    lines = ["context-bench: report.json is a report: the run it records would"]
    lines += [f"  {line}" for line in plan(config, "report.json", None, "report.json")]
    assert shown.splitlines() == lines
