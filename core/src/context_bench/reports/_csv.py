"""The CSV report: one line per row (system, data set, id, tokens, latency, cost, errors, every
score as ``score.FIELD``, the response), the table ``EvalResult.to_pandas()`` gives, for a
spreadsheet or a data frame."""

from __future__ import annotations

import csv
import io
import math

from ..records import EvalResult, row_table
from . import View


def render(result: EvalResult, view: View | None = None) -> str:
    """The report of every row: ``view`` changes nothing (a format's writer takes one)."""
    header, lines = row_table(result.rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_cell(value) for value in line] for line in lines)
    return buffer.getvalue()


def _cell(value: object) -> object:
    """Empty for none (and for a number no spreadsheet reads, NaN or infinity)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return value
