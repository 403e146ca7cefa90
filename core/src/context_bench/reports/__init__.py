"""Reports: an :class:`~context_bench.EvalResult` rendered as text in a registered format.

The core registers ``table`` (for a terminal), ``markdown`` (a pull request or notebook), ``json``
(the whole result), ``jsonl`` (one row per line), ``html`` (a self-contained page: summary and every
row; a big run's rows in a file beside it) and ``csv`` (one line per row) through the
``cbench_register_formats`` hook, as a plugin registers its own (:func:`formats` lists them).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:  # the records load with a run; the CLI's parser needs only the format names
    from ..plugins import PluginHost
    from ..records import EvalResult, EvalRow, Summary

#: The width a report is laid out for when no terminal says otherwise.
WIDTH = 100

__all__ = ["RowStream", "View", "formats", "render", "summary_of"]


@attrs.frozen
class View:
    """How the terminal table is laid out: every table (``detail``, ``--detail``) or one screen
    (the verdict, the key figures, the warnings), at most ``width`` columns wide (the terminal's)."""

    detail: bool = False
    width: int = WIDTH


class RowStream(Protocol):
    """A report written as its run goes, which a streaming format's ``FormatSpec.stream(output)``
    makes: ``with stream as rows``, the run hands ``rows`` each row as it finishes; then, in the
    block, ``finish(result)`` writes the report of the finished result where ``output`` says
    (``--out``, else stdout) and returns how many characters no file can store it wrote as U+FFFD.
    Leaving the block without finishing (a failed or interrupted run) leaves an earlier report whole.
    """

    def __enter__(self) -> Callable[[EvalRow], None]: ...

    def __exit__(self, *exc: object) -> None: ...

    def finish(self, result: EvalResult) -> int: ...


def formats(host: PluginHost | None = None) -> tuple[str, ...]:
    """The names of the report formats ``host`` (default: the process's) holds, the core's first."""
    from ..plugins import get_host

    return tuple(spec.name for _, spec in (host or get_host()).formats())


def render(result: EvalResult, fmt: str, view: View | None = None, *, host: PluginHost | None = None) -> str:
    """The report of ``result`` in format ``fmt`` (one ``host`` holds; default: the process's), as
    one string; ``view`` lays out the table (default: one screen at :data:`WIDTH` columns) and says
    whether the table, Markdown and HTML reports show every score field (``detail``).  An unknown
    format is a UsageError naming the valid ones."""
    from ..plugins import get_host
    from ..specs import resolve

    spec = (host or get_host()).find_format(fmt)
    return resolve(spec.writer)(result, view or View())


def summary_of(result: EvalResult) -> Summary:
    """The result's summary, computed from its rows when it was built without one (empty when
    it cannot be)."""
    if result.summary is not None:
        return result.summary
    if result.rows and result.summarize is not None:
        return result.summarize(result.rows)
    from ..records import Summary

    return Summary()


def __getattr__(name: str) -> Any:
    """``FORMATS``, the fixed tuple of earlier releases: the formats the process's host holds, deprecated."""
    if name != "FORMATS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        "context_bench.reports.FORMATS is deprecated: formats come through the cbench_register_formats "
        "hook; call context_bench.reports.formats()",
        DeprecationWarning,
        stacklevel=2,
    )
    return formats()
