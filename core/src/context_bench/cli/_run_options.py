"""The run flags every run command shares, read back and checked as the run's
:class:`~context_bench.config.RunConfig` with what the command does after the run (the gates) and the
report they ask for; :func:`~context_bench.cli.emit` (_gating.py) writes it (_writing.py) and applies them."""

from __future__ import annotations

import argparse
import os
import socket
import warnings
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from ..bounds import flag_type
from ..config import LEGACY_NAMES, Limits, Output, RunConfig, Scope
from ..defaults import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_FAIL_FAST,
    DEFAULT_FORMAT,
    DEFAULT_HTML_INLINE_ROWS,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_ROW_BYTES,
)
from ..errors import UsageError
from ..gates import DEFAULT_MAX_FAILURE_RATE, Gates
from ..plugins import PluginHost
from ..specs import ExecutorSpec
from ._by_option import add_by_option
from ._history import add_store_option, add_tag_option
from ._meter_options import metering_from_args
from ._writing import check_out

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..execution import Executor


def add_run_options(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    """Add the shared run flags (evaluators, ``-n``, concurrency, cache, output) and every loaded
    plugin's options (``cbench_add_options``) to ``parser``; read them with :meth:`RunOptions.from_args`."""
    parser.add_argument(
        "--evaluator",
        action="append",
        default=[],
        metavar="NAME",
        help="add an evaluator to every data set (repeatable)",
    )
    parser.add_argument(
        "--no-evaluator",
        action="append",
        default=[],
        metavar="NAME",
        help="remove an auto-wired evaluator (repeatable)",
    )
    parser.add_argument(
        "--no-autowire", action="store_true", help="use only the evaluators named with --evaluator"
    )
    parser.add_argument(
        "-n",
        "--max-examples",
        type=flag_type("--max-examples"),
        metavar="N",
        help="at most N rows of each data set (per system in scored files), however many files it spans",
    )
    parser.add_argument(
        "--max-concurrency",
        "--max-workers",
        type=flag_type("--max-concurrency"),
        default=DEFAULT_MAX_CONCURRENCY,
        metavar="N",
        help=f"rows in flight (default {DEFAULT_MAX_CONCURRENCY}; --max-workers is its name in earlier "
        "releases)",
    )
    parser.add_argument("--cache-dir", metavar="DIR", help="store finished rows here; a re-run resumes")
    parser.add_argument(
        "--executor",
        metavar="NAME",
        help="where rows are worked on: an executor a plugin registers (default local, this process; "
        "`context-bench plugins` lists them)",
    )
    add_output_option(parser, host)
    parser.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout")
    add_detail_option(parser)
    add_store_option(parser)
    add_tag_option(parser)
    parser.add_argument(
        "--html-inline-rows",
        type=flag_type("--html-inline-rows"),
        default=DEFAULT_HTML_INLINE_ROWS,
        metavar="N",
        help="the HTML report (with --out) holds at most N rows itself; a bigger run's rows go to "
        f"FILE's stem + .rows.jsonl beside it, which the page reads (default {DEFAULT_HTML_INLINE_ROWS:,}; "
        "0: always)",
    )
    parser.add_argument(
        "--exclude-errors",
        action="store_true",
        help="headline means over scored rows only (default: a row with an error counts its worst "
        "value for the scores it lacks, 0 or the top of the range where lower is better; the error "
        "rate shows beside the means either way)",
    )
    parser.add_argument(
        "--call-timeout",
        type=flag_type("--call-timeout"),
        default=DEFAULT_CALL_TIMEOUT,
        metavar="SECONDS",
        help="deadline of every system and evaluator call: a call past it is an error on its row and "
        f"the other rows go on (default {DEFAULT_CALL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-row-bytes",
        type=flag_type("--max-row-bytes"),
        default=DEFAULT_MAX_ROW_BYTES,
        metavar="N",
        help="the largest row of a file read, in bytes: a bigger one is a row error "
        f"(default {DEFAULT_MAX_ROW_BYTES:,})",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    hub = parser.add_argument_group("hub data sets (docs/datasets.md)")
    hub.add_argument(
        "--hub-mirror",
        metavar="DIR",
        default=os.environ.get("CBENCH_HUB_MIRROR") or None,
        help="read hub data sets from DIR/<owner>/<name>/ (what `context-bench datasets download "
        "--to DIR` writes), never from the network (default $CBENCH_HUB_MIRROR)",
    )
    hub.add_argument(
        "--split", metavar="SPLIT", help="the split of the named hub data sets (default: each one's own)"
    )
    gates = parser.add_argument_group("quality gates (exit 3 or 4 after the report is written; docs/ci.md)")
    gates.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="[[SYSTEM/]DATASET:]FIELD=VALUE",
        help="exit 3 when the mean of FIELD is below VALUE in a (system, data set) group: every group "
        "with the field, those of DATASET, or the one of SYSTEM on DATASET (repeatable; a field where "
        "lower is better takes --fail-over)",
    )
    gates.add_argument(
        "--fail-over",
        action="append",
        default=[],
        metavar="[[SYSTEM/]DATASET:]FIELD=VALUE",
        help="exit 3 when the mean of FIELD, a field where lower is better, is above VALUE in a group, "
        "as --fail-under reads its groups (repeatable)",
    )
    gates.add_argument(
        "--fail-if-worse",
        action="append",
        default=[],
        metavar="[[SYSTEM/]DATASET:]FIELD[=MARGIN]",
        help="with --baseline: exit 3 when, on any data set (or DATASET, or SYSTEM on DATASET), a "
        "system's paired difference in FIELD to the baseline (rows matched by id) is significantly "
        "worse than MARGIN (default 0): its test's p is below --alpha and its whole interval worse "
        "than MARGIN, below -MARGIN (or above MARGIN where lower is better) (repeatable)",
    )
    gates.add_argument(
        "--baseline",
        metavar="NAME",
        help="the system the others are compared with, in the report and by --fail-if-worse "
        "(default: the first system); score also takes a stored run's id or a JSON report, "
        "RUN[:SYSTEM] (docs/history.md)",
    )
    gates.add_argument(
        "--max-failure-rate",
        type=flag_type("--max-failure-rate"),
        default=DEFAULT_MAX_FAILURE_RATE,
        metavar="R",
        help="exit 4 when a system could not answer, or an evaluator failed on, more than this share "
        f"of its rows (default {DEFAULT_MAX_FAILURE_RATE:g}; 1 never)",
    )
    add_figure_options(parser)
    add_by_option(parser)
    host.add_options(parser.add_argument_group("plugin options"))


def add_output_option(
    parser: argparse.ArgumentParser, host: PluginHost, default: str = DEFAULT_FORMAT
) -> None:
    """``--output``: a report format ``host`` holds (the core's and every plugin's,
    ``cbench_register_formats``), each one's description in the help."""
    specs = [spec for _, spec in host.formats()]
    described = "; ".join(f"{spec.name}: {spec.description}" for spec in specs if spec.description)
    parser.add_argument(
        "--output",
        choices=[spec.name for spec in specs],
        default=default,
        help=f"report format (default {default})" + (f": {described}" if described else ""),
    )


def add_detail_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--detail",
        "-v",
        action="store_true",
        help="the table report with every table (default: the verdict, the key figures and the "
        "warnings, one screen)",
    )


def add_figure_options(parser: argparse.ArgumentParser) -> None:
    """The flags of the report's figures: the primary score, its pass threshold, prices, the
    comparisons' alpha and whether a missing row counts as a failure."""
    from ..metrics.paired import ALPHA
    from ..records import DEFAULT_THRESHOLD

    figures = parser.add_argument_group("figures (docs/reports.md)")
    figures.add_argument(
        "--score-field",
        metavar="FIELD",
        help="the primary score: pass rate, cost of pass, frontier, loss audit (default: each data "
        "set's headline, the first field of the evaluator its name wires, f1 for QA sets; a set "
        "without FIELD keeps its headline)",
    )
    figures.add_argument(
        "--threshold",
        type=flag_type("--threshold"),
        default=DEFAULT_THRESHOLD,
        metavar="X",
        help=f"a row passes when its primary score reaches X (default {DEFAULT_THRESHOLD:g})",
    )
    figures.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="MODEL=IN,OUT[,CACHED_IN[,CACHE_WRITE]]",
        help="dollars per million input and output tokens of a model (or system, or judge), and of the "
        "input tokens a metered call read from and wrote to the provider's cache (repeatable)",
    )
    figures.add_argument(
        "--prices", metavar="FILE", help="a TOML file of prices: [MODEL] input = IN, output = OUT"
    )
    figures.add_argument(
        "--alpha",
        type=flag_type("--alpha"),
        default=ALPHA,
        metavar="A",
        help=f"the comparisons' significance level; their intervals are at 1 - A (default {ALPHA:g})",
    )
    figures.add_argument(
        "--allow-missing",
        action="store_true",
        help="compare a system on the rows it shares with the baseline alone (default: a row the "
        "baseline has and it lacks counts as its failure, in the report and the gates)",
    )


def analysis_from_args(args: argparse.Namespace) -> Analysis:
    """The figures' settings the flags give; a bad price is a UsageError."""
    from .._by import by_options
    from ..analysis import Analysis
    from ..metrics.paired import ALPHA
    from ..prices import Prices

    threshold = getattr(args, "threshold", None)
    alpha = getattr(args, "alpha", ALPHA)
    defaults = Analysis()
    return Analysis(
        score_field=getattr(args, "score_field", None),
        threshold=defaults.threshold if threshold is None else threshold,
        baseline=getattr(args, "baseline", None),
        prices=Prices.parse(getattr(args, "price", ()) or (), getattr(args, "prices", None)),
        alpha=alpha,
        allow_missing=getattr(args, "allow_missing", False),
        by=by_options(getattr(args, "by", ())),
    )


@attrs.define(init=False)
class RunOptions:
    """The run flags of one command line, checked: the run's :class:`~context_bench.config.RunConfig`
    (``config``, what ``evaluate`` takes), and what the command does around the run: the gates
    :func:`emit` applies, the command line the report records, and the executor ``--executor`` names.

    The flat fields of earlier releases (``options.max_examples``, ``RunOptions(output="json")``,
    ``evaluate_kwargs()``) still work for one release, with a DeprecationWarning.
    """

    config: RunConfig
    #: The command line as given to ``main``, for the report (None: the process's).
    argv: list[str] | None
    #: What makes the finished run fail (``--fail-under``, ``--fail-over``, ``--fail-if-worse``,
    #: ``--max-failure-rate``).
    gates: Gates
    #: The executor ``--executor`` names (None: the runner's local one); :meth:`build_executor` builds it.
    executor: ExecutorSpec | None

    def __init__(
        self,
        config: RunConfig | None = None,
        argv: list[str] | None = None,
        gates: Gates | None = None,
        executor: ExecutorSpec | None = None,
        **deprecated: Any,
    ) -> None:
        if deprecated:
            _deprecated(f"RunOptions({', '.join(f'{name}=' for name in deprecated)})")
            config = RunConfig.from_kwargs(config, **deprecated)
        self.__attrs_init__(config or RunConfig(), argv, gates or Gates(), executor)

    @classmethod
    def from_args(cls, args: argparse.Namespace, host: PluginHost) -> RunOptions:
        """Read the flags :func:`add_run_options` added (a run file's settings among them, merged
        into ``args`` before): the one place the command line becomes a RunConfig.  A bad value is a
        UsageError, before any row runs."""
        if args.no_autowire and not args.evaluator:
            raise UsageError("--no-autowire needs at least one --evaluator")
        if args.out:
            check_out(args.out, args.output)
        gates = Gates.parse(
            getattr(args, "fail_under", ()),
            getattr(args, "fail_if_worse", ()),
            getattr(args, "baseline", None),
            getattr(args, "max_failure_rate", DEFAULT_MAX_FAILURE_RATE),
            getattr(args, "fail_over", ()),
        )
        gates.check_directions(host.directions().of)  # the run's own evaluators: after it
        config = RunConfig(
            scope=Scope(
                evaluators=list(args.evaluator) if args.no_autowire else None,
                add_evaluators=[] if args.no_autowire else list(args.evaluator),
                exclude_evaluators=list(args.no_evaluator),
                max_examples=args.max_examples,
                split=getattr(args, "split", None),
                hub_mirror=getattr(args, "hub_mirror", None),
            ),
            limits=Limits(
                max_concurrency=args.max_concurrency,
                call_timeout=args.call_timeout,
                fail_fast=getattr(args, "fail_fast", DEFAULT_FAIL_FAST),
                max_row_bytes=args.max_row_bytes,
            ),
            analysis=attrs.evolve(
                analysis_from_args(args), exclude_errors=getattr(args, "exclude_errors", False)
            ),
            output=Output(
                progress=not args.no_progress,
                cache_dir=args.cache_dir,
                format=args.output,
                out=args.out,
                html_inline_rows=args.html_inline_rows,
                detail=getattr(args, "detail", False),
                store=args.store,
                tags=args.tag,
            ),
            metering=metering_from_args(args),
            plugins={d: getattr(args, d) for d in sorted(host.option_dests()) if hasattr(args, d)},
        )
        executor = host.find_executor(args.executor) if getattr(args, "executor", None) else None
        return cls(config, getattr(args, "argv", None), gates, executor)

    def build_executor(self) -> Executor | None:
        """The executor ``--executor`` names, built with the run's limits and its plugin's options
        (None: the runner's local one)."""
        if self.executor is None:
            return None
        limits = self.config.limits
        return self.executor.build(
            limits.max_concurrency, limits.local_call_timeout, self.config.plugins.options
        )

    def load_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``context_bench.datasets.load`` these flags stand for."""
        scope = self.config.scope
        return {
            "max_row_bytes": self.config.limits.max_row_bytes,
            "split": scope.split,
            "hub_mirror": scope.hub_mirror,
            "options": self.config.plugins.options,
        }

    def evaluate_kwargs(self) -> dict[str, Any]:
        """Deprecated: the keyword arguments of ``evaluate`` in earlier releases; pass
        ``options.config`` and ``executor=options.build_executor()`` instead."""
        _deprecated("RunOptions.evaluate_kwargs()")
        scope, limits = self.config.scope, self.config.limits
        executor = self.build_executor()
        kwargs = {
            "evaluators": None if scope.evaluators is None else list(scope.evaluators),
            "add_evaluators": list(scope.add_evaluators),
            "exclude_evaluators": list(scope.exclude_evaluators),
            "max_concurrency": limits.max_concurrency,
            "cache_dir": self.config.output.cache_dir,
            "progress": self.config.output.progress,
            "options": dict(self.config.plugins.options),
            "call_timeout": None if executor is not None else limits.local_call_timeout,
        }
        return kwargs if executor is None else {**kwargs, "executor": executor}

    def __getattr__(self, name: str) -> Any:
        """A flat field of earlier releases (``options.max_examples``), from ``config``: deprecated."""
        if name not in LEGACY_NAMES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        _deprecated(f"RunOptions.{name}")
        if name == "call_timeout":
            return self.config.limits.local_call_timeout
        return self.config.flat(name)


def _deprecated(what: str) -> None:
    warnings.warn(
        f"{what} is deprecated: read and pass the run's settings as options.config (a "
        "context_bench.RunConfig); the flat names of earlier releases go in the next one",
        DeprecationWarning,
        stacklevel=3,
    )


def check_reachable(url: str, flag: str = "--proxy") -> None:
    """Fail fast, in one line, when nothing listens at an endpoint (rather than one error per row)."""
    from ..secrets import redact

    shown = redact(url)  # never a password it carries
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:  # a port out of range, an unclosed IPv6 bracket
        raise UsageError(f"{flag} {shown}: not a usable http(s) URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{flag} {shown}: not an http(s) URL")
    try:
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as exc:
        raise UsageError(f"{flag} {shown}: endpoint unreachable: {exc.strerror or exc}") from None
