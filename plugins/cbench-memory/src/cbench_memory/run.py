"""``evaluate_memory``: run memory systems over conversations, then score the answers like any run.

Two passes.  The memory pass runs each conversation (reset, ingest, then every question in order)
with conversations in parallel, and appends every answer to the run cache the moment it arrives.
The scoring pass is :func:`context_bench.evaluate` itself, over one row per QA pair, with a
stand-in system that hands back the recorded answers: evaluators, caching of scores, error
accounting and the summary are the runner's own.  Both passes share one :class:`RunCache`, and the
scoring pass is a ``run="memory"`` run: auto-wire rules say themselves whether they serve it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from context_bench.cache import RunCache
from context_bench.datasets import Dataset, MalformedRow
from context_bench.errors import UsageError
from context_bench.identity import content_hash, identity
from context_bench.metrics import percentile
from context_bench.plugins import PluginHost
from context_bench.progress import Progress
from context_bench.records import EvalResult, EvalRow
from context_bench.runner import evaluate

from .layout import Conversation, memory_rows

#: Numeric keys of a query result that the row keeps (tokens become EvalRow fields, others meta).
_RESULT_NUMBERS = ("input_tokens", "output_tokens", "cost", "context_tokens")


class IngestFailed(RuntimeError):
    """The memory system could not be created, reset or fed the conversation: every question of it fails."""


class QueryFailed(RuntimeError):
    """The memory system raised (or answered nonsense) for this question."""


def _is_factory(system: Any) -> bool:
    return isinstance(system, type) or (callable(system) and not hasattr(system, "query"))


class _Entry:
    """A memory system as given: an instance (serial conversations) or a factory (one per conversation)."""

    def __init__(self, given: Any) -> None:
        self.factory: Callable[[], Any] | None = given if _is_factory(given) else None
        try:
            self._probe = given() if self.factory is not None else given
        except Exception as exc:  # noqa: BLE001 - a setup mistake: say which system, in one line
            raise UsageError(
                f"creating the memory system {given!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        for method in ("reset", "ingest", "query"):
            if not callable(getattr(self._probe, method, None)):
                raise UsageError(f"memory system {self._probe!r} has no {method}() method (see MemorySystem)")
        self.name = str(getattr(self._probe, "name", type(self._probe).__name__))
        self.identity = identity(self._probe)
        self._lock = threading.Lock()
        self.answers: dict[tuple[str, str], dict[str, Any] | Exception] = {}
        self.stand_in = _Recorded(self.name, self.identity, self.answers)

    @contextmanager
    def session(self) -> Iterator[Callable[[], Any]]:
        """How to get the system for one conversation (a factory may raise: the caller catches it)."""
        if self.factory is None:  # the pass runs an instance's conversations one at a time
            yield lambda: self._probe
            return
        with self._lock:  # the probe instance serves the first conversation
            probe, self._probe = self._probe, None
        yield (lambda: probe) if probe is not None else self.factory


@attrs.define
class _Recorded:
    """The scoring pass's system: returns what the memory system answered (or raises what it raised)."""

    name: str
    memory_system: str
    answers: dict[tuple[str, str], Any] = attrs.field(eq=False, repr=False)

    def config(self) -> dict[str, Any]:
        return {"memory_system": self.memory_system}

    def process(self, example: dict) -> dict:
        found = self.answers.get((example["dataset"], example["id"]))
        if isinstance(found, Exception):
            raise type(found)(str(found))
        if found is None:
            raise QueryFailed("no answer was recorded for this question")
        return dict(found)


@attrs.define
class _Job:
    """The questions of one conversation that one memory system still has to answer."""

    entry: _Entry
    conversation: Conversation
    rows: list[dict[str, Any]]


def _answer(result: Any) -> dict[str, Any]:
    if isinstance(result, str):
        return {"response": result}
    if isinstance(result, Mapping) and isinstance(result.get("response"), str):
        extra = {
            k: float(result[k])
            for k in _RESULT_NUMBERS
            if isinstance(result.get(k), (int, float)) and not isinstance(result.get(k), bool)
        }
        return {"response": result["response"], **extra}
    raise TypeError(
        f"query() returned {type(result).__name__}; expected a str or a mapping with a 'response' str"
    )


class _MemoryPass:
    def __init__(self, cache: RunCache | None, progress: Progress) -> None:
        self.cache = cache
        self.progress = progress
        self.stop = threading.Event()

    def run(self, jobs: list[_Job], max_concurrency: int) -> None:
        if not jobs:
            return
        # A plain instance serves its conversations one after another, in data set order; a
        # factory's conversations each run on their own.
        chains: list[list[_Job]] = []
        serial: dict[int, list[_Job]] = {}
        for job in jobs:
            if job.entry.factory is None:
                if id(job.entry) not in serial:
                    serial[id(job.entry)] = []
                    chains.append(serial[id(job.entry)])
                serial[id(job.entry)].append(job)
            else:
                chains.append([job])
        with ThreadPoolExecutor(
            max_workers=min(max_concurrency, len(chains)), thread_name_prefix="cbench-memory"
        ) as pool:
            futures = [pool.submit(self._chain, chain) for chain in chains]
            try:
                for future in as_completed(futures):
                    future.result()
            except BaseException:
                self.stop.set()
                for future in futures:
                    future.cancel()
                raise

    def _chain(self, jobs: list[_Job]) -> None:
        for job in jobs:
            if self.stop.is_set():
                return
            self._conversation(job)

    def _conversation(self, job: _Job) -> None:
        entry, conv = job.entry, job.conversation
        with entry.session() as make:
            try:
                system = make()
                start = time.perf_counter()
                system.reset()
                system.ingest([dict(turn) for turn in conv.turns])
            except Exception as exc:  # noqa: BLE001 - costs this conversation's rows, not the run
                failure = IngestFailed(f"conversation {conv.id!r}: {type(exc).__name__}: {exc}")
                for row in job.rows:
                    self._record(entry, row, failure)
                return
            ingest_latency = time.perf_counter() - start
            for row in job.rows:
                if self.stop.is_set():
                    return
                start = time.perf_counter()
                try:
                    output = _answer(system.query(row["question"]))
                except Exception as exc:  # noqa: BLE001 - costs this row only
                    self._record(entry, row, QueryFailed(f"{type(exc).__name__}: {exc}"))
                    continue
                output.update(latency=time.perf_counter() - start, ingest_latency=ingest_latency)
                self._record(entry, row, output)

    def _record(self, entry: _Entry, row: dict[str, Any], outcome: dict[str, Any] | Exception) -> None:
        entry.answers[(row["dataset"], row["id"])] = outcome
        if self.cache is not None and not isinstance(outcome, Exception):
            self.cache.store(
                self.cache.path(entry.stand_in, row["dataset"]), row["id"], content_hash(row), outcome, {}
            )
        self.progress.update(errors=1 if isinstance(outcome, Exception) else 0)


@attrs.frozen
class MemoryFigures:
    """Per (system, data set): how many conversations, and the time their ingestion took."""

    name: str = "memory"

    def compute(self, rows: Sequence[EvalRow]) -> dict[str, float]:
        conversations: dict[Any, float | None] = {}
        for row in rows:
            cid = row.meta.get("conversation_id")
            latency = row.meta.get("ingest_latency")
            if cid is not None and conversations.get(cid) is None:
                conversations[cid] = latency if isinstance(latency, (int, float)) else None
        ingest = [v for v in conversations.values() if v is not None]
        figures = {"conversations": float(len(conversations))}
        if ingest:
            figures.update(
                ingest_latency_mean=sum(ingest) / len(ingest), ingest_latency_p95=percentile(ingest, 95)
            )
        return figures


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
    dataset: Any,
    evaluators: Sequence[Any] | None = None,
    metrics: Sequence[Any] | None = None,
    *,
    max_examples: int | None = None,
    max_concurrency: int = 8,
    cache_dir: str | Path | None = None,
    progress: bool = True,
    options: Mapping[str, Any] | None = None,
    add_evaluators: Sequence[Any] = (),
    exclude_evaluators: Iterable[str] = (),
    dataset_name: str | None = None,
    host: PluginHost | None = None,
) -> EvalResult:
    """Benchmark memory systems: each ingests every conversation, then answers its questions.

    ``systems`` is a memory system, a factory (a class or zero-argument callable; each conversation
    gets its own instance, so conversations run concurrently), or a list of them; a plain instance
    serves one conversation at a time.  ``dataset`` is an iterable of conversations in the layout of
    :mod:`cbench_memory.layout`, a :class:`Dataset`, or a mapping name -> conversations.
    ``max_examples`` caps the QA rows per data set (only conversations holding them are run).  Every
    QA pair becomes a row scored by ``evaluators`` (auto-wired when None) with a per-``qa_type``
    breakdown; ``row.meta`` holds ``conversation_id``, ``qa_type`` and ``ingest_latency``.  With
    ``cache_dir``, answers are kept as they arrive: a re-run skips conversations whose questions are
    all answered and scores only what is missing.  Other arguments are those of ``evaluate``.
    """
    if max_concurrency < 1:
        raise ValueError("max_concurrency must be at least 1")
    entries = [_Entry(s) for s in (systems if isinstance(systems, (list, tuple)) else [systems])]
    if not entries:
        raise UsageError("evaluate_memory() needs at least one memory system")
    plans = [(name, *_plan(name, convs, max_examples)) for name, convs in _named(dataset, dataset_name)]
    cache = RunCache(cache_dir) if cache_dir else None
    jobs = [
        _Job(entry, conv, pending)
        for entry in entries
        for _, _, convs in plans
        for conv in convs
        if (pending := _pending(entry, conv, cache))
    ]
    bar = Progress(sum(len(job.rows) for job in jobs), enabled=progress)
    try:
        _MemoryPass(cache, bar).run(jobs, max_concurrency)
    finally:
        bar.close()
        if cache is not None:
            cache.close()
    examples = {
        (row["dataset"], row["id"]): row for _, rows, _ in plans for row in rows if isinstance(row, dict)
    }
    return evaluate(
        [entry.stand_in for entry in entries],
        {name: rows for name, rows, _ in plans},
        evaluators,
        [MemoryFigures(), *(metrics or ())],
        max_concurrency=max_concurrency,
        cache=cache,
        progress=progress,
        options=options,
        add_evaluators=add_evaluators,
        exclude_evaluators=exclude_evaluators,
        host=host,
        breakdown=("qa_type",),
        run="memory",
        finish_row=lambda row: _lift_meta(row, examples.get((row.dataset, row.example_id))),
    )


def _pending(entry: _Entry, conv: Conversation, cache: RunCache | None) -> list[dict[str, Any]]:
    rows = [row for row in conv.rows if not isinstance(row, MalformedRow)]
    if cache is None:
        return rows
    pending = []
    for row in rows:
        cached = cache.lookup(cache.path(entry.stand_in, row["dataset"]), row["id"], content_hash(row))
        if cached is None or cached.output is None:
            pending.append(row)
    return pending


def _lift_meta(row: EvalRow, example: Mapping[str, Any] | None) -> None:
    """Meta a memory row carries: what the memory pass recorded beside the answer (``ingest_latency``,
    ``context_tokens``), the conversation id and the QA type."""
    row.meta.update(row.meta.pop("output", None) or {})
    if example is not None:
        row.meta["conversation_id"] = example["conversation_id"]
        if example.get("qa_type") is not None:
            row.meta["qa_type"] = example["qa_type"]


__all__ = ["IngestFailed", "MemoryFigures", "QueryFailed", "evaluate_memory"]
