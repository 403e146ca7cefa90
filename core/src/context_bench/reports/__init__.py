"""Reports: an :class:`~context_bench.EvalResult` rendered as text in one of :data:`FORMATS`.

``table`` is for a terminal, ``markdown`` for a pull request or notebook, ``json`` is the whole
result, ``jsonl`` one row per line, ``html`` a self-contained page (summary and every row; a big
run's rows in a file beside it), and ``csv`` one line per row.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:  # the records load with a run; the CLI's parser needs only FORMATS
    from ..records import EvalResult, Summary

#: The report formats, as ``--output`` offers them.
FORMATS = ("table", "markdown", "json", "jsonl", "html", "csv")

__all__ = ["FORMATS", "render", "summary_of"]


def render(result: EvalResult, fmt: str) -> str:
    """The report of ``result`` in format ``fmt``, as one string ending in a newline."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown report format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    return importlib.import_module(f".{fmt}", __name__).render(result)


def summary_of(result: EvalResult) -> Summary:
    """The result's summary, computed from its rows when it was built without one (empty when
    it cannot be)."""
    if result.summary is not None:
        return result.summary
    if result.rows and result.summarize is not None:
        return result.summarize(result.rows)
    from ..records import Summary

    return Summary()
