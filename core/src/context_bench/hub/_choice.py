"""Multiple choice from the hub: each row's ``question`` shows the options lettered A, B, C, ... and
asks for the letter, and ``correct_letter`` holds it, which MultipleChoiceAccuracy scores.
TruthfulQA's generation config has no options: its rows carry ``answer`` for AnswerQuality.

Each loader takes ``config`` and ``split`` (None: the catalog's defaults, see
``context_bench._catalog._sources``) and reads its records through :func:`context_bench.hub.load_rows`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .._catalog._sources import CHOICE
from . import LETTERS, load_rows

ASK = "Answer with the letter of the correct option."


def lettered(question: str, options: Sequence[str]) -> str:
    """The question, its options as ``A. ...`` lines, and the request for a letter."""
    lines = "\n".join(f"{LETTERS[i]}. {option}" for i, option in enumerate(options))
    return f"{question}\n\n{lines}\n\n{ASK}"


def _mc(
    row_id: str, question: str, options: Sequence[str], correct: int | None, **extra: Any
) -> dict[str, Any]:
    row = {"id": row_id, "question": lettered(question, options), **extra}
    if correct is not None:  # a test split without labels: nothing to score, still something to run
        row["correct_letter"] = LETTERS[correct]
    return row


def _records(name: str, config: str | None, split: str | None) -> Iterable[dict[str, Any]]:
    return load_rows(CHOICE[name], config=config, split=split)


def mmlu(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """MMLU; ids count within a subject, so ``mmlu`` (all) and ``mmlu:SUBJECT`` share them."""
    seen: Counter[str] = Counter()
    for row in _records("mmlu", config, split):
        subject = row["subject"]
        seen[subject] += 1
        yield _mc(
            f"mmlu-{subject}-{seen[subject] - 1}",
            row["question"],
            row["choices"],
            row["answer"],
            subject=subject,
        )


def mmlu_pro(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for row in _records("mmlu-pro", config, split):
        yield _mc(
            f"mmlu-pro-{row['question_id']}",
            row["question"],
            row["options"],
            row["answer_index"],
            category=row["category"],
        )


def arc_challenge(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for row in _records("arc-challenge", config, split):
        labels = list(row["choices"]["label"])
        key = row["answerKey"]
        yield _mc(
            row["id"], row["question"], row["choices"]["text"], labels.index(key) if key in labels else None
        )


def truthfulqa(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """TruthfulQA (generation): a short answer, scored against the best and every correct answer."""
    for number, row in enumerate(_records("truthfulqa", config, split)):
        answers = list(dict.fromkeys(a for a in [row["best_answer"], *row["correct_answers"]] if a.strip()))
        yield {
            "id": f"truthfulqa-{number}",
            "question": f"{row['question']}\n\nAnswer in one short sentence.",
            "answer": answers,
            "category": row["category"],
        }


def gpqa(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """GPQA: the correct answer and three wrong ones, in an order fixed by the record (never always A)."""
    for row in _records("gpqa", config, split):
        record = row["Record ID"]
        correct = row["Correct Answer"].strip()
        options = [correct, *(row[f"Incorrect Answer {i}"].strip() for i in (1, 2, 3))]
        options.sort(key=lambda option: hashlib.sha256(f"{record}\0{option}".encode()).hexdigest())
        yield _mc(record, row["Question"].strip(), options, options.index(correct))


def hellaswag(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for row in _records("hellaswag", config, split):
        question = f"{row['activity_label']}: {row['ctx']}\n\nWhich ending continues the passage best?"
        label = str(row["label"]).strip()
        yield _mc(f"hellaswag-{row['ind']}", question, row["endings"], int(label) if label else None)


def winogrande(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    for number, row in enumerate(_records("winogrande", config, split)):
        question = f"{row['sentence']}\n\nWhich option fills the blank (_)?"
        answer = str(row["answer"]).strip()
        yield _mc(
            f"winogrande-{number}",
            question,
            [row["option1"], row["option2"]],
            int(answer) - 1 if answer else None,
        )
