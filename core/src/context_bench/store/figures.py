"""What the store keeps of a finished run's summary besides the summary itself: each (system, data
set, field)'s mean with its interval (the trend chart's points) and a one-line verdict for the
run list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: One figure of a run: (system, data set, field, mean, low, high, rows).
Figure = tuple[str, str, str, float | None, float | None, float | None, int]


def figures(summary: Mapping[str, Any]) -> list[Figure]:
    """Each group's mean of each score field, with its 95% interval (None where it has none)."""
    found = []
    for group in summary.get("groups") or ():
        intervals = group.get("ci") or {}
        for field, mean in (group.get("scores") or {}).items():
            low, high = intervals.get(field) or (None, None)
            found.append(
                (
                    str(group["system"]),
                    str(group["dataset"]),
                    str(field),
                    mean,
                    low,
                    high,
                    group.get("rows", 0),
                )
            )
    return found


def counts(summary: Mapping[str, Any]) -> tuple[int, int]:
    """The run's rows and errored rows, as its summary counted them."""
    rows = sum(int(group.get("rows") or 0) for group in summary.get("groups") or ())
    return rows, int((summary.get("errors") or {}).get("rows") or 0)


def verdict(summary: Mapping[str, Any]) -> str:
    """One line: the first comparison on the primary score (delta, interval, p) or, without a
    baseline, the first group's mean; how many more there are; and the errored rows."""
    primary = (summary.get("primary") or {}).get("field")
    comparisons = [c for c in summary.get("comparisons") or () if c.get("delta") is not None]
    chosen = [c for c in comparisons if c.get("field") == primary] or comparisons
    if chosen:
        first = chosen[0]
        interval = first.get("ci") or [None, None]
        text = (
            f"{first['system']} vs {first['baseline']} on {first['dataset']}: {first['field']} "
            f"{_number(first['delta'], sign=True)} [{_number(interval[0])}, {_number(interval[1])}]"
        )
        if first.get("p_value") is not None:
            text += f", p={first['p_value']:.3g}"
        more = len(chosen) - 1
    else:
        groups = [g for g in summary.get("groups") or () if g.get("scores")]
        if not groups:
            text, more = "no scores", 0
        else:
            group = groups[0]
            field = primary if primary in group["scores"] else next(iter(group["scores"]))
            text = f"{group['system']} on {group['dataset']}: {field} {_number(group['scores'][field])}"
            more = len(groups) - 1
    if more:
        text += f" (+{more} more)"
    rows, errors = counts(summary)
    if errors:
        text += f"; {errors} of {rows} rows errored"
    return text


def _number(value: Any, sign: bool = False) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value:+.3f}" if sign else f"{value:.3f}"
