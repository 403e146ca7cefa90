"""Hook specifications: the API a context-bench plugin implements.

A plugin is a module (or object) named by an entry point in the ``context_bench.plugins`` group.
It declares ``CBENCH_PLUGIN_API = 1`` and implements any of the hooks below, each marked with
:data:`hookimpl`::

    from context_bench import hookimpl, EvaluatorSpec

    CBENCH_PLUGIN_API = 1

    @hookimpl
    def cbench_register_evaluators(register):
        register(EvaluatorSpec("WordCountDiff", "cbench_wordcount.evaluator:WordCountDiff",
                               fields=["word_count_ratio"], description="..."))

The registering hooks are all called once per process, at discovery (the first time anything asks
the host); ``cbench_add_options`` when a parser with the run flags is built.  Keep the plugin module
light: name heavy classes by lazy ``"module:attr"`` references so that listing and auto-wiring
import nothing heavy.  A hook that raises loses only what it registers (its records, or the options
it added), and a record refused (a name already taken) only itself: one warning line each, the
plugin ``partial`` while anything of it is left, everything else working.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

from .specs import (
    AutowireRule,
    CommandSpec,
    DatasetSpec,
    EvaluatorSpec,
    ExecutorSpec,
    FormatSpec,
    SectionSpec,
)

if TYPE_CHECKING:
    import argparse

PROJECT = "context_bench"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

#: Run options every plugin receives besides its own (``cache_dir``: where the run keeps its cache,
#: so that a plugin can keep its own beside it).
SHARED_OPTIONS = ("cache_dir",)


class OptionGroup(Protocol):
    """What ``cbench_add_options`` gets: the ``add_argument`` of an :mod:`argparse` argument group."""

    def add_argument(self, *names: str, **kwargs: Any) -> argparse.Action: ...


@hookspec
def cbench_register_evaluators(register: Callable[[EvaluatorSpec], None]) -> None:
    """Register the evaluators this plugin offers.

    Call ``register(EvaluatorSpec(...))`` once per evaluator.  Names are public: once published,
    ``--evaluator NAME`` and ``from context_bench.evaluators import NAME`` depend on them.  When two
    plugins register the same name, both stay reachable as ``plugin-name/Name``; the short name then
    fails only when used, with an error listing every source.  Names of the core's built-in
    evaluators are reserved.
    """


@hookspec
def cbench_register_autowire(register: Callable[[AutowireRule], None]) -> None:
    """Register auto-wire rules: which data sets get which evaluators by default.

    Call ``register(AutowireRule(...))``.  A rule may name an evaluator of another plugin; if that
    evaluator is not installed, the run prints a one-line hint instead of failing.  A rule says
    which kinds of run it serves (``runs=("rows",)``); the core removes no evaluator by name.
    """


@hookspec
def cbench_register_datasets(register: Callable[[DatasetSpec], None]) -> None:
    """Register named data sets: ``register(DatasetSpec(name, loader, description, kind, ...))``.

    Loaders run only when a run asks for that data set, never at registration.  A loader gets
    ``config`` (``--dataset NAME:CONFIG``) and ``split`` (``--split``) only when they are given and
    only if it names them as parameters; otherwise giving one is refused (``**kwargs`` does not count).
    """


@hookspec
def cbench_register_commands(register: Callable[[CommandSpec], None]) -> None:
    """Add subcommands to ``context-bench``: ``register(CommandSpec(name, help, configure, run))``.

    ``configure(parser, host)`` adds the command's arguments; to offer the shared run flags
    (evaluators, ``-n``, concurrency, cache, output, the plugins' options) it calls
    ``context_bench.cli.add_run_options(parser, host)`` and, in ``run(args, host)``, reads them back
    with ``options = context_bench.cli.RunOptions.from_args(args, host)`` (``options.config``: the
    run's :class:`~context_bench.config.RunConfig`), runs ``evaluate(systems, rows, options.config,
    host=host, executor=options.build_executor())``, and returns
    ``context_bench.cli.emit(result, options)``.  A command name already taken (by the core, whose
    commands register first, or an earlier plugin) is refused: that command alone, in one line.
    """


@hookspec
def cbench_register_executors(register: Callable[[ExecutorSpec], None]) -> None:
    """Register executors, the places where a run's rows are worked on: ``register(ExecutorSpec(name,
    factory, description, options))``; ``--executor NAME`` picks one (the core's is ``local``).

    ``options`` names the flags (added through ``cbench_add_options``) the executor's factory takes.
    A name already taken (by the core or an earlier plugin) is refused: that executor alone.
    """


@hookspec
def cbench_register_formats(register: Callable[[FormatSpec], None]) -> None:
    """Register report formats: ``register(FormatSpec(name, writer, description, extension=...))``;
    ``--output NAME`` of ``run``, ``score``, ``compare``, ``show`` and every command with the run flags
    offers each one, its description in the flag's help.

    ``writer(result, view) -> str`` renders a finished run whole.  A format that streams also names
    ``stream``, a :class:`~context_bench.reports.RowStream` factory: a run hands it each row as it
    finishes and it writes the report when the run is done (the core's JSONL, JSON and HTML do).
    The core's formats (``table``, ``markdown``, ``json``, ``jsonl``, ``html``, ``csv``) register
    first: a format of any of those names, or of one an earlier plugin took, is refused, that format
    alone, in one line.
    """


@hookspec
def cbench_register_sections(register: Callable[[SectionSpec], None]) -> None:
    """Register summary sections: figures computed from a run's finished rows, added to its summary
    and shown by every report: ``register(SectionSpec(name, factory, description))``.

    :param register: takes one :class:`~context_bench.specs.SectionSpec`.

    For each run, ``factory(config, options)`` (the run's
    :class:`~context_bench.config.RunConfig`, and the plugin's share of the run's options, as its
    rules' ``build`` gets them: ``AcmeSettings.read(options)``, and ``options["cache_dir"]``, where
    the run keeps its cache) returns None when the run did not ask for the
    section, else a :class:`~context_bench.summary_sections.SectionBuilder`: it is given every
    finished row in task order (``add(row)``; rows a run streams are not kept for it) and, once the
    run's rows are done, ``finish()`` returns a
    :class:`~context_bench.summary_sections.SummarySection`: records per (system, data set), the
    figures the gates may name (``--fail-under FIELD=VALUE`` reads a record's ``FIELD`` when no
    group has that score), and the work that failed (over ``--max-failure-rate``: exit 4).  It is
    ``summary.sections[name]``, and ``summary.<name>`` (the records) in the JSON report; the table,
    Markdown and HTML reports show it as a table, the HTML report its first figure as a bar per
    record.  A name the core's summary has, or an earlier plugin took, is refused, that section alone.
    """


@hookspec
def cbench_add_options(group: OptionGroup) -> None:
    """Add command-line options for the commands that take run flags (``run``, ``score``, and
    plugin commands that call ``add_run_options``).

    ``group.add_argument("--acme-url", ...)`` (its dest: ``acme_url``).  Parsed values reach this
    plugin's own auto-wire rules (``build``) as the run's ``options`` mapping, keyed by each
    option's ``dest``: a plugin gets the options it declared, those no plugin declared (an API
    caller's own keys), and the shared ones (:data:`SHARED_OPTIONS`), never another plugin's.
    ``requires`` of a rule is checked against every option of the run.  API users pass the same
    mapping as ``RunConfig(plugins=...)``.  Use a prefix that names the plugin (the core reserves
    its own flags), and declare the options' typed record beside them
    (:class:`~context_bench.settings.Settings`, ``namespace = "acme"``, a field ``url``): a build
    reads it with ``AcmeSettings.read(options)``, a command with ``config.plugins.get(AcmeSettings)``.
    """


@hookspec
def cbench_plugin_info() -> dict[str, str] | None:
    """Facts about the plugin at run time, shown by ``context-bench plugins``.

    For example which sandbox layers are active.  Must be cheap and must not raise.
    """
