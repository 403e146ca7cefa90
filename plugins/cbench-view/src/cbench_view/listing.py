"""The run list (``/``): every run with its verdict, newest first, filtered as ``context-bench runs``
filters them, and a form to put two of them side by side."""

from __future__ import annotations

from collections.abc import Mapping

from context_bench.store import RunInfo, Store, parse_since

from .html import h, href, link, page, select, table

#: Runs the page lists at most.
LIMIT = 500


def runs_page(store: Store, query: Mapping[str, str]) -> str:
    filters = {key: query.get(key) or None for key in ("tag", "system", "dataset", "since")}
    since = parse_since(filters["since"]) if filters["since"] else None
    infos = store.runs(filters["tag"], filters["system"], filters["dataset"], since, LIMIT)
    inputs = "".join(
        f'<label>{h(key)} <input name="{h(key)}" value="{h(value or "")}" size="14"></label>'
        for key, value in filters.items()
    )
    body = [
        f'<form class="filters" method="get" action="/">{inputs}<button>filter</button></form>',
        f'<p class="note">{len(infos)} run{"s" * (len(infos) != 1)} in {h(store.url.shown)}'
        + (f" (the newest {LIMIT})" if len(infos) == LIMIT else "")
        + "</p>",
    ]
    if infos:
        body.append(_table(infos))
        body.append(_compare_form(infos))
    return page("Runs", "\n".join(body))


def _table(infos: list[RunInfo]) -> str:
    rows = [
        [
            link(f"/runs/{info.id}", info.id),
            h(info.started.replace("T", " ")[:16]),
            f'<span class="{h(info.status)}">{h(info.status)}</span>',
            h(", ".join(info.tags)),
            h(", ".join(info.systems)),
            h(", ".join(info.datasets)),
            h(f"{info.rows:,}")
            + (f' <span class="error">({info.errors:,} errored)</span>' if info.errors else ""),
            h(info.verdict or ("" if info.status == "finished" else "no summary: the run did not finish")),
            h((info.commit or "")[:10]) + (f" ({h(info.branch)})" if info.branch else ""),
        ]
        for info in infos
    ]
    headers = ("run", "started (UTC)", "status", "tags", "systems", "data sets", "rows", "verdict", "commit")
    return '<div id="runs">' + table(headers, rows, numeric=(0, 6)) + "</div>"


def _compare_form(infos: list[RunInfo]) -> str:
    ids = [str(info.id) for info in infos]
    before = ids[1] if len(ids) > 1 else ids[0]
    return (
        f'<form method="get" action="{h(href("/diff"))}"><label>compare run '
        f"{select('a', ids, before)}</label> <label>with run {select('b', ids, ids[0])}</label> "
        "<button>side by side</button></form>"
    )
