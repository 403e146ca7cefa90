"""The ``--by`` tables (:mod:`context_bench._by`), shared by the table, Markdown and HTML reports:
per field, each group's primary score in each part side by side (the table a paper prints of
scores by length: a task a line, a length bucket a column), then every part's key figures, then its
comparisons with the baseline."""

from __future__ import annotations

from ..records import ByPart, GroupSummary, Summary
from ._figure_sections import _difference, _rows
from ._sections import Section, figure, percent, score
from .numbers import interval, money, p_value

#: What a part's cell shows: its mean, and its rows.
CELL = "{mean} ({rows})"


def build(summary: Summary) -> list[Section]:
    """Three tables for each ``--by`` field, in the order the flags gave them."""
    sections = []
    for field in dict.fromkeys(f for g in summary.groups for f in g.by):
        having = [g for g in summary.groups if field in g.by]
        sections += [_side_by_side(field, having), _figures(field, having)]
        compared = _comparisons(field, having, summary)
        if compared is not None:
            sections.append(compared)
    return sections


def _side_by_side(field: str, groups: list[GroupSummary]) -> Section:
    parts = list(dict.fromkeys(p.value for g in groups for p in g.by[field]))
    rows = []
    for g in groups:
        own = {p.value: p for p in g.by[field]}
        primary = g.passing.field
        rows.append(
            (
                str(g.system),
                str(g.dataset),
                str(primary or "-"),
                *(_cell(own.get(part), primary) for part in parts),
                CELL.format(mean=score(g.scores.get(primary or "")), rows=figure(g.rows)),
            )
        )
    headers = ("system", "dataset", "score", *parts, "all")
    title = f"By {field}: the primary score's mean in each part (rows)"
    return Section(title, headers, tuple(rows), tuple(i >= 3 for i in range(len(headers))), 3)


def _cell(part: ByPart | None, field: str | None) -> str:
    if part is None:
        return "-"
    return CELL.format(mean=score(part.group.scores.get(field or "")), rows=figure(part.group.rows))


def _figures(field: str, groups: list[GroupSummary]) -> Section:
    rows = tuple(
        (
            str(g.system),
            str(g.dataset),
            str(p.value),
            figure(own.rows),
            figure(own.errors),
            score(own.scores.get(g.passing.field or "")),
            interval(own.ci.get(g.passing.field or "")),
            percent(own.passing.pass_rate),
            figure(own.tokens.input_mean),
            figure(own.tokens.output_mean),
            money(own.cost.dollars),
            figure(own.latency.p50),
        )
        for g in groups
        for p in g.by[field]
        for own in (p.group,)
    )
    headers = (
        *("system", "dataset", field, "rows", "err", "score", "95% CI"),
        *("pass", "in", "out", "dollars", "p50 s"),
    )
    title = f"By {field}: each part's figures (score: the primary score; in/out: mean tokens per row)"
    return Section(title, headers, rows, tuple(i >= 3 for i in range(len(headers))), 3)


def _comparisons(field: str, groups: list[GroupSummary], summary: Summary) -> Section | None:
    shown = [
        (g, p, c)
        for g in groups
        for p in g.by[field]
        for c in p.comparisons
        if c.field == g.passing.field or c.significant
    ]
    if not shown:
        return None
    alpha = summary.alpha
    rows = tuple(
        (
            str(c.system),
            str(c.dataset),
            str(p.value),
            str(c.field),
            _difference(c),
            interval(c.ci),
            p_value(c.p_value, alpha),
            _rows(c),
        )
        for g, p, c in shown
    )
    headers = ("system", "dataset", field, "score", "difference", f"{1 - alpha:.0%} CI", "p", "rows")
    title = (
        f"By {field}: compared with {summary.baseline} in each part, paired on ids (the primary "
        "score, and any significant; difference: the system's minus the baseline's)"
    )
    return Section(title, headers, rows, tuple(i >= 4 for i in range(len(headers))), 4)
