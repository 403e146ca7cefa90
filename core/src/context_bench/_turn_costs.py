"""The cost per turn of a multi-turn replay, and the turn from which a compressor stops paying
(docs/savings.md).

A conversation sent whole at every turn is mostly a prefix the provider has seen: from the second
turn on its cache serves that prefix at the cached price.  A compressor that rewrites the earlier
turns each time sends fewer tokens, but none of them cached, so it can cost more from some turn
on.  The meter gives each row's figures per turn (its calls' ``X-Context-Bench-Turn``); here each
group's mean dollars per turn are read from them (priced by ``--price`` for the system's model,
cached and cache-write tokens at their own prices, else the cost the upstream reported), and each
comparison's per turn over the rows both sides have, with the first turn from which the system's
cumulative cost is above the baseline's to the end.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .prices import Price

__all__ = ["TURN_FIGURES", "cost_per_turn", "paired_cost_per_turn", "row_turns", "stops_paying_from"]

#: A turn's figures as a group keeps them, in order: ``row.metered.turns[]``'s names.
TURN_FIGURES = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens", "cost")

#: One row's turns: turn (from 1) -> :data:`TURN_FIGURES` (NaN where unknown).
Turns = Mapping[int, tuple[float, ...]]


def row_turns(metered: Mapping[str, Any] | None) -> dict[int, tuple[float, ...]]:
    """A row's turns from its ``metered`` (empty for a row whose calls said no turn)."""
    found = {}
    for turn in (metered or {}).get("turns") or ():
        found[int(turn["turn"])] = tuple(
            math.nan if turn.get(name) is None else float(turn[name]) for name in TURN_FIGURES
        )
    return found


def _dollars(figures: tuple[float, ...], price: Price | None) -> float:
    """A turn's dollars: its tokens at ``price``, else the cost the upstream reported; NaN
    (unknown) for a turn without an input figure or, unpriced, without a reported cost: a turn
    whose tokens nobody counted must not read as free."""
    if price is None:
        return figures[4]
    return price.dollars(*figures[:4]) if figures[0] == figures[0] else math.nan


def _means(columns: Sequence[list[float]]) -> list[float | None]:
    """Each turn's mean, None where no row had the turn or any row's dollars are unknown (a
    partial mean would read cheaper)."""
    return [
        None if not values or any(value != value for value in values) else sum(values) / len(values)
        for values in columns
    ]


def cost_per_turn(rows: Sequence[Turns], price: Price | None) -> list[float | None] | None:
    """A group's mean dollars at each turn (the list's first item is turn 1), over the rows that
    reached it; None when no row has turns."""
    last = max((turn for turns in rows for turn in turns), default=0)
    if not last:
        return None
    columns: list[list[float]] = [[] for _ in range(last)]
    for turns in rows:
        for turn, figures in turns.items():
            columns[turn - 1].append(_dollars(figures, price))
    return _means(columns)


def paired_cost_per_turn(
    base: Sequence[Turns],
    own: Sequence[Turns],
    pairs: Sequence[tuple[int, int]],
    prices: tuple[Price | None, Price | None],
) -> dict[str, list[float | None]] | None:
    """The baseline's and the system's mean dollars at each turn over the paired rows that both
    reached it (``{"baseline": [...], "system": [...]}``); None when no pair has turns."""
    last = max((turn for b, o in pairs for turn in base[b].keys() & own[o].keys()), default=0)
    if not last:
        return None
    before: list[list[float]] = [[] for _ in range(last)]
    after: list[list[float]] = [[] for _ in range(last)]
    for b, o in pairs:
        for turn in base[b].keys() & own[o].keys():
            before[turn - 1].append(_dollars(base[b][turn], prices[0]))
            after[turn - 1].append(_dollars(own[o][turn], prices[1]))
    return {"baseline": _means(before), "system": _means(after)}


def stops_paying_from(baseline: Sequence[float | None], system: Sequence[float | None]) -> int | None:
    """The first turn (from 1) from which the system's cumulative cost is above the baseline's and
    stays above to the last turn; None if it never is, or where a turn's cost is unknown."""
    if None in baseline or None in system:
        return None
    above = [b < s for b, s in zip(_cumulative(baseline), _cumulative(system), strict=True)]
    if not above or not above[-1]:
        return None
    first = len(above)
    while first > 1 and above[first - 2]:
        first -= 1
    return first


def _cumulative(values: Sequence[float | None]) -> list[float]:
    total, found = 0.0, []
    for value in values:
        total += value or 0.0
        found.append(total)
    return found
