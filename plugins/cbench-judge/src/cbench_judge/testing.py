"""Stand-in judges for tests and benchmarks: what a careful judge would answer to the plugin's prompts.

Each is a ``reply`` for :class:`context_bench.testing.FakeServer`.  As a process, the fake server
answering memory-judge prompts (same options as ``python -m context_bench.fake_server``)::

    python -m cbench_judge.testing --latency 0.1 --rate-429 0.2
"""

from __future__ import annotations

import re
import sys
from typing import Any

from context_bench.testing import last_user_message

_GOLD = re.compile(r"Gold answer:\n(.*?)\n\nSystem answer:\n(.*?)\n\n", re.S)
_CONVERSATION = re.compile(r"Conversation:\n(.*?)\n\nQuestion:\n.*?\n\nAssistant's answer:\n(.*?)\n\n", re.S)
_CLAIM = re.compile(r"\b(?:[A-Z][a-z]+|\d+)\b")
_NOT_CLAIMS = {"The", "She", "He", "It", "They", "I"}


def substring_verdict(body: Any) -> str:
    """A stand-in judge for MemoryJudge prompts: YES when the gold answer appears in the system answer."""
    match = _GOLD.search(last_user_message(body))
    if match is None:
        return "VERDICT: NO"
    gold, answer = (part.strip().lower() for part in match.groups())
    return "The answers agree.\nVERDICT: YES" if gold in answer else "They differ.\nVERDICT: NO"


def grounding_verdict(body: Any) -> str:
    """A stand-in judge for FalseMemoryRate prompts: YES when the answer names a capitalized word or a
    number that the conversation shown to the judge does not contain."""
    match = _CONVERSATION.search(last_user_message(body))
    if match is None:
        return "VERDICT: NO"
    conversation, answer = match.groups()
    invented = [w for w in _CLAIM.findall(answer) if w not in conversation and w not in _NOT_CLAIMS]
    if invented:
        return f"The answer mentions {', '.join(invented)}, which the conversation never does.\nVERDICT: YES"
    return "Every claim appears in the conversation; no, nothing is invented.\nVERDICT: NO"


def memory_verdict(body: Any) -> str:
    """Either memory prompt, answered the way a careful judge would."""
    if "Conversation:\n" in last_user_message(body):
        return grounding_verdict(body)
    return substring_verdict(body)


if __name__ == "__main__":
    from context_bench.fake_server import main

    sys.exit(main(reply=memory_verdict))
