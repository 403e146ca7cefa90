"""The HTML report: one self-contained page (inline style, no script, no external asset) with the
summary tables and every row.  Every piece of text is escaped, so a row id like ``<script>``
shows as text."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from ..records import EvalResult, EvalRow
from . import sections, summary_of
from .sections import Section

#: Characters of a response shown before the rest folds away in a <details> element.
PREVIEW = 120

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.error { color: #a00; }
.scroll { overflow-x: auto; }
details > summary { cursor: pointer; }
pre { white-space: pre-wrap; margin: 0.25rem 0; }
"""


def render(result: EvalResult) -> str:
    summary = summary_of(result)
    body = [
        "<h1>context-bench report</h1>",
        f"<p>{escape(sections.overview(result, summary))}</p>",
    ]
    notes = sections.warnings(summary)
    if notes:
        body.append("<h2>Warnings</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    body += [_section(section) for section in sections.build(summary)]
    body.append(_rows(result.rows))
    run = sections.run_lines(result.metadata)
    if run:
        items = "".join(f"<li>{escape(label)}: {escape(text)}</li>" for label, text in run)
        body.append(f"<h2>Run</h2><ul>{items}</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>context-bench report</title>\n"
        f"<style>{_STYLE}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


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


def _rows(rows: list[EvalRow]) -> str:
    if not rows:
        return "<h2>Rows</h2>\n<p>No rows.</p>"
    fields = list(dict.fromkeys(field for row in rows for field in row.scores))
    # optional columns appear only when some row has a value for them
    extras: list[tuple[str, Callable[[EvalRow], Any]]] = [
        (header, get)
        for header, get in (
            ("latency (s)", lambda r: r.latency),
            ("input tokens", lambda r: r.input_tokens),
            ("output tokens", lambda r: r.output_tokens),
            ("cost", lambda r: r.cost),
        )
        if any(get(r) is not None for r in rows)
    ]
    numbers = [*fields, *(h for h, _ in extras)]
    lines = []
    for row in rows:
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
    return (
        f'<h2>Rows</h2>\n<div class="scroll"><table><tr>{head}</tr>\n' + "\n".join(lines) + "</table></div>"
    )


def _response(text: str | None) -> str:
    if text is None:
        return ""
    if len(text) <= PREVIEW and "\n" not in text:
        return escape(text)
    preview = " ".join(text[:PREVIEW].split())
    return f"<details><summary>{escape(preview)}…</summary><pre>{escape(text)}</pre></details>"
