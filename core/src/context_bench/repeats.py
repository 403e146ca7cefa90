"""Repeats (``--repeats K``): each row sent K times to each system, the K results one row whose
score is the mean of its repeats, and per group how much the repeats of a row differ
(docs/sweeps.md).

The row keeps each repeat's scores (``repeats``); its figures (tokens, latency, dollars) are per
call, the repeats' mean.  A row one of whose repeats failed carries that failure and no mean, so it
counts its worst value like any errored row: a failed repeat never makes a row look better.  The
paired comparisons read the row means.

Per group and score field: ``within_row_sd``, the square root of the mean within-row variance
(each row's repeats' sample variance, ``ddof`` 1; None with one repeat); ``unstable_rows``, the
rows whose repeats do not all pass or all fail at the run's threshold; and where every value of the
field is 0 or 1, ``pass_at_k`` (the share of rows some repeat passes: the unbiased pass@k with
n = k = K) and ``pass_all_k`` (the share all K repeats pass).  Errored rows count as passing none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

from .direction import Directions
from .records import EvalRow


def merged(rows: Sequence[EvalRow]) -> EvalRow:
    """The repeats of one row (in repeat order) as that row."""
    first = rows[0]
    errors = [error for row in rows for error in row.errors]
    repeats = [dict(row.scores) for row in rows]
    scores: dict[str, float] = {}
    if not errors:
        for field in dict.fromkeys(f for row in rows for f in row.scores):
            values = [row.scores[field] for row in rows if field in row.scores]
            scores[field] = math.fsum(values) / len(values)
    failures: dict[str, str] = {}
    for row in rows:
        failures.update(row.failures)
    return attrs.evolve(
        first,
        scores=scores,
        errors=errors,
        failures=failures,
        repeats=repeats,
        latency=_mean(row.latency for row in rows),
        input_tokens=_mean(row.input_tokens for row in rows),
        output_tokens=_mean(row.output_tokens for row in rows),
        cost=_mean(row.cost for row in rows),
    )


def _mean(values: Any) -> float | None:
    known = [value for value in values if value is not None]
    return math.fsum(known) / len(known) if known else None


class RepeatTally:
    """A group's repeat figures as its rows stream by: per field, running sums only."""

    __slots__ = ("_binary", "_passed_all", "_passed_any", "_rows", "_unstable", "_variances")

    def __init__(self) -> None:
        self._rows = 0
        self._variances: dict[str, list[float]] = {}  # field -> [sum of variances, rows]
        self._unstable: dict[str, int] = {}
        self._passed_any: dict[str, int] = {}
        self._passed_all: dict[str, int] = {}
        self._binary: dict[str, bool] = {}

    def add(self, row: EvalRow, threshold: float, directions: Directions) -> None:
        self._rows += 1
        repeats = row.repeats or []
        for field in dict.fromkeys(f for scores in repeats for f in scores):
            values = [scores[field] for scores in repeats if field in scores]
            self._binary[field] = self._binary.get(field, True) and all(v in (0, 1) for v in values)
            self._unstable.setdefault(field, 0)
            self._passed_any.setdefault(field, 0)
            self._passed_all.setdefault(field, 0)
            if row.errors:
                continue
            if len(values) > 1:
                mean = math.fsum(values) / len(values)
                variance = math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)
                total = self._variances.setdefault(field, [0.0, 0])
                total[0] += variance
                total[1] += 1
            passed = directions.of(field).passing(values, threshold)
            self._unstable[field] += any(passed) and not all(passed)
            self._passed_any[field] += any(passed)
            self._passed_all[field] += all(passed)

    def figures(self) -> dict[str, dict[str, Any]]:
        """``within_row_sd``, ``unstable_rows``, ``pass_at_k``, ``pass_all_k``, each by field."""
        rows = self._rows or 1
        binary = [field for field, only in self._binary.items() if only]
        return {
            "within_row_sd": {
                field: math.sqrt(total / count) if count else None
                for field, (total, count) in ((f, self._variances.get(f, [0.0, 0])) for f in self._binary)
            },
            "unstable_rows": dict(self._unstable),
            "pass_at_k": {field: self._passed_any[field] / rows for field in binary},
            "pass_all_k": {field: self._passed_all[field] / rows for field in binary},
        }
