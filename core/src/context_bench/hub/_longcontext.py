"""Long-context data sets: InfiniteBench and NoLiMa, in the layout AnswerQuality and
MultipleChoiceAccuracy read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .._catalog.longcontext import INFINITEBENCH, NOLIMA
from . import LETTERS
from ._layouts import json_lines, pick, repo_file

_CONCISE = "Answer concisely, with the answer only."
_NAME_ONLY = "Answer with the character's name only."
#: The haystack every NoLiMa needle is placed in: the first of its shuffled books.
HAYSTACK_BOOK = "haystack/rand_shuffle/rand_book_1.txt"


def _choices(question: str, options: list[str]) -> str:
    lines = "\n".join(f"{LETTERS[i]}. {option}" for i, option in enumerate(options))
    return f"{question}\n\n{lines}\n\nAnswer with the letter of the correct option."


def infinitebench(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """An InfiniteBench task, read from its own JSON-lines file: options make it multiple choice,
    otherwise its answers are aliases."""
    task = pick(INFINITEBENCH, config, split)
    for row in json_lines(repo_file(INFINITEBENCH.repo, f"{task}.jsonl")):
        example: dict[str, Any] = {"id": f"infinitebench-{task}-{row['id']}", "context": row["context"]}
        options = [str(option) for option in row.get("options") or []]
        answers = row.get("answer")
        answers = [str(answer) for answer in (answers if isinstance(answers, list) else [answers])]
        if options and answers and answers[0] in options:
            example["question"] = _choices(row["input"], options)
            example["correct_letter"] = LETTERS[options.index(answers[0])]
        else:
            example["question"] = f"{row['input']}\n\n{_CONCISE}" if row["input"] else _CONCISE
            example["answer"] = list(dict.fromkeys(answers))
        yield example


def _fill(template: str, character: str, arguments: list[str]) -> str:
    text = template.replace("{CHAR}", character)
    for number, argument in enumerate(arguments, start=1):
        text = text.replace(f"{{{number}}}", argument)
    return text


def nolima(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """NoLiMa: every test of every needle, its needle (with the set's first character) placed at
    half depth in :data:`HAYSTACK_BOOK`, its one-hop question, the character as the answer, the
    needle as the row's ``evidence``."""
    needle_set = pick(NOLIMA, config, split)
    needles = json.loads(repo_file(NOLIMA.repo, f"needlesets/{needle_set}.json").read_text("utf-8"))
    lines = repo_file(NOLIMA.repo, HAYSTACK_BOOK).read_text("utf-8").split("\n")
    middle = len(lines) // 2
    for needle in needles:
        character = needle["character_set"][0]
        questions = needle["questions"]
        question = questions.get("onehop") or next(iter(questions.values()))
        for test, spec in needle["tests"].items():
            arguments = spec.get("input_args", [])
            placed = _fill(needle["needle"], character, arguments)
            haystack = [*lines[:middle], placed, *lines[middle:]]
            yield {
                "id": f"nolima-{needle['id']}-{test}",
                "context": "\n".join(haystack),
                "question": f"{_fill(question, character, arguments)}\n\n{_NAME_ONLY}",
                "answer": character,
                "evidence": [placed],  # the needle: what the answer needs
            }
