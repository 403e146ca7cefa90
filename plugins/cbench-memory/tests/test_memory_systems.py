"""The full-context and bm25 baselines against the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import pytest

from cbench_memory.baselines import BM25Memory, FullContextMemory
from cbench_memory.loaders import load_locomo
from context_bench import MemorySystem
from context_bench.identity import identity
from context_bench.systems import EndpointError, OpenAIProxy
from context_bench.testing import last_user_message


@pytest.fixture
def conversation(fixtures):
    return load_locomo(fixtures / "locomo_mini.json")[0]


def test_full_context_sends_every_turn_with_dates_and_the_question(world, conversation):
    memory = FullContextMemory(OpenAIProxy(world.url, model=world.model))
    assert isinstance(memory, MemorySystem)
    memory.reset()
    memory.ingest(conversation["turns"])
    answer = memory.query("What is the name of Caroline's puppy?")
    assert answer["response"] == "Biscuit"
    assert answer["input_tokens"] > 0 and answer["output_tokens"] == 3
    (request,) = world.server.requests
    prompt = last_user_message(request)
    assert prompt.startswith(
        "Conversation:\n[Session 1, 1:56 pm on 8 May, 2023]\nCaroline: I adopted a puppy"
    )
    assert "Caroline: I started pottery classes on Tuesdays." in prompt
    assert prompt.endswith("Question: What is the name of Caroline's puppy?")
    assert request["messages"][0]["role"] == "system"


def test_reset_forgets_the_previous_conversation(world, conversation):
    memory = FullContextMemory(OpenAIProxy(world.url, model=world.model))
    memory.ingest(conversation["turns"])
    memory.reset()
    memory.ingest([{"speaker": "Jon", "text": "I opened a dance studio downtown."}])
    assert (
        memory.query("What is the name of Caroline's puppy?")["response"]
        == "Not mentioned in the conversation."
    )
    assert "Biscuit" not in last_user_message(world.server.requests[-1])


def test_bm25_sends_only_the_best_turns_in_conversation_order(world, conversation):
    memory = BM25Memory(OpenAIProxy(world.url, model=world.model), top_k=2)
    memory.ingest(conversation["turns"])
    scores = memory.scores("Which marathon did Melanie train for?")
    assert max(range(len(scores)), key=scores.__getitem__) == 1  # "training for the Lisbon marathon"
    assert memory.query("Which marathon did Melanie train for?")["response"] == "Lisbon"
    prompt = last_user_message(world.server.requests[-1])
    shown = [line for line in prompt.splitlines() if line.startswith(("Caroline:", "Melanie:"))]
    assert shown == [
        "Melanie: Congrats! I am training for the Lisbon marathon.",
        "Melanie: I finished the marathon in 4 hours.",
    ]
    assert (
        "[Session 1, 1:56 pm on 8 May, 2023]" in prompt and "[Session 2, 10:37 am on 27 June, 2023]" in prompt
    )


def test_bm25_that_misses_the_evidence_gets_not_mentioned(world, conversation):
    memory = BM25Memory(OpenAIProxy(world.url, model=world.model), top_k=1)
    memory.ingest(conversation["turns"])
    # "marathon" outranks the turn with "4 hours": top-1 retrieval misses half of a multi-hop question
    answer = memory.query("What did Caroline's puppy chew, and how long was Melanie's marathon?")
    assert answer["response"] == "Not mentioned in the conversation."
    nothing = memory.query("zzz qqq?")
    assert nothing["response"] == "I don't know."
    assert "nothing relevant was found" in last_user_message(world.server.requests[-1])


def test_configuration_names_the_cache_entry_and_keeps_no_key(world):
    client = OpenAIProxy(world.url, model=world.model, api_key="sk-secret-123")
    assert identity(BM25Memory(client, top_k=5)) != identity(BM25Memory(client, top_k=6))
    assert identity(FullContextMemory(client)) == identity(FullContextMemory(client))
    assert "sk-secret" not in repr(FullContextMemory(client).config())
    with pytest.raises(ValueError, match="top_k"):
        BM25Memory(client, top_k=0)


def test_endpoint_failure_raises_for_the_runner_to_record(world):
    memory = FullContextMemory(OpenAIProxy("http://127.0.0.1:9", model=world.model, max_retries=0, timeout=2))
    memory.ingest([{"speaker": "A", "text": "x"}])
    with pytest.raises(EndpointError, match="127.0.0.1:9"):
        memory.query("q?")
