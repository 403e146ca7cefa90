"""What a run's figures read besides its rows: the primary score and its pass threshold, the
baseline of the comparisons, prices, each system's model and the bootstrap's seed."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping

import attrs

from .prices import Price, Prices
from .records import DEFAULT_THRESHOLD


@attrs.frozen
class Analysis:
    """What the figures read besides the rows: the primary score and its pass threshold, the
    baseline of the comparisons (None: the first system), prices, each system's model (to find
    its price; a system without one is priced by its own name) and the bootstrap's seed."""

    #: The primary score a user named (``--score-field``); None: each group's headline score.
    score_field: str | None = None
    threshold: float = DEFAULT_THRESHOLD
    baseline: str | None = None
    prices: Prices = attrs.Factory(Prices)
    models: Mapping[str, str] = attrs.Factory(dict)
    seed: int = 0

    def field_of(self, fields: Iterable[str]) -> str | None:
        """The primary score among a group's (or a data set's) ``fields``, in the order its rows'
        evaluators scored them: the ``score_field`` a user named where it has one, else its first,
        the headline of the evaluator its data set is wired to by name (a QA set's ``f1``, as the
        earlier releases' default, but gsm8k's ``math_equiv``, HumanEval's ``pass_at_1``,
        ContractNLI's ``nli_accuracy``, not the ``f1`` that AnswerQuality also gives their rows)."""
        fields = list(fields)
        if self.score_field is not None and self.score_field in fields:
            return self.score_field
        return fields[0] if fields else None

    def model(self, system: str) -> str:
        return self.models.get(system) or system

    def price(self, system: str) -> Price | None:
        return self.prices.find(self.models.get(system), system)

    def seed_for(self, *names: str) -> int:
        """A seed of its own per figure, so one figure's bootstrap does not depend on the others'."""
        return zlib.crc32("\x00".join((str(self.seed), *names)).encode())
