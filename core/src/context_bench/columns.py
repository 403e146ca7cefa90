"""One (system, data set) group's per-row figures as compact columns, for the summary's statistics.

A summary needs every row's value only for intervals and paired comparisons; keeping those as
``array('d')`` columns (NaN where a row has no value) instead of the rows keeps a run of millions
of rows in bounded memory.
"""

from __future__ import annotations

import math
from array import array
from typing import TYPE_CHECKING

import attrs

from ._compact import Ids
from ._turn_costs import Turns, row_turns
from .records import EvalRow

if TYPE_CHECKING:
    from .direction import Direction

NAN = math.nan


#: The figures of a row's ``metered`` its group keeps.
METERED = ("input_tokens", "output_tokens", "cost", "cached_input_tokens", "cache_write_tokens")


@attrs.define
class Columns:
    """Per-row figures of one group, in the order rows were added.

    ``scores[field]`` holds the value the headline mean counts (an errored row's failure value),
    NaN where the row has none; tokens, latency and cost are NaN where unknown.  The last
    ``missing`` rows stand for rows the baseline has and this system lacks (errored rows the
    summary added, so they count as its failures).
    """

    ids: Ids = attrs.Factory(Ids)  # a list of str in a few bytes a row (context_bench._compact)
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
    #: Each row's ``evidence_kept``, NaN where it has none; None until a row of the group has one.
    evidence: array | None = None
    #: Each row's metered figures per turn of a conversation (:func:`~context_bench._turn_costs.row_turns`,
    #: empty for a row without); None until a row of the group has turns.
    turns: list[Turns] | None = None
    missing: int = 0
    #: Per score field, the positions of the rows that count its failure value there (errored rows
    #: that lack it): they never pass a threshold, whatever that value reaches.
    failed: dict[str, array] = attrs.Factory(dict)

    def add(self, row: EvalRow, values: dict[str, float]) -> None:
        """Append ``row`` with ``values`` (field -> the value its headline mean counts)."""
        # Written out for speed (every row comes here); an array of doubles takes a number as
        # float() would, and None is NaN.
        scores = self.scores
        if not scores.keys() >= values.keys():
            position = len(self.ids)
            for field in [f for f in values if f not in scores]:  # in order: reports are reproducible
                scores[field] = array("d", [NAN]) * position
        self.ids.append(row.example_id)
        get = values.get
        for field, column in scores.items():
            value = get(field)
            column.append(NAN if value is None else value)
        value = row.input_tokens
        self.input_tokens.append(NAN if value is None else value)
        value = row.output_tokens
        self.output_tokens.append(NAN if value is None else value)
        value = row.latency
        self.latency.append(NAN if value is None else value)
        value = row.cost
        self.cost.append(NAN if value is None else value)
        if row.metered is not None or self.metered:
            self._add_metered(row)
        if row.counted_input_tokens is not None or self.counted is not None:
            if self.counted is None:
                self.counted = array("d", [NAN]) * (len(self.ids) - 1)
            value = row.counted_input_tokens
            self.counted.append(NAN if value is None else value)
        if row.evidence_kept is not None or self.evidence is not None:
            if self.evidence is None:
                self.evidence = array("d", [NAN]) * (len(self.ids) - 1)
            value = row.evidence_kept
            self.evidence.append(NAN if value is None else value)

    def _add_metered(self, row: EvalRow) -> None:
        position = len(self.ids) - 1  # the row's own, its id appended already
        if not self.metered:
            self.metered = {figure: array("d", [NAN]) * position for figure in METERED}
        metered = row.metered or {}
        for figure, column in self.metered.items():
            value = metered.get(figure)
            column.append(NAN if value is None else float(value))
        turns = row_turns(metered)
        if turns or self.turns is not None:
            if self.turns is None:
                self.turns = [{} for _ in range(position)]
            self.turns.append(turns)

    def passing(self, field: str, direction: Direction, threshold: float) -> list[bool]:
        """Whether each row passes ``threshold`` in ``field``, read in its ``direction``; a row
        counted at its failure value never does, as a row without the field never does."""
        passed = direction.passing(self.scores[field], threshold)
        for position in self.failed.get(field, ()):
            passed[position] = False
        return passed

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
