"""The trend of one (system, data set, field) over the runs that have it (``/trend``): each
finished run's mean with its 95% interval, on a time axis, tags written by their points and each
change of commit marked; the same points as a table below."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence

from context_bench.store import Store, TrendPoint

from .html import h, link, number, page, select, table

WIDTH, HEIGHT = 760, 320
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 24, 40, 64
#: Where the time axis is drawn.
BASE = HEIGHT - _BOTTOM


def trend_page(store: Store, query: Mapping[str, str]) -> str:
    series = store.series()
    if not series:
        return page("Trends", "<p>No finished run in the store has a figure yet.</p>")
    systems = list(dict.fromkeys(s for s, _, _ in series))
    system = query.get("system") or systems[0]
    datasets = list(dict.fromkeys(d for s, d, _ in series if s == system))
    dataset = query.get("dataset") or (datasets[0] if datasets else "")
    fields = list(dict.fromkeys(f for s, d, f in series if s == system and d == dataset))
    field = query.get("field") or (fields[0] if fields else "")
    form = (
        '<form class="filters" method="get" action="/trend">'
        f"<label>system {select('system', systems, system)}</label>"
        f"<label>data set {select('dataset', datasets or [dataset], dataset)}</label>"
        f"<label>field {select('field', fields or [field], field)}</label><button>show</button></form>"
    )
    points = store.trend(system, dataset, field)
    title = f"{system} on {dataset}: {field}"
    if not points:
        return page(title, form + "<p>No finished run has this figure.</p>")
    rows = [
        [
            link(f"/runs/{p.run_id}", p.run_id),
            h(p.started.replace("T", " ")[:16]),
            h(number(p.mean)),
            h(f"[{number(p.low)}, {number(p.high)}]" if p.low is not None else "-"),
            h(f"{p.rows:,}"),
            h(", ".join(p.tags)),
            h((p.commit or "")[:10]) + (f" ({h(p.branch)})" if p.branch else ""),
        ]
        for p in points
    ]
    headers = ("run", "started (UTC)", "mean", "95% interval", "rows", "tags", "commit")
    return page(
        title,
        form + chart(title, points) + f'<div id="points">{table(headers, rows, numeric=(0, 2, 4))}</div>',
    )


def chart(title: str, points: Sequence[TrendPoint]) -> str:
    """The points as an SVG line over time, each with its interval as a bar; a tag is written above
    its point and a dashed line marks each run whose commit differs from the one before."""
    moments = [datetime.datetime.fromisoformat(p.started).timestamp() for p in points]
    values = [v for p in points for v in (p.mean, p.low, p.high) if v is not None]
    low_y, high_y = _padded(min(values, default=0.0), max(values, default=1.0))
    low_x, high_x = _padded(min(moments), max(moments))

    def x(moment: float) -> float:
        return _LEFT + (moment - low_x) / (high_x - low_x) * (WIDTH - _LEFT - _RIGHT)

    def y(value: float) -> float:
        return BASE - (value - low_y) / (high_y - low_y) * (HEIGHT - _TOP - _BOTTOM)

    parts = [
        f'<svg id="trend" role="img" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'font-family="system-ui, sans-serif"><title>{h(title)}</title>',
        f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{BASE}" y2="{BASE}" stroke="#444"/>',
        f'<line x1="{_LEFT}" x2="{_LEFT}" y1="{_TOP}" y2="{BASE}" stroke="#444"/>',
    ]
    for tick in (low_y, (low_y + high_y) / 2, high_y):
        parts.append(
            f'<text x="{_LEFT - 6}" y="{y(tick) + 4:.1f}" font-size="10" text-anchor="end">{tick:.3g}</text>'
        )
    for moment in (moments[0], moments[-1]):
        day = datetime.datetime.fromtimestamp(moment, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
        parts.append(_text(x(moment), BASE + 14, h(day)))
    line = " ".join(
        f"{x(m):.1f},{y(p.mean):.1f}" for m, p in zip(moments, points, strict=True) if p.mean is not None
    )
    parts.append(f'<polyline points="{line}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>')
    previous = None
    for moment, point in zip(moments, points, strict=True):
        px = x(moment)
        if point.commit and previous is not None and point.commit != previous:
            parts.append(
                f'<g class="commit"><line x1="{px:.1f}" x2="{px:.1f}" y1="{_TOP}" y2="{BASE}" '
                f'stroke="#999" stroke-dasharray="3 3"/>{_text(px, BASE + 28, h(point.commit[:7]))}</g>'
            )
        previous = point.commit or previous
        if point.mean is None:
            continue
        if point.low is not None and point.high is not None:
            parts.append(
                f'<line class="ci" x1="{px:.1f}" x2="{px:.1f}" '
                f'y1="{y(point.low):.1f}" y2="{y(point.high):.1f}" '
                'stroke="#1f77b4" stroke-width="2"/>'
            )
        said = (
            f"run {point.run_id}, {point.started}: {number(point.mean)} "
            f"[{number(point.low)}, {number(point.high)}], {point.rows} rows"
            + (f", tags {', '.join(point.tags)}" if point.tags else "")
            + (f", commit {point.commit[:10]}" if point.commit else "")
        )
        parts.append(
            f'<a href="/runs/{point.run_id}"><circle class="point" cx="{px:.1f}" '
            f'cy="{y(point.mean):.1f}" r="4" fill="#1f77b4"><title>{h(said)}</title></circle></a>'
        )
        if point.tags:
            top = y(point.high if point.high is not None else point.mean) - 8
            parts.append(_text(px, top, h(", ".join(point.tags)), css="tag"))
    return "".join(parts) + "</svg>"


def _text(x: float, y: float, markup: str, anchor: str = "middle", css: str = "") -> str:
    """A ``<text>`` at (x, y); ``markup`` is escaped already."""
    kind = f' class="{css}"' if css else ""
    return f'<text{kind} x="{x:.1f}" y="{y:.1f}" font-size="10" text-anchor="{anchor}">{markup}</text>'


def _padded(low: float, high: float) -> tuple[float, float]:
    """A range holding ``low``..``high`` with room around it (one value: a range around it)."""
    if high == low:
        pad = abs(high) * 0.1 or 1.0
        return low - pad, high + pad
    pad = (high - low) * 0.08
    return low - pad, high + pad
