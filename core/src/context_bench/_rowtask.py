"""One unit of work: an example, the system that processes it and the evaluators that score it.

The names follow the protocols: the system's ``process`` gets the ``original`` example, and each
evaluator's ``score(original, processed)`` gets it with the system's output, ``processed``: each
evaluator its own copy of both, so that one evaluator cannot change what another one scores.

A RowTask is plain data (picklable), and :func:`row_steps` depends on nothing but the task, so an
executor may run it in this process, in a worker thread, or on another machine.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import attrs

from ._encodable import repair_text
from ._scores import Scores
from .bounds import check_figure
from .cache import CachedRow
from .errors import DeadlineExceeded
from .metering import LINK, MeterLink
from .records import EvalRow, RowError

#: Keys of a system's output that become EvalRow fields rather than ``meta``.
_ROW_FIELDS = ("input_tokens", "output_tokens", "cost", "latency")

#: The ``meta`` key listing the evaluators that scored the row (returned scores or a soft failure);
#: the summary's failure rate of an evaluator is over these rows.
SCORED_BY = "scored_by"

#: The ``meta`` key listing the score fields that are fallbacks (their evaluator failed on the row):
#: the reports show them as failed beside the mean, not as a bad answer.
FALLBACKS = "fallbacks"

#: Keys of a system's output that are neither row fields nor ``meta["output"]`` (``metered`` is
#: what the run's meter measured, ``evidence_kept`` what of the evidence it carried, both kept with
#: the output in the cache: a system sets neither).
_NOT_EXTRAS = ("response", "repaired", "metered", "evidence_kept")
_NOT_META = frozenset(_ROW_FIELDS + _NOT_EXTRAS)

#: What a row whose reply was repaired notes (``EvalRow.meta["repaired"]``).
REPAIRED_REPLY = "the response had lone surrogates (not encodable as UTF-8): replaced with U+FFFD"

Step = tuple[Any, str, tuple]
Steps = Generator[Step, Any, EvalRow]


@attrs.define
class RowTask:
    index: int
    system: Any
    dataset: str
    example_id: str
    original: Any
    evaluators: list[Any] = attrs.Factory(list)
    evaluator_keys: list[str] = attrs.Factory(list)
    error: RowError | None = None
    cached: CachedRow | None = None
    meta: dict[str, Any] | None = None
    #: Keep what is computed afresh on the row (``EvalRow.fresh``) so the runner can cache it.
    record: bool = False
    #: The run's meter as the row's system sees it (:func:`context_bench.metering.current`).
    meter: MeterLink | None = None
    #: Which of the row's ``--repeats`` this is (0: the first; each is cached apart).
    repeat: int = 0

    def row(self, error: RowError | None = None) -> EvalRow:
        """The task's row before anything ran (its system's name, its place, its ``meta``), or
        given up with ``error`` (a call past its deadline, a worker that died): nothing of such a
        row is cached, so a re-run retries it.  Every way of running a task makes its row here."""
        row = EvalRow(
            system=getattr(self.system, "name", type(self.system).__name__),
            dataset=self.dataset,
            example_id=self.example_id,
            index=self.index,
            meta=dict(self.meta) if self.meta else {},
            fresh={} if self.record and error is None else None,
        )
        if error is not None:
            row.errors.append(error)
        return row


def row_steps(task: RowTask) -> Steps:
    """The logic of one row, written once for every way of running it.

    It yields each call it needs as ``(object, method, args)`` and receives the result, or has the
    call's exception thrown in; a driver decides whether calls run inline, in threads or awaited.
    Every exception becomes a RowError on the row; nothing propagates.
    """
    row = task.row()
    system_name = row.system
    if task.error is not None:
        row.errors.append(task.error)
        return row
    cached = task.cached
    if cached is not None and cached.output is not None:
        processed = cached.output
    else:
        start = time.perf_counter()
        link = LINK.set(task.meter)  # what current() gives the system while it runs
        try:
            processed = yield (task.system, "process", (task.original,))
        except Exception as exc:  # noqa: BLE001 - isolation
            row.errors.append(RowError.from_exception("system", system_name, exc))
            return row
        finally:
            LINK.reset(link)
        elapsed = time.perf_counter() - start
        if type(processed) is not dict or "response" not in processed:
            row.errors.append(
                RowError(
                    "system",
                    system_name,
                    "TypeError",
                    f"process() returned {type(processed).__name__} without a 'response' key",
                )
            )
            return row
        if "latency" not in processed:  # a system may report its own (None: not measurable)
            processed = {**processed, "latency": elapsed}
        beyond = _beyond_bounds(processed)
        if beyond is not None:  # 1e308 tokens would make every sum infinite: the row's error
            row.errors.append(RowError("system", system_name, "ValueError", beyond))
            return row
        response = processed["response"]
        if type(response) is str and not response.isascii() and repair_text(response) is not response:
            # noted in the output itself, so a re-run from the cache notes it too
            processed = {**processed, "response": repair_text(response), "repaired": REPAIRED_REPLY}
        if task.record:
            row.fresh["output"] = processed
    _fill_output(row, processed)
    for evaluator, key in zip(task.evaluators, task.evaluator_keys, strict=False):
        hit = cached.scores.get(key) if cached is not None else None
        try:
            if hit is not None:
                scores = Scores(hit["scores"], usage=hit.get("usage"), weights=hit.get("weights"))
            else:
                scores = yield (evaluator, "score", (_view(task.original), _view(processed)))
            _merge(row, evaluator, scores, key, record=task.record and hit is None)
        except Exception as exc:  # noqa: BLE001 - one evaluator's failure leaves the others running
            row.errors.append(RowError.from_exception("evaluator", evaluator_name(evaluator), exc))
    return row


def run_row(task: RowTask, before_call: Callable[[Any, str], None] | None = None) -> EvalRow:
    """Run a row with every call made inline, in this thread.

    ``before_call(obj, method)``, if given, is told of each call as it starts (a supervisor that
    enforces the call deadline watches the calls this way).
    """
    steps = row_steps(task)
    try:
        step = next(steps)
        while True:
            obj, method, args = step
            if before_call is not None:
                before_call(obj, method)
            try:
                result = getattr(obj, method)(*args)
            except Exception as exc:  # noqa: BLE001 - handed to the row's own handling
                step = steps.throw(exc)
            else:
                step = steps.send(result)
    except StopIteration as done:
        return done.value


async def arun_row(task: RowTask, call: Callable[[Any, str, tuple], Awaitable[Any]]) -> EvalRow:
    """Run a row on an event loop; ``call`` awaits each step (``a<method>`` or a worker thread)."""
    steps = row_steps(task)
    try:
        step = next(steps)
        while True:
            try:
                result = await call(*step)
            except Exception as exc:  # noqa: BLE001
                step = steps.throw(exc)
            else:
                step = steps.send(result)
    except StopIteration as done:
        return done.value


def stage_of(obj: Any, method: str) -> tuple[str, str]:
    """The stage (``system``/``evaluator``) and the name of whoever a call goes to, for a RowError."""
    if method == "process":
        return "system", getattr(obj, "name", type(obj).__name__)
    return "evaluator", evaluator_name(obj)


def deadline_error(obj: Any, method: str, timeout: float) -> RowError:
    """The error of a call that did not return within the call deadline."""
    return RowError.from_exception(*stage_of(obj, method), DeadlineExceeded.of_call(method, timeout))


def timed_out_row(task: RowTask, obj: Any, method: str, timeout: float) -> EvalRow:
    """The row of a task whose call is past the deadline: it is abandoned with that error."""
    return task.row(deadline_error(obj, method, timeout))


def _view(mapping: Any) -> Any:
    """An evaluator's own copy of the example or the output: what it assigns, or appends to a list
    or dict in it, reaches neither the other evaluators nor the row nor the cache."""
    if not isinstance(mapping, dict):
        return mapping
    view = dict(mapping)
    for key, value in view.items():
        kind = type(value)
        if kind is list or kind is dict:
            view[key] = kind(value)
    return view


def evaluator_name(evaluator: Any) -> str:
    return getattr(evaluator, "name", type(evaluator).__name__)


def _fill_output(row: EvalRow, processed: dict[str, Any]) -> None:
    response = processed.get("response")
    row.response = response if response is None or type(response) is str else str(response)
    known = 1
    repaired = processed.get("repaired")
    if repaired is not None:
        known += 1
        noted = row.meta.get("repaired")  # the row's own text may have been repaired too
        row.meta["repaired"] = repaired if noted is None else f"{noted}; {repaired}"
    for field in _ROW_FIELDS:
        value = processed.get(field)
        if value is not None:
            known += 1
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                setattr(row, field, float(value))
    if len(processed) > known and not processed.keys() <= _NOT_META:
        extras = {k: v for k, v in processed.items() if k not in _ROW_FIELDS and k not in _NOT_EXTRAS}
        if extras:
            row.meta.setdefault("output", extras)


def _beyond_bounds(processed: dict[str, Any]) -> str | None:
    """What is wrong with the first figure of a system's output past its documented bound
    (:data:`~context_bench.bounds.FIGURES`); None when all are within them.  A figure that is not
    a finite number is no figure (left out of the row), not an error."""
    for field in _ROW_FIELDS:
        value = processed.get(field)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            try:
                check_figure(field, value)
            except ValueError as exc:
                return str(exc)
    return None


def _merge(row: EvalRow, evaluator: Any, scores: Any, key: str, record: bool) -> None:
    if not isinstance(scores, dict):
        raise TypeError(f"score() returned {type(scores).__name__}, expected a dict of floats")
    failure = usage = weights = None
    if type(scores) is not dict:  # a Scores: it may carry a soft failure, token usage, weights
        failure = getattr(scores, "failure", None)
        usage = getattr(scores, "usage", None)
        weights = getattr(scores, "weights", None)
    for value in scores.values():
        if type(value) is not float or not math.isfinite(value):
            scores = {field: _as_float(field, value) for field, value in scores.items()}
            break
    row.scores.update(scores)
    if scores or failure:
        row.meta.setdefault(SCORED_BY, []).append(evaluator_name(evaluator))
    if failure:
        row.failures[evaluator_name(evaluator)] = str(failure)
        row.meta.setdefault(FALLBACKS, []).extend(scores)
    if usage:
        row.usage[evaluator_name(evaluator)] = {k: float(v) for k, v in usage.items()}
    if weights:
        row.weights = {**(row.weights or {}), **{k: float(v) for k, v in weights.items()}}
    if record and not failure:
        row.fresh.setdefault("scores", {})[key] = {"scores": dict(scores), "usage": usage, "weights": weights}


def _as_float(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"score field {field!r} is {value!r}, not a number")
    number = float(value)
    if not math.isfinite(number):  # it would poison every mean and is not valid JSON
        raise ValueError(f"score field {field!r} is {value!r}, not a finite number")
    return number
