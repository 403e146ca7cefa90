"""Saved results (the JSON report of ``run``, ``score`` or ``memory``) read back for
``context-bench compare``: every run's rows, each system named apart, checked; and one report
whole for ``context-bench show``.

A file that is not a report, a row that is not a row (no system, data set or id), the same id
twice for one system and a ``FILE:NAME`` label that another system already has are refused (exit
2).  A row whose numbers cannot be right (a score that is text, null or not finite, a negative or
unbounded figure: :mod:`context_bench.rowcheck`) keeps its place with an input error instead.
Every run's rows are kept, so each group's figures are its run's own; the comparisons pair the
ids both sides have and say what the system lacks (coverage).  Each score field keeps the
direction its report recorded (``summary.score_fields``), so a lower-is-better field compares
the right way round where the evaluator that scored it is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .direction import Directions
from .errors import UsageError
from .records import EvalResult, EvalRow, RowError
from .rowcheck import FIGURES, figure_problem, is_figure, score_problem
from .saved import summary_from_dict

#: The fields of a row that name it.
_NAMES = ("system", "dataset", "example_id")


def report_data(file: str) -> Any:
    """A JSON report file's data."""
    try:
        return json.loads(Path(file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{file}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{file}: not a JSON report ({exc})") from None


def read_report(file: str, read: Callable[[str], Any] = report_data) -> EvalResult:
    """A saved JSON report as the result it was written from, for ``context-bench show``: its summary
    as saved (typed), its metadata and its rows (checked as ``compare`` checks them); ``read`` gives
    its data (a file's, or a stored run's)."""
    data = _checked(read(file), file)
    summary = data.get("summary")
    metadata = data.get("metadata")
    return EvalResult(
        _rows(data, file),
        summary_from_dict(summary if isinstance(summary, dict) else {}),
        metadata=metadata if isinstance(metadata, dict) else {},
    )


def _read(file: str, read: Callable[[str], Any]) -> tuple[list[EvalRow], Directions]:
    """A report's rows, and the directions its summary records for its score fields."""
    data = _checked(read(file), file)
    summary = data.get("summary")
    fields = summary.get("score_fields") if isinstance(summary, dict) else None
    directions = Directions.reported(fields) if isinstance(fields, dict) else Directions()
    return _rows(data, file), directions


def _checked(data: Any, file: str) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise UsageError(f"{file}: not a JSON report of context-bench (no 'rows'; use --output json)")
    return data


def _rows(data: dict[str, Any], file: str) -> list[EvalRow]:
    return [_row(row, file, number) for number, row in enumerate(data["rows"])]


def _row(data: Any, file: str, number: int) -> EvalRow:
    """A saved row, its unusable numbers left out and said in an input error on it."""
    where = f"{file}: row {number}"
    if not isinstance(data, dict) or not all(isinstance(data.get(key), str) for key in _NAMES):
        raise UsageError(f"{where} is not a context-bench row (it needs text {', '.join(_NAMES)})")
    problems: list[str] = []
    clean = dict(data)
    scores = data.get("scores")
    if not isinstance(scores, dict):
        problems.append(f"'scores' is {scores!r}, not an object of scores")
        scores = {}
    clean["scores"] = {}
    for field, value in scores.items():
        problem = score_problem(str(field), value)
        if problem:
            problems.append(problem)
        else:
            clean["scores"][str(field)] = float(value)
    for field in FIGURES:
        problem = figure_problem(field, data.get(field))
        if problem:
            problems.append(problem)
            clean[field] = None
    shapes = {
        "failures": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
        "usage": lambda v: (
            isinstance(v, dict)
            and all(isinstance(u, dict) and all(is_figure(x) for x in u.values()) for u in v.values())
        ),
        "meta": lambda v: isinstance(v, dict),
        "weights": lambda v: (
            v is None or (isinstance(v, dict) and all(is_figure(x) and x >= 0 for x in v.values()))
        ),
    }
    for field, fits in shapes.items():
        if field in data and not fits(data[field]):
            problems.append(f"{field!r} is {data[field]!r}, not what a row holds there")
            clean[field] = None if field == "weights" else {}
    if not isinstance(data.get("response"), (str, type(None))):
        clean["response"] = str(data["response"])
    if not isinstance(data.get("errors", []), list):
        raise UsageError(f"{where} is not a context-bench row ('errors' is not a list)")
    try:
        row = EvalRow.from_dict(clean)
    except (TypeError, KeyError) as exc:
        raise UsageError(f"{where} is not a context-bench row ({exc})") from None
    if problems:
        row.errors.append(RowError("input", where, "InvalidRow", "; ".join(problems)))
    return row


def load_runs(
    files: Sequence[str], read: Callable[[str], Any] = report_data
) -> tuple[list[EvalRow], list[str], Directions]:
    """Every row of ``files`` (each at least two JSON reports, their data as ``read`` gives it: a
    file's, or a stored run's), what to say (evaluators that differ), and the lower-is-better
    fields the reports record.  A system name two files share becomes ``FILE:NAME``."""
    if len(files) < 2:
        raise UsageError("compare needs at least two JSON reports (one report: context-bench show REPORT)")
    loaded = {file: _read(file, read) for file in files}
    runs = {file: rows for file, (rows, _) in loaded.items()}
    directions = Directions()
    for _, recorded in loaded.values():
        directions = directions.merged(recorded)
    labels = {file: Path(file).stem for file in files}
    if len(set(labels.values())) < len(labels):
        labels = {file: file for file in files}
    owners: dict[str, list[str]] = {}
    for file, rows in runs.items():
        for system in dict.fromkeys(row.system for row in rows):
            owners.setdefault(system, []).append(file)
    named = _names(owners, labels)
    shared = set.intersection(*({(row.dataset, row.example_id) for row in rows} for rows in runs.values()))
    if not shared:
        raise UsageError(f"{', '.join(files)} share no row ids (by data set and id): nothing to compare")
    notices = []
    fields = {file: sorted({f for row in rows for f in row.scores}) for file, rows in runs.items()}
    if len({tuple(v) for v in fields.values()}) > 1:
        said = "; ".join(f"{labels[file]}: {', '.join(v) or 'none'}" for file, v in fields.items())
        notices.append(
            f"the runs used different evaluators (score fields {said}); "
            "only the fields they share are compared"
        )
    found = []
    for file, rows in runs.items():
        seen: set[tuple[str, str, str]] = set()
        for row in rows:
            key = (row.system, row.dataset, row.example_id)
            if key in seen:
                raise UsageError(
                    f"{file}: system {row.system!r} has id {row.example_id!r} twice in data set "
                    f"{row.dataset!r}: compare pairs each id once (score refuses such a file too)"
                )
            seen.add(key)
            row.system = named[(file, row.system)]
            found.append(row)
    for index, row in enumerate(found):
        row.index = index
    return found, notices, directions


def _names(owners: dict[str, list[str]], labels: dict[str, str]) -> dict[tuple[str, str], str]:
    """Each (file, system)'s name in the comparison: its own, or ``FILE:NAME`` where several files
    have the system; two that would share a name are refused."""
    named: dict[tuple[str, str], str] = {}
    taken: dict[str, tuple[str, str]] = {}
    for system, files in owners.items():
        for file in files:
            name = f"{labels[file]}:{system}" if len(files) > 1 else system
            other = taken.get(name)
            if other is not None:
                raise UsageError(
                    f"{file}: its system {system!r} would be named {name!r}, the name of system "
                    f"{other[1]!r} of {other[0]}: rename one of them"
                )
            taken[name] = (file, system)
            named[(file, system)] = name
    return named
