"""The HTML report: one self-contained page that works offline from disk (inline style, charts
drawn as inline SVG, one inline script, no external asset).

The answer first: the verdict, the key figures, the warnings, then one overview chart (every data
set's headline against input tokens, small multiples on one row), then each data set's own charts
(quality against tokens and dollars with the frontier, each mean with its interval, latency per
system) closed until clicked, drawn here from the summary's figures, then the summary's other
tables as HTML; the rows travel as JSON (:mod:`.html_rows`) that the script pages, sorts and
filters, with the loss audit after them: inside the page, or, for a big run (:func:`write` with
``rows_file``), in a file beside it that the script reads.  The first page of rows is also plain
HTML, so the report reads without script too.  A row's detail can be marked correct or incorrect
by hand and the marks exported as a labels file (html_labels.js), kept meanwhile in the browser
under :func:`run_key`.  Every text is escaped, so a row id like ``<script>`` shows as text.
Blocks of the summary a run did not produce (no prices, no baseline, no judge) are left out.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from html import escape
from importlib import resources
from typing import Any, TextIO

from ..direction import Directions
from ..records import EvalResult
from . import (
    View,
    summary_of,
)
from . import (
    _added_sections as added_sections,
)
from . import (
    _by_sections as by_sections,
)
from . import (
    _figure_sections as figure_sections,
)
from . import (
    _sections as sections,
)
from . import (
    _svg as svg,
)
from . import (
    _sweep_sections as sweep_sections,
)
from . import (
    _turn_sections as turn_sections,
)
from ._html_rows import PAGE, RowEncoder
from ._sections import Section, printable
from ._verdict import verdicts

#: Characters of a response shown before the rest folds away in a <details> element.
PREVIEW = 120

#: The page's script (package data, so that it reads and lints as JavaScript): the row table and
#: the loss audit, then the labelling of rows by hand.
_SCRIPT = "\n".join(
    resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    for name in ("html_report.js", "html_labels.js")
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.error { color: #a00; }
.scroll { overflow-x: auto; }
details > summary { cursor: pointer; }
details.dataset { margin: 0.4rem 0; } details.dataset > summary { font-weight: 600; }
pre { white-space: pre-wrap; margin: 0.25rem 0; overflow-wrap: anywhere; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
.chart { border: 1px solid #ddd; background: #fff; }
.legend span { margin-right: 1rem; white-space: nowrap; }
.legend i { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.3em; }
.controls label { margin-right: 0.8rem; white-space: nowrap; }
.controls input[type=number] { width: 5em; }
.pager { margin: 0.5rem 0; }
th.sortable { cursor: pointer; }
th.asc::after { content: " ▲"; } th.desc::after { content: " ▼"; }
#cb-body tr { cursor: pointer; }
#cb-body td:last-child { max-width: 28rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#cb-body tr:hover { background: #f6f9ff; }
.detail dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
.detail dt { font-weight: 600; } .detail dd { margin: 0; }
.labels { margin: 0.3rem 0 0.6rem; } .labels button { margin-right: 0.3rem; }
.labels .correct { color: #060; } .labels .incorrect { color: #a00; }
#cb-body tr[data-label=correct] td:first-child::after { content: " ✓"; color: #060; }
#cb-body tr[data-label=incorrect] td:first-child::after { content: " ✗"; color: #a00; }
button.link { border: none; background: none; color: #06c; text-decoration: underline; cursor: pointer; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.ids button { margin: 0.1rem; font-family: monospace; }
ul.verdict { font-size: 1.1rem; line-height: 1.5; padding-left: 1.2rem; }
"""


def render(result: EvalResult, view: View | None = None) -> str:
    """The page with every row of ``result`` inline; ``view.detail`` as :func:`write`'s ``detail``."""
    encoder = RowEncoder()
    lines = [encoder(row) for row in result.rows]
    page = io.StringIO()
    write(result, page, encoder, lines, detail=view is not None and view.detail)
    return page.getvalue()


def rows_file(page: str) -> str:
    """Where a big run's rows go beside its page: ``report.html`` → ``report.rows.jsonl``."""
    root, ext = os.path.splitext(page)
    return (root if ext else page) + ".rows.jsonl"


def write(
    result: EvalResult,
    handle: TextIO,
    encoder: RowEncoder,
    lines: Iterable[str] = (),
    rows_file: str | None = None,
    detail: bool = False,
) -> None:
    """The page to ``handle``, its rows those ``encoder`` encoded: inline from ``lines`` (each a
    row's JSON, as ``encoder`` gave it), or, given ``rows_file``, read by the page's script from
    that file beside the page (one row's JSON a line), so a page of millions of rows stays small.
    ``detail`` (``--detail``) shows every score field in the Scores tables (:func:`sections.build`)."""
    summary = summary_of(result)
    data = summary.to_dict()
    heads = [*map(str, verdicts(summary)), *sweep_sections.operating_lines(summary)]
    said = "".join(f"<li>{escape(printable(head))}</li>" for head in heads)
    # the answer first: the verdict and the key figures, then what they rest on
    body = [
        "<h1>context-bench report</h1>",
        f'<ul class="verdict">{said}</ul>' if said else "",
        f"<p>{escape(sections.overview(result, summary))}</p>",
        *(_section(section) for section in figure_sections.key_figures(summary)),
    ]
    notes = sections.warnings(summary)
    if notes:
        body.append("<h2>Warnings</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    body.append(_charts(data, result.systems))
    systems = list(dict.fromkeys([*result.systems, *summary.systems]))
    for table, chart in added_sections.charts(summary, systems):  # a plugin's figures, its chart beside
        body.append(_section(table) + (f'\n<div class="charts">{chart}</div>' if chart else ""))
    # the figures' other tables (scores, intervals, comparisons, savings, judges), as in the table
    # and Markdown reports
    tables = [
        *sweep_sections.curves(summary),
        *sweep_sections.repeats(summary),
        *sections.build(summary, detail),
        *by_sections.build(summary),
        *turn_sections.build(summary),
        *figure_sections.build(summary, detail),
    ]
    body += [_section(section) for section in tables]
    audit = _audit_ids(data)
    body.append(_rows(encoder, rows_file))
    body.append(_audit(audit))
    run = sections.run_lines(result.metadata)
    if run:
        items = "".join(f"<li>{escape(label)}: {escape(text)}</li>" for label, text in run)
        body.append(f"<h2>Run</h2><ul>{items}</ul>")
    handle.write(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<title>context-bench report</title>\n<link rel="icon" href="data:,">\n'
        f"<style>{_STYLE}</style>\n</head>\n<body>\n" + "\n".join(part for part in body if part) + "\n"
    )
    if encoder.count:
        handle.write('<script type="application/json" id="cb-data">')
        run = run_key(result.metadata)
        if rows_file is not None:
            handle.write(encoder.head(audit=audit, run=run, rows_file=rows_file) + "}")
        else:
            handle.write(encoder.head(audit=audit, run=run) + ',"rows":[\n')
            for n, line in enumerate(lines):
                handle.write(line if not n else ",\n" + line)
            handle.write("]}")
        handle.write(f"</script>\n<script>{_SCRIPT}</script>\n")
    handle.write("</body>\n</html>\n")


def run_key(metadata: Mapping[str, Any]) -> str | None:
    """What names the run's hand-made labels in the browser's storage: a digest of its metadata
    (date, command, configuration), so every page of the same run, ``show`` again included, keeps
    the same marks, and another run's are never mixed in; None without metadata."""
    if not metadata:
        return None
    text = json.dumps(metadata, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


# -- charts ------------------------------------------------------------------------------------


def headline_field(data: Mapping[str, Any], fields: Sequence[str]) -> str | None:
    """The score a data set is charted and ranked by, the rule of ``Analysis.field_of``: the
    run's ``--score-field`` where the data set has it, else its first field (the headline of the
    evaluator it is wired to by name), as its pass rate and frontier are figured."""
    chosen = (data.get("primary") or {}).get("field")
    return chosen if chosen in fields else (fields[0] if fields else None)


def _legend(systems: Sequence[str]) -> str:
    return "".join(
        f'<span><i style="background:{svg.colour(systems, s)}"></i>{escape(printable(s))}</span>'
        for s in systems
    )


def _overview(
    data: Mapping[str, Any], by_dataset: Mapping[str, Sequence[Mapping[str, Any]]], systems: Sequence[str]
) -> str:
    """One chart for the whole run: every data set's headline against input tokens, side by side."""
    panels = []
    for dataset, members in by_dataset.items():
        chosen = headline_field(data, list(dict.fromkeys(f for g in members for f in g.get("scores") or {})))
        if chosen is None:
            continue
        points = [
            svg.Point(printable(str(g["system"])), x, y)
            for g in members
            if (x := (g.get("tokens") or {}).get("input_mean")) is not None
            and (y := _mean(g, chosen)) is not None
        ]
        panels.append(svg.Panel(printable(str(dataset)), chosen, points))
    chart = svg.overview(
        "quality against input tokens, per data set", panels, systems, "input tokens per row"
    )
    if not chart:
        return ""
    return f'<h2>Overview</h2>\n<p class="legend">{_legend(systems)}</p>\n<div class="scroll">{chart}</div>'


def _charts(data: Mapping[str, Any], order: Sequence[str]) -> str:
    """The overview, then each data set's own charts in a section closed until clicked."""
    groups = data.get("groups") or []
    if not groups:
        return ""
    systems = list(dict.fromkeys([*order, *(g["system"] for g in groups)]))
    by_dataset: dict[str, list[Mapping[str, Any]]] = {}
    for group in groups:
        by_dataset.setdefault(group["dataset"], []).append(group)
    shown = [printable(s) for s in systems]
    sets = []
    for dataset, members in by_dataset.items():
        name = printable(str(dataset))
        charts = []
        own = list(dict.fromkeys(f for g in members for f in g.get("scores") or {}))
        chosen = headline_field(data, own)
        if chosen is not None:
            lower = Directions.reported(data.get("score_fields") or {}).of(chosen).lower
            said = f"{chosen} (lower is better)" if lower else chosen
            for label, cost in (("tokens per row", _tokens), ("dollars", _dollars)):
                charts.append(_cost_chart(f"{name}: {said} against {label}", members, systems, chosen, cost))
        charts.append(_sweep_chart(data, dataset, members))
        charts.append(svg.intervals(f"{name}: means with 95% intervals", _intervals(members), systems))
        charts.append(svg.latency(f"{name}: latency per system", _spreads(members), systems))
        charts = [c for c in charts if c]
        if charts:
            sets.append(
                f'<details class="dataset"><summary>{escape(name)}</summary>\n'
                f'<div class="charts">{"".join(charts)}</div></details>'
            )
    parts = [_overview(data, by_dataset, shown)]
    if sets:
        parts.append(
            f'<h2>Charts per data set</h2>\n<p class="legend">{_legend(systems)}'
            "<span>hollow: dominated (another system scores as well for less)</span></p>\n" + "\n".join(sets)
        )
    return "\n".join(p for p in parts if p)


def _tokens(group: Mapping[str, Any]) -> tuple[float | None, str]:
    tokens = group.get("tokens") or {}
    parts = [tokens.get("input_mean"), tokens.get("output_mean")]
    known = [p for p in parts if p is not None]
    return (sum(known) if known else None), "tokens per row (input + output)"


def _dollars(group: Mapping[str, Any]) -> tuple[float | None, str]:
    cost = group.get("cost") or {}
    return (cost.get("dollars") if cost.get("priced") else None), "dollars"


def _cost_chart(
    title: str,
    members: Sequence[Mapping[str, Any]],
    systems: Sequence[str],
    field: str,
    cost: Callable[[Mapping[str, Any]], tuple[float | None, str]],
) -> str:
    """``field`` (the data set's headline, which the summary's frontier ranks by) against ``cost``
    per system."""
    points = []
    label = ""
    for group in members:
        x, label = cost(group)
        y = _mean(group, field)
        if x is None or y is None:
            continue
        place = group.get("frontier") or {}
        points.append(svg.Point(printable(str(group["system"])), x, y, place.get("dominated")))
    return svg.frontier(title, points, [printable(s) for s in systems], label, field)


def _sweep_chart(data: Mapping[str, Any], dataset: str, members: Sequence[Mapping[str, Any]]) -> str:
    """The data set's sweep curve (``summary.sweeps``): the settings whose input ratio is known."""
    points = [
        p
        for p in data.get("sweeps") or []
        if p["dataset"] == dataset and p["input_ratio"] is not None and p["mean"] is not None
    ]
    if not points:
        return ""
    lines: dict[str, list[svg.Setting]] = {}
    for p in points:
        low, high = p["ci"] or (None, None)
        label = f"{p['parameter']}={p['value']}"
        own = lines.setdefault(printable(str(p["system"])), [])
        own.append(svg.Setting(label, p["input_ratio"], p["mean"], low, high))
    field = points[0]["field"]
    base = next((g for g in members if g["system"] == data.get("baseline")), None)
    mean = (base or {}).get("scores", {}).get(field)
    baseline = (printable(str(base["system"])), mean) if base and mean is not None else None
    title = f"{printable(str(dataset))}: {field} against achieved input ratio"
    return svg.curve(title, lines, baseline, list(lines), field)


def _mean(group: Mapping[str, Any], field: str) -> float | None:
    """The group's mean of ``field`` to draw, or None: a field whose every value is a failed
    evaluator's fallback (a judge that never answered) has no mean, as the tables show "-"."""
    failed = (group.get("failed") or {}).get(field)
    if failed and failed["count"] >= failed["rows"]:
        return None
    value = (group.get("scores") or {}).get(field)
    return None if value is None else float(value)


def _intervals(members: Sequence[Mapping[str, Any]]) -> list[svg.Interval]:
    found = []
    for group in members:
        system = printable(str(group["system"]))
        ci = group.get("ci") or {}
        for field in group.get("scores") or {}:
            mean = _mean(group, field)
            if mean is None:
                continue
            low, high = ci.get(field) or (None, None)
            found.append(svg.Interval(f"{system} {field}", system, mean, low, high))
    return found


def _spreads(members: Sequence[Mapping[str, Any]]) -> list[svg.Spread]:
    """Latency from the summary's figures, or from the latency metric on a summary without them."""
    found = []
    for group in members:
        figures = group.get("latency") or (group.get("metrics") or {}).get("latency") or {}
        system = printable(str(group["system"]))
        found.append(svg.Spread(system, system, *(figures.get(k) for k in ("mean", "p50", "p95", "p99"))))
    return found


# -- judges and the loss audit -----------------------------------------------------------------


def _audit_ids(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The comparisons that lost or gained rows, for the script to list with both sides' rows."""
    return [
        {
            "system": printable(str(c["system"])),
            "baseline": printable(str(c["baseline"])),
            "dataset": printable(str(c["dataset"])),
            "field": str(c["field"]),
            "lost": [printable(str(i)) for i in c.get("lost") or ()],
            "gained": [printable(str(i)) for i in c.get("gained") or ()],
        }
        for c in data.get("comparisons") or []
        if c.get("lost") or c.get("gained")
    ]


def _audit(audit: list[dict[str, Any]]) -> str:
    """The loss audit's rows side by side: the script lists each comparison's lost and gained ids
    and shows, on click, each side's prompt, response, reference and scores."""
    if not audit:
        return ""
    return (
        "<h2>Loss audit, row by row</h2>\n<p>Rows that passed on the baseline and fail on the system at "
        "the run's threshold (lost), and the reverse (gained). Open one, then click an id.</p>\n"
        '<div id="cb-audit"></div>'
    )


# -- tables ------------------------------------------------------------------------------------


def _section(section: Section) -> str:
    head = "".join(_th(h, numeric) for h, numeric in zip(section.headers, section.numeric, strict=True))
    rows = "".join(
        "<tr>"
        + "".join(_td(c, "num" if n else "") for c, n in zip(row, section.numeric, strict=True))
        + "</tr>"
        for row in section.rows
    )
    return f'<h2>{escape(section.title)}</h2>\n<div class="scroll"><table><tr>{head}</tr>{rows}</table></div>'


def _th(text: str, numeric: bool = False) -> str:
    return f'<th class="num">{escape(text)}</th>' if numeric else f"<th>{escape(text)}</th>"


def _td(text: str, css: str = "") -> str:
    return f'<td class="{css}">{escape(text)}</td>' if css and text else f"<td>{escape(text)}</td>"


def _rows(encoder: RowEncoder, rows_file: str | None) -> str:
    """The row table's place: the script builds the whole table in ``#cb-rows``; until it runs (or
    without script) the first :data:`PAGE` rows show as plain HTML."""
    if not encoder.count:
        return "<h2>Rows</h2>\n<p>No rows.</p>"
    fields, extras = encoder.columns
    numbers = [*fields, *(h for h, _ in extras)]
    lines = []
    for row in encoder.first:
        cells = [
            _td(str(row.index), "num"),
            _td(row.system),
            _td(row.dataset),
            _td(str(row.example_id)),
            *(_td(sections.score(row.scores.get(f)), "num") for f in fields),
            *(_td(sections.figure(get(row)), "num") for _, get in extras),
            _td("; ".join(map(str, row.errors)), "error"),
            _td("; ".join(f"{name}: {why}" for name, why in row.failures.items()), "error"),
            f"<td>{_response(row.response)}</td>",
        ]
        lines.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(
        [
            _th("#", True),
            *map(_th, ("system", "dataset", "example")),
            *(_th(h, True) for h in numbers),
            *map(_th, ("errors", "failures", "response")),
        ]
    )
    more = ""
    if rows_file is not None:
        more = (
            f"<p>The first {len(encoder.first)} of {encoder.count} rows; the page's script shows them "
            f"all from {escape(rows_file)}, the file beside this page.</p>"
        )
    elif encoder.count > PAGE:
        more = f"<p>The first {PAGE} of {encoder.count} rows; the page's script shows them all.</p>"
    return (
        '<h2>Rows</h2>\n<div id="cb-rows"></div>\n'
        f'<div id="cb-static">{more}<div class="scroll"><table><tr>{head}</tr>\n'
        + "\n".join(lines)
        + "</table></div></div>"
    )


def _response(text: str | None) -> str:
    if text is None:
        return ""
    if len(text) <= PREVIEW and "\n" not in text:
        return escape(text)
    preview = " ".join(text[:PREVIEW].split())
    return f"<details><summary>{escape(preview)}…</summary><pre>{escape(text)}</pre></details>"
