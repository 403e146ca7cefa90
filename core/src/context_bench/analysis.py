"""What a run's figures read besides its rows: the primary score and its pass threshold, the
baseline of the comparisons, the significance level, what a missing row counts as, prices and
each system's model; and what the summary adds to its means (custom metrics, a breakdown, the
headline over scored rows alone).  The analysis group of a :class:`~context_bench.config.RunConfig`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ._protocols import Metric
from .bounds import bounded
from .defaults import DEFAULT_ALPHA, DEFAULT_THRESHOLD
from .prices import Price, Prices


# Named converters, not ``tuple``: a type checker reads a converter's parameter as the field's type in
# ``__init__`` and ``attrs.evolve``, and ``tuple``'s is generic.
def _metrics(metrics: Iterable[Metric]) -> tuple[Metric, ...]:
    return tuple(metrics)


def _keys(keys: Iterable[str]) -> tuple[str, ...]:
    return tuple(keys)


def _parts(by: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(by)


@attrs.frozen
class Analysis:
    """What the figures read besides the rows: the primary score and its pass threshold, the
    baseline of the comparisons (None: the first system), the significance level of the
    comparisons (their intervals are at ``1 - alpha``), whether the baseline's rows a system lacks
    are left out of its comparison (``allow_missing``) or count as its failures, prices, and each
    system's (or judge's) model (to find its price; one without is priced by its own name).

    ``metrics`` are custom metrics computed from the rows (:class:`~context_bench._protocols.Metric`:
    the summary keeps the rows for them), ``breakdown`` the row ``meta`` keys the summary breaks
    the means down by, and ``exclude_errors`` makes the headline means those over scored rows
    (:attr:`~context_bench.records.Summary.exclude_errors`).  Numbers are held to their flag's
    range (:func:`~context_bench.bounds.bounded`)."""

    #: The primary score a user named (``--score-field``); None: each group's headline score.
    score_field: str | None = None
    threshold: float = attrs.field(default=DEFAULT_THRESHOLD, validator=bounded("--threshold"))
    baseline: str | None = None
    prices: Prices = attrs.Factory(Prices)
    models: Mapping[str, str] = attrs.Factory(dict)
    alpha: float = attrs.field(default=DEFAULT_ALPHA, validator=bounded("--alpha"))
    allow_missing: bool = False
    metrics: tuple[Metric, ...] = attrs.field(default=(), converter=_metrics)
    breakdown: tuple[str, ...] = attrs.field(default=(), converter=_keys)
    exclude_errors: bool = False
    #: ``--by``: the row fields each group's figures are given again per part of
    #: (:class:`~context_bench._by.By`).
    by: tuple[Any, ...] = attrs.field(default=(), converter=_parts)

    def field_of(self, fields: Iterable[str]) -> str | None:
        """The primary score among a group's (or a data set's) ``fields``, in the order its rows'
        evaluators scored them: the ``score_field`` a user named where it has one, else its first,
        the headline of the evaluator its data set is wired to by name (a QA set's ``f1``, as the
        earlier releases' default, but ContractNLI's ``nli_accuracy``, not the ``f1`` that
        AnswerQuality also gives its rows)."""
        fields = list(fields)
        if self.score_field is not None and self.score_field in fields:
            return self.score_field
        return fields[0] if fields else None

    def with_models(self, described: Iterable[Any]) -> Analysis:
        """These settings with each system's model, to find its price (a model given already
        stays); ``described``: the systems as a run's metadata describes them
        (``run_metadata(systems=...)["systems"]``).  Given before the run, so the run is summarized
        once with its prices."""
        models = {
            str(system["name"]): str(system["model"])
            for system in described
            if isinstance(system, dict) and system.get("model") and "name" in system
        }
        return attrs.evolve(self, models={**models, **self.models}) if models else self

    def model(self, system: str) -> str:
        return self.models.get(system) or system

    def price(self, system: str) -> Price | None:
        return self.prices.find(self.models.get(system), system)
