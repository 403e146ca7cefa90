"""The summary sections plugins add (:mod:`context_bench.summary_sections`), shown by the table,
Markdown and HTML reports alike: each a table of its records, and in the HTML report its first
figure as a bar per record with its interval."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..records import Summary
from ..summary_sections import SummarySection
from . import _svg as svg
from ._sections import Section, figure, printable, score
from .numbers import interval


def build(summary: Summary) -> list[Section]:
    """One table per section that has records, in the order the run made them."""
    return [_table(s) for s in summary.sections.values() if s.records]


def _table(section: SummarySection) -> Section:
    headers = section.shown()
    rows = tuple(tuple(_cell(record.get(key)) for key in headers) for record in section.records)
    numeric = tuple(
        any(
            isinstance(r.get(key), (int, float, list)) and not isinstance(r.get(key), bool)
            for r in section.records
        )
        for key in headers
    )
    title = section.title
    if section.failed:
        title += f" ({section.failed} of {section.total} {section.unit} got no result: {section.failure})"
    return Section(title, headers, rows, numeric, keys=2)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return score(value)
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return interval(value)
    return printable(figure(value))


def charts(summary: Summary, systems: Sequence[str]) -> list[tuple[Section, str]]:
    """Each section's table with the chart of its first figure ("" when it has none): a bar per
    record (a system on a data set) with its interval where the section gives one."""
    found = []
    for name, section in summary.sections.items():
        if not section.records:
            continue
        chart = ""
        if section.figures:
            shown = section.figures[0]
            items = []
            for record in section.records:
                value = record.get(shown.name)
                if not isinstance(value, (int, float)):
                    continue
                low, high = (record.get(shown.interval) or (None, None)) if shown.interval else (None, None)
                system = printable(str(record.get("system")))
                label = f"{system} on {printable(str(record.get('dataset')))}"
                items.append(svg.Interval(label, system, float(value), low, high))
            title = f"{printable(name)}: {shown.name} per data set"
            chart = svg.bars(title, items, systems, shown.bounds, shown.reference)
        found.append((_table(section), chart))
    return found
