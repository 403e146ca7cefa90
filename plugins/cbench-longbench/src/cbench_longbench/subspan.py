"""SubspanEM: "Lost in the Middle"'s best-subspan exact match, and LLMLingua-2's MeetingBank QA score.

Both normalize the SQuAD way with the ``regex`` module (whose ``\\b`` treats a combining mark as
part of a word, where ``re`` does not) and score 1.0 when a normalized answer is a substring of
the normalized first line of the response.  They differ only in that line: Lost in the Middle
takes ``response.split("\\n")[0].strip()`` (a response opening with a newline has an empty first
line), LLMLingua-2 strips leading newlines first.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping
from typing import Any

import regex

from .evaluator import answers_of

FIELD = "subspan_em"
_ARTICLES = regex.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
#: The data set whose first line LLMLingua-2's evaluation reads after leading newlines.
LLMLINGUA_FIRST_LINE = ("meetingbank-qa",)


def normalize(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def best_subspan_em(prediction: str, answers: Iterable[str]) -> float:
    """1.0 when some normalized answer occurs in the normalized prediction (the paper's metric)."""
    found = normalize(prediction).lower()
    return 1.0 if any(normalize(answer).lower() in found for answer in answers) else 0.0


def first_line(response: str, dataset: str) -> str:
    if dataset in LLMLINGUA_FIRST_LINE:
        response = response.lstrip("\n")
    return response.split("\n")[0].strip()


class SubspanEM:
    """``subspan_em`` of the response's first line against the row's ``answers`` (or ``answer``)."""

    name = "subspan_em"

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        answers = answers_of(original)
        response = processed.get("response")
        line = first_line("" if response is None else str(response), str(original.get("dataset") or ""))
        return {FIELD: best_subspan_em(line, answers)}
