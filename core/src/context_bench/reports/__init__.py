"""Reports: an :class:`~context_bench.EvalResult` rendered as text in one of :data:`FORMATS`.

``table`` is for a terminal, ``markdown`` for a pull request or notebook, ``json`` is the whole
result, ``jsonl`` one row per line, ``html`` a self-contained page (summary and every row; a big
run's rows in a file beside it), and ``csv`` one line per row.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import attrs

from ..errors import UsageError

if TYPE_CHECKING:  # the records load with a run; the CLI's parser needs only FORMATS
    from ..records import EvalResult, Summary

#: The report formats, as ``--output`` offers them.
FORMATS = ("table", "markdown", "json", "jsonl", "html", "csv")

#: The width a report is laid out for when no terminal says otherwise.
WIDTH = 100

__all__ = ["FORMATS", "View", "render", "summary_of"]


@attrs.frozen
class View:
    """How the terminal table is laid out: every table (``detail``, ``--detail``) or one screen
    (the verdict, the key figures, the warnings), at most ``width`` columns wide (the terminal's)."""

    detail: bool = False
    width: int = WIDTH


def render(result: EvalResult, fmt: str, view: View | None = None) -> str:
    """The report of ``result`` in format ``fmt``, as one string ending in a newline; ``view``
    lays out the table (default: one screen at :data:`WIDTH` columns) and says whether the table,
    Markdown and HTML reports show every score field (``detail``)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown report format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    module = importlib.import_module(f".{fmt}", __name__)
    if fmt in ("table", "markdown", "html"):
        return module.render(result, view or View())
    return module.render(result)


def summary_of(result: EvalResult) -> Summary:
    """The result's summary, computed from its rows when it was built without one (empty when
    it cannot be)."""
    if result.summary is not None:
        return result.summary
    if result.rows and result.summarize is not None:
        return result.summarize(result.rows)
    from ..records import Summary

    return Summary()
