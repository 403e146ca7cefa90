"""A row's own ``max_tokens`` (the budget its benchmark prescribes) reaches the request, unless the
system sets a limit of its own; a malformed one is that row's error."""

from __future__ import annotations

import pytest

from context_bench import RunConfig, Scope, evaluate
from context_bench.systems import OpenAIProxy
from context_bench.testing import FakeServer

ROW = {"id": "r1", "question": "Capital of France?", "answer": "Paris", "max_tokens": 32}


def _paris(body):
    return "Paris"


def _limits(server):
    return [(body.get("max_tokens"), body.get("max_completion_tokens")) for body in server.requests]


def test_the_rows_max_tokens_is_sent_when_the_system_sets_none():
    with FakeServer(_paris) as server:
        OpenAIProxy(server.url, api_key_env=None).process(ROW)
        OpenAIProxy(server.url, api_key_env=None).process({**ROW, "max_tokens": None})
    assert _limits(server) == [(32, None), (None, None)]


def test_a_limit_the_user_set_wins_over_the_rows():
    with FakeServer(_paris) as server:
        OpenAIProxy(server.url, api_key_env=None, max_tokens=7).process(ROW)
        OpenAIProxy(server.url, api_key_env=None, extra_body={"max_tokens": 9}).process(ROW)
        OpenAIProxy(server.url, api_key_env=None, extra_body={"max_completion_tokens": 11}).process(ROW)
    assert _limits(server) == [(7, None), (9, None), (None, 11)]


def test_every_turn_of_a_conversation_gets_the_rows_max_tokens():
    with FakeServer(_paris) as server:
        OpenAIProxy(server.url, api_key_env=None).process({"id": "c", "turns": ["a", "b"], "max_tokens": 5})
    assert _limits(server) == [(5, None), (5, None)]


@pytest.mark.parametrize("bad", [0, -3, 2.5, "64", True])
def test_a_malformed_max_tokens_is_the_rows_error_and_sends_nothing(bad):
    with FakeServer(_paris) as server:
        result = evaluate(
            OpenAIProxy(server.url, api_key_env=None),
            [{**ROW, "max_tokens": bad}],
            RunConfig(scope=Scope(evaluators=[])),
        )
    ((error,),) = [row.errors for row in result.rows]
    assert error.stage == "system" and error.type == "ValueError"
    assert error.message == f"the row's max_tokens must be a whole number of at least 1, not {bad!r}"
    assert server.requests == []
