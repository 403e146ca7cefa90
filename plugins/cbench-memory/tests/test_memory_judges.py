"""The judges cbench-judge wires into memory runs: a correct recall of an early fact is not a false memory."""

from __future__ import annotations

from functools import partial

import pytest

from cbench_memory.baselines import FullContextMemory
from context_bench import Output, RunConfig, Scope, evaluate_memory
from context_bench.systems import OpenAIProxy
from context_bench.testing import isolated_host, last_user_message

judge_plugin = pytest.importorskip(
    "cbench_judge.plugin", reason="cbench-judge provides MemoryJudge and FalseMemoryRate"
)


def long_conversation():
    filler = [
        {
            "speaker": "Ann" if n % 2 else "Bo",
            "text": f"Let us talk about gardening topic number {n} at length.",
            "session": 2 + n // 40,
            "date": f"{1 + n // 40} June 2023",
        }
        for n in range(240)
    ]
    first = {"speaker": "Ann", "text": "I was born in Porto, you know.", "session": 1, "date": "2 May 2023"}
    return {
        "id": "long",
        "turns": [first, *filler],
        "qa_pairs": [
            {"question": "Where was Ann born?", "answer": "Porto", "qa_type": "single-hop"},
            {
                "question": "Which university did Ann attend?",
                "answer": "Not mentioned in the conversation",
                "qa_type": "adversarial",
            },
        ],
    }


def test_an_early_fact_recalled_correctly_is_not_a_false_memory(world):
    conversation = long_conversation()
    result = evaluate_memory(
        partial(FullContextMemory, OpenAIProxy(world.url, model=world.model)),
        [conversation],
        RunConfig(output=Output(progress=False), plugins={"judge_url": world.url}),
        host=isolated_host(judge_plugin),
    )
    born, university = result.rows
    assert born.response == "Porto" and university.response == "Coimbra"
    context = conversation_context(result, world)
    assert len(context) > 10_000 and "born in Porto" not in context[-3000:]  # a tail-only judge would miss it
    assert born.scores["false_memory"] == 0.0 and born.scores["memory_judge"] == 1.0
    assert university.scores["false_memory"] == 1.0 and university.scores["memory_judge"] == 0.0
    assert not born.failures and not university.failures
    breakdown = result.summary.groups[0].breakdown["qa_type"]
    assert breakdown["adversarial"].scores["false_memory"] == 1.0


def conversation_context(result, world):
    """The conversation as the false-memory judge was shown it (the whole of it, by default)."""
    shown = [
        last_user_message(r) for r in world.judge_requests() if "false memor" in last_user_message(r).lower()
    ]
    assert len(shown) == 2 and all("I was born in Porto, you know." in prompt for prompt in shown)
    return shown[0].split("Question:")[0]


def test_a_context_budget_keeps_the_relevant_early_turn(world):
    from cbench_judge.memory import FalseMemoryRate

    conversation = long_conversation()
    judge = FalseMemoryRate(world.url, context_chars=2000)
    result = evaluate_memory(
        partial(FullContextMemory, OpenAIProxy(world.url, model=world.model)),
        [conversation],
        RunConfig(scope=Scope(evaluators=[judge]), output=Output(progress=False)),
        host=isolated_host(judge_plugin),
    )
    assert [r.scores["false_memory"] for r in result.rows] == [0.0, 1.0]
