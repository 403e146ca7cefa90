"""``evaluate``: run systems over data sets, score every row, summarize."""

from __future__ import annotations

import contextlib
import gc
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ._autowire import Wirer, Wiring
from ._compact import IdSet
from ._executor import Executor, executor_for
from ._rowtask import SCORED_BY, RowTask, evaluator_name
from ._run_meter import RunMeter, counted_input
from ._summary import Summarizer
from .cache import RunCache
from .config import RunConfig, from_deprecated
from .datasets import Dataset, MalformedRow, RepairedRow
from .evidence import lost_rows, mark_losses
from .fail_fast import FailFast
from .identity import content_hash, identity
from .metadata import describe_system
from .plugins import PluginHost, get_host
from .progress import Progress
from .records import EvalResult, EvalRow, RowError
from .repeats import merged
from .rowcheck import FIGURES, figure_problem
from .specs import RUN_KINDS, SectionBuilder, resolve

if TYPE_CHECKING:
    from .token_count import Tokenizer

#: Keys accepted as an example's id, in order; the first present wins.
ID_KEYS = ("id", "task_id", "question_id", "key")


@attrs.frozen
class Precomputed:
    """The "system" of a scoring-only run: the response is already in the row."""

    name: str = "responses"

    def process(self, example: dict[str, Any]) -> dict[str, Any]:
        if "response" not in example:
            raise KeyError("row has no 'response' field to score")
        # The time to read a field is not the system's latency: only a recorded one counts.
        output = {"response": example["response"], "latency": example.get("latency")}
        for key in ("input_tokens", "output_tokens", "cost"):
            if key in example:
                output[key] = example[key]
        return output


def example_id(example: Mapping[str, Any]) -> str | None:
    for key in ID_KEYS:
        value = example.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def _named_datasets(dataset: Any, dataset_name: str | None) -> list[tuple[str, Iterable[Any]]]:
    if isinstance(dataset, Dataset):
        return [(dataset_name or dataset.name, dataset.rows)]
    if isinstance(dataset, Mapping):
        return list(dataset.items())
    if isinstance(dataset, (str, Path)):
        raise TypeError("evaluate() takes rows, not a path: use context_bench.datasets.load(path)")
    return [(dataset_name or "dataset", dataset)]


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


class _TaskBuilder:
    """Turns (system, data set, row) into RowTasks, with input errors named by data set and row."""

    def __init__(self, wirer: Wirer, cache: RunCache | None, repeats: int) -> None:
        self.wirer = wirer
        self.cache = cache
        self.repeats = repeats
        #: What the user should know about the rows (no evaluator for a data set, cached scores dropped).
        self.hints: list[str] = []
        self._wirings: dict[str, Wiring] = {}
        self._keys: dict[int, tuple[list[Any], list[str]]] = {}
        self._unscored: dict[str, list[Any]] = {}  # data set -> [first id, rows no evaluator matches]
        self._out_of_range = 0
        self._specs: dict[type, Any] = {}

    def wiring(self, name: str) -> Wiring:
        if name not in self._wirings:
            self._wirings[name] = self.wirer.wire(name)
        return self._wirings[name]

    def evaluators(self) -> list[Any]:
        """Every evaluator the run's data sets were wired to, once each."""
        seen: dict[int, Any] = {}
        for wiring in self._wirings.values():
            for evaluator in [*wiring.by_name, *(e for _, e in wiring.by_fields)]:
                seen.setdefault(id(evaluator), evaluator)
        return list(seen.values())

    def by_fields(self) -> dict[str, list[str]]:
        """Per data set with an evaluator wired by its name, the score fields only its evaluators
        wired by the rows' fields produce (:attr:`~context_bench.records.Summary.by_fields`)."""
        found = {}
        for dataset, wiring in self._wirings.items():
            named = {f for e in wiring.by_name for f in self._fields(e)}
            fields = [f for e in wiring.by_fields_alone() for f in self._fields(e) if f not in named]
            if wiring.by_name and fields:
                found[dataset] = list(dict.fromkeys(fields))
        return found

    def _fields(self, evaluator: Any) -> tuple[str, ...]:
        spec = self._spec(evaluator)
        return spec.fields if spec is not None else ()

    def evaluator_notices(self, used: set[int]) -> list[str]:
        """What the run's evaluators that were given a row (``used``: their ids) have to say in its
        summary (``notices()``, e.g. a sandbox layer that was off), each line once: one wired to
        the run but given no row is not asked, so it starts nothing (a code sandbox)."""
        asked = [e for e in self.evaluators() if id(e) in used]
        lines = (line for e in asked if callable(n := getattr(e, "notices", None)) for line in n())
        return list(dict.fromkeys(lines))

    def evaluator_models(self) -> dict[str, str]:
        """The model of each evaluator that says it calls one (a judge's ``model``), by the name
        its rows' usage is under: ``--price MODEL`` prices its tokens as it does a system's."""
        return {
            evaluator_name(e): model
            for e in self.evaluators()
            if isinstance(model := getattr(e, "model", None), str)
        }

    def keys(self, evaluators: list[Any]) -> list[str]:
        """Cache keys of an evaluator list (wirings hand out the same list for alike rows)."""
        found = self._keys.get(id(evaluators))
        if found is None or found[0] is not evaluators:
            keys = [f"{getattr(e, 'name', '?')}-{identity(e)}" for e in evaluators]
            found = self._keys[id(evaluators)] = (evaluators, keys)
        return found[1]

    def tasks(
        self,
        systems: Sequence[Any],
        datasets: list[tuple[str, Iterable[Any]]],
        stopped: Callable[[str], bool] | None = None,
    ) -> Iterator[RowTask]:
        """Each (system, row)'s task, built as it is drawn; the hints are complete once all were.
        A system ``stopped(name)`` says is stopped gets no more tasks."""
        index = 0
        for system in systems:
            for name, rows in datasets:
                seen: dict[tuple[str, str], IdSet] = {}
                for number, example in enumerate(rows):
                    if stopped is not None and stopped(getattr(system, "name", "")):
                        break
                    task = self._task(index, self._system(system, example), name, number, example, seen)
                    if self.repeats == 1:
                        yield task
                        index += 1
                        continue
                    for repeat in range(self.repeats):  # a row's repeats are consecutive tasks
                        yield (
                            task
                            if not repeat
                            else self._looked_up(attrs.evolve(task, index=index, repeat=repeat))
                        )
                        index += 1
        for dataset, (first, count) in self._unscored.items():
            self.hints.append(
                f"no evaluator matches {count} row(s) of data set {dataset!r} (the first: id {first!r}): "
                "they get no scores; name one with --evaluator"
            )
        if self._out_of_range:
            self.hints.append(
                f"{self._out_of_range} cached score(s) outside their evaluator's declared range "
                "were discarded and computed again"
            )

    def _system(self, system: Any, example: Any) -> Any:
        """The row's system: ``system`` itself, or for :class:`RowSystems` the one its row names."""
        if type(system) is not RowSystems:
            return system
        if type(example) is dict or isinstance(example, Mapping):
            return system.named(str(example.get("system", system.default)))
        return system.named(system.default)

    def _task(
        self,
        index: int,
        system: Any,
        name: str,
        number: int,
        example: Any,
        seen: dict[tuple[str, str], IdSet],
    ) -> RowTask:
        if type(example) is not dict and not isinstance(example, Mapping):
            return self._unreadable(index, system, name, number, example)
        dataset = example.get("dataset") or name
        if type(dataset) is not str:
            dataset = str(dataset)
        ex_id = example.get("id")
        if type(ex_id) is not str or not ex_id:  # else it is the id, as example_id() would say
            ex_id = example_id(example)
        scoring = isinstance(system, Precomputed)
        ids = seen.get((system.name if scoring else "", dataset))
        if ids is None:
            ids = seen[(system.name if scoring else "", dataset)] = IdSet()
        if ex_id is None or not ids.add(ex_id):
            where = f"row {number} of data set {name!r}"
            if ex_id is None:
                message = f"{where} has no 'id' field (nor {', '.join(ID_KEYS[1:])})"
                error = RowError("input", where, "MissingField", message)
            else:
                message = f"{where}: id {ex_id!r} appears twice in {dataset!r}"
                error = RowError("input", where, "DuplicateId", message)
            return RowTask(index, system, dataset, ex_id or f"#{number}", example, error=error)
        if scoring:
            response = example.get("response")
            if type(response) not in (str, int, float) and response is not None:
                where = f"row {number} of data set {name!r}"
                message = f"{where}: 'response' is a {type(response).__name__}, not text, so it is not scored"
                error = RowError("input", where, "TypeError", message)
                return RowTask(index, system, dataset, ex_id, example, error=error)
            if not example.keys().isdisjoint(FIGURES):  # figures of its own: tokens, latency, cost
                problems = [p for field in FIGURES if (p := figure_problem(field, example.get(field)))]
                if problems:
                    where = f"row {number} of data set {name!r}"
                    error = RowError("input", where, "InvalidFigure", f"{where}: {'; '.join(problems)}")
                    return RowTask(index, system, dataset, ex_id, example, error=error)
        wiring = self._wirings.get(dataset)  # looked up here: a call less for every row
        evaluators = (wiring or self.wiring(dataset)).for_row(example)
        if not evaluators:
            unscored = self._unscored.setdefault(dataset, [ex_id, 0])
            unscored[1] += 1
        task = RowTask(
            index,
            system,
            dataset,
            ex_id,
            example,
            evaluators,
            self.keys(evaluators),
            record=self.cache is not None,
            meta={"repaired": example.repaired} if type(example) is RepairedRow else None,
        )
        return task if self.cache is None else self._looked_up(task)

    def _looked_up(self, task: RowTask) -> RowTask:
        """``task`` with what the cache holds of it (its repeat's own)."""
        task.cached = None
        if self.cache is not None and task.error is None:
            path = self.cache.path(task.system, task.dataset, task.repeat)
            task.cached = self.cache.lookup(path, task.example_id, content_hash(task.original))
            if task.cached is not None and task.cached.scores:
                self._check_ranges(task, task.cached.scores)
        return task

    def _check_ranges(self, task: RowTask, scores: dict[str, dict[str, Any]]) -> None:
        """Drop cached scores outside their evaluator's declared range: they are computed again."""
        for evaluator, key in zip(task.evaluators, task.evaluator_keys, strict=False):
            hit = scores.get(key)
            if hit is not None and not self._spec_in_range(evaluator, hit["scores"]):
                del scores[key]
                self._out_of_range += 1

    def _spec_in_range(self, evaluator: Any, values: dict[str, Any]) -> bool:
        spec = self._spec(evaluator)
        return spec is None or spec.in_range(values)

    def _spec(self, evaluator: Any) -> Any:
        kind = type(evaluator)
        if kind not in self._specs:
            self._specs[kind] = self.wirer.host.spec_of(evaluator)
        return self._specs[kind]

    @staticmethod
    def _unreadable(index: int, system: Any, name: str, number: int, example: Any) -> RowTask:
        if isinstance(example, MalformedRow):
            error = RowError("input", example.location, "MalformedRow", example.message)
        else:
            where = f"row {number} of data set {name!r}"
            error = RowError(
                "input", where, "TypeError", f"{where} is a {type(example).__name__}, not a dict"
            )
        return RowTask(index, system, name, f"#{number}", None, error=error)


@attrs.frozen
class SecondPass:
    """What makes :func:`evaluate` the scoring pass of a run in two passes: the extension point of a
    plugin whose first pass makes what is then scored (a memory run's: the memory systems answer
    every question, then the answers are scored here).

    ``kind`` is the kind of run (:data:`~context_bench.specs.RUN_KINDS`), which picks the auto-wire
    rules that serve it; ``cache`` an open :class:`RunCache` the first pass filled (instead of
    ``output.cache_dir``), so both passes share one cache and one cache-failure notice; and
    ``finish_row(row)`` is called on every row as it finishes, before the summary counts it, to
    complete what the row records (``row.meta``); ``scored`` are rows a pass before this one scored
    (``score --baseline RUN``'s, from the store), summarized and handed on first, as they are.
    """

    kind: str = attrs.field(default="rows", validator=attrs.validators.in_(RUN_KINDS))
    cache: RunCache | None = None
    finish_row: Callable[[EvalRow], None] | None = None
    scored: Iterable[EvalRow] = ()


def evaluate(
    systems: Any,
    datasets: Any,
    config: RunConfig | None = None,
    *,
    host: PluginHost | None = None,
    executor: Executor | None = None,
    second_pass: SecondPass | None = None,
    **deprecated: Any,
) -> EvalResult:
    """Run every system over every row and score each row, as ``config`` says
    (:class:`~context_bench.config.RunConfig`; None: the defaults).

    ``systems`` is one system, a list, or None to score responses already in the rows.
    ``datasets`` is a list of example dicts, a :class:`Dataset`, or a mapping of name -> rows; a
    row's own ``dataset`` key wins.  ``config.scope.evaluators=None`` auto-wires each data set's
    evaluators from the registered rules; a list (instances or registered names) replaces that.
    With ``config.output.cache_dir``, finished rows are stored as they complete and a re-run skips
    them.  ``config.limits.call_timeout`` is the deadline of every system and evaluator call: a
    call past it is an error on its row, and the other rows go on.  ``executor`` works the rows
    elsewhere (:mod:`context_bench.execution`; default: this process, with ``config.limits``);
    ``host`` is the plugin host (default: the process's); ``second_pass`` makes this the scoring
    pass of a plugin's run in two passes (:class:`SecondPass`).

    A big run streams: rows given as an iterator (not a list) are read as the run draws them, and
    with ``config.output.stream`` each finished row is handed to it in task order instead of kept,
    so the result has no rows, only the summary (its running sums and per-row columns, see
    :class:`~context_bench._summary.Summarizer`).

    The keywords of earlier releases (``evaluators=``, ``max_concurrency=``, ``progress=``, ...,
    and ``run=``, ``cache=``, ``finish_row=``) still work for one release, with a
    DeprecationWarning: :meth:`RunConfig.from_kwargs` reads them.
    """
    if deprecated or (config is not None and not isinstance(config, RunConfig)):
        config, passed = from_deprecated(
            "evaluate()", config, deprecated, executor=executor is not None, keep=_PASS_KEYWORDS
        )
        if passed:
            fields = {_PASS_KEYWORDS[name]: value for name, value in passed.items()}
            second_pass = attrs.evolve(second_pass or SecondPass(), **fields)
    config = config or RunConfig()
    second_pass = second_pass or SecondPass()
    cache = second_pass.cache
    cache_dir = config.output.cache_dir
    if cache is not None and cache_dir:
        raise ValueError("pass cache_dir or an open cache, not both")
    executor = executor_for(config.limits, executor)
    host = host or get_host()
    root = cache.root if cache is not None else cache_dir
    options = {**config.plugins.options, **({"cache_dir": str(root)} if root else {})}
    scope = config.scope
    system_list = _as_list(systems) or [Precomputed()]
    # each system priced by its model from the first summary on: no one summarizes it again for that
    analysis = config.analysis.with_models(describe_system(system) for system in system_list)
    named = [
        (name, _limit(rows, scope.max_examples, len(system_list)))
        for name, rows in _named_datasets(datasets, scope.dataset_name)
    ]
    wirer = Wirer(
        host,
        options,
        explicit=scope.evaluators,
        add=scope.add_evaluators,
        exclude=scope.exclude_evaluators,
        run=second_pass.kind,
    )
    if cache is None and cache_dir:
        cache = RunCache(cache_dir)
    repeats = config.scope.repeats
    builder = _TaskBuilder(wirer, cache, repeats)
    scoring = second_pass.kind != "rows" or all(
        isinstance(system, (Precomputed, RowSystems)) for system in system_list
    )
    sizes = [len(rows) for _, rows in named if isinstance(rows, Sequence)]
    total = len(system_list) * sum(sizes) * repeats if len(sizes) == len(named) else None
    bar = Progress(total, label="scoring" if scoring else "running", enabled=config.output.progress)
    summarize = Summarizer(
        analysis.metrics,
        breakdown=analysis.breakdown,
        exclude_errors=analysis.exclude_errors,
        analysis=analysis,
        sweep=config.sweep,
    )
    # before any row: a section the run cannot have is a usage error
    sections = _sections(host, config, options)
    delivery = _Delivery(summarize, config.output.stream, repeats, [made for _, made in sections])
    delivery.before(second_pass.scored)
    in_flight: dict[int, RowTask] = {}
    watch = FailFast(0 if scoring else config.limits.fail_fast)
    finish_row = second_pass.finish_row
    config, counter = _counted(config)
    meter = _meter(config, executor)

    def drawn() -> Iterator[RowTask]:
        for task in builder.tasks(system_list, named, watch.stopped if watch.limit else None):
            in_flight[task.index] = task
            if meter is not None:
                task.meter = meter.link(task)
            yield task

    given: dict[int, list[Any]] = {}  # the evaluator lists given a row (alike rows share one), by id

    def on_row(row: EvalRow) -> None:
        task = in_flight.pop(row.index)
        if task.evaluators:
            given[id(task.evaluators)] = task.evaluators
        row.example = task.original  # so a report's rows can be scored again
        if meter is not None:
            meter.finish(task, row)
        if counter is not None and not isinstance(task.system, Precomputed) and task.original is not None:
            row.counted_input_tokens = counted_input(counter, task.original)
        if cache is not None and row.fresh and not any(e.stage != "evaluator" for e in row.errors):
            cache.store(
                cache.path(task.system, row.dataset, task.repeat),
                row.example_id,
                content_hash(task.original),
                row.fresh.get("output"),
                row.fresh.get("scores", {}),
            )
        if finish_row is not None:
            finish_row(row)
        if watch.limit:
            watch.seen(row)
        delivery.add(row, task.evaluators)
        if bar.enabled:
            bar.update(errors=1 if row.errors else 0)

    try:
        with fewer_collections():
            executor.run(drawn(), on_row)
    finally:
        bar.close()
        if cache is not None:
            cache.close()
        if meter is not None:
            meter.close()
    if in_flight:
        raise RuntimeError(
            f"the executor returned without {len(in_flight)} row(s) (the first: {min(in_flight)})"
        )
    notices = [*watch.lines, *wirer.hints, *builder.hints, *delivery.not_applicable()]
    notices += builder.evaluator_notices({id(e) for evaluators in given.values() for e in evaluators})
    if cache is not None:
        notices += [*cache.notices, *([cache.failure] if cache.failure else [])]
    if meter is not None:
        notices += meter.notices()
        summarize.metered = meter.totals()
    summarize.notices = notices
    summarize.judge_models = builder.evaluator_models()
    summarize.by_fields = builder.by_fields()
    summarize.directions = host.directions(builder.evaluators())
    summarize.sections = {name: section.finish() for name, section in sections}
    summarize.notices += [note for section in summarize.sections.values() for note in section.notes]
    summary = summarize.finish()
    mark_losses(delivery.rows, lost_rows(summary))
    return EvalResult(rows=delivery.rows, summary=summary, summarize=summarize)


def _sections(
    host: PluginHost, config: RunConfig, options: Mapping[str, Any]
) -> list[tuple[str, SectionBuilder]]:
    """The builders of the summary sections this run asks for, by the name each is written under;
    each factory gets the run's ``options`` as its plugin's rules do (its own, and ``cache_dir``)."""
    started = []
    for plugin, spec in host.sections():
        builder = resolve(spec.factory)(config, host.options_for(plugin, options))
        if builder is not None:
            started.append((spec.name, builder))
    return started


def _counted(config: RunConfig) -> tuple[RunConfig, Tokenizer | None]:
    """The run's tokenizer, loaded once for the harness's count and the meter's (None: none)."""
    tokenizer = config.metering.tokenizer
    if isinstance(tokenizer, str):
        from .token_count import load_tokenizer

        tokenizer = load_tokenizer(tokenizer)
        config = attrs.evolve(config, metering=attrs.evolve(config.metering, tokenizer=tokenizer))
    return config, tokenizer


def _meter(config: RunConfig, executor: Executor) -> RunMeter | None:
    """The run's meter, started (None: the run is not metered); calls without the row header are
    a row's only when rows run one at a time."""
    if config.metering.upstream is None:
        return None
    sole = getattr(executor, "max_concurrency", config.limits.max_concurrency) == 1
    return RunMeter(config.metering, sole)


#: ``evaluate``'s keywords of earlier releases that are no setting but its second pass's fields.
_PASS_KEYWORDS = {"run": "kind", "cache": "cache", "finish_row": "finish_row"}


@attrs.frozen
class RowSystems:
    """The "systems" of scoring rows from several systems in one pass: each row is scored as the
    responses of the system its ``system`` field names (``default`` when it has none)."""

    default: str = "responses"
    _systems: dict[str, Precomputed] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def seen(self) -> list[Precomputed]:
        """The systems the rows named so far, in the order they first appeared."""
        return list(self._systems.values())

    def named(self, name: str) -> Precomputed:
        found = self._systems.get(name)
        if found is None:
            found = self._systems[name] = Precomputed(name)
        return found


class _Delivery:
    """Finished rows, handed on in task order: to the summarizer and the summary sections, then kept
    (``rows``) or streamed.

    Rows finish in any order; each waits here only until every earlier row has finished, so what
    waits is bounded by the rows in flight.  Also counts the rows some evaluator gave no score.
    """

    def __init__(
        self,
        summarize: Summarizer,
        stream: Callable[[EvalRow], None] | None,
        repeats: int,
        sections: Sequence[SectionBuilder],
    ) -> None:
        self.summarize = summarize
        #: The run's summary sections, each given every row the summary counts.
        self.sections = sections
        self.stream = stream
        #: With ``--repeats``, a row's repeats (consecutive in task order) wait here to be one row.
        self.repeats = repeats
        self._repeated: list[EvalRow] = []
        self.rows: list[EvalRow] = []
        self._waiting: dict[int, EvalRow] = {}
        self._next = 0
        self._lock = threading.Lock()
        self._missing: dict[tuple[str, str], int] = {}

    def add(self, row: EvalRow, evaluators: list[Any]) -> None:
        with self._lock:
            if evaluators and not row.errors and len(row.meta.get(SCORED_BY, ())) < len(evaluators):
                self._count_unscored(row, evaluators)
            if row.index != self._next:
                self._waiting[row.index] = row
                return
            self._hand_on(row)
            while self._waiting:
                waited = self._waiting.pop(self._next, None)
                if waited is None:
                    break
                self._hand_on(waited)

    def before(self, rows: Iterable[EvalRow]) -> None:
        """Rows finished before the run's tasks (not numbered among them), handed on first."""
        for row in rows:
            self._deliver(row)

    def _hand_on(self, row: EvalRow) -> None:
        self._next += 1
        if self.repeats > 1:
            self._repeated.append(row)
            if len(self._repeated) < self.repeats:
                return
            row, self._repeated = merged(self._repeated), []
        self._deliver(row)

    def _deliver(self, row: EvalRow) -> None:
        self.summarize.add(row)
        for section in self.sections:
            section.add(row)
        if self.stream is None:
            self.rows.append(row)
        else:
            self.stream(row)

    def _count_unscored(self, row: EvalRow, evaluators: list[Any]) -> None:
        scored = row.meta.get(SCORED_BY, ())
        for evaluator in evaluators:
            name = evaluator_name(evaluator)
            if name not in scored:
                self._missing[(row.dataset, name)] = self._missing.get((row.dataset, name), 0) + 1

    def not_applicable(self) -> list[str]:
        """One line per (data set, evaluator) that gave some rows no score (they lack a field it needs)."""
        return [
            f"{name} gave no score to {count} row(s) of data set {dataset!r}: they lack a field it needs "
            "(such as 'answer')"
            for (dataset, name), count in self._missing.items()
        ]


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect garbage less often while a run builds its records.

    A run creates several long-lived objects per row and no reference cycles; with the default
    thresholds the cyclic collector rescans them again and again (a third of the CPU time of a
    100,000-row run).  Collections still happen, just a hundred times less often.
    """
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], 70_000), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def _limit(rows: Iterable[Any], max_examples: int | None, passes: int) -> Iterable[Any]:
    """At most ``max_examples`` rows; read lazily where they are read once (one system), listed
    where several systems each read them."""
    if isinstance(rows, Sequence) and not isinstance(rows, (str, bytes)):
        return rows if max_examples is None else rows[:max_examples]
    if max_examples is not None:
        rows = itertools.islice(rows, max_examples)
    return rows if passes == 1 else list(rows)
