"""What a run's figures read besides its rows: the primary score and its pass threshold, the
baseline of the comparisons, prices, each system's model and the bootstrap's seed."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping

import attrs

from .prices import Price, Prices
from .records import DEFAULT_SCORE_FIELD, DEFAULT_THRESHOLD


@attrs.frozen
class Analysis:
    """What the figures read besides the rows: the primary score and its pass threshold, the
    baseline of the comparisons (None: the first system), prices, each system's model (to find
    its price; a system without one is priced by its own name) and the bootstrap's seed."""

    score_field: str = DEFAULT_SCORE_FIELD
    threshold: float = DEFAULT_THRESHOLD
    baseline: str | None = None
    prices: Prices = attrs.Factory(Prices)
    models: Mapping[str, str] = attrs.Factory(dict)
    seed: int = 0

    def field_of(self, fields: Iterable[str]) -> str | None:
        """The primary score among a group's (or a data set's) ``fields``: ``score_field`` where it
        has one, else its first field, so a math or code set beside QA sets gets a pass rate, a
        frontier and a loss audit on its own score instead of none."""
        fields = list(fields)
        if self.score_field in fields:
            return self.score_field
        return fields[0] if fields else None

    def model(self, system: str) -> str:
        return self.models.get(system) or system

    def price(self, system: str) -> Price | None:
        return self.prices.find(self.models.get(system), system)

    def seed_for(self, *names: str) -> int:
        """A seed of its own per figure, so one figure's bootstrap does not depend on the others'."""
        return zlib.crc32("\x00".join((str(self.seed), *names)).encode())
