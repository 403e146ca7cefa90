"""``context-bench run`` (endpoints over data sets), ``score`` (responses in files), ``compare``
(saved reports or stored runs) and ``show`` (one saved report or stored run): each command's
arguments (``configure_*``) and what it does (``cmd_*``)."""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import Interrupted, UsageError
from ..plugins import PluginHost
from ._gating import emit
from ._history import add_store_option, stored_or_file
from ._meter_options import add_meter_options
from ._run_options import (
    RunOptions,
    add_detail_option,
    add_figure_options,
    add_output_option,
    add_run_options,
    check_reachable,
)
from ._sweeps import add_sweep_options, refined, swept
from ._system_flags import add_system_flags
from ._writing import report_stream

if TYPE_CHECKING:
    from ..cache import RunCache
    from ..records import EvalResult
    from ..reports import RowStream
    from ._inputs import Inputs
    from ._recording import Recording


def configure_run(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.description = (
        "Run systems (OpenAI-compatible endpoints) over data sets and score them.  "
        "See docs/endpoints.md for LiteLLM, vLLM and OpenAI, and how keys are passed."
    )
    add_system_flags(parser)
    parser.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="registered data set name or a JSONL/JSON/CSV file (repeatable; required unless a "
        "--config run file lists [[datasets]])",
    )
    parser.add_argument(
        "--dataset-name",
        metavar="NAME",
        help="data set name of the files given with --dataset, for auto-wiring (rows with a "
        "'dataset' field keep theirs)",
    )
    add_run_options(parser, host)
    add_meter_options(parser)
    add_sweep_options(parser)
    parser.set_defaults(run_parser=parser)  # --config reads the run file's flags with it


def configure_score(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="JSONL/JSON/CSV rows carrying 'response'")
    parser.add_argument(
        "--dataset-name",
        metavar="NAME",
        help="data set name for auto-wiring rows that carry no 'dataset' field",
    )
    add_run_options(parser, host)


def configure_compare(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.description = (
        "Compare saved JSON results on their shared row ids (by data set and id): "
        "every other system against the baseline, with the report's figures."
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE|RUN", help="JSON reports (--output json) or stored runs' ids"
    )
    add_store_option(parser)
    add_output_option(parser, host, "table")
    parser.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout")
    add_detail_option(parser)
    parser.add_argument(
        "--baseline", metavar="NAME", help="the system the others are compared with (default: the first)"
    )
    add_figure_options(parser)


def configure_show(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.description = "Show a saved JSON report or a stored run again, in any format, as it was written."
    parser.add_argument(
        "report", metavar="REPORT|RUN", help="a JSON report (--output json) or a stored run's id"
    )
    add_store_option(parser)
    add_output_option(parser, host, "table")
    parser.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout")
    add_detail_option(parser)


def cmd_run(args: argparse.Namespace, host: PluginHost) -> int:
    return refined(args, host, _run) if getattr(args, "refine", 0) else _run(args, host)


def _run(args: argparse.Namespace, host: PluginHost) -> int:
    from ..command_system import CommandSystem
    from ..datasets import load, read_file
    from ..systems import OpenAIProxy
    from ._inputs import Inputs, refuse_input_as_out
    from ._run_file import resolve_run, resolved_config

    run = resolve_run(args)  # a --config file merged into args first: RunOptions reads the result
    settings, options = swept(run.systems, args, RunOptions.from_args(args, host))
    config = options.config
    files = (args.config, args.rerun, getattr(args, "prices", None))  # read too: never overwritten
    refuse_input_as_out(config.output.out, [*(entry.spec for entry in run.datasets), *filter(None, files)])
    inputs = Inputs(host, config.scope.max_examples)
    for entry in run.datasets:
        if entry.path is not None:  # read as the run goes, not listed first
            rows: Any = read_file(entry.path, max_row_bytes=config.limits.max_row_bytes)
            if entry.max_examples is not None:  # a run file's own limit of this data set
                rows = itertools.islice(rows, entry.max_examples)
            inputs.add(entry.name or Path(entry.path).stem, rows, entry.path)
            continue
        loaded = load(
            entry.spec,
            max_examples=entry.max_examples if entry.max_examples is not None else config.scope.max_examples,
            host=host,
            kind="rows",
            **{**options.load_kwargs(), **entry.loader_kwargs()},
        )
        inputs.add(loaded.name, loaded.rows, entry.spec)
    keys_named = any(system.api_key_env for system in settings)
    systems = []
    for system in settings:
        try:
            if system.url is None:
                systems.append(CommandSystem(system.command or "", **system.command_kwargs()))
            else:
                systems.append(OpenAIProxy(system.url, **system.proxy_kwargs(keys_named=keys_named)))
        except ValueError as exc:  # an unset key variable (its value never shown), a missing program
            raise UsageError(f"{system.label}: {exc}") from None
    for system in settings:
        if system.url is not None:
            check_reachable(system.url)
    if config.metering.upstream is not None:
        check_reachable(config.metering.upstream, "--meter")
    return _evaluate(systems, inputs, options, host, recorded=resolved_config(run, args))


def _evaluate(
    systems: list[Any] | None,
    inputs: Inputs,
    options: RunOptions,
    host: PluginHost,
    recorded: dict[str, Any] | None = None,
) -> int:
    """Say what was read and how it will be scored (one line each), then run and report;
    ``recorded`` is the resolved configuration a JSON report records (``run --config REPORT``
    repeats it).

    The rows stream: read as the run draws them, each handed to its format's stream as it finishes
    (``cli._writing.report_stream``: written for ``jsonl``; spooled to a temporary file for ``json``
    and ``html`` with ``--out``, held as text on stdout; counted, not kept, for the table and
    Markdown), so a run of millions of rows runs in bounded memory (docs/architecture.md); CSV
    holds every row.  Each finished row is recorded in the
    store too, and the summary with the report (:class:`~context_bench.cli._recording.Recording`).
    """
    from ._recording import Recording

    with Recording(options, "score" if systems is None else "run") as recording:  # before any row
        return _run_recorded(systems, inputs, options, host, recorded, recording)


def _run_recorded(
    systems: list[Any] | None,
    inputs: Inputs,
    options: RunOptions,
    host: PluginHost,
    recorded: dict[str, Any] | None,
    recording: Recording,
) -> int:
    from .._autowire import Wirer
    from .._by import check_fields
    from ..cache import RunCache
    from ..metadata import run_metadata
    from ..reports._sections import printable
    from ..reports._table import fitted
    from ..runner import RowSystems, SecondPass, evaluate

    config = options.config
    named = inputs.names(RowSystems.default)
    if named is not None:  # the gates' names, checked before any row runs
        datasets, listed = named
        ran = listed if systems is None else [getattr(s, "name", type(s).__name__) for s in systems]
        options.gates.check_names(ran, datasets)
    check_fields(config.analysis.by, inputs.heads)
    told = len(inputs.notices)
    for notice in inputs.notices:
        print(f"context-bench: notice: {printable(notice)}", file=sys.stderr)
    # an unusable cache directory is the one line said, not the second; open, it counts the rows
    # Ctrl-C leaves behind
    cache_dir = config.output.cache_dir
    cache = RunCache(cache_dir) if cache_dir else None
    config = attrs.evolve(config, output=attrs.evolve(config.output, cache_dir=None))
    executor = options.build_executor()
    # Built as evaluate() will build them, so a setup mistake (an unset key variable) is said
    # first, in its one line; the evaluators are built again by the run, which is cheap.
    wirer = Wirer(
        host,
        {**config.plugins.options, **({"cache_dir": str(Path(cache_dir))} if cache_dir else {})},
        explicit=config.scope.evaluators,
        add=config.scope.add_evaluators,
        exclude=config.scope.exclude_evaluators,
    )
    chosen = wirer.choices(inputs.heads)
    said = f"context-bench: {wirer.describe(chosen)}"  # whole with --detail
    print(printable(said) if config.output.detail else fitted(said), file=sys.stderr)
    broken = host.broken()
    if chosen and not any(chosen.values()) and broken:  # not a run that measures cost alone
        raise UsageError(f"no evaluator scores any row of this run: {'; '.join(broken)}")
    run_systems: Any = systems if systems is not None else RowSystems()

    # -n was kept as the rows were read (per data set, across files): the run takes them all
    config = attrs.evolve(config, scope=attrs.evolve(config.scope, max_examples=None))

    def run(stream: Any) -> EvalResult:
        stream = recording.tee(stream)
        streamed = attrs.evolve(config, output=attrs.evolve(config.output, stream=stream))
        try:
            result = evaluate(
                run_systems,
                inputs.datasets,
                streamed,
                host=host,
                executor=executor,
                second_pass=SecondPass(cache=cache, scored=inputs.scored),
            )
        except KeyboardInterrupt:
            raise Interrupted(_kept(cache)) from None
        for notice in inputs.notices[told:]:  # of files read to their end during the run
            print(f"context-bench: notice: {printable(notice)}", file=sys.stderr)
        return result

    recording.begin(recorded, run_metadata(argv=options.argv, systems=systems or (), config=recorded))
    report = report_stream(config.output)
    with report as rows:  # a report streamed: in place, or its spooled rows read, when it is written
        result = run(rows)
        ran = systems if systems is not None else run_systems.seen
        return _emit(result, ran, options, report, recorded, recording)


def _kept(cache: RunCache | None) -> str:
    """What an interrupted run leaves behind: the rows it finished in the cache, or nothing."""
    if cache is None:
        return "no row is kept (with --cache-dir DIR, finished rows are kept and the same command resumes)"
    rows = f"{cache.stored} finished row{'s' * (cache.stored != 1)} of this run"
    return f"{rows} kept in {cache.root}; the same command resumes from them"


def _emit(
    result: EvalResult,
    systems: list[Any],
    options: RunOptions,
    written: RowStream | None = None,
    recorded: dict[str, Any] | None = None,
    recording: Recording | None = None,
) -> int:
    """Report with the run's metadata: the command line as given, the systems (model, endpoint) and
    the resolved configuration ``run --config REPORT`` repeats, secrets removed."""
    from ..metadata import run_metadata

    result.metadata = run_metadata(argv=options.argv, systems=systems, config=recorded)
    return emit(result, options, written=written, record=recording.finish if recording else None)


def sample_path() -> Path:
    return Path(__file__).parent.parent / "data" / "sample.jsonl"


def cmd_score(args: argparse.Namespace, host: PluginHost) -> int:
    from ..datasets import read_file
    from ..reports._table import fitted
    from ..runner import fewer_collections
    from ._baseline_run import baseline_run
    from ._inputs import Inputs, refuse_input_as_out

    baseline = baseline_run(args.baseline, args.store)  # a stored run's: its rows' name is the baseline
    if baseline is not None:
        args.baseline = baseline.name
    options = RunOptions.from_args(args, host)
    config = options.config
    if config.scope.split is not None:
        raise UsageError("--split picks the split of a named data set (context-bench run --dataset NAME)")
    files = args.files or [str(sample_path())]
    refuse_input_as_out(config.output.out, files)
    if not args.files:
        print(fitted(f"context-bench: scoring the bundled sample ({files[0]})"), file=sys.stderr)
    inputs = Inputs(host, config.scope.max_examples)
    inputs.scored = baseline.rows if baseline is not None else []
    for file in files:
        with fewer_collections():
            inputs.add(
                args.dataset_name or Path(file).stem,
                read_file(file, max_row_bytes=config.limits.max_row_bytes),
                file,
            )
    if not any(inputs.heads.values()):
        raise UsageError(f"no rows to score in {', '.join(files)}")
    return _evaluate(None, inputs, options, host)


def cmd_compare(args: argparse.Namespace, host: PluginHost) -> int:
    """Saved JSON results side by side on the rows they share (by data set and id)."""
    from .._summary import Summarizer
    from ..compare_runs import load_runs
    from ..config import Output, RunConfig
    from ..gates import Gates
    from ..records import EvalResult
    from ._run_options import analysis_from_args
    from ._writing import check_out

    if args.out:
        check_out(args.out, args.output)
    analysis = analysis_from_args(args)
    rows, notices, recorded = load_runs(args.files, stored_or_file(args.store))
    # lower-is-better where a report recorded it so (its run's evaluators, installed here or not) or
    # an installed evaluator declares it (a report that records no directions)
    directions = recorded.merged(host.directions())
    summarize = Summarizer(notices=notices, analysis=analysis, directions=directions)
    result = EvalResult(rows, summarize(rows), summarize, {"compared": list(args.files)})
    options = RunOptions(
        RunConfig(analysis=analysis, output=Output(format=args.output, out=args.out, detail=args.detail)),
        argv=getattr(args, "argv", None),
        gates=Gates(baseline=args.baseline, max_failure_rate=1.0),
    )
    return emit(result, options)


def cmd_show(args: argparse.Namespace, host: PluginHost) -> int:
    """A saved report or a stored run rendered again: its own summary, metadata and rows, no figure
    recomputed."""
    from ..compare_runs import read_report
    from ..config import Output, RunConfig
    from ..gates import Gates
    from ._writing import check_out

    if args.out:
        check_out(args.out, args.output)
    options = RunOptions(
        RunConfig(output=Output(format=args.output, out=args.out, detail=args.detail)),
        argv=getattr(args, "argv", None),
        gates=Gates(max_failure_rate=1.0),
    )
    return emit(read_report(args.report, stored_or_file(args.store)), options)
