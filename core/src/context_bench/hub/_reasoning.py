"""Reasoning data sets: DROP and BIG-Bench Hard, in the layout AnswerQuality and
MultipleChoiceAccuracy read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .._catalog.reasoning import BBH, DROP
from . import load_rows
from ._layouts import load_converted

_DROP_PROMPT = (
    "Answer with the number, date or span of the passage that answers the question, and nothing else."
)
_LETTER = re.compile(r"^\(([A-J])\)$")


def drop(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """DROP: a passage, a question and its gold spans (several spans make one answer)."""
    for row in load_rows(DROP, config=config, split=split):
        spans = [span for span in row["answers_spans"]["spans"] if span.strip()]
        yield {
            "id": row["query_id"],
            "context": row["passage"],
            "question": f"{row['question']}\n\n{_DROP_PROMPT}",
            "answer": [", ".join(spans)] if spans else None,
        }


def bbh(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """A BIG-Bench Hard task: "(B)" targets become ``correct_letter``, the rest ``answer``."""
    task = config or BBH.config
    for number, row in enumerate(load_converted(BBH, task, split)):
        target = row["target"].strip()
        letter = _LETTER.match(target)
        example: dict[str, Any] = {"id": f"bbh-{task}-{number}"}
        if letter:
            example["question"] = f"{row['input']}\n\nAnswer with the letter of the correct option, as (A)."
            example["correct_letter"] = letter.group(1)
        else:
            example["question"] = f"{row['input']}\n\nReply with the final answer only."
            example["answer"] = target
        yield example
