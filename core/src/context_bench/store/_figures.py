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
    """The run list's line: the report's first verdict line (:mod:`context_bench.reports._verdict`,
    the same words a report of the run starts with), how many more lines it has, and the errored
    rows."""
    from ..reports._verdict import verdicts
    from ..saved import summary_from_dict

    lines = verdicts(summary_from_dict(summary))
    text = str(lines[0]) if lines else "no scores"
    if len(lines) > 1:
        text += f" (+{len(lines) - 1} more)"
    rows, errors = counts(summary)
    if errors:
        text += f"; {errors} of {rows} rows errored"
    return text
