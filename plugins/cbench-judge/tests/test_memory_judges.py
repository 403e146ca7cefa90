"""MemoryJudge, FalseMemoryRate and LLMJudge against a real local server with scripted verdicts."""

from __future__ import annotations

import threading

import pytest

from cbench_judge import FalseMemoryRate, JudgeCallError, JudgeInputError, LLMJudge, MemoryJudge
from cbench_judge.context import fit_turns, turns_of
from context_bench.testing import Reply, last_user_message

QUESTION = "Where did Alice grow up?"


def test_seed_examples_paris_and_london(judge_server) -> None:
    server = judge_server()
    judge = MemoryJudge(server.url)
    original = {"question": QUESTION, "answer": "Paris"}
    assert judge.score(original, {"response": "Alice grew up in Paris, France"}) == {
        "memory_judge": 1.0,
        "memory_judge_raw": 1.0,
    }
    assert judge.score(original, {"response": "London"}) == {"memory_judge": 0.0, "memory_judge_raw": 0.0}
    assert len(server.seen) == 2
    body = server.seen[0].body
    assert body["model"] == "claude-haiku-4-5-20251001"
    assert body["temperature"] == 0.0
    assert "Gold answer:\nParis" in last_user_message(body)


@pytest.mark.parametrize("gold", ["", "   ", None])
def test_empty_gold_scores_half_without_a_call(judge_server, gold) -> None:
    server = judge_server()
    result = MemoryJudge(server.url).score({"question": QUESTION, "answer": gold}, {"response": "Paris"})
    assert result == {"memory_judge": 0.5, "memory_judge_raw": 0.5}
    assert server.count == 0


def test_usage_is_reported_and_counted(judge_server) -> None:
    server = judge_server(
        lambda body: Reply("VERDICT: YES", usage={"prompt_tokens": 321, "completion_tokens": 7})
    )
    judge = MemoryJudge(server.url)
    result = judge.score({"question": QUESTION, "answer": "Paris"}, {"response": "Paris"})
    assert result.usage == {"input_tokens": 321.0, "output_tokens": 7.0}
    assert result.failure is None
    assert (judge.stats.calls, judge.stats.input_tokens, judge.stats.output_tokens) == (1, 321.0, 7.0)


def test_judge_failure_scores_zero_with_a_counted_reason(judge_server) -> None:
    server = judge_server(lambda body: Reply(status=503))
    judge = MemoryJudge(server.url, max_retries=1, retry_base_delay=0.01)
    result = judge.score({"question": QUESTION, "answer": "Paris"}, {"response": "Paris"})
    assert result == {"memory_judge": 0.0, "memory_judge_raw": 0.0}
    assert result.failure.startswith("call_error: HTTP 503")
    assert server.count == 2  # the call and one retry
    assert judge.stats.call_errors == 1


def test_unparseable_verdict_is_a_parse_error(judge_server) -> None:
    server = judge_server(lambda body: "Hard to say, honestly.")
    result = MemoryJudge(server.url).score({"question": QUESTION, "answer": "Paris"}, {"response": "Paris"})
    assert result == {"memory_judge": 0.0, "memory_judge_raw": 0.0}
    assert result.failure.startswith("parse_error:")
    assert result.usage is not None  # the call happened and cost tokens


def test_strict_turns_failures_into_exceptions(judge_server) -> None:
    server = judge_server(lambda body: Reply(status=500))
    judge = MemoryJudge(server.url, max_retries=0, strict=True)
    with pytest.raises(JudgeCallError, match="HTTP 500"):
        judge.score({"question": QUESTION, "answer": "Paris"}, {"response": "Paris"})


def test_missing_fields_are_named(judge_server) -> None:
    judge = MemoryJudge(judge_server().url)
    with pytest.raises(JudgeInputError, match=r"original\['question'\]"):
        judge.score({"answer": "Paris"}, {"response": "Paris"})
    with pytest.raises(JudgeInputError, match=r"processed\['response'\]"):
        judge.score({"question": QUESTION, "answer": "Paris"}, {})
    with pytest.raises(JudgeInputError, match=r"original\['answer'\]"):
        judge.score({"question": QUESTION}, {"response": "Paris"})


def test_key_goes_in_the_bearer_header_and_falls_back_to_openai_api_key(judge_server, monkeypatch) -> None:
    server = judge_server()
    row = ({"question": QUESTION, "answer": "Paris"}, {"response": "Paris"})
    MemoryJudge(server.url, api_key="sk-explicit").score(*row)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    MemoryJudge(server.url).score(*row)
    monkeypatch.delenv("OPENAI_API_KEY")
    MemoryJudge(server.url).score(*row)
    assert [s.headers.get("authorization") for s in server.seen] == [
        "Bearer sk-explicit",
        "Bearer sk-from-env",
        None,
    ]


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/chat/completions"])
def test_every_base_url_form_reaches_the_same_route(judge_server, suffix) -> None:
    server = judge_server()
    result = MemoryJudge(server.url + suffix).score(
        {"question": QUESTION, "answer": "Paris"}, {"response": "Paris"}
    )
    assert result == {"memory_judge": 1.0, "memory_judge_raw": 1.0}


TOKYO = [
    {"speaker": "Alice", "text": "I moved to Tokyo in March 2022 for work."},
    {"speaker": "Bob", "text": "How do you like it there?"},
]


def test_false_memory_seed_examples(judge_server) -> None:
    server = judge_server()
    judge = FalseMemoryRate(server.url)
    original = {"context": TOKYO, "question": "When did Alice move to Tokyo?"}
    assert judge.score(original, {"response": "Alice moved to Tokyo in March 2022."}) == {"false_memory": 0.0}
    assert judge.score(original, {"response": "Alice moved to Tokyo in June 2019."}) == {"false_memory": 1.0}
    assert "Alice: I moved to Tokyo in March 2022 for work." in last_user_message(server.seen[0].body)


def _long_conversation() -> list[dict[str, str]]:
    early = [{"speaker": "Alice", "text": "My sister Margaret lives in Lisbon and teaches piano."}]
    filler = [
        {
            "speaker": "Bob" if i % 2 else "Alice",
            "text": f"Turn {i}: talking about the weather and the weekend plans again.",
        }
        for i in range(400)
    ]
    return early + filler


def test_false_memory_sees_the_whole_conversation_by_default(judge_server) -> None:
    server = judge_server()
    original = {"context": _long_conversation(), "question": "Where does Alice's sister live?"}
    result = FalseMemoryRate(server.url).score(original, {"response": "Margaret lives in Lisbon."})
    assert result == {"false_memory": 0.0}
    assert "Turn 399" in last_user_message(server.seen[0].body)


def test_a_context_budget_keeps_the_relevant_early_turn(judge_server) -> None:
    server = judge_server()
    original = {"context": _long_conversation(), "question": "Where does Alice's sister live?"}
    judge = FalseMemoryRate(server.url, context_chars=2000)
    result = judge.score(original, {"response": "Margaret lives in Lisbon."})
    assert result == {"false_memory": 0.0}  # the early fact survived the cut, so it is not "invented"
    prompt = last_user_message(server.seen[0].body)
    conversation = prompt.split("Conversation:\n", 1)[1].split("\n\nQuestion:", 1)[0]
    assert len(conversation) <= 2000
    assert "Margaret lives in Lisbon" in conversation
    assert "turns omitted" in conversation
    # and an invented claim is still caught under the same budget
    assert judge.score(original, {"response": "Margaret lives in Porto."}) == {"false_memory": 1.0}


def test_fit_turns_order_gaps_and_budget() -> None:
    turns = [f"turn {i} about nothing much" for i in range(50)]
    turns[3] = "Alice adopted a cat named Miso"
    text = fit_turns(turns, "What is the name of Alice's cat?", 300)
    assert len(text) <= 300
    assert "Alice adopted a cat named Miso" in text
    kept = [line for line in text.splitlines() if not line.startswith("[...")]
    assert kept == [t for t in turns if t in kept]  # conversation order is kept
    assert fit_turns(turns, "anything", None) == "\n".join(turns)
    assert fit_turns(["x" * 50], "x", 20) == "x" * 20


def test_turn_shapes() -> None:
    assert turns_of("Alice: hi\n\nBob: hello\n") == ["Alice: hi", "Bob: hello"]
    sessions = [{"date": "1 May 2023", "turns": [{"role": "user", "content": "hi"}]}, ["plain turn"]]
    assert turns_of(sessions) == ["[1 May 2023]", "user: hi", "plain turn"]
    with pytest.raises(ValueError, match=r"context\[0\]"):
        turns_of([{"speaker": "Alice"}])


def test_llm_judge_rating_is_normalized(judge_server) -> None:
    server = judge_server(lambda body: "Mostly right, one detail missing.\nRATING: 4")
    judge = LLMJudge(server.url)
    assert judge.name == "judge_score"
    assert judge.score({"instruction": "Name a French city."}, {"response": "Paris"}) == {"judge_score": 0.75}
    assert "Name a French city." in last_user_message(server.seen[0].body)


def test_score_works_from_a_thread_whose_loop_is_running(judge_server) -> None:
    import asyncio

    server = judge_server()
    judge = MemoryJudge(server.url)
    results = []

    async def inside_a_loop() -> None:
        # a plain blocking call from code that runs on an event loop (a notebook, a web handler)
        results.append(judge.score({"question": QUESTION, "answer": "Paris"}, {"response": "Paris"}))

    threads = [threading.Thread(target=asyncio.run, args=(inside_a_loop(),)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == [{"memory_judge": 1.0, "memory_judge_raw": 1.0}] * 4
