"""A scripted OpenAI-compatible server on 127.0.0.1 that answers as a memory system's model and as a judge.

The "memory model" answers a known question only when the prompt shows the turn holding its answer
(so a retrieval that misses it answers "not mentioned"); the adversarial question gets an invented
answer.  The "judge" decides from the prompt alone: MemoryJudge says YES when the gold answer shows
up a second time (in the response); FalseMemoryRate says YES when a word of the answer appears
nowhere else in the prompt, i.e. not in the conversation it was shown.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from context_bench.testing import FakeServer, Reply, last_user_message

MEMORY_MODEL = "mem-model"
NOT_MENTIONED = "Not mentioned in the conversation."

#: question -> (text the prompt must show, answer)
SCRIPT = {
    "What is the name of Caroline's puppy?": ("puppy named Biscuit", "Biscuit"),
    "Which marathon did Melanie train for?": ("Lisbon marathon", "Lisbon"),
    "When did Caroline start pottery classes?": ("pottery classes", "October 2023"),
    "What did Caroline's puppy chew, and how long was Melanie's marathon?": (
        "marathon in 4 hours",
        "shoes; 4 hours",
    ),
    "What is the name of Melanie's cat?": ("", "Whiskers"),
    "What business did Jon open?": ("dance studio", "a dance studio"),
    "When did Gina lose her job?": ("Door Dash", "January 2023"),
    "What degree did I graduate with?": ("Business Administration", "Business Administration"),
    "How many days before my trip to Rome did I buy the guidebook?": ("Rome guidebook", "3"),
    "What was the name of my high school?": ("", NOT_MENTIONED),
    "Where was Ann born?": ("born in Porto", "Porto"),
    "Which university did Ann attend?": ("", "Coimbra"),
}


def answer_as_memory_model(prompt: str) -> str:
    conversation, _, question = prompt.rpartition("Question:")
    for known, (evidence, answer) in SCRIPT.items():
        if known in question:
            return answer if evidence in conversation else NOT_MENTIONED
    return "I don't know."


def answer_as_judge(prompt: str) -> str:
    if "false memor" in prompt.lower():
        response = _last_answer(prompt)
        invented = [w for w in set(re.findall(r"[A-Za-z0-9]{3,}", response)) if prompt.count(w) < 2]
        verdict = "YES" if invented and "not mentioned" not in response.lower() else "NO"
        return f"Checked the claims against the conversation.\nVERDICT: {verdict}"
    for _, answer in SCRIPT.values():
        if answer != NOT_MENTIONED and prompt.count(answer) >= 2:
            return "The answer matches the gold answer.\nVERDICT: YES"
    return "The answer differs from the gold answer.\nVERDICT: NO"


def _last_answer(prompt: str) -> str:
    """The text after the prompt's last "answer:" heading, up to the verdict instructions."""
    tail = re.split(r"answer:\s*\n", prompt, flags=re.I)[-1]
    return tail.split("\n\n")[0]


def is_judge_request(body: dict) -> bool:
    """The judges ask the relay's own model (as a real relay would be asked), so their prompts, which
    end in a VERDICT line, tell them apart."""
    return "VERDICT:" in last_user_message(body)


def scripted_reply(body: dict) -> str | Reply:
    prompt = last_user_message(body)
    if body.get("model") == MEMORY_MODEL and not is_judge_request(body):
        return Reply(
            text=answer_as_memory_model(prompt),
            usage={"prompt_tokens": len(prompt.split()), "completion_tokens": 3},
        )
    return answer_as_judge(prompt)


@pytest.fixture
def fixtures() -> Path:
    return Path(__file__).parent / "fixtures"


@pytest.fixture
def world():
    """The scripted server, its URL, and the requests it got, split by who asked."""
    with FakeServer(scripted_reply) as server:
        yield SimpleNamespace(
            server=server,
            url=server.url,
            model=MEMORY_MODEL,
            memory_requests=lambda: [r for r in server.requests if not is_judge_request(r)],
            judge_requests=lambda: [r for r in server.requests if is_judge_request(r)],
        )
