"""The summary laid out as titled tables of text cells, shared by the table, Markdown and HTML reports.

Each report only decides how a :class:`Section` looks; what is shown, in which order and how numbers
read is decided here once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ..direction import LOWER_MARK
from ..records import (
    ErrorCounts,
    ErrorMessage,
    EvalResult,
    EvaluatorFailures,
    GroupSummary,
    Summary,
    SystemSummary,
)
from . import WIDTH

#: The width a report is laid out for when no terminal says otherwise.
MAX_WIDTH = WIDTH
#: Longest text a terminal cell shows (a data set given as a file path is cut with "…").
MAX_CELL = 40
#: Longest error message a terminal cell shows.
MAX_MESSAGE = 120


@attrs.frozen
class Section:
    """One titled table.  ``numeric`` marks the columns to right-align; the first ``keys`` columns
    say which row this is (a table turned on its side names its columns by them)."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]
    keys: int = 1
    #: Longest text a terminal cell of this table shows.
    max_cell: int = MAX_CELL


#: From this size on a figure is shown in exponent form (1e+308 rather than 309 digits).
HUGE = 1e15


def score(value: Any) -> str:
    """A mean score: three decimals."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return str(value)
    return f"{value:.4g}" if abs(value) >= HUGE else f"{value:.3f}"


def mean(group: GroupSummary, field: str) -> str:
    """A group's mean of ``field`` with the rows whose evaluator failed on it beside it
    ("0.700, 3 failed (30%)"), or "-" when it failed on every one: a dead judge is no bad answer."""
    failed = group.failed.get(field)
    if failed is None:
        return score(group.scores.get(field))
    if group.failed_on_every_row(field):
        return f"- (failed {failed.count} of {failed.rows})"
    return f"{score(group.scores.get(field))}, {failed.count} failed ({failed.rate:.0%})"


def figure(value: Any) -> str:
    """A metric figure, count or token total: whole numbers plain, others to four significant digits."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value) or abs(value) >= HUGE:
        return f"{value:.4g}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.1f}" if abs(value) >= 1000 else f"{value:#.4g}"


def percent(value: Any) -> str:
    return "-" if value is None else f"{value:.1%}"


# C0 and C1 controls (ESC starts a terminal escape sequence, CSI is one in C1) and the bidi
# overrides that reorder what a terminal shows.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with control characters written as escapes (``\\x1b``), so a data set or system
    name, or an error message, cannot move the cursor, recolour or reorder a terminal."""
    if text.isprintable():
        return text
    return _CONTROL.sub(lambda match: ascii(match.group())[1:-1], text)


def run_lines(metadata: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The run's metadata as (label, text) lines: when, which versions, which systems, which command."""
    lines = []
    if metadata.get("date"):
        lines.append(("date", str(metadata["date"])))
    versions = dict(metadata.get("versions") or {})
    if versions:
        lines.append(("versions", ", ".join(f"{name} {version}" for name, version in versions.items())))
    for system in metadata.get("systems") or ():
        if isinstance(system, Mapping):
            described = ", ".join(f"{k} {v}" for k, v in system.items() if k != "name" and v is not None)
            lines.append((f"system {system.get('name', '?')}", described or "-"))
    command = metadata.get("command")
    if command:
        lines.append(("command", command if isinstance(command, str) else " ".join(map(str, command))))
    known = {"date", "versions", "systems", "command", "config"}  # config: for reruns, in JSON only
    lines += [(str(k), str(v)) for k, v in metadata.items() if k not in known and v not in (None, "", [], {})]
    return lines


def overview(result: EvalResult, summary: Summary) -> str:
    """One line saying what the report covers."""
    streamed = not result.rows  # a streamed run keeps no rows: its summary counted them
    counts = [
        (sum(g.rows for g in summary.groups) if streamed else len(result.rows), "row"),
        (len(summary.systems) if streamed else len(result.systems), "system"),
        (len({g.dataset for g in summary.groups}) if streamed else len(result.datasets), "data set"),
        (summary.errors.total, "error"),
    ]
    return ", ".join(f"{n} {noun}{'s' * (n != 1)}" for n, noun in counts)


def build(summary: Summary, detail: bool = False) -> list[Section]:
    """Every section the summary calls for, in reading order; empty parts are left out.  Without
    ``detail`` the Scores tables leave out the fields of evaluators a data set got by its rows'
    fields alone beside one it got by name (:attr:`Summary.by_fields`)."""
    groups = summary.groups
    return [
        *_scores(summary, detail),
        *_systems(summary),
        *_metrics(groups, summary.units),
        *_breakdowns(summary),
        *_failures(summary.failures, groups),
        *_errors(summary.errors),
        *_usage(summary.usage),
    ]


def warnings(summary: Summary) -> list[str]:
    return [str(w) for w in summary.warnings]


# -- sections ----------------------------------------------------------------------------------


def _by_fields(groups: list[GroupSummary]) -> list[tuple[str, list[GroupSummary], tuple[str, ...]]]:
    """Groups with the same score fields, so that no table is mostly empty cells: a title suffix
    naming their data sets (when there are several such sets), the groups, and their fields."""
    by_fields: dict[frozenset[str], list[GroupSummary]] = {}
    for group in groups:
        by_fields.setdefault(frozenset(group.scores), []).append(group)
    return [
        (
            ": " + _shorten(", ".join(dict.fromkeys(str(g.dataset) for g in members)), 80)
            if len(by_fields) > 1
            else "",
            members,
            _union(g.scores for g in members),
        )
        for members in by_fields.values()
    ]


def _error_rate(rows: int, errors: int) -> str:
    return percent(errors / rows) if rows else "-"


def labels(summary: Summary, fields: Iterable[str]) -> tuple[str, ...]:
    """Score fields as headers name them: ``profanity ↓`` where lower is better."""
    return tuple(summary.direction(f).label(f) for f in fields)


def marked(title: str, summary: Summary, fields: Iterable[str]) -> str:
    """A table's title, saying what ``↓`` means when one of its ``fields`` has it."""
    return f"{title} ({LOWER_MARK})" if any(summary.direction(f).lower for f in fields) else title


def _scores(summary: Summary, detail: bool) -> list[Section]:
    """The means per group beside their error rate: an errored row counts its worst value in
    them (0, or the top of the range where lower is better), unless the run excluded errors (then
    the title says so)."""
    title = "Scores (scored rows only, --exclude-errors)" if summary.exclude_errors else "Scores"
    groups = summary.groups if detail else [_named_only(g, summary.by_fields) for g in summary.groups]
    sections = []
    for suffix, members, fields in _by_fields(groups):
        rows = [
            (
                str(g.system),
                str(g.dataset),
                figure(g.rows),
                figure(g.errors),
                _error_rate(g.rows, g.errors),
                *(mean(g, f) for f in fields),
            )
            for g in members
        ]
        headers = ("system", "dataset", "rows", "errors", "error rate", *labels(summary, fields))
        sections.append(_keyed(marked(title + suffix, summary, fields), headers, rows, keys=2))
    return sections


def _named_only(group: GroupSummary, by_fields: Mapping[str, list[str]]) -> GroupSummary:
    """The group without the score fields its data set got by its rows' fields alone."""
    hidden = by_fields.get(str(group.dataset), ())
    if not hidden:
        return group
    return attrs.evolve(group, scores={f: v for f, v in group.scores.items() if f not in hidden})


def _systems(summary: Summary) -> list[Section]:
    """Per-system totals, worth a table only when some system ran more than one data set."""
    systems: Mapping[str, SystemSummary] = summary.systems
    if len(summary.groups) <= len(systems):
        return []
    fields = _union(info.scores for info in systems.values())
    rows = [
        (
            str(name),
            figure(info.rows),
            figure(info.errors),
            _error_rate(info.rows, info.errors),
            *(score(info.scores.get(f)) for f in fields),
        )
        for name, info in systems.items()
    ]
    return [
        _keyed(
            marked(
                "Systems (all data sets: each mean pools the rows of unlike data sets; compare per data set)",
                summary,
                fields,
            ),
            ("system", "rows", "errors", "error rate", *labels(summary, fields)),
            rows,
            keys=1,
        )
    ]


def _metrics(groups: list[GroupSummary], units: Mapping[str, str]) -> list[Section]:
    names = _union(g.metrics for g in groups)
    sections = []
    for name in names:
        having = [g for g in groups if g.metrics.get(name)]
        figures = _union(g.metrics[name] for g in having)
        if not figures:
            continue
        rows = [
            (
                str(g.system),
                str(g.dataset),
                *(figure(g.metrics[name].get(f)) for f in figures),
            )
            for g in having
        ]
        title = f"Metric: {name} ({units[name]})" if units.get(name) else f"Metric: {name}"
        sections.append(_keyed(title, ("system", "dataset", *figures), rows, keys=2))
    return sections


def _breakdowns(summary: Summary) -> list[Section]:
    sections = []
    groups = summary.groups
    for key in _union(g.breakdown for g in groups):
        for suffix, members, fields in _by_fields(groups):
            rows = [
                (
                    str(g.system),
                    str(g.dataset),
                    str(value),
                    figure(part.rows),
                    *(score(part.scores.get(f)) for f in fields),
                )
                for g in members
                for value, part in (g.breakdown.get(key) or {}).items()
            ]
            if rows:
                headers = ("system", "dataset", str(key), "rows", *labels(summary, fields))
                title = marked(f"Breakdown by {key}{suffix}", summary, fields)
                sections.append(_keyed(title, headers, rows, keys=3))
    return sections


def _failures(failures: Mapping[str, EvaluatorFailures], groups: list[GroupSummary]) -> list[Section]:
    sections = []
    if failures:
        rows = tuple(
            (
                str(name),
                figure(info.count),
                figure(info.rows),
                percent(info.rate),
                ", ".join(f"{kind} {count}" for kind, count in sorted(info.kinds.items())),
            )
            for name, info in failures.items()
        )
        sections.append(
            Section(
                "Evaluator failures (scores are fallbacks)",
                ("evaluator", "failures", "of rows", "rate", "kinds"),
                rows,
                (False, True, True, True, False),
            )
        )
    per_group = [(g, name, count) for g in groups for name, count in g.failures.items()]
    if len(groups) > 1 and per_group:
        rows = tuple(
            (str(g.system), str(g.dataset), str(name), figure(count)) for g, name, count in per_group
        )
        sections.append(
            Section(
                "Failures by group",
                ("system", "dataset", "evaluator", "failures"),
                rows,
                (False, False, False, True),
                keys=3,
            )
        )
    return sections


def _errors(errors: ErrorCounts) -> list[Section]:
    """Errors by source (a system's own, an evaluator's, a data set's unreadable rows), then each
    distinct message with its count and the first rows it hit."""
    if not errors.total:
        return []
    rows = tuple(
        [(f"system {name}", figure(count)) for name, count in errors.by_system.items()]
        + [(f"evaluator {name}", figure(count)) for name, count in errors.by_evaluator.items()]
        + [(f"input {name}", figure(count)) for name, count in errors.by_input.items()]
        + [("total", figure(errors.total))]
    )
    sections = [Section("Errors", ("source", "errors"), rows, (False, True))]
    if errors.messages:
        sections.append(_messages(errors.messages))
    return sections


def _messages(messages: Sequence[ErrorMessage]) -> Section:
    rows = tuple(
        (
            figure(m.count),
            str(m.stage),
            str(m.source),
            str(m.type),
            str(m.message),
            ", ".join(map(str, m.examples)) + (", …" if m.count > len(m.examples) else ""),
        )
        for m in messages
    )
    headers = ("count", "stage", "source", "type", "message", "rows")
    # every column is a key: the table is never turned, a message is cut at MAX_MESSAGE instead
    return Section(
        "Error messages", headers, rows, (True, *(False for _ in headers[1:])), len(headers), MAX_MESSAGE
    )


def _usage(usage: Mapping[str, Mapping[str, float]]) -> list[Section]:
    if not usage:
        return []
    kinds = _union(usage.values())
    rows = tuple((str(name), *(figure(values.get(k)) for k in kinds)) for name, values in usage.items())
    return [Section("Evaluator token usage", ("evaluator", *kinds), rows, (False, *(True for _ in kinds)))]


# -- helpers -----------------------------------------------------------------------------------


def _union(mappings: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """Every key of the mappings, in order of first appearance."""
    keys: dict[str, None] = {}
    for mapping in mappings:
        keys.update(dict.fromkeys(map(str, mapping)))
    return tuple(keys)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _keyed(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], *, keys: int) -> Section:
    """A table whose first ``keys`` columns are text naming the row and whose others are numbers."""
    return Section(
        title,
        tuple(headers),
        tuple(tuple(r) for r in rows),
        tuple(i >= keys for i in range(len(headers))),
        keys,
    )


def width_of(section: Section) -> int:
    """How wide the section is on a terminal: its columns as cut at ``max_cell``, two spaces apart."""
    widths = [
        min(section.max_cell, max([len(h), *(len(r[i]) for r in section.rows)]))
        for i, h in enumerate(section.headers)
    ]
    return sum(widths) + 2 * (len(widths) - 1)
