"""The sections of the issue-15 figures, shared by the table and Markdown reports: each group's
key figures on one line, the scores with their intervals one column per system, the comparisons
with the baseline, the loss audit and the judges.  A table too wide for a terminal is turned on its
side (:func:`readable`) instead of being cut into numbered pieces."""

from __future__ import annotations

import math
from typing import Any

from ..defaults import DEFAULT_THRESHOLD
from ..direction import HIGHER, LOWER, LOWER_MARK, named
from ..records import Comparison, GroupSummary, Summary
from ._sections import HUGE, MAX_WIDTH, Section, figure, labels, mean, percent, score, width_of
from ._verdict import primary
from .numbers import interval, money, p_value, ratio

#: Row ids a loss-audit cell lists before "…".
AUDIT_IDS = 3


def build(summary: Summary, detail: bool = False) -> list[Section]:
    """The intervals, comparisons, loss audit and judges (the key figures lead the report apart);
    the intervals leave out the fields a data set got by its rows' fields alone unless ``detail``,
    as the Scores tables do."""
    return [*_intervals(summary, detail), *_comparisons(summary), *_audit(summary), *_judges(summary)]


def readable(section: Section, width: int = MAX_WIDTH) -> Section:
    """The section, or, when it is wider than ``width``, the same figures with its rows as columns
    (each value column a row) if that is narrower: a table is never cut into numbered pieces."""
    if width_of(section) <= width or section.keys >= len(section.headers):  # nothing to turn
        return section
    names = [" / ".join(row[: section.keys]) for row in section.rows]
    turned = Section(
        section.title,
        ("figure", *names),
        tuple(
            (section.headers[i], *(row[i] for row in section.rows))
            for i in range(section.keys, len(section.headers))
        ),
        (False, *(True for _ in names)),
        1,
        section.max_cell,
    )
    return turned if width_of(turned) < width_of(section) else section


def _whole(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if not math.isfinite(value) or abs(value) >= HUGE else str(round(value))


def key_figures(summary: Summary) -> list[Section]:
    """Each group on one line: rows, errors, primary score, pass rate, tokens, dollars, latency, frontier."""
    groups = summary.groups
    if not groups:
        return []
    threshold = summary.primary.get("threshold", DEFAULT_THRESHOLD)
    # each group's primary score: the run's --score-field where it has one, else its first field
    fields = list(dict.fromkeys(g.passing.field for g in groups))
    field = labels(summary, fields)[0] if len(fields) == 1 else "score"
    rows = []
    for g in groups:
        tokens, latency = g.tokens, g.latency
        own = mean(g, g.passing.field)
        rows.append(
            (
                str(g.system),
                str(g.dataset),
                figure(g.rows),
                figure(g.errors),
                own
                if len(fields) == 1
                else f"{summary.direction(g.passing.field).label(g.passing.field)} {own}",
                percent(g.passing.pass_rate),
                "-"
                if tokens.input_mean is None
                else f"{_whole(tokens.input_mean)}/{_whole(tokens.output_mean)}",
                money(g.cost.dollars),
                money(g.passing.cost_of_pass),
                figure(latency.p50),
                "-"
                if g.frontier.rank is None
                else f"{g.frontier.rank}" + (" dom." if g.frontier.dominated else ""),
            )
        )
    headers = (
        "system",
        "dataset",
        "rows",
        "err",
        field,
        "pass",
        "in/out",
        "dollars",
        "$/pass",
        "p50 s",
        "front",
    )
    passing = _passing(summary, fields, threshold)
    title = f"Key figures (pass: {passing}; in/out: mean tokens per row{_whose(groups)}; front: rank)"
    return [Section(title, headers, tuple(rows), tuple(i >= 2 for i in range(len(headers))), 2)]


def _whose(groups: list[GroupSummary]) -> str:
    """Whose counts the tokens are (each group's ``tokens_source``): ``, metered``, or per data set
    ``, metered on qa, reported on long``; '' where no group has tokens."""
    sources: dict[str, dict[str, None]] = {}
    for g in groups:
        if g.tokens_source is not None:
            sources.setdefault(g.tokens_source, {})[str(g.dataset)] = None
    if len(sources) == 1:
        return f", {next(iter(sources))}"
    return ",".join(f" {source} on {', '.join(sets)}" for source, sets in sources.items())


def _passing(summary: Summary, fields: list[str], threshold: float) -> str:
    """What passes, the threshold read in each field's direction: ``f1 ≥ 0.7``, ``profanity ≤
    0.7``, or, for several fields that point both ways, ``score ≥ 0.7, ≤ for a ↓ score``."""
    signs = list(dict.fromkeys(summary.direction(f).sign for f in fields))
    if len(fields) == 1:
        return f"{fields[0]} {signs[0]} {threshold:g}"
    if len(signs) == 1:
        return f"score {signs[0]} {threshold:g}"
    return f"score {HIGHER.sign} {threshold:g}, {LOWER.sign} for a {LOWER.label('score')}"


def _intervals(summary: Summary, detail: bool) -> list[Section]:
    """Every mean's 95% interval, one column per system (the means are in the Scores tables)."""
    systems = list(dict.fromkeys(g.system for g in summary.groups))
    by_key: dict[tuple[str, str], GroupSummary] = {(g.system, g.dataset): g for g in summary.groups}
    rows = []
    for dataset in dict.fromkeys(g.dataset for g in summary.groups):
        fields = dict.fromkeys(f for s in systems for f in (by_key.get((s, dataset)) or _NONE).scores)
        hidden = () if detail else summary.by_fields.get(str(dataset), ())
        for field in (f for f in fields if f not in hidden):
            cells = []
            for system in systems:
                group = by_key.get((system, dataset))
                if group is None or field not in group.scores or group.failed_on_every_row(field):
                    cells.append("-")
                    continue
                cells.append(interval(group.ci.get(field)))
            rows.append((str(dataset), summary.direction(field).label(str(field)), *cells))
    if not rows:
        return []
    title = "95% intervals of the means" + (" (scored rows only)" if summary.exclude_errors else "")
    headers = ("dataset", "score", *map(str, systems))
    return [Section(title, headers, tuple(rows), tuple(i >= 2 for i in range(len(headers))), 2)]


_NONE = GroupSummary(system="", dataset="")


def _verdict(c: Comparison) -> str:
    """Significant at the run's alpha or not, or "too few rows" where nothing could be tested."""
    if c.significant is None:
        return "too few rows"
    return "yes" if c.significant else "no"


def _rows(c: Comparison) -> str:
    """The pairs compared, or "4 of 10" where the system has 4 of the baseline's 10 rows."""
    shared = c.shared()
    return shared.removesuffix(" rows shared") if shared else figure(c.n)


def _difference(c: Comparison) -> str:
    """The system's minus the baseline's, and its sign in words (``+1.000 worse`` where lower is
    better)."""
    if c.delta is None:
        return "-"
    words = named(c.direction).words(c.delta)
    return f"{c.delta:+.3f}" if words == "same" else f"{c.delta:+.3f} {words}"


def _comparisons(summary: Summary) -> list[Section]:
    """Each comparison on the primary score, and any other that is significant: the difference
    and whether it is better or worse, its interval, the p-value and verdict, the minimum
    detectable difference and the rows paired ("4 of 10 rows shared" where the system lacks some
    of the baseline's)."""
    if not summary.comparisons:
        return []
    shown = primary(summary)
    alpha = summary.alpha
    rows = tuple(
        (
            str(c.system),
            str(c.dataset),
            _label(c),
            _difference(c),
            interval(c.ci),
            p_value(c.p_value, alpha),
            _verdict(c),
            score(c.mdd),
            _rows(c),
            str(c.test or "-"),
        )
        for c in summary.comparisons
        if c is shown[(c.system, c.dataset)] or c.significant
    )
    share = f"{1 - alpha:.0%}"
    headers = (
        "system",
        "dataset",
        "score",
        "difference",
        f"{share} CI",
        "p",
        "significant",
        "mdd",
        "rows",
        "test",
    )
    lower = any(named(c.direction).lower for c in summary.comparisons)
    return [
        Section(
            f"Compared with {summary.baseline}, paired on ids (the primary score, and any significant at "
            f"alpha {alpha:g}; difference: the system's minus the baseline's"
            + (f", {LOWER_MARK}" if lower else "")
            + "; mdd: the smallest difference the rows could show; rows: the pairs, or N of M where "
            "the system has N of the baseline's M)",
            headers,
            rows,
            (False, False, False, True, True, True, False, True, True, False),
            3,
        )
    ]


def _label(c: Comparison) -> str:
    return named(c.direction).label(str(c.field))


def _counted(ids: list[str]) -> str:
    """How many rows, then the first ids: "20 (q001, q002, q003, …)"."""
    if not ids:
        return "0"
    shown = ", ".join(map(str, ids[:AUDIT_IDS]))
    return f"{len(ids)} ({shown}{', …' if len(ids) > AUDIT_IDS else ''})"


def _audit(summary: Summary) -> list[Section]:
    """Per (system, data set): compression, savings, and the rows lost and gained on the primary score."""
    chosen = primary(summary)
    if not chosen:
        return []
    rows = tuple(
        (
            str(c.system),
            str(c.dataset),
            ratio(c.compression_ratio),
            figure(c.tokens_saved),
            money(c.cost_saved) + (f" {c.cost_source}" if c.cost_saved is not None else ""),
            _label(c),
            _counted(c.lost),
            _counted(c.gained),
        )
        for c in chosen.values()
    )
    passing = _passing(
        summary,
        list(dict.fromkeys(c.field for c in chosen.values())),
        summary.primary.get("threshold", DEFAULT_THRESHOLD),
    )
    headers = (
        "system",
        "dataset",
        "input ratio",
        "tokens saved",
        "dollars saved",
        "score",
        "lost",
        "gained",
    )
    return [
        Section(
            f"Savings and loss audit against {summary.baseline} (lost, gained: passing {passing} "
            "on one side only)",
            headers,
            rows,
            (False, False, True, True, True, False, False, False),
            2,
        )
    ]


def _judges(summary: Summary) -> list[Section]:
    if not summary.judges:
        return []
    rows = tuple(
        (
            str(j.name),
            figure(j.calls),
            figure(j.failures),
            figure(j.parse_errors),
            figure(j.input_tokens),
            figure(j.output_tokens),
            money(j.dollars),
            "-" if j.alpha is None else f"{j.alpha:.3f}",
        )
        for j in summary.judges
    )
    headers = ("judge", "calls", "failures", "parse errors", "tokens in", "tokens out", "dollars", "alpha")
    return [Section("Judges (counted apart from the systems)", headers, rows, (False, *(True,) * 7), 1)]
