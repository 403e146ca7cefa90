"""The JSONL report: one row per line, for streaming tools and for scoring again with ``score``.

Each line is the input row's fields (its ``id``, its references such as ``answer``) with the row's
results over them (``system``, ``dataset``, ``response``, ``scores``, ...), so
``context-bench score report.jsonl`` scores a run's responses again.
"""

from __future__ import annotations

from ..records import EvalResult, EvalRow, encode_compact


def render(result: EvalResult) -> str:
    return "".join(encode_compact(line(row)) + "\n" for row in result.rows)


def line(row: EvalRow) -> dict:
    """One row of the report: the input's fields, then the results, then the row's ``id``."""
    example = row.example
    if not example:
        return row.to_dict()
    return {**example, **row.to_dict(), "id": row.example_id}
