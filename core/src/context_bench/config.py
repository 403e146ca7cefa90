"""``RunConfig``: every setting of a run in one frozen record: four groups, the sweep, the plugins' part.

``scope`` is what runs (the evaluators, how many rows, which data set split), ``limits`` how hard it
may push and how long it may wait, ``analysis`` what the summary computes
(:class:`~context_bench.analysis.Analysis`), ``output`` where results go (the progress line, the
stream of finished rows, the cache, the report), ``metering`` the meter every call to the model
passes through (:class:`Metering`, docs/savings.md), ``sweep`` the settings of the swept systems
(:class:`~context_bench.sweep.Sweep`), and ``plugins`` each plugin's own settings
(:class:`~context_bench.settings.PluginSettings`).  Each default is a named constant of
:mod:`context_bench.defaults`, and each number is checked once, by its field's validator, against
the range its flag has (:data:`context_bench.bounds.BOUNDS`): ``evaluate``, the command line and the
executors all take these records, so no setting has a second default or a second check.

``call_timeout`` tells "not given" from None, as httpx's ``USE_CLIENT_DEFAULT`` does: :data:`UNSET`
is the executor's own deadline (the local one's is :data:`~context_bench.defaults.DEFAULT_CALL_TIMEOUT`),
None is no deadline at all.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

from .analysis import Analysis
from .bounds import bounded
from .defaults import (
    API_FAIL_FAST,
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_FORMAT,
    DEFAULT_HTML_INLINE_ROWS,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_ROW_BYTES,
    DEFAULT_REPEATS,
)
from .settings import PluginSettings
from .sweep import Sweep

__all__ = [
    "UNSET",
    "Analysis",
    "Limits",
    "Metering",
    "Output",
    "PluginSettings",
    "RunConfig",
    "Scope",
    "Sweep",
    "Unset",
]


if TYPE_CHECKING:
    from .records import EvalRow


class Unset(enum.Enum):
    """The type of :data:`UNSET`: a setting not given, which is not the same as None."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


#: A setting not given: the default applies (for ``call_timeout``, the executor's own deadline).
UNSET: Literal[Unset.UNSET] = Unset.UNSET


def _names(value: Any) -> tuple[Any, ...]:
    return tuple(value) if not isinstance(value, str) else (value,)


def _optional_names(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else _names(value)


def _call_timeout(instance: Any, attribute: Any, value: Any) -> None:
    if value is not UNSET and value is not None:
        bounded("--call-timeout")(instance, attribute, value)


def _path(value: Any) -> str | None:
    return None if value is None else str(value)


@attrs.frozen(kw_only=True)
class Scope:
    """What runs: the evaluators (None: each data set's auto-wired ones; names or instances), those
    added to and removed from the auto-wired ones, at most ``max_examples`` rows of each data set,
    the name of rows given without one (``dataset_name``), where named hub data sets come from
    (``split``, ``hub_mirror``: what :func:`context_bench.datasets.load` takes), and how many times
    each row is sent to each system (``repeats``)."""

    evaluators: tuple[Any, ...] | None = attrs.field(default=None, converter=_optional_names)
    add_evaluators: tuple[Any, ...] = attrs.field(default=(), converter=_names)
    exclude_evaluators: tuple[str, ...] = attrs.field(default=(), converter=_names)
    max_examples: int | None = attrs.field(default=None, validator=bounded("--max-examples", optional=True))
    dataset_name: str | None = None
    split: str | None = None
    hub_mirror: str | None = attrs.field(default=None, converter=_path)
    #: How many times each row goes to each system (``--repeats``; docs/sweeps.md).
    repeats: int = attrs.field(default=DEFAULT_REPEATS, validator=bounded("--repeats"))


@attrs.frozen(kw_only=True)
class Limits:
    """How hard a run pushes and how long it waits: rows in flight, the deadline of every system
    and evaluator call (:data:`UNSET`: the executor's own; None: none), the rows after which a system
    failing every one alike is stopped (``fail_fast``, 0 never; scoring runs never stop), and the
    largest row a file may hold (``max_row_bytes``)."""

    max_concurrency: int = attrs.field(
        default=DEFAULT_MAX_CONCURRENCY, validator=bounded("--max-concurrency")
    )
    call_timeout: float | None | Unset = attrs.field(default=UNSET, validator=_call_timeout)
    fail_fast: int = attrs.field(default=API_FAIL_FAST, validator=bounded("--fail-fast"))
    max_row_bytes: int = attrs.field(default=DEFAULT_MAX_ROW_BYTES, validator=bounded("--max-row-bytes"))

    @property
    def local_call_timeout(self) -> float | None:
        """The deadline the local executor keeps: the one given, else the default."""
        return DEFAULT_CALL_TIMEOUT if self.call_timeout is UNSET else self.call_timeout


@attrs.frozen(kw_only=True)
class Output:
    """Where results go: the progress line, each finished row handed to ``stream(row)`` in task
    order instead of kept (the result then holds the summary alone), the cache of finished rows a
    re-run resumes from (``cache_dir``), the report the command line writes (``format``, by
    name, ``out``, ``html_inline_rows``, and ``detail``: the table with every table, not one screen),
    and the store the command line records the run in (``store``: a URL, None for ``$CBENCH_STORE``
    or the working directory's; ``tags``, its labels)."""

    progress: bool = True
    stream: Callable[[EvalRow], None] | None = None
    cache_dir: str | None = attrs.field(default=None, converter=_path)
    format: str = DEFAULT_FORMAT
    out: str | None = None
    html_inline_rows: int = attrs.field(
        default=DEFAULT_HTML_INLINE_ROWS, validator=bounded("--html-inline-rows")
    )
    detail: bool = False
    store: str | None = None
    tags: tuple[str, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen(kw_only=True)
class Metering:
    """The meter of a run (docs/savings.md): with an ``upstream`` (the model endpoint, ``--meter
    URL``), a relay in front of it listens on ``host``:``port`` (0: a free port) for the run, every
    call through it is counted on its row, and a system whose endpoint is the upstream is sent
    through it.  ``tokenizer`` (a :class:`~context_bench.token_count.Tokenizer` or its
    ``--tokenizer`` spec) counts the prompt each system is given, with or without the meter, and
    each call's input through the meter; ``keep_prompts``
    writes what each call sent into the rows (``--keep-prompts``; else they are never kept)."""

    upstream: str | None = None
    host: str = "127.0.0.1"
    port: int = attrs.field(default=0, validator=bounded("--meter-port"))
    tokenizer: Any = None
    keep_prompts: bool = False


def _settings(value: Any) -> PluginSettings:
    return value if isinstance(value, PluginSettings) else PluginSettings(value or {})


@attrs.frozen(kw_only=True)
class RunConfig:
    """Every setting of a run (see the module's docstring): ``RunConfig()`` is the default run, and
    ``attrs.evolve`` makes a changed copy.  ``plugins`` takes a :class:`PluginSettings` or the
    plugins' options by ``dest`` (``{"acme_url": ...}``)."""

    scope: Scope = attrs.field(factory=Scope, validator=attrs.validators.instance_of(Scope))
    limits: Limits = attrs.field(factory=Limits, validator=attrs.validators.instance_of(Limits))
    analysis: Analysis = attrs.field(factory=Analysis, validator=attrs.validators.instance_of(Analysis))
    output: Output = attrs.field(factory=Output, validator=attrs.validators.instance_of(Output))
    metering: Metering = attrs.field(factory=Metering, validator=attrs.validators.instance_of(Metering))
    plugins: PluginSettings = attrs.field(factory=PluginSettings, converter=_settings)
    #: The systems swept and how their curve is read (:mod:`context_bench.sweep`; none by default).
    sweep: Sweep = attrs.field(factory=Sweep, validator=attrs.validators.instance_of(Sweep))

    @classmethod
    def from_kwargs(cls, base: RunConfig | None = None, **kwargs: Any) -> RunConfig:
        """The configuration the flat keywords of earlier releases stand for (``evaluate``'s and
        ``RunOptions``'), on top of ``base``: the bridge of the deprecated keywords, which goes
        with them.  A keyword that names no setting is a TypeError."""
        config = base or cls()
        unknown = sorted(set(kwargs) - set(LEGACY_NAMES))
        if unknown:
            raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
        groups: dict[str, dict[str, Any]] = {}
        analysis = kwargs.pop("analysis", None) or config.analysis
        for name, value in kwargs.items():
            group, field = LEGACY_NAMES[name]
            groups.setdefault(group, {})[field] = value
        plugins = groups.pop("plugins", {}).get("options")
        return attrs.evolve(
            config,
            scope=attrs.evolve(config.scope, **groups.get("scope", {})),
            limits=attrs.evolve(config.limits, **groups.get("limits", {})),
            analysis=attrs.evolve(analysis, **groups.get("analysis", {})),
            output=attrs.evolve(config.output, **groups.get("output", {})),
            plugins=config.plugins if plugins is None else plugins,
        )

    def flat(self, name: str) -> Any:
        """The setting a keyword of earlier releases named (:data:`LEGACY_NAMES`)."""
        if name == "analysis":
            return self.analysis
        group, field = LEGACY_NAMES[name]
        value = getattr(getattr(self, group), field)
        return dict(value) if group == "plugins" else value


#: The flat keywords of ``evaluate`` and ``RunOptions`` before :class:`RunConfig` (deprecated), each
#: with the group and field it is now; ``analysis`` (a whole :class:`Analysis`) is the analysis group.
LEGACY_NAMES: Mapping[str, tuple[str, str]] = {
    "evaluators": ("scope", "evaluators"),
    "add_evaluators": ("scope", "add_evaluators"),
    "exclude_evaluators": ("scope", "exclude_evaluators"),
    "max_examples": ("scope", "max_examples"),
    "dataset_name": ("scope", "dataset_name"),
    "split": ("scope", "split"),
    "hub_mirror": ("scope", "hub_mirror"),
    "max_concurrency": ("limits", "max_concurrency"),
    "call_timeout": ("limits", "call_timeout"),
    "fail_fast": ("limits", "fail_fast"),
    "max_row_bytes": ("limits", "max_row_bytes"),
    "analysis": ("analysis", ""),
    "metrics": ("analysis", "metrics"),
    "breakdown": ("analysis", "breakdown"),
    "exclude_errors": ("analysis", "exclude_errors"),
    "progress": ("output", "progress"),
    "stream": ("output", "stream"),
    "cache_dir": ("output", "cache_dir"),
    "output": ("output", "format"),
    "out": ("output", "out"),
    "html_inline_rows": ("output", "html_inline_rows"),
    "options": ("plugins", "options"),
    "plugin_options": ("plugins", "options"),
}


def from_deprecated(
    caller: str, config: Any, kwargs: Mapping[str, Any], *, executor: bool, keep: Collection[str] = ()
) -> tuple[RunConfig, dict[str, Any]]:
    """The configuration a call of earlier releases stands for, with a DeprecationWarning naming
    what it used: its keywords, and a third positional argument, which was the evaluators (``config``
    when it is no RunConfig).  ``call_timeout=None`` beside an ``executor`` meant the executor's
    own deadline, which is :data:`UNSET` now.  The keywords named in ``keep`` are no setting (the
    caller's own, such as ``evaluate``'s ``run``): they are returned as they were given."""
    given = {name: value for name, value in kwargs.items() if name not in keep}
    used = [f"{name}=" for name in kwargs]
    if config is not None and not isinstance(config, RunConfig):
        given["evaluators"], config = config, None
        used.insert(0, "evaluators as the third argument")
    if executor and "call_timeout" in given and given["call_timeout"] is None:
        given["call_timeout"] = UNSET
    warnings.warn(
        f"{caller}: {', '.join(used)} {'is' if len(used) == 1 else 'are'} deprecated: pass a "
        f"context_bench.RunConfig as {caller.partition('(')[0]}(systems, datasets, config); the "
        "keywords of earlier releases go in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    kept = {name: value for name, value in kwargs.items() if name in keep}
    return RunConfig.from_kwargs(config, **given), kept
