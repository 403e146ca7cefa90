"""One (system, data set) group's per-row figures as compact columns, for the summary's statistics.

A summary needs every row's value only for intervals and paired comparisons; keeping those as
``array('d')`` columns (NaN where a row has no value) instead of the rows keeps a run of millions
of rows in bounded memory.
"""

from __future__ import annotations

import math
from array import array

import attrs

from .compact import Ids
from .records import EvalRow

NAN = math.nan


def _figure(value: float | None) -> float:
    return NAN if value is None else float(value)


@attrs.define
class Columns:
    """Per-row figures of one group, in the order rows were added.

    ``scores[field]`` holds the value the headline mean counts (an errored row's failure value),
    NaN where the row has none; tokens, latency and cost are NaN where unknown.  The last
    ``missing`` rows stand for rows the baseline has and this system lacks (errored rows the
    summary added, so they count as its failures).
    """

    ids: Ids = attrs.Factory(Ids)  # a list of str in a few bytes a row (context_bench.compact)
    scores: dict[str, array] = attrs.Factory(dict)
    input_tokens: array = attrs.Factory(lambda: array("d"))
    output_tokens: array = attrs.Factory(lambda: array("d"))
    latency: array = attrs.Factory(lambda: array("d"))
    cost: array = attrs.Factory(lambda: array("d"))
    #: What the run's meter measured of each row's calls (``row.metered``), NaN where it did not.
    metered_input: array = attrs.Factory(lambda: array("d"))
    metered_output: array = attrs.Factory(lambda: array("d"))
    metered_cost: array = attrs.Factory(lambda: array("d"))
    missing: int = 0

    def add(self, row: EvalRow, values: dict[str, float]) -> None:
        """Append ``row`` with ``values`` (field -> the value its headline mean counts)."""
        position = len(self.ids)
        self.ids.append(row.example_id)
        for field in [f for f in values if f not in self.scores]:  # in order: reports are reproducible
            self.scores[field] = array("d", [NAN]) * position
        for field, column in self.scores.items():
            column.append(_figure(values.get(field)))
        self.input_tokens.append(_figure(row.input_tokens))
        self.output_tokens.append(_figure(row.output_tokens))
        self.latency.append(_figure(row.latency))
        self.cost.append(_figure(row.cost))
        metered = row.metered or {}
        self.metered_input.append(_figure(metered.get("input_tokens")))
        self.metered_output.append(_figure(metered.get("output_tokens")))
        self.metered_cost.append(_figure(metered.get("cost")))

    def measured(self) -> Columns:
        """These columns with the meter's tokens and cost in place of the system's own (the rest
        shared, not copied)."""
        return attrs.evolve(
            self, input_tokens=self.metered_input, output_tokens=self.metered_output, cost=self.metered_cost
        )

    def __len__(self) -> int:
        return len(self.ids)
