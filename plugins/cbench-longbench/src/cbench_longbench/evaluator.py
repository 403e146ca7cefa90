"""LongBenchScore: a row's official LongBench score, in 0..1, by its task's metric."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .metrics import score
from .tasks import TASKS

FIELD = "longbench_score"
#: The data set name of LongBench v2 rows; v1 rows are ``longbench:<task>`` or ``longbench-e:<task>``.
V2 = "longbench-v2"
_V1_FAMILIES = ("longbench", "longbench-e")
#: pred.py's ``extract_answer``: the explicit form first, then the bare letter.
_V2_FORMS = (re.compile(r"The correct answer is \(([A-D])\)"), re.compile(r"The correct answer is ([A-D])"))


def v2_choice(response: str) -> str | None:
    """The letter LongBench v2's pred.py reads from a response (its ``*`` removed), or None."""
    text = response.strip().replace("*", "")
    for form in _V2_FORMS:
        found = form.search(text)
        if found:
            return found.group(1)
    return None


def answers_of(row: Mapping[str, Any]) -> list[str]:
    """The row's ground truths: ``answers`` as LongBench and Lost in the Middle name them, else
    ``answer``; a row with neither is the row's error."""
    answers = row.get("answers", row.get("answer"))
    if answers is None:
        raise ValueError("the row has no answers ('answers', or 'answer')")
    return [answers] if isinstance(answers, str) else [str(answer) for answer in answers]


class LongBenchScore:
    """``longbench_score``: the official metric of the row's task, as THUDM's eval.py applies it.

    The task is the row's ``dataset`` (``longbench:<task>``, ``longbench-e:<task>``, or
    ``longbench-v2``, whose score is 1.0 when pred.py's answer extraction reads the row's
    ``correct_choice``).  A row naming no LongBench task is the row's error, never a quiet 0.
    """

    name = "longbench"

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        dataset = str(original.get("dataset") or "")
        response = processed.get("response")
        response = "" if response is None else str(response)
        if dataset == V2:
            correct = original.get("correct_choice")
            if correct is None:
                raise ValueError("a longbench-v2 row needs correct_choice (the letter A-D)")
            return {FIELD: 1.0 if v2_choice(response) == correct else 0.0}
        family, _, name = dataset.partition(":")
        task = TASKS.get(name) if family in _V1_FAMILIES else None
        if task is None:
            raise ValueError(
                f"the row's dataset {dataset!r} names no LongBench task (longbench:<task>, "
                f"longbench-e:<task> or {V2})"
            )
        value = score(
            task.metric,
            response,
            answers_of(original),
            all_classes=original.get("all_classes"),
            first_line=task.first_line,
        )
        return {FIELD: float(value)}
