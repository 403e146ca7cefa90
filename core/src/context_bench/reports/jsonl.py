"""The JSONL report: one row per line, for streaming tools and later re-scoring."""

from __future__ import annotations

from ..records import EvalResult, encode_row


def render(result: EvalResult) -> str:
    return "".join(encode_row(row) + "\n" for row in result.rows)
