"""A multi-turn replay in the reports: per data set, each system's mean dollars at each turn and
their running total, and in the title the turn from which a system stops paying against the
baseline, read from the summary's ``cost_per_turn`` and ``stops_paying_from_turn``
(:mod:`context_bench._turn_costs`)."""

from __future__ import annotations

from ..records import GroupSummary, Summary
from ._sections import Section
from .numbers import money

#: A conversation longer than this shows its first turns, the turns where a system stops paying,
#: and its last two: the JSON report has every turn.
SHOWN = 12
FIRST = 8


def build(summary: Summary) -> list[Section]:
    """One table per data set whose rows were replayed turn by turn through the meter."""
    found: dict[str, list[GroupSummary]] = {}
    for group in summary.groups:
        if group.cost_per_turn:
            found.setdefault(group.dataset, []).append(group)
    return [_table(summary, dataset, groups) for dataset, groups in found.items()]


def _table(summary: Summary, dataset: str, groups: list[GroupSummary]) -> Section:
    stops = {
        c.system: c.stops_paying_from_turn
        for c in summary.comparisons
        if c.dataset == dataset and c.cost_per_turn is not None
    }
    said = [
        f"{system} stops paying off from turn {turn}" if turn is not None else f"{system} pays off to the end"
        for system, turn in stops.items()
        if turn is not None or not _unknown(summary, system, dataset)
    ]
    last = max(len(group.cost_per_turn or ()) for group in groups)
    columns = [_running(group.cost_per_turn or []) for group in groups]
    rows = [
        (str(turn), *(column[turn - 1] if turn <= len(column) else "-" for column in columns))
        for turn in _shown(last, [turn for turn in stops.values() if turn is not None])
    ]
    title = f"Cost per turn on {dataset} (mean $ a row at each turn, running total in brackets"
    title += f"; vs {summary.baseline}: {'; '.join(said)})" if said else ")"
    return Section(
        title, ("turn", *(group.system for group in groups)), tuple(rows), (True,) * (len(groups) + 1)
    )


def _unknown(summary: Summary, system: str, dataset: str) -> bool:
    """Whether a turn's cost is unknown on either side (then no turn is said)."""
    return any(
        None in side
        for c in summary.comparisons
        if (c.system, c.dataset) == (system, dataset) and c.cost_per_turn is not None
        for side in c.cost_per_turn.values()
    )


def _running(costs: list[float | None]) -> list[str]:
    """Each turn's dollars with the total so far ("$0.0012 ($0.0030)"); unknown from the first
    unknown turn on."""
    total: float | None = 0.0
    cells = []
    for cost in costs:
        total = None if cost is None or total is None else total + cost
        cells.append(f"{money(cost)} ({money(total)})")
    return cells


def _shown(last: int, stops: list[int]) -> list[int]:
    if last <= SHOWN:
        return list(range(1, last + 1))
    return sorted({*range(1, FIRST + 1), *stops, last - 1, last})
