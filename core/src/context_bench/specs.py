"""The records a plugin hands to the host: evaluators, auto-wire rules, data sets, commands,
executors, report formats and summary sections."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from .direction import HIGHER, LOWER
from .errors import UsageError

if TYPE_CHECKING:
    from ._executor import Executor
    from .records import EvalRow
    from .summary_sections import SummarySection

#: A callable, or a lazy reference ``"package.module:attribute"`` resolved only when used, so that
#: listing what a plugin offers never imports its heavy modules.
Ref = str | Callable[..., Any]


def resolve(ref: Ref) -> Any:
    """Import ``"module:attr"`` (or return a callable unchanged)."""
    if not isinstance(ref, str):
        return ref
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"lazy reference {ref!r} is not of the form 'package.module:attribute'")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _as_tuple(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _lower_tuple(value: Any) -> tuple[str, ...]:
    return tuple(v.lower() for v in _as_tuple(value))


#: What a run iterates over: ``"rows"`` (one example per row: ``context-bench run``/``score``) or
#: ``"memory"`` (conversations, each ingested before its questions: a plugin's ``memory`` command).
#: A data set kind other than rows names the command that runs it.
RUN_KINDS = ("rows", "memory")


Range = tuple[float, float]


def _ranges(value: Any) -> dict[str, Range]:
    """``(low, high)`` for every field (key ``"*"``), or a mapping of field -> ``(low, high)``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        value = {"*": value}
    ranges = {}
    for field, bounds in value.items():
        low, high = (float(b) for b in bounds)
        if not low <= high:
            raise ValueError(f"score range of {field!r} is empty: {bounds!r}")
        ranges[str(field)] = (low, high)
    return ranges


@attrs.frozen
class EvaluatorSpec:
    """An evaluator a plugin offers.

    ``name`` is the public name (``WordCountDiff``): what ``--evaluator`` takes and what
    ``from context_bench.evaluators import WordCountDiff`` resolves.  ``factory`` builds it with
    keyword arguments (usually the class itself).  ``fields`` are the score fields it produces.
    ``ranges`` declares the values a score can take: ``(0, 1)`` for every field, or a mapping of
    field -> ``(low, high)``; a cached score outside it was not computed by this evaluator (a
    tampered or foreign cache) and is computed again.  ``lower_is_better`` names the fields where a
    lower score is the better one (``extra_words``): every figure, report and gate reads them so
    (:mod:`context_bench.direction`), and a row that failed counts at the top of the field's range
    there (1 without a declared range), never at the flattering 0.
    """

    name: str
    factory: Ref
    fields: tuple[str, ...] = attrs.field(converter=_as_tuple, default=())
    description: str = ""
    ranges: dict[str, Range] = attrs.field(converter=_ranges, default=None, hash=False)
    lower_is_better: tuple[str, ...] = attrs.field(converter=_as_tuple, default=())

    @classmethod
    def declared_by(cls, evaluator: Any) -> EvaluatorSpec:
        """What an evaluator instance declares of itself, read as a spec's fields are: its
        ``ranges`` and ``lower_is_better`` attributes, where it has them (an evaluator of the
        Python API that no plugin registers: ``lower_is_better = ("profanity",)``)."""
        return cls(
            str(getattr(evaluator, "name", type(evaluator).__name__)),
            type(evaluator),
            ranges=getattr(evaluator, "ranges", None),
            lower_is_better=getattr(evaluator, "lower_is_better", ()),
        )

    def score_fields(self) -> dict[str, dict[str, str]]:
        """Each field it declares with its direction, as ``evaluators --json`` and ``plugins
        --json`` say it: ``{"extra_words": {"direction": "lower"}}``."""
        fields = dict.fromkeys([*self.fields, *self.lower_is_better])
        return {
            field: {"direction": (LOWER if field in self.lower_is_better else HIGHER).name}
            for field in fields
        }

    def failure_values(self) -> dict[str, float]:
        """The value a failed row counts for each field where 0 would flatter it: the top of its range."""
        every = (self.ranges or {}).get("*", (0.0, 1.0))
        return {field: float((self.ranges or {}).get(field, every)[1]) for field in self.lower_is_better}

    def in_range(self, scores: dict[str, Any]) -> bool:
        """Whether every score lies in its declared range (fields without one always do)."""
        if not self.ranges:
            return True
        every = self.ranges.get("*")
        for field, value in scores.items():
            bounds = self.ranges.get(field, every)
            if bounds is not None and not (
                isinstance(value, (int, float)) and bounds[0] <= value <= bounds[1]
            ):
                return False
        return True


@attrs.frozen
class AutowireRule:
    """When a data set gets an evaluator without the user naming it.

    The rule matches a row when the row's data set name is in ``datasets`` (``"*"`` matches any)
    or the row carries every key in ``fields`` (a field may name alternatives, ``"question|prompt"``:
    any one of them will do); and, in both cases, only when every run option
    in ``requires`` is set (``("acme_url",)``: a judge only when its endpoint is configured)
    and the run is of a kind in ``runs`` (:data:`RUN_KINDS`; empty: every kind).  So a rule says
    itself which runs it serves: a general rating judge declares ``runs=("rows",)`` and stays out
    of memory runs, which are judged by their own evaluators.
    ``build(options) -> evaluator`` constructs it from the run's options (the plugin's own options
    plus the shared ones, see ``cbench_add_options``); without it the evaluator's factory is called
    with no arguments.  A build may return None: these options leave this rule nothing to wire
    (a judge whose template needs a reference is built by the rules whose ``fields`` carry one).
    ``datasets_option`` names a run option listing data sets (``"judge_dataset"``): when it is set,
    the rule serves only those data sets, by name or by fields.
    """

    evaluator: str
    datasets: tuple[str, ...] = attrs.field(converter=_lower_tuple, default=())
    fields: tuple[str, ...] = attrs.field(converter=_as_tuple, default=())
    requires: tuple[str, ...] = attrs.field(converter=_as_tuple, default=())
    build: Ref | None = None
    runs: tuple[str, ...] = attrs.field(
        converter=_as_tuple,
        default=(),
        validator=attrs.validators.deep_iterable(attrs.validators.in_(RUN_KINDS)),
    )
    datasets_option: str | None = None

    def serves(self, run: str) -> bool:
        """Whether this rule applies in a run of kind ``run``."""
        return not self.runs or run in self.runs

    def limited_away(self, dataset: str, options: Mapping[str, Any]) -> bool:
        """Whether the run option ``datasets_option`` lists data sets and ``dataset`` is not one of them."""
        chosen = options.get(self.datasets_option) if self.datasets_option else None
        if not chosen:
            return False
        names = [chosen] if isinstance(chosen, str) else chosen
        return dataset.lower() not in {str(name).lower() for name in names}

    def __attrs_post_init__(self) -> None:
        if not self.datasets and not self.fields:
            raise ValueError(f"auto-wire rule for {self.evaluator!r} names neither datasets nor fields")


#: The branch where the hub keeps every data set as parquet, loading script or not.
PARQUET_REVISION = "refs/convert/parquet"


@attrs.frozen
class HubSource:
    """Where a named data set lives on the hub: repository, config, split, revision.

    ``configs`` lists the valid configs (empty: the repository has none to choose); ``revision``
    picks a branch such as ``refs/convert/parquet`` for repositories whose loading script current
    ``datasets`` releases refuse to run, where each config is a folder (``data_dir``, the config
    when not given); ``gated`` sets need ``HF_TOKEN``.
    """

    repo: str
    config: str | None = None
    configs: tuple[str, ...] = ()
    split: str = "test"
    revision: str | None = None
    data_dir: str | None = None
    gated: bool = False

    def pick(self, config: str | None) -> str | None:
        """The config to load: ``config``, else the default; a config not in ``configs`` is refused."""
        config = config or self.config
        if config is not None and self.configs and config not in self.configs:
            raise UsageError(
                f"unknown config {config!r} of {self.repo}: the valid configs are {', '.join(self.configs)}"
            )
        if config is not None and not self.configs and config != self.config:
            raise UsageError(f"{self.repo} has no configs to choose from (got {config!r})")
        return config


@attrs.frozen
class DatasetSpec:
    """A named data set.

    ``loader(**kwargs)`` returns an iterable of example dicts (``kind="rows"``) or of conversation
    dicts (``kind="memory"``, see ``docs/memory.md``).  A loader that needs the network does so only
    when called, and raises :class:`context_bench.DatasetUnavailable` with a clear message when it
    cannot.  A hub data set's loader takes ``config`` and ``split`` (None: the source's defaults)
    and reads its records through ``context_bench.hub.load_rows(source, ...)``.  ``fields`` names
    the keys its rows carry, so that ``context-bench datasets`` can say which evaluators the
    auto-wire rules give it without loading a row.
    """

    name: str
    loader: Ref
    description: str = ""
    kind: str = attrs.field(default="rows", validator=attrs.validators.in_(RUN_KINDS))
    #: Where a hub data set comes from; None for other loaders.
    source: HubSource | None = None
    fields: tuple[str, ...] = attrs.field(converter=_as_tuple, default=())


@attrs.frozen
class CommandSpec:
    """A subcommand a plugin adds to ``context-bench`` (see ``cbench_register_commands``).

    ``configure(parser, host)`` adds the command's arguments to its :class:`argparse.ArgumentParser`
    (``context_bench.cli.add_run_options`` adds the shared run flags); ``run(args, host) -> int``
    carries it out and returns the exit status.  Both may be lazy references, so that building the
    parser imports only what ``configure`` needs.  Names of the core's commands are reserved.
    """

    name: str
    help: str
    configure: Ref
    run: Ref


@attrs.frozen
class ExecutorSpec:
    """An executor a plugin offers: where a run's rows are worked on (``--executor NAME``).

    ``factory(max_concurrency=..., call_timeout=..., **options)`` builds it (usually the class, or a
    lazy ``"module:attr"`` reference, so that listing imports nothing heavy); the instance has
    ``run(tasks, on_row)`` (:class:`context_bench.execution.Executor`).  ``options`` names the run
    options (the ``dest`` of flags the same plugin adds through ``cbench_add_options``) that the
    factory takes as keywords: an option left unset (None) is not passed, so the factory's default
    holds.  Names are public; the core's ``local`` is reserved.
    """

    name: str
    factory: Ref
    description: str = ""
    options: tuple[str, ...] = attrs.field(converter=_as_tuple, default=())

    def build(self, max_concurrency: int, call_timeout: float | None, options: Mapping[str, Any]) -> Executor:
        """An executor for a run with these limits and run options (only this spec's own are passed)."""
        own = {key: options[key] for key in self.options if options.get(key) is not None}
        executor: Executor = resolve(self.factory)(
            max_concurrency=max_concurrency, call_timeout=call_timeout, **own
        )
        return executor


@attrs.frozen
class FormatSpec:
    """A report format a plugin offers: ``--output NAME`` of ``run``, ``score``, ``compare``, ``show``
    and every command with the run flags (see ``cbench_register_formats``).

    ``writer(result, view) -> str`` renders a finished :class:`~context_bench.EvalResult` (its
    summary, metadata and rows) as the report's whole text, laid out by a
    :class:`~context_bench.reports.View` (``--detail``, the terminal's width): what ``show`` and
    ``compare`` write, what ``context_bench.reports.render`` returns, and what a run writes when the
    format does not stream.  ``description`` is one line, in ``--output``'s help and
    ``context-bench plugins``; ``extension`` how a file of it is named (``".tsv"``).

    ``stream`` makes it stream: ``stream(output)`` (the run's :class:`~context_bench.config.Output`)
    is a :class:`~context_bench.reports.RowStream`, which takes each row as it finishes and writes
    the report once the run is done, so a run holds no row for it.  ``summary_only``: the report
    reads the summary alone (the table, Markdown), so a run lets each row go as it finishes; a
    format that neither streams nor says so is given every row.  ``shows_warnings``: the report
    shows the summary's warnings itself, so on a terminal they are not said on stderr too.
    ``note(result) -> str`` is a line said on stderr before the report (the table's counts of the
    run, which its one screen leaves out); ``side_file(out) -> str`` the file a run may write beside
    ``--out`` (a big run's HTML rows), checked before the run as ``--out`` is.  Names are public;
    the core's are reserved.
    """

    name: str
    writer: Ref
    description: str = ""
    extension: str = ""
    stream: Ref | None = None
    summary_only: bool = False
    shows_warnings: bool = False
    note: Ref | None = None
    side_file: Ref | None = None

    @property
    def streams(self) -> bool:
        """Whether a run writes its rows as they finish (:attr:`stream`)."""
        return self.stream is not None


@attrs.frozen
class SectionSpec:
    """A section a plugin adds to a run's summary from its finished rows (see
    ``cbench_register_sections`` and :mod:`context_bench.summary_sections`).

    ``factory(config, options)`` gets the run's :class:`~context_bench.config.RunConfig` and its
    plugin's share of the run's options (as its rules' ``build`` does: its own, and the run's
    ``cache_dir``) before any row runs.  It returns a
    :class:`~context_bench.summary_sections.SectionBuilder`, or None when the run did not ask for
    the section (its plugin's settings say so); a :class:`~context_bench.errors.UsageError` it
    raises stops the run before any row, exit 2.  ``name`` is the summary's key
    (``summary.<name>`` in the JSON report): public, taken once, and no field of the summary itself.
    """

    name: str
    factory: Ref
    description: str = ""


class SectionBuilder(Protocol):
    """What a :class:`SectionSpec`'s factory returns for a run that asked for its section."""

    def add(self, row: EvalRow) -> None:
        """One finished row, in task order (a run that streams keeps none: keep what the figures need)."""

    def finish(self) -> SummarySection:
        """The section, once every row has been added."""
