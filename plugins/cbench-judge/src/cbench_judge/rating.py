"""A general-purpose judge: how good is the response, from 1 to 5?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from context_bench import Scores

from .base import BaseJudge, as_text, require
from .errors import JudgeInputError
from .verdicts import parse_rating

#: Where a row keeps what the system was asked, in order of preference.
QUESTION_KEYS = ("question", "prompt", "instruction", "input")


def question_of(original: Mapping[str, Any], evaluator: str) -> str:
    for key in QUESTION_KEYS:
        value = original.get(key) if isinstance(original, Mapping) else None
        if value is not None and value != "":
            return as_text(value)
    raise JudgeInputError(f"{evaluator}: original has none of {', '.join(QUESTION_KEYS)}")


LETTERS = "ABCDEFGHIJ"


def options_of(original: Mapping[str, Any]) -> str | None:
    """A multiple-choice row's options as ``A. text`` lines (``choices`` as a list, a mapping label ->
    text, or the hub's ``{"label": [...], "text": [...]}``), so a judge never rates "B" blind."""
    choices = original.get("choices")
    if isinstance(choices, Mapping) and isinstance(choices.get("text"), (list, tuple)):
        labels = choices.get("label") or LETTERS
        pairs = list(zip(labels, choices["text"], strict=False))
    elif isinstance(choices, Mapping):
        pairs = list(choices.items())
    elif isinstance(choices, (list, tuple)) and choices:
        pairs = list(zip(LETTERS, choices, strict=False))
    else:
        return None
    return "\n".join(f"{label}. {as_text(text)}" for label, text in pairs)


def reference_of(original: Mapping[str, Any]) -> str | None:
    """The reference answer: ``answer`` or ``reference``, else a multiple-choice row's correct letter."""
    reference = original.get("answer", original.get("reference"))
    if reference in (None, ""):
        reference = original.get("correct_letter")
    return None if reference in (None, "") else as_text(reference)


def _rate(question: str, response: str, reference: str | None, options: str | None = None) -> str:
    options_part = f"Options:\n{options}\n\n" if options else ""
    reference_part = f"Reference answer (for comparison):\n{reference}\n\n" if reference else ""
    return (
        "You are rating an AI assistant's response to a user's request: how helpful, accurate, "
        "relevant and complete it is.\n\n"
        f"Request:\n{question}\n\n{options_part}{reference_part}Response:\n{response}\n\n"
        "Rate it from 1 (very poor) to 5 (excellent). Explain in one or two sentences, then end with "
        "a final line of the form RATING: <1-5>."
    )


class LLMJudge(BaseJudge):
    """``judge_score`` = (rating - 1) / 4 for a 1-5 rating: 4 scores 0.75."""

    name = "judge_score"

    async def _score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> Scores:
        question = question_of(original, self.name)
        response = as_text(require(processed, "response", "processed", self.name))

        def read(text: str) -> dict[str, float]:
            return {"judge_score": (parse_rating(text, 1, 5) - 1) / 4}

        prompt = _rate(question, response, reference_of(original), options_of(original))
        return await self._ask(prompt, read, {"judge_score": 0.0})
