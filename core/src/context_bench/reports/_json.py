"""The JSON report: the verdict's lines, then the whole result, summary and rows."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from ..records import EvalResult, Summary
from ..saved import summary_from_dict
from . import View, summary_of
from ._verdict import verdicts


def render(result: EvalResult, view: View | None = None) -> str:
    """The report of the whole result: ``view`` changes nothing (a format's writer takes one)."""
    said = json.dumps(_verdict(result), ensure_ascii=False)
    return '{"verdict": ' + said + ",\n" + result.to_json().removeprefix("{") + "\n"


def _verdict(result: EvalResult) -> list[str]:
    summary = summary_of(result)
    if not isinstance(summary, Summary):  # a stored run's summary as its dict (store._transfer)
        summary = summary_from_dict(summary.to_dict())
    return [str(v) for v in verdicts(summary)]


#: What stands between two rows of the report.
ROW_SEPARATOR = ",\n"


def write(result: EvalResult, rows: Iterable[str], handle: TextIO) -> None:
    """Write the report of a streamed run, whose rows (``encode_row`` lines) come from a spool
    rather than the result: the same text as :func:`render`, a row at a time (or several rows
    at a time, joined by :data:`ROW_SEPARATOR`)."""
    head, _, tail = render(EvalResult([], result.summary, metadata=result.metadata)).rpartition('"rows": []')
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        handle.write(head + '"rows": []' + tail)
        return
    handle.write(head.rstrip(" ") + '\n"rows": [\n' + first)
    for text in rows:
        handle.write(ROW_SEPARATOR + text)
    handle.write("\n]}\n")
