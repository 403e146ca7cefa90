"""The viewer's pages are built here from escaped pieces: every text a row, a run or a name brings
passes through :func:`h` (or :func:`link`, :func:`table`) before it reaches a page, and no page
carries a script (the Content-Security-Policy forbids one), so hostile text shows as text."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

#: Characters of a response a table cell shows; the row's page shows it whole.
PREVIEW = 160

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem 2rem; color: #222; }
nav { margin-bottom: 1rem; } nav a { margin-right: 1rem; font-weight: 600; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.error, .unfinished, .regressed { color: #a00; } .improved { color: #070; } .running { color: #a60; }
.scroll { overflow-x: auto; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0.2rem 0; }
form.inline { display: inline; } form.filters label { margin-right: 0.8rem; }
.pager a, .pager span { margin-right: 0.8rem; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.note { color: #555; }
"""


def h(value: Any) -> str:
    """Any value as text safe inside an element or a quoted attribute."""
    return escape("" if value is None else str(value), quote=True)


def href(path: str, **params: Any) -> str:
    """``path`` with the given query parameters (None and "" left out)."""
    given = {key: value for key, value in params.items() if value not in (None, "")}
    return path + ("?" + urlencode(given) if given else "")


def link(url: str, text: Any) -> str:
    return f'<a href="{h(url)}">{h(text)}</a>'


def number(value: Any, sign: bool = False) -> str:
    """A score or figure to three decimals; "-" for none."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-"
    if not math.isfinite(value):
        return str(value)
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def preview(text: str | None) -> str:
    if text is None:
        return ""
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """A table of cells that are markup already (escape their text with :func:`h` first)."""
    head = "".join(
        f'<th class="num">{h(t)}</th>' if n in numeric else f"<th>{h(t)}</th>" for n, t in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(f'<td class="num">{c}</td>' if n in numeric else f"<td>{c}</td>" for n, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f'<div class="scroll"><table><tr>{head}</tr>{body}</table></div>'


def facts(pairs: Iterable[tuple[str, str]]) -> str:
    """A table of (label, markup) lines, the label as its header cell."""
    return (
        "<table>"
        + "".join(f"<tr><th>{h(label)}</th><td>{value}</td></tr>" for label, value in pairs)
        + "</table>"
    )


def select(name: str, options: Iterable[str], chosen: str | None, blank: str | None = None) -> str:
    items = [f'<option value="">{h(blank)}</option>'] if blank is not None else []
    for option in options:
        mark = " selected" if option == chosen else ""
        items.append(f'<option value="{h(option)}"{mark}>{h(option)}</option>')
    return f'<select name="{h(name)}">{"".join(items)}</select>'


def pager(path: str, params: Mapping[str, Any], page: int, size: int, total: int) -> str:
    """Where this page of ``total`` items is, with links to the first, previous, next and last."""
    last = max(0, (total - 1) // size)
    start, end = page * size + 1, min(total, (page + 1) * size)
    parts = [f"<span>{start:,}–{end:,} of {total:,}</span>" if total else "<span>none</span>"]
    for label, target in (("first", 0), ("previous", page - 1), ("next", page + 1), ("last", last)):
        if 0 <= target <= last and target != page:
            parts.append(link(href(path, **params, page=target), label))
    return f'<p class="pager">{"".join(parts)}</p>'


def page(title: str, body: str, extra_style: str = "") -> str:
    """A whole page: the navigation, ``body`` (markup), and the style."""
    nav = link("/", "Runs") + link("/diff", "Compare two runs") + link("/trend", "Trends")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{h(title)} · context-bench</title>\n<link rel="icon" href="data:,">\n'
        f"<style>{extra_style}{STYLE}</style>\n</head>\n<body>\n<nav>{nav}</nav>\n"
        f"<h1>{h(title)}</h1>\n{body}\n</body>\n</html>\n"
    )
