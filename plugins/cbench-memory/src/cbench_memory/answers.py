"""The answer pass of a memory run: each memory system ingests each conversation, then answers.

Conversations run in parallel (a factory's) or one after another (an instance's); every answer is
kept as it arrives, in memory and in the run cache, for the scoring pass to read back.  With a call
deadline, a memory system that does not return from ``reset``, ``ingest`` or ``query`` in time
costs the rest of that conversation (the instance is still busy), and an instance serving every
conversation the rest of them; other systems and a factory's other conversations go on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any

import attrs

from context_bench.cache import RunCache
from context_bench.datasets import MalformedRow
from context_bench.errors import DeadlineExceeded, UsageError
from context_bench.identity import content_hash, identity
from context_bench.progress import Progress

from .layout import Conversation

#: Numeric keys of a query result that the row keeps (tokens become EvalRow fields, others meta).
_RESULT_NUMBERS = ("input_tokens", "output_tokens", "cost", "context_tokens")


class IngestFailed(RuntimeError):
    """The memory system could not be created, reset or fed the conversation: every question of it fails."""


class QueryFailed(RuntimeError):
    """The memory system raised (or answered nonsense) for this question."""


def _is_factory(system: Any) -> bool:
    return isinstance(system, type) or (callable(system) and not hasattr(system, "query"))


class SystemEntry:
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
        #: Why an instance serving every conversation can serve no more (a call past the deadline).
        self.stuck: str | None = None

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
class Job:
    """The questions of one conversation that one memory system still has to answer."""

    entry: SystemEntry
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


def _within(deadline: float | None, method: Callable[..., Any], *args: Any) -> Any:
    """``method(*args)``, or DeadlineExceeded once ``deadline`` seconds pass (the call is left to
    finish in a daemon thread: Python cannot stop it)."""
    if deadline is None:
        return method(*args)
    done = threading.Event()
    outcome: dict[str, Any] = {}

    def call() -> None:
        try:
            outcome["value"] = method(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=call, daemon=True, name="cbench-memory-call").start()
    if not done.wait(deadline):
        raise DeadlineExceeded.of_call(getattr(method, "__name__", "call"), deadline)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class AnswerPass:
    def __init__(self, cache: RunCache | None, progress: Progress, call_timeout: float | None = None) -> None:
        self.cache = cache
        self.progress = progress
        self.call_timeout = call_timeout
        self.stop = threading.Event()

    def run(self, jobs: list[Job], max_concurrency: int) -> None:
        if not jobs:
            return
        # A plain instance serves its conversations one after another, in data set order; a
        # factory's conversations each run on their own.
        chains: list[list[Job]] = []
        serial: dict[int, list[Job]] = {}
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

    def _chain(self, jobs: list[Job]) -> None:
        for job in jobs:
            if self.stop.is_set():
                return
            self._conversation(job)

    def _conversation(self, job: Job) -> None:
        entry, conv = job.entry, job.conversation
        if entry.stuck is not None:
            self._give_up(entry, job.rows, IngestFailed(f"conversation {conv.id!r}: {entry.stuck}"))
            return
        within = self.call_timeout
        with entry.session() as make:
            try:
                system = make()
                start = time.perf_counter()
                _within(within, system.reset)
                _within(within, system.ingest, [dict(turn) for turn in conv.turns])
            except Exception as exc:  # noqa: BLE001 - costs this conversation's rows, not the run
                failure = IngestFailed(f"conversation {conv.id!r}: {type(exc).__name__}: {exc}")
                self._give_up(entry, job.rows, failure, stuck=isinstance(exc, DeadlineExceeded))
                return
            ingest_latency = time.perf_counter() - start
            for number, row in enumerate(job.rows):
                if self.stop.is_set():
                    return
                start = time.perf_counter()
                try:
                    output = _answer(_within(within, system.query, row["question"]))
                except DeadlineExceeded as exc:  # the instance is still busy: the rest cannot be asked
                    self._record(entry, row, QueryFailed(f"{type(exc).__name__}: {exc}"))
                    busy = QueryFailed(
                        f"not asked: the memory system did not return from an earlier question ({exc})"
                    )
                    self._give_up(entry, job.rows[number + 1 :], busy, stuck=True)
                    return
                except Exception as exc:  # noqa: BLE001 - costs this row only
                    self._record(entry, row, QueryFailed(f"{type(exc).__name__}: {exc}"))
                    continue
                output.update(latency=time.perf_counter() - start, ingest_latency=ingest_latency)
                self._record(entry, row, output)

    def _give_up(
        self, entry: SystemEntry, rows: list[dict[str, Any]], failure: Exception, stuck: bool = False
    ) -> None:
        """Record ``failure`` on ``rows``; a stuck instance that serves every conversation serves no more."""
        if stuck and entry.factory is None:
            entry.stuck = f"the memory system is still busy with a call past the deadline ({failure})"
        for row in rows:
            self._record(entry, row, failure)

    def _record(self, entry: SystemEntry, row: dict[str, Any], outcome: dict[str, Any] | Exception) -> None:
        entry.answers[(row["dataset"], row["id"])] = outcome
        if self.cache is not None and not isinstance(outcome, Exception):
            self.cache.store(
                self.cache.path(entry.stand_in, row["dataset"]), row["id"], content_hash(row), outcome, {}
            )
        self.progress.update(errors=1 if isinstance(outcome, Exception) else 0)


def unanswered(entry: SystemEntry, conv: Conversation, cache: RunCache | None) -> list[dict[str, Any]]:
    rows = [row for row in conv.rows if not isinstance(row, MalformedRow)]
    if cache is None:
        return rows
    pending = []
    for row in rows:
        cached = cache.lookup(cache.path(entry.stand_in, row["dataset"]), row["id"], content_hash(row))
        if cached is None or cached.output is None:
            pending.append(row)
    return pending
