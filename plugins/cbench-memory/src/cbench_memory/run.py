"""``evaluate_memory``: run memory systems over conversations, then score the answers like any run.

Two passes.  The answer pass runs each conversation (reset, ingest, then every question in order)
with conversations in parallel, and appends every answer to the run cache the moment it arrives.
The scoring pass is :func:`context_bench.evaluate` itself, over one row per QA pair, with a
stand-in system that hands back the recorded answers: evaluators, caching of scores, error
accounting and the summary are the runner's own.  Both passes share one :class:`RunCache`, and the
scoring pass is a memory run (:class:`~context_bench.runner.SecondPass`): auto-wire rules say
themselves whether they serve it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from context_bench.cache import RunCache
from context_bench.config import RunConfig, from_deprecated
from context_bench.datasets import Dataset, MalformedRow
from context_bench.errors import UsageError
from context_bench.execution import Executor, executor_for
from context_bench.plugins import PluginHost
from context_bench.progress import Progress
from context_bench.records import EvalResult, EvalRow
from context_bench.runner import SecondPass, evaluate

from .answers import AnswerPass, Job, SystemEntry, unanswered
from .figures import MemoryFigures
from .layout import Conversation, memory_rows


def _named(dataset: Any, dataset_name: str | None) -> list[tuple[str, Iterable[Any]]]:
    if isinstance(dataset, Dataset):
        return [(dataset_name or dataset.name, dataset.rows)]
    if isinstance(dataset, Mapping) and not ("turns" in dataset and "qa_pairs" in dataset):
        return list(dataset.items())
    if isinstance(dataset, (str, Path)):
        raise TypeError(
            "evaluate_memory() takes conversations, not a path: use cbench_memory.load_memory(path)"
        )
    if isinstance(dataset, Mapping):
        dataset = [dataset]
    return [(dataset_name or "memory", dataset)]


def _plan(
    name: str, conversations: Iterable[Any], max_examples: int | None
) -> tuple[list[Any], list[Conversation]]:
    """The rows to score (QA rows, input errors) and their conversations, cut at ``max_examples`` rows."""
    rows: list[Any] = []
    kept: list[Conversation] = []
    for conv in memory_rows(conversations, name):
        if max_examples is not None and len(rows) >= max_examples:
            break
        if isinstance(conv, MalformedRow):
            rows.append(conv)
            continue
        room = len(conv.rows) if max_examples is None else max_examples - len(rows)
        conv = attrs.evolve(conv, rows=conv.rows[:room])
        rows.extend(conv.rows)
        kept.append(conv)
    return rows, kept


def evaluate_memory(
    systems: Any,
    datasets: Any,
    config: RunConfig | None = None,
    *,
    host: PluginHost | None = None,
    executor: Executor | None = None,
    **deprecated: Any,
) -> EvalResult:
    """Benchmark memory systems: each ingests every conversation, then answers its questions, as
    ``config`` says (a :class:`~context_bench.config.RunConfig`; None: the defaults).

    ``systems`` is a memory system, a factory (a class or zero-argument callable; each conversation
    gets its own instance, so conversations run concurrently), or a list of them; a plain instance
    serves one conversation at a time.  ``datasets`` is an iterable of conversations in the layout
    of :mod:`cbench_memory.layout`, a :class:`Dataset`, or a mapping name -> conversations.
    ``config.scope.max_examples`` caps the QA rows per data set (only conversations holding them are
    run).  Every QA pair becomes a row scored by the configured evaluators (auto-wired when none are
    named) with a per-``qa_type`` breakdown; ``row.meta`` holds ``conversation_id``, ``qa_type`` and
    ``ingest_latency``.  With ``config.output.cache_dir``, answers are kept as they arrive: a re-run
    skips conversations whose questions are all answered and scores only what is missing.  The
    run's call deadline (``config.limits.call_timeout``, or the executor's own) bounds every call:
    a memory system's ``reset``/``ingest``/``query`` past it fails that question and the rest of its
    conversation (the instance is still busy; a plain instance serves no further conversation), and
    an evaluator's past it fails that row.  ``executor`` works the scoring pass (the answers pass
    runs here).  The progress display labels the two passes ``answering`` and ``scoring``.

    The keywords of earlier releases (``max_examples=``, ``progress=``, ...) still work for one
    release, with a DeprecationWarning.
    """
    if deprecated or (config is not None and not isinstance(config, RunConfig)):
        config, _ = from_deprecated("evaluate_memory()", config, deprecated, executor=executor is not None)
    config = config or RunConfig()
    executor = executor_for(config.limits, executor)
    entries = [SystemEntry(s) for s in (systems if isinstance(systems, (list, tuple)) else [systems])]
    if not entries:
        raise UsageError("evaluate_memory() needs at least one memory system")
    scope, output = config.scope, config.output
    plans = [
        (name, *_plan(name, convs, scope.max_examples))
        for name, convs in _named(datasets, scope.dataset_name)
    ]
    cache = RunCache(output.cache_dir) if output.cache_dir else None
    jobs = [
        Job(entry, conv, questions)
        for entry in entries
        for _, _, convs in plans
        for conv in convs
        if (questions := unanswered(entry, conv, cache))
    ]
    bar = Progress(sum(len(job.rows) for job in jobs), label="answering", enabled=output.progress)
    try:
        AnswerPass(cache, bar, executor.call_timeout).run(jobs, config.limits.max_concurrency)
    finally:
        bar.close()
        if cache is not None:
            cache.close()
    examples = {
        (row["dataset"], row["id"]): row for _, rows, _ in plans for row in rows if isinstance(row, dict)
    }
    analysis = config.analysis
    scoring = attrs.evolve(
        config,
        analysis=attrs.evolve(analysis, metrics=(MemoryFigures(), *analysis.metrics), breakdown=("qa_type",)),
        output=attrs.evolve(output, cache_dir=None),
    )
    return evaluate(
        [entry.stand_in for entry in entries],
        {name: rows for name, rows, _ in plans},
        scoring,
        host=host,
        executor=executor,
        second_pass=SecondPass(
            kind="memory",
            cache=cache,
            finish_row=lambda row: _lift_meta(row, examples.get((row.dataset, row.example_id))),
        ),
    )


def _lift_meta(row: EvalRow, example: Mapping[str, Any] | None) -> None:
    """Meta a memory row carries: what the answer pass recorded beside the answer (``ingest_latency``,
    ``context_tokens``), the conversation id and the QA type.  The row's input keeps its question and
    answers but not the conversation (the judges' ``context``): a JSONL report would otherwise repeat
    a whole conversation on every one of its questions; ``conversation_id`` names it."""
    row.meta.update(row.meta.pop("output", None) or {})
    if row.example is not None and "context" in row.example:
        row.example = {key: value for key, value in row.example.items() if key != "context"}
    if example is not None:
        row.meta["conversation_id"] = example["conversation_id"]
        if example.get("qa_type") is not None:
            row.meta["qa_type"] = example["qa_type"]


__all__ = ["evaluate_memory"]
