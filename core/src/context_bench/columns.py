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


#: The figures of a row's ``metered`` its group keeps.
METERED = ("input_tokens", "output_tokens", "cost", "cached_input_tokens", "cache_write_tokens")


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
    #: What the run's meter measured of each row's calls (``row.metered``: :data:`METERED`), NaN
    #: where it did not; empty until a row of the group is metered (an unmetered run keeps none).
    metered: dict[str, array] = attrs.Factory(dict)
    #: The prompt tokens read from and written to the provider's cache, per row (None: not known,
    #: as in the systems' own figures; :meth:`measured` has the meter's).
    cached_input_tokens: array | None = None
    cache_write_tokens: array | None = None
    #: The tokens of the prompt each row's system was given (``row.counted_input_tokens``); None
    #: until a row of the group is counted.
    counted: array | None = None
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
        if row.metered is not None and not self.metered:
            self.metered = {figure: array("d", [NAN]) * position for figure in METERED}
        for figure, column in self.metered.items():
            column.append(_figure(row.metered.get(figure) if row.metered is not None else None))
        if row.counted_input_tokens is not None and self.counted is None:
            self.counted = array("d", [NAN]) * position
        if self.counted is not None:
            self.counted.append(_figure(row.counted_input_tokens))

    def measured(self) -> Columns:
        """These columns with the meter's tokens, cost and cached tokens in place of the system's
        own (the rest shared, not copied)."""
        nothing = array("d", [NAN]) * len(self)
        found = {figure: self.metered.get(figure, nothing) for figure in METERED}
        return attrs.evolve(
            self,
            input_tokens=found["input_tokens"],
            output_tokens=found["output_tokens"],
            cost=found["cost"],
            cached_input_tokens=found["cached_input_tokens"],
            cache_write_tokens=found["cache_write_tokens"],
        )

    def __len__(self) -> int:
        return len(self.ids)
