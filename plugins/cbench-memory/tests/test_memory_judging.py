"""The README's ``memory --relay URL --model tiny``: the judge asks the relay's model, a dead judge is
refused up front, and a judge that failed on every row never reports a good score."""

from __future__ import annotations

import json
import socket

import pytest

from context_bench.cli import main
from context_bench.testing import FakeServer, Reply, last_user_message

pytest.importorskip("cbench_judge", reason="the judges come from cbench-judge")


def _relay_serving(model: str):
    """A relay that serves only ``model`` (as LiteLLM does), answering as a memory model and a judge."""

    def reply(body):
        if body.get("model") != model:
            return Reply(f"Invalid model name passed in model={body.get('model')}", status=400)
        if "VERDICT:" in last_user_message(body):
            return "Checked.\nVERDICT: YES"
        return "Biscuit"

    return FakeServer(reply)


def _memory(capsys, *argv):
    code = main(["memory", *argv, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def _dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_the_judge_asks_the_relays_model(fixtures, capsys) -> None:
    with _relay_serving("tiny") as relay:
        code, out, err = _memory(
            capsys, "--dataset", str(fixtures / "locomo_mini.json"), "--relay", relay.url, "--model", "tiny"
        )
        assert code == 0, err
        assert {body["model"] for body in relay.requests} == {"tiny"}
        judged = [b for b in relay.requests if "VERDICT:" in last_user_message(b)]
        assert len(judged) == 14  # MemoryJudge and FalseMemoryRate on each of the 7 rows
    scores = json.loads(out)["summary"]["groups"][0]["scores"]
    assert scores["memory_judge"] == 1.0 and scores["false_memory"] == 1.0
    # the same relay named again as --judge-url is still the relay
    with _relay_serving("tiny") as relay:
        code, _, err = _memory(
            capsys,
            "--dataset",
            str(fixtures / "locomo_mini.json"),
            "--relay",
            relay.url,
            "--model",
            "tiny",
            "--judge-url",
            relay.url + "/v1",
        )
        assert code == 0, err
        assert {body["model"] for body in relay.requests} == {"tiny"}


def test_judge_model_still_wins(fixtures, capsys) -> None:
    with _relay_serving("tiny") as relay:
        code, out, err = _memory(
            capsys,
            "--dataset",
            str(fixtures / "locomo_mini.json"),
            "--relay",
            relay.url,
            "--model",
            "tiny",
            "--judge-model",
            "judge-model",
        )
        judge_models = {b["model"] for b in relay.requests if "VERDICT:" in last_user_message(b)}
    assert judge_models == {"judge-model"}
    # the relay refused that model on every row: no score that looks good, and a failing exit
    assert code == 4  # the judges' failures are over --max-failure-rate
    assert "evaluator memory_judge failed on 7 of the 7 rows it scored (100.0%" in err
    report = json.loads(out)  # the report is still written
    scores = report["summary"]["groups"][0]["scores"]
    assert "false_memory" not in scores  # never 0.000, the best false-memory rate there is
    assert scores["memory_judge"] == 0.0
    failures = report["summary"]["failures"]
    assert failures["false_memory_rate"]["rate"] == 1.0 and failures["memory_judge"]["rate"] == 1.0


def test_an_unreachable_judge_is_refused_up_front(fixtures, capsys) -> None:
    with _relay_serving("tiny") as relay:
        code, out, err = _memory(
            capsys,
            "--dataset",
            str(fixtures / "locomo_mini.json"),
            "--relay",
            relay.url,
            "--model",
            "tiny",
            "--judge-url",
            _dead_url(),
        )
        assert relay.requests == []  # refused before any answer was asked for
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--judge-url" in err and "unreachable" in err


def test_a_dead_relay_that_only_judges_is_refused_up_front(fixtures, capsys, tmp_path, monkeypatch) -> None:
    (tmp_path / "echo_memory.py").write_text(
        "class Echo:\n"
        "    name = 'echo'\n"
        "    def reset(self): pass\n"
        "    def ingest(self, turns): pass\n"
        "    def query(self, question): return 'Biscuit'\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = _memory(
        capsys,
        "--dataset",
        str(fixtures / "locomo_mini.json"),
        "--system",
        "echo_memory:Echo",
        "--relay",
        _dead_url(),
    )
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--relay" in err and "unreachable" in err


def test_an_unset_judge_key_variable_stops_the_run_before_any_answer(fixtures, capsys, monkeypatch) -> None:
    monkeypatch.delenv("UNSET_JUDGE_KEY", raising=False)
    with _relay_serving("tiny") as relay:
        code, out, err = _memory(
            capsys,
            "--dataset",
            str(fixtures / "locomo_mini.json"),
            "--relay",
            relay.url,
            "--model",
            "tiny",
            "--judge-api-key-env",
            "UNSET_JUDGE_KEY",
        )
        assert relay.requests == []
    assert code == 2 and out == "" and "UNSET_JUDGE_KEY" in err
