"""``zeroscrolls:<task>``: ZeroSCROLLS (Shaham et al., 2023), ``tau/zero_scrolls``, prompted as the
paper's chat models were (tau-nlp/zero_scrolls, ``experiments/api/openai_api.py``).

Each hub record's ``input`` is already the whole canonical prompt: instruction, context, query and
the response header (``Answer:``, ``Summary:``), with character offsets of the query
(``query_start_index``, ``query_end_index``).  For a chat model the paper appends "Do not provide
any explanation." to the instruction of every task but the four summaries, and cuts the prompt
at the end of the query, dropping the response header (its appendix A, Tables 5 and 6); the
generation budget is ``dataset_to_leave_tokens_for_generations`` of ``experiments/api/api.py``.

A task with several references (Qasper, NarrativeQA, SQuALITY) stores one record per reference
under one ``id``; their outputs become the row's ``answers``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from context_bench import UsageError
from context_bench.hub import load_rows

from .sources import ZEROSCROLLS, ZEROSCROLLS_TASKS

#: What ``insert_format_request`` adds to the instruction of a non-summary task for chat models.
FORMAT_REQUEST = "Do not provide any explanation."


@attrs.frozen
class ZeroScrollsTask:
    """One ZeroSCROLLS task: its metric (paper §3.3) and the new tokens the paper left it."""

    name: str
    #: A key of :data:`cbench_longbench.zeroscrolls_metrics.METRICS`.
    metric: str
    max_tokens: int

    @property
    def summary(self) -> bool:
        """The four summarization tasks, whose chat prompt gets no format request."""
        return self.metric == "rouge"


_TASKS = [
    ZeroScrollsTask("gov_report", "rouge", 1024),
    ZeroScrollsTask("summ_screen_fd", "rouge", 512),
    ZeroScrollsTask("qmsum", "rouge", 512),
    ZeroScrollsTask("squality", "rouge", 512),
    ZeroScrollsTask("qasper", "f1", 128),
    ZeroScrollsTask("narrative_qa", "f1", 64),
    ZeroScrollsTask("quality", "accuracy", 10),
    ZeroScrollsTask("musique", "f1", 32),
    ZeroScrollsTask("space_digest", "exp_similarity", 36),
    ZeroScrollsTask("book_sum_sort", "concordance_index", 256),
]
#: The ten tasks by name, in the order of :data:`cbench_longbench.sources.ZEROSCROLLS_TASKS`.
TASKS: dict[str, ZeroScrollsTask] = {task.name: task for task in _TASKS}


def chat_prompt(record: dict[str, Any], task: ZeroScrollsTask) -> str:
    """openai_api.py's ``build_prompt`` for a chat model, short of truncation: the format request
    after the instruction (the text before the first blank line, stripped, the offsets moved by
    the request and its space), then the input up to the end of the query."""
    text = record["input"]
    end = record["query_end_index"]
    if not task.summary:
        cut = text.find("\n\n")
        text = f"{text[:cut].strip()} {FORMAT_REQUEST}{text[cut:]}"
        end += len(FORMAT_REQUEST) + 1
    return text[:end]


def _tasks(config: str | None) -> tuple[str, ...]:
    if config is None:
        return ZEROSCROLLS_TASKS
    if config not in TASKS:
        raise UsageError(f"unknown ZeroSCROLLS task {config!r}: the tasks are {', '.join(ZEROSCROLLS_TASKS)}")
    return (config,)


def _grouped(records: Any) -> Iterator[tuple[dict[str, Any], list[str]]]:
    """Consecutive records of one ``id`` as (the first record, every non-empty output)."""
    first: dict[str, Any] | None = None
    outputs: list[str] = []
    for record in records:
        if first is not None and record["id"] != first["id"]:
            yield first, outputs
            first, outputs = None, []
        if first is None:
            first = record
        if record.get("output"):
            outputs.append(record["output"])
    if first is not None:
        yield first, outputs


def _rows(names: tuple[str, ...], split: str | None) -> Iterator[dict[str, Any]]:
    for name in names:
        task = TASKS[name]
        folder = attrs.evolve(ZEROSCROLLS, configs=(), data_dir=name)
        for record, outputs in _grouped(load_rows(folder, split=split)):
            yield {
                "id": f"zeroscrolls-{name}-{record['id']}",
                "dataset": f"zeroscrolls:{name}",
                "prompt": chat_prompt(record, task),
                "answers": outputs,
                "max_tokens": task.max_tokens,
            }


def zeroscrolls(config: str | None = None, split: str | None = None) -> Iterator[dict[str, Any]]:
    """``zeroscrolls:<task>`` one task, ``zeroscrolls`` all ten; split ``validation`` by default
    (``test`` has no answers: its rows are sent, and scoring each is that row's error)."""
    return _rows(_tasks(config), split)
