"""OpenAIProxy (issue 16): build_messages= replaces the default prompt, retry_base_delay= reaches its
retry policy, and a row with `turns` is sent turn by turn, the conversation growing with the replies."""

from __future__ import annotations

import threading

import pytest

import context_bench
from context_bench import OpenAIProxy, Output, RunConfig, evaluate
from context_bench.client import RetryPolicy
from context_bench.testing import FakeServer, Reply, last_user_message

QUIET = RunConfig(output=Output(progress=False))

MT_ROW = {"id": "mt1", "turns": ["Name a colour.", "Now a fruit of that colour."], "answer": "banana"}


def scripted(body):
    turn = last_user_message(body)
    cost = {"x-litellm-response-cost": "0.25"}
    if turn == "Name a colour.":
        return Reply("yellow", headers=cost, usage={"prompt_tokens": 5, "completion_tokens": 1})
    return Reply("banana", headers=cost, usage={"prompt_tokens": 12, "completion_tokens": 3})


def test_a_row_with_turns_is_a_conversation_that_grows_with_the_replies():
    with FakeServer(scripted) as server:
        proxy = OpenAIProxy(server.url, system_prompt="Be brief.", api_key_env=None)
        result = evaluate([proxy], [MT_ROW], QUIET)
        first, second = server.requests
    assert first["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Name a colour."},
    ]
    assert second["messages"] == [
        *first["messages"],
        {"role": "assistant", "content": "yellow"},
        {"role": "user", "content": "Now a fruit of that colour."},
    ]
    (row,) = result.rows
    assert row.response == "banana" and row.meta["output"]["replies"] == ["yellow"]
    assert (row.input_tokens, row.output_tokens, row.cost) == (17.0, 4.0, 0.5)
    assert row.scores["f1"] == 1.0


def test_the_context_comes_before_the_first_turn_and_a_failed_turn_is_the_rows_error():
    with FakeServer(
        lambda body: Reply("down", status=500) if "second" in last_user_message(body) else "ok"
    ) as server:
        proxy = OpenAIProxy(server.url, max_retries=0, api_key_env=None)
        row = {"id": "1", "context": "Some notes.", "turns": ["first", "second"]}
        (result,) = evaluate([proxy], [row], QUIET).rows
        assert server.requests[0]["messages"][-1]["content"] == "Some notes.\n\nfirst"
    assert result.response is None and result.errors


def test_a_cost_unknown_on_one_turn_is_not_summed_from_the_others():
    def partly(body):
        known = last_user_message(body) == "a"
        return Reply("x", headers={"x-litellm-response-cost": "0.1"} if known else {})

    with FakeServer(partly) as server:
        (row,) = evaluate(
            [OpenAIProxy(server.url, api_key_env=None)], [{"id": "1", "turns": ["a", "b"]}], QUIET
        ).rows
    assert row.cost is None and row.input_tokens == 20.0


def test_build_messages_replaces_the_default_prompt_and_names_the_cache_entries():
    def as_exam(example):
        return [{"role": "user", "content": f"Exam question: {example['question']}"}]

    with FakeServer(lambda body: "Paris") as server:
        proxy = OpenAIProxy(server.url, build_messages=as_exam, system_prompt="Answer.", api_key_env=None)
        evaluate([proxy], [{"id": "1", "question": "capital of France", "answer": "Paris"}], QUIET)
        (body,) = server.requests
    assert body["messages"] == [
        {"role": "system", "content": "Answer."},
        {"role": "user", "content": "Exam question: capital of France"},
    ]
    from context_bench.identity import identity

    assert identity(proxy) != identity(OpenAIProxy(server.url, system_prompt="Answer.", api_key_env=None))
    assert proxy.config()["build_messages"].endswith("as_exam")


def test_retry_base_delay_is_the_first_retrys_wait(monkeypatch):
    failed = threading.Event()
    waits: list[float] = []
    backoff = RetryPolicy.backoff

    def recorded(policy, attempt):
        waits.append(backoff(policy, attempt))
        return waits[-1]

    monkeypatch.setattr(RetryPolicy, "backoff", recorded)

    def once_down(body):
        if not failed.is_set():
            failed.set()
            return Reply("busy", status=503)
        return "ok"

    with FakeServer(once_down) as server:
        slow = OpenAIProxy(server.url, retry_base_delay=1.0, api_key_env=None)
        assert slow._http().retry.base_delay == 1.0
        assert slow.process({"question": "q"})["response"] == "ok"
        assert len(waits) == 1 and 0.5 <= waits[0] <= 1.0  # the first retry waits in [d/2, d]
        failed.clear()
        quick = OpenAIProxy(server.url, retry_base_delay=0, api_key_env=None)
        assert quick.process({"question": "q"})["response"] == "ok"
        assert waits[1:] == [0.0]
    with pytest.raises(ValueError, match="retry_base_delay"):
        OpenAIProxy(server.url, retry_base_delay=-1)


@pytest.mark.parametrize(
    "name",
    [
        "OpenAIProxy",
        "EndpointError",
        "CommandSystem",
        "CommandError",
        "ClaudeCLI",
        "evaluate",
        "EvalResult",
        "EvalRow",
        "RowError",
        "assert_scores",
    ],
)
def test_every_public_class_is_importable_from_the_top_level_package(name):
    assert getattr(context_bench, name) is not None and name in context_bench.__all__


def test_mt_bench_is_played_turn_by_turn_end_to_end(tmp_path, monkeypatch, capsys):
    """cbench-judge's mt-bench rows (from its fixture mirror) through `context-bench run`: each
    conversation's second turn is sent with the first and the system's own reply."""
    import json
    from pathlib import Path

    from context_bench.cli import main
    from context_bench.testing import offline_hub

    mirror = Path(__file__).resolve().parents[2] / "plugins" / "cbench-judge" / "tests" / "fixtures" / "hub"
    offline_hub(monkeypatch, mirror, tmp_path / "hf")

    def reply(body):
        if "You are rating" in body["messages"][-1]["content"]:
            return "Rating: [[8]]"
        return f"reply to {len(body['messages'])} messages"

    with FakeServer(reply) as server:
        out = tmp_path / "mt.json"
        argv = ["run", "--proxy", server.url, "--dataset", "mt-bench", "--judge-url", server.url]
        code = main([*argv, "--output", "json", "--out", str(out), "--no-progress"])
        assert code == 0, capsys.readouterr().err
        second_turns = [body for body in server.requests if len(body["messages"]) == 3]
    assert len(second_turns) == 2
    assert all(
        body["messages"][1] == {"role": "assistant", "content": "reply to 1 messages"}
        for body in second_turns
    )
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert {row["response"] for row in rows} == {"reply to 3 messages"}
    assert all(row["meta"]["output"]["replies"] == ["reply to 1 messages"] for row in rows)
    assert all("judge_score" in row["scores"] for row in rows)
