"""Judges for memory benchmarks: is the recalled answer right, and did the system invent anything?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from context_bench import Scores

from .base import BaseJudge, as_text, require
from .context import fit_turns, turns_of
from .errors import JudgeInputError
from .verdicts import parse_yes_no

_VERDICT_LINE = (
    "Explain in one or two sentences, then end with a final line that is exactly VERDICT: YES or VERDICT: NO."
)


def _same_information(question: str, gold: str, response: str) -> str:
    return (
        "You are checking an AI assistant's answer to a question about a past conversation.\n\n"
        f"Question:\n{question}\n\nGold answer:\n{gold}\n\nSystem answer:\n{response}\n\n"
        "Does the system answer convey the same essential information as the gold answer? Minor "
        "wording differences and extra context are acceptable; a missing, different or contradicted "
        f"key fact is not.\n{_VERDICT_LINE}"
    )


def _invented_claims(conversation: str, question: str, response: str) -> str:
    return (
        "You are checking an AI assistant's answer for false memories: specific claims that the "
        "conversation below does not support.\n\n"
        f"Conversation:\n{conversation}\n\nQuestion:\n{question}\n\nAssistant's answer:\n{response}\n\n"
        "Does the answer contain specific claims (dates, names, numbers, places, events) that are "
        "absent from the conversation? Claims the conversation states or directly implies are fine, "
        "however early in the conversation they appear; saying it does not know is fine.\n"
        f"{_VERDICT_LINE} (YES means the answer contains such unsupported claims.)"
    )


class MemoryJudge(BaseJudge):
    """Does the system answer convey the gold answer?  ``memory_judge`` 1.0 or 0.0 (and ``_raw``).

    An empty gold answer scores 0.5 without a call; a failed judge scores 0.0 with the reason in
    ``Scores.failure`` (or raises with ``strict=True``).
    """

    name = "memory_judge"

    async def _score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> Scores:
        question = as_text(require(original, "question", "original", self.name))
        if not isinstance(original, Mapping) or "answer" not in original:
            raise JudgeInputError(f"{self.name}: original['answer'] is missing")
        response = as_text(require(processed, "response", "processed", self.name))
        gold = original["answer"]
        gold = "" if gold is None else as_text(gold).strip()
        if not gold:
            return Scores({"memory_judge": 0.5, "memory_judge_raw": 0.5})

        def read(text: str) -> dict[str, float]:
            value = 1.0 if parse_yes_no(text) else 0.0
            return {"memory_judge": value, "memory_judge_raw": value}

        return await self._ask(
            _same_information(question, gold, response), read, {"memory_judge": 0.0, "memory_judge_raw": 0.0}
        )


class FalseMemoryRate(BaseJudge):
    """Does the answer claim specifics the conversation never mentioned?  ``false_memory`` 1.0 if so.

    The judge sees the whole conversation unless ``context_chars`` is set; then it sees the turns
    most relevant to the question and answer (see :mod:`cbench_judge.context`).  A failed judge gives
    no ``false_memory`` at all (0.0 would be the best score), only the counted failure.
    """

    name = "false_memory_rate"

    def __init__(self, *args: Any, context_chars: int | None = None, **options: Any) -> None:
        """:class:`~cbench_judge.base.BaseJudge`'s arguments, plus ``context_chars``."""
        if context_chars is not None and (not isinstance(context_chars, int) or context_chars <= 0):
            raise ValueError(f"context_chars must be a positive integer or None, got {context_chars!r}")
        super().__init__(*args, **options)
        self.context_chars = context_chars

    async def _score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> Scores:
        context = require(original, "context", "original", self.name)
        question = as_text(require(original, "question", "original", self.name))
        response = as_text(require(processed, "response", "processed", self.name))
        try:
            turns = turns_of(context, "original['context']")
        except ValueError as exc:
            raise JudgeInputError(f"{self.name}: {exc}") from None
        conversation = fit_turns(turns, f"{question}\n{response}", self.context_chars)

        def read(text: str) -> dict[str, float]:
            return {"false_memory": 1.0 if parse_yes_no(text) else 0.0}

        # No fallback value: 0.0 would read as "nothing invented", the best score there is.  A failed
        # call leaves the field out (the row's failure is counted), so it never flatters the rate.
        return await self._ask(_invented_claims(conversation, question, response), read, {})
