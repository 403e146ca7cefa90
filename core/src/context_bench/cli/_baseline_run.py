"""``score --baseline RUN``: a stored run (or a saved JSON report) as the baseline of the rows
being scored, its rows joining the summary as they were scored then.

``RUN`` takes the run's own baseline (its only system, else the baseline its summary names, else
its first system); ``RUN:SYSTEM`` takes that system of it.  Its rows are named ``RUN:SYSTEM`` in
this run, as ``compare`` names a system two reports share, so they never mix with the rows
scored now.  Their scores are the stored ones: the baseline is what was measured then, not
scored again (a judge is not called twice for it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from ..errors import UsageError
from ..records import EvalRow
from ._history import opened, stored_or_file


@attrs.frozen
class BaselineRun:
    """The baseline's name in this run and its rows, renamed to it."""

    name: str
    rows: list[EvalRow]


def baseline_run(value: str | None, store: str | None) -> BaselineRun | None:
    """The run or report ``--baseline`` names (a file of that name first, then a run id), or None
    when it names a system of the rows scored (or nothing); an unknown run id, an unreadable
    report or a system it lacks is one line."""
    if not value:
        return None
    source, system = _split(value)
    if source is None:
        return None
    from ..compare_runs import read_report

    saved = read_report(source, stored_or_file(store))
    systems = list(dict.fromkeys(row.system for row in saved.rows))
    if system is None:
        named = saved.summary.baseline
        system = named if named in systems else (systems[0] if systems else None)
    if system is None or system not in systems:
        has = ", ".join(systems) or "no rows"
        raise UsageError(f"--baseline {value}: {source} has no system {system!r} (it has {has})")
    label = source if source.isdigit() else Path(source).stem
    name = f"{label}:{system}"
    rows = [row for row in saved.rows if row.system == system]
    inputs = {} if Path(source).is_file() else _input_rows(store, int(source), system)
    for row in rows:
        row.system = name
        row.example = inputs.get((row.dataset, row.example_id))
    return BaselineRun(name, rows)


def _input_rows(store: str | None, run: int, system: str) -> dict[tuple[str, str], Any]:
    """A stored run's input rows of ``system`` by (data set, id): the store keeps each row as its
    JSONL line, input fields first, so ``--by`` reads the baseline's rows as it reads the new ones."""
    with opened(store) as kept:
        return {(row.dataset, row.example_id): row.example for row in kept.iter_rows(run, system=system)}


def _split(value: str) -> tuple[str | None, str | None]:
    """(the report or run id, the system asked for) of ``--baseline``; (None, None) for a name."""
    if Path(value).is_file() or value.strip().isdigit():
        return value, None
    source, _, system = value.rpartition(":")
    if source and system and (Path(source).is_file() or source.strip().isdigit()):
        return source, system
    return None, None
