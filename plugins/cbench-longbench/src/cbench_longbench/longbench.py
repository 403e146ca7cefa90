"""LongBench, LongBench-E and LongBench v2 rows: each task's official prompt, sent as the row's one
message, its official generation budget as ``max_tokens``, and the fields eval.py and ``--by``
read (``answers``, ``all_classes``, ``length``, ``language``; v2's ``difficulty`` and ``length``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from context_bench import UsageError
from context_bench.hub import HubSource, load_rows

from .sources import LONGBENCH, LONGBENCH_E_SOURCE, LONGBENCH_V2
from .tasks import TASKS

#: pred.py's zero-shot prompt (prompts/0shot.txt), filled by its ``$...$`` replacements.
V2_ZERO_SHOT = (
    "Please read the following text and answer the question below.\n\n<text>\n$DOC$\n</text>\n\n"
    "What is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n(B) $C_B$\n(C) $C_C$\n"
    '(D) $C_D$\n\nFormat your response as follows: "The correct answer is (insert answer here)".'
)
#: pred.py's ``max_new_tokens`` for the zero-shot prompt, and for the answer after a chain of thought.
V2_MAX_TOKENS = 128
#: pred.py's chain-of-thought prompt (prompts/0shot_cot.txt, ``--cot``), with its ``max_new_tokens``.
V2_COT = (
    "Please read the following text and answer the questions below.\n\n<text>\n$DOC$\n</text>\n\n"
    "What is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n(B) $C_B$\n(C) $C_C$\n"
    "(D) $C_D$\n\nLet\u2019s think step by step:"
)
V2_COT_MAX_TOKENS = 1024
#: pred.py's second prompt after a chain of thought (prompts/0shot_cot_ans.txt): no document, the
#: reasoning quoted where ``$COT$`` is.
V2_COT_ANSWER = (
    "Please read the following text and answer the questions below.\n\nThe text is too long and "
    "omitted here.\n\nWhat is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n"
    "(B) $C_B$\n(C) $C_C$\n(D) $C_D$\n\nLet\u2019s think step by step: $COT$\n\nBased on the above, "
    'what is the single, most likely answer choice? Format your response as follows: "The correct '
    'answer is (insert answer here)".'
)
#: What pred.py replaces with the reasoning, stripped, in the second prompt.
V2_COT_REPLY = "$COT$"


def _tasks(source: HubSource, config: str | None) -> tuple[str, ...]:
    if config is None:
        return source.configs
    if config not in source.configs:
        raise UsageError(f"unknown LongBench task {config!r}: the tasks are {', '.join(source.configs)}")
    return (config,)


def _rows(
    family: str, source: HubSource, suffix: str, config: str | None, split: str | None
) -> Iterator[dict]:
    for name in _tasks(source, config):
        task = TASKS[name]
        folder = attrs.evolve(source, configs=(), data_dir=name + suffix)
        for record in load_rows(folder, split=split):
            yield {
                "id": record["_id"],
                "dataset": f"{family}:{name}",
                "prompt": task.prompt(record["context"], record["input"]),
                "answers": list(record["answers"]),
                "all_classes": None if record["all_classes"] is None else list(record["all_classes"]),
                "length": record["length"],
                "language": record["language"],
                "max_tokens": task.max_tokens,
            }


def longbench(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """``longbench:<task>`` one task, ``longbench`` all 21 (each row's ``dataset`` names its task)."""
    return _rows("longbench", LONGBENCH, "", config, split)


def longbench_e(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """LongBench-E, the 13 tasks sampled evenly over lengths (the ``<task>_e`` folders)."""
    return _rows("longbench-e", LONGBENCH_E_SOURCE, "_e", config, split)


def v2_prompt(record: dict[str, Any], template: str = V2_ZERO_SHOT) -> str:
    """pred.py's replacements, in its order (so a ``$Q$`` inside the document is replaced too)."""
    text = template.replace("$DOC$", record["context"].strip())
    text = text.replace("$Q$", record["question"].strip())
    for letter in "ABCD":
        text = text.replace(f"$C_{letter}$", record[f"choice_{letter}"].strip())
    return text


def longbench_v2(
    config: str | None = None, split: str | None = None, options: Mapping[str, Any] | None = None
) -> Iterator[dict[str, Any]]:
    """LongBench v2's 503 questions with pred.py's zero-shot prompt, or with ``--longbench-cot`` its
    chain of thought: the reasoning asked for first (1,024 tokens), then, in a second call without
    the document, the answer with the reasoning quoted (128); ``correct_choice`` the letter."""
    cot = bool((options or {}).get("longbench_cot"))
    for record in load_rows(LONGBENCH_V2, config=config, split=split):
        row = {
            "id": record["_id"],
            "dataset": "longbench-v2",
            "prompt": v2_prompt(record, V2_COT if cot else V2_ZERO_SHOT),
            "correct_choice": record["answer"],
            "difficulty": record["difficulty"],
            "length": record["length"],
            "domain": record["domain"],
            "sub_domain": record["sub_domain"],
            "max_tokens": V2_COT_MAX_TOKENS if cot else V2_MAX_TOKENS,
        }
        if cot:
            answer = v2_prompt(record, V2_COT_ANSWER)
            row["followup"] = {"prompt": answer, "reply": V2_COT_REPLY, "max_tokens": V2_MAX_TOKENS}
        yield row
