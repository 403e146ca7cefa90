"""A run's page (``/runs/ID``): what the run is, its summary as the HTML report shows it (charts,
tables, warnings: the core's own report of the stored summary), the loss audit, and its rows paged
by the server, searched and filtered; and one example's page, every system's row of it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from context_bench.records import EvalRow
from context_bench.reports import render
from context_bench.store import RunInfo, Store

from .html import facts, h, href, link, number, page, pager, preview, select, table

#: Rows a page of the row table shows.
PAGE = 50


def run_page(store: Store, run_id: int, query: Mapping[str, str], token: str | None) -> str:
    """The page of run ``run_id``; ``token`` (None: read-only) goes with the forms that change it."""
    info = store.run(run_id)
    style, report = _report(store, run_id)
    body = [_facts(info), _exports(run_id)]
    if token is not None:
        body.append(_write_forms(info, token))
    if info.status != "finished":
        body.append(
            f'<p class="unfinished">This run is {h(info.status)}: its summary was not written; '
            "the rows below are those it recorded.</p>"
        )
    else:
        body.append(f'<section id="summary">{report}</section>')
        body.append(_audit(run_id, info.summary or {}))
    body.append(_rows(store, info, query))
    return page(f"Run {run_id}", "\n".join(part for part in body if part), extra_style=style)


def _report(store: Store, run_id: int) -> tuple[str, str]:
    """The style and the body of the run's HTML report, its summary alone (the rows are paged
    below); its title and its "No rows" are this page's to say."""
    text = render(store.result(run_id), "html")
    style = text.partition("<style>")[2].partition("</style>")[0]
    body = text.partition("<body>")[2].rpartition("</body>")[0]
    for said in ("<h1>context-bench report</h1>", "<h2>Rows</h2>\n<p>No rows.</p>"):
        body = body.replace(said, "")
    return style, body


def _facts(info: RunInfo) -> str:
    lines = [
        ("status", f'<span class="{h(info.status)}">{h(info.status)}</span>'),
        ("kind", h(info.kind)),
        ("started", h(info.started)),
        ("finished", h(info.finished or "-")),
        ("tags", h(", ".join(info.tags) or "-")),
        ("systems", h(", ".join(info.systems))),
        ("data sets", h(", ".join(info.datasets))),
        (
            "rows",
            h(f"{info.rows:,}")
            + (f' <span class="error">({info.errors:,} errored)</span>' if info.errors else ""),
        ),
        ("commit", h(info.commit or "-") + (f" ({h(info.branch)})" if info.branch else "")),
        ("verdict", h(info.verdict or "-")),
    ]
    return f'<div id="facts">{facts(lines)}</div>'


def _exports(run_id: int) -> str:
    return (
        "<p>The run's report: "
        + link(f"/runs/{run_id}/report.json", "JSON")
        + " · "
        + link(f"/runs/{run_id}/report.jsonl", "JSONL")
        + "</p>"
    )


def _write_forms(info: RunInfo, token: str) -> str:
    hidden = f'<input type="hidden" name="token" value="{h(token)}">'
    return (
        f'<form class="inline" method="post" action="/runs/{info.id}/tags">{hidden}'
        f'<label>tags <input name="tags" value="{h(", ".join(info.tags))}" size="30"></label> '
        "<button>save tags</button></form> "
        f'<form class="inline" method="post" action="/runs/{info.id}/delete">{hidden}'
        f'<label><input type="checkbox" name="confirm" value="yes" required> delete run {info.id} '
        f"and its {info.rows:,} rows</label> <button>delete</button></form>"
    )


def _audit(run_id: int, summary: Mapping[str, Any]) -> str:
    """Each comparison's lost and gained rows, each a link to its example's page."""
    parts = []
    for comparison in summary.get("comparisons") or ():
        lost, gained = comparison.get("lost") or [], comparison.get("gained") or []
        if not lost and not gained:
            continue
        dataset = str(comparison["dataset"])

        def ids(found: list[Any], dataset: str = dataset) -> str:
            return ", ".join(
                link(href(f"/runs/{run_id}/example", dataset=dataset, id=str(i)), i) for i in found
            )

        parts.append(
            f"<li>{h(comparison['system'])} against {h(comparison['baseline'])} on {h(dataset)} "
            f"({h(comparison['field'])}): lost {len(lost)} ({ids(lost) or '-'}); "
            f"gained {len(gained)} ({ids(gained) or '-'})</li>"
        )
    if not parts:
        return ""
    return (
        '<section id="audit"><h2>Loss audit</h2><p>Rows that passed on the baseline and fail on the '
        "system at the run's threshold (lost), and the reverse (gained).</p><ul>"
        + "".join(parts)
        + "</ul></section>"
    )


def _rows(store: Store, info: RunInfo, query: Mapping[str, str]) -> str:
    search = (query.get("q") or "").strip() or None
    system = query.get("system") or None
    dataset = query.get("dataset") or None
    chosen = int(query.get("page") or 0)
    filtered = search or system or dataset
    total = store.count(info.id, search, system, dataset) if filtered else info.rows  # counted once
    rows = store.rows(info.id, chosen * PAGE, PAGE, search, system, dataset)
    fields = list(dict.fromkeys(field for row in rows for field in row.scores))
    form = (
        f'<form class="filters" method="get" action="/runs/{info.id}#rows">'
        f'<label>search <input name="q" value="{h(search or "")}" size="24"></label>'
        f"<label>system {select('system', info.systems, system, blank='all')}</label>"
        f"<label>data set {select('dataset', info.datasets, dataset, blank='all')}</label>"
        "<button>show</button></form>"
    )
    lines = [
        [
            h(row.index),
            h(row.system),
            h(row.dataset),
            link(href(f"/runs/{info.id}/example", dataset=row.dataset, id=row.example_id), row.example_id),
            *(h(number(row.scores.get(field))) for field in fields),
            '<span class="error">' + h("; ".join(map(str, row.errors))) + "</span>",
            h(preview(row.response)),
        ]
        for row in rows
    ]
    headers = ("#", "system", "data set", "example", *fields, "errors", "response")
    params = {"q": search, "system": system, "dataset": dataset}
    navigation = pager(f"/runs/{info.id}", params, chosen, PAGE, total)
    return (
        f'<section id="rows"><h2>Rows</h2>{form}{navigation}'
        + table(headers, lines, numeric=(0, *range(4, 4 + len(fields))))
        + navigation
        + "</section>"
    )


def example_page(store: Store, run_id: int, dataset: str, example_id: str) -> str:
    """Every system's row of one example of the run, side by side."""
    store.run(run_id)
    rows = store.rows(run_id, 0, 100, dataset=dataset, example_id=example_id)
    title = f"Run {run_id}: {example_id} of {dataset}"
    if not rows:
        return page(title, "<p>No such row in this run.</p>")
    return page(title, '<div class="pair">' + "".join(_detail(row) for row in rows) + "</div>")


def _detail(row: EvalRow) -> str:
    figures = [
        ("system", row.system),
        ("latency (s)", number(row.latency)),
        ("input tokens", row.input_tokens),
        ("output tokens", row.output_tokens),
        ("cost", row.cost),
        *((f"score {field}", number(value)) for field, value in row.scores.items()),
    ]
    parts = [facts((label, h("-" if value is None else value)) for label, value in figures)]
    if row.errors:
        parts.append('<h3>Errors</h3><pre class="error">' + h("\n".join(map(str, row.errors))) + "</pre>")
    if row.failures:
        said = "\n".join(f"{name}: {why}" for name, why in row.failures.items())
        parts.append(f'<h3>Soft failures</h3><pre class="error">{h(said)}</pre>')
    parts.append(f"<h3>Response</h3><pre>{h(row.response if row.response is not None else '-')}</pre>")
    if row.example:
        parts.append(
            f"<h3>Input row</h3><pre>{h(json.dumps(row.example, indent=2, ensure_ascii=False))}</pre>"
        )
    if row.meta:
        parts.append(
            f"<h3>Meta</h3><pre>{h(json.dumps(row.meta, indent=2, ensure_ascii=False, default=str))}</pre>"
        )
    return f'<div class="row">{"".join(parts)}</div>'
