"""Whose token counts a summary's figures read, and where a system's own differ from the meter's.

A group's tokens, dollars, compression ratio, tokens saved, dollars saved and place on the frontier
come from one source (its ``tokens_source``): the meter's (``metered``), what crossed the wire, when
every system on the data set was metered, so both sides of every comparison are measured alike;
else the run's tokenizer's count of the prompt each system was given (``counted``: the input, with
the systems' own output and cost), when every system on it was counted; else the figures the
systems report about themselves (``reported``); None when there are none.  A
system whose own input count is off the meter's by more than :data:`TOLERANCE` over a group's rows
is listed in ``summary.discrepancies`` and warned about: a compressor that says it sent 10 tokens
where 1,000 reached the model is caught here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .records import Discrepancy

if TYPE_CHECKING:
    from .columns import Columns

__all__ = ["TOLERANCE", "cache_hit_share", "discrepancies", "discrepancy_warning", "sourced"]

Key = tuple[str, str]

#: The share by which a system's own input count may differ from the meter's unremarked.
TOLERANCE = 0.05


def _known(column: Any) -> bool:
    return any(value == value for value in column)


def sourced(columns: Mapping[Key, Columns]) -> tuple[dict[Key, Columns], dict[Key, str | None]]:
    """Each group's columns as its figures read them and the source of its tokens: the meter's
    where every system on its data set was metered, else the tokenizer's count of the prompts the
    systems were given where every one was counted, else the systems' own."""
    metered_sets = {dataset for _, dataset in columns}
    counted_sets = set(metered_sets)
    for (_, dataset), group in columns.items():
        if not _known(group.metered.get("input_tokens", ())):
            metered_sets.discard(dataset)
        if group.counted is None or not _known(group.counted):
            counted_sets.discard(dataset)
    chosen: dict[Key, Columns] = {}
    sources: dict[Key, str | None] = {}
    for key, group in columns.items():
        if key[1] in metered_sets:
            chosen[key], sources[key] = group.measured(), "metered"
        elif key[1] in counted_sets:
            chosen[key], sources[key] = attrs.evolve(group, input_tokens=group.counted), "counted"
        else:
            chosen[key] = group
            sources[key] = "reported" if _known(group.input_tokens) else None
    return chosen, sources


def cache_hit_share(columns: Columns) -> float | None:
    """The share of the input tokens the provider's cache served, over the rows that say how many
    (the meter's figures; None where no row does, or none had input); a row's cached count is
    held within its input, as :meth:`~context_bench.prices.Price.dollars` holds it."""
    if columns.cached_input_tokens is None:
        return None
    both = [
        (given, cached)
        for given, cached in zip(columns.input_tokens, columns.cached_input_tokens, strict=True)
        if given == given and cached == cached
    ]
    total = sum(given for given, _ in both)
    return sum(min(cached, given) for given, cached in both) / total if total > 0 else None


def discrepancies(columns: Mapping[Key, Columns]) -> list[Discrepancy]:
    """The groups whose own input tokens differ from the meter's by more than :data:`TOLERANCE`,
    summed over the rows that have both."""
    found = []
    for (system, dataset), group in columns.items():
        both = [
            (own, seen)
            for own, seen in zip(group.input_tokens, group.metered.get("input_tokens", ()), strict=False)
            if own == own and seen == seen
        ]
        if not both:
            continue
        reported = sum(own for own, _ in both)
        metered = sum(seen for _, seen in both)
        if abs(reported - metered) > TOLERANCE * metered:
            found.append(Discrepancy(system, dataset, _whole(reported), _whole(metered), len(both)))
    return found


def discrepancy_warning(found: Discrepancy) -> str:
    """The warning a discrepancy is said with."""
    off = (
        f"{(found.reported_input_tokens - found.metered_input_tokens) / found.metered_input_tokens:+.0%}"
        if found.metered_input_tokens
        else "where the meter saw none"
    )
    rows = f"{found.rows} row{'s' * (found.rows != 1)}"
    return (
        f"{found.system} on {found.dataset} reported {found.reported_input_tokens:,} input tokens where "
        f"the meter measured {found.metered_input_tokens:,} over {rows} ({off}); the meter's count is "
        "what reached the model"
    )


def _whole(value: float) -> float | int:
    return int(value) if value == int(value) else value
