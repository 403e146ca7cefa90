"""What a command does with its finished run (:func:`emit`): the result completed with its metadata,
recorded, its report written (:mod:`.writing`), then its gates judged into the exit status."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import attrs

from ._writing import write_report

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..records import EvalResult
    from ..reports import RowStream
    from ._run_options import RunOptions


def emit(
    result: EvalResult,
    options: RunOptions,
    written: RowStream | None = None,
    record: Callable[[EvalResult], None] | None = None,
) -> int:
    """Write the report the flags ask for, then apply the gates; return the exit status: 0, 1 when
    no row could be scored, 3 when a quality gate failed, 4 when too many rows failed (see
    :meth:`~context_bench.gates.Gates.judge`); a gate naming nothing in the run is a UsageError.

    The report carries the run's metadata: what the command put in ``result.metadata`` (best
    ``run_metadata(argv=..., systems=...)``: the systems, their endpoints, the command line), completed
    with the date, the versions of the core and every loaded plugin, and, when the command gave
    none, the process's command line; secrets removed.  Text
    that cannot be encoded (a lone surrogate from a row or a reply) is written as U+FFFD, with a
    warning; ``--out`` is replaced atomically, so a failed write leaves an earlier report whole.
    ``written``: the :class:`~context_bench.reports.RowStream` the run handed its rows to as they
    finished (``cli._writing.report_stream``), whose ``finish`` writes the report; None: the report
    rendered whole from ``result``.  ``record`` is given the finished result
    before the report is written (a :class:`~context_bench.cli.Recording`'s ``finish``).
    """
    from .._encodable import repair_text
    from ..reports._sections import printable

    known = _metadata()
    versions = {**known["versions"], **result.metadata.get("versions", {})}
    output, analysis = options.config.output, options.config.analysis
    if result.summarize is not None:  # summarized again only for prices by model the run lacked
        described = result.metadata.get("systems") or ()
        result = result.analyzed(result.summarize.analysis.with_models(described))
    result = attrs.evolve(
        result.summarized(exclude_errors=analysis.exclude_errors),
        metadata={**known, **result.metadata, "versions": versions},
    )
    if record is not None:
        record(result)
    write_report(result, output, written)
    verdict = options.gates.judge(result)
    for line in verdict.lines:
        print(f"context-bench: error: {printable(repair_text(line))}", file=sys.stderr)
    return verdict.status


def _metadata() -> dict[str, Any]:
    """What emit knows of the run by itself: the date, the versions of the core and of every loaded
    plugin, and the process's command line."""
    from ..metadata import run_metadata
    from ..plugins import BUILTIN, get_host

    plugins = {
        info.distribution or info.name: info.version for info in get_host().loaded() if info.name != BUILTIN
    }
    return run_metadata(argv=sys.argv[1:], versions=plugins)
