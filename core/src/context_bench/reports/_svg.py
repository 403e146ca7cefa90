"""The HTML report's charts, drawn as inline SVG from the summary's figures (no script, no library).

Every function takes plain numbers and names and returns one ``<svg>`` element as text; every name
is escaped, so a system called ``<script>`` is drawn as text.  A chart with nothing to draw is
``""``: the report leaves it out.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from html import escape

import attrs

from ._sections import figure

#: The systems' colours, in order of first appearance (distinct in print and for colour-blind eyes).
PALETTE = ("#1f77b4", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#666666")

WIDTH = 480
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 30, 44
#: Height of one row of the interval and latency charts.
ROW = 22
#: Width and height of one data set's panel in the overview's small multiples.
PANEL = 200
#: Height of the overview's title above its panels.
_TITLE = 12


@attrs.frozen
class Point:
    """One system on a data set: ``x`` its cost (tokens or dollars), ``y`` its primary score;
    ``dominated`` from the summary's frontier (None: unknown)."""

    system: str
    x: float
    y: float
    dominated: bool | None = None


@attrs.frozen
class Panel:
    """One data set in the overview: each system's ``Point`` on its headline ``field``."""

    dataset: str
    field: str
    points: Sequence[Point]


@attrs.frozen
class Interval:
    """A mean with its 95% interval (``low``/``high`` None when it has none)."""

    label: str
    system: str
    mean: float
    low: float | None = None
    high: float | None = None


@attrs.frozen
class Spread:
    """A system's latency on a data set: mean and percentiles, seconds (None: unknown)."""

    label: str
    system: str
    mean: float | None
    p50: float | None
    p95: float | None
    p99: float | None


@attrs.frozen
class Setting:
    """One setting of a swept system on a data set: ``x`` its achieved input ratio, ``y`` its mean
    with its 95% interval (``low``/``high`` None when it has none)."""

    label: str
    x: float
    y: float
    low: float | None = None
    high: float | None = None


def colour(systems: Sequence[str], system: str) -> str:
    return PALETTE[systems.index(system) % len(PALETTE)] if system in systems else PALETTE[-1]


def frontier(title: str, points: Sequence[Point], systems: Sequence[str], x_label: str, y_label: str) -> str:
    """A score (up) against cost (right): one dot per system, hollow when dominated, and the
    frontier (the systems no other beats on both, the score read in its direction) joined by a line."""
    if not points:
        return ""
    xs, ys = _span([p.x for p in points]), _span([p.y for p in points])
    height = 260
    plot = _Plot(xs, ys, height)
    parts = [_frame(title, height), *plot.axes(x_label, y_label)]
    best = sorted((p for p in points if p.dominated is False), key=lambda p: (p.x, p.y))
    if best:
        # a staircase: what lies beyond it (worse, to the right) is dominated; its steps go up
        # where higher scores are better, down where lower ones are
        corners = [(plot.x(best[0].x), plot.y(best[0].y))]
        for p in best[1:]:
            corners += [(plot.x(p.x), corners[-1][1]), (plot.x(p.x), plot.y(p.y))]
        corners.append((WIDTH - _RIGHT, corners[-1][1]))
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in corners)
        parts.append(
            f'<polyline class="frontier" points="{line}" fill="none" stroke="#999" stroke-dasharray="4 3"/>'
        )
    for p in points:
        fill = "#fff" if p.dominated else colour(systems, p.system)
        mark = " (dominated)" if p.dominated else " (on the frontier)" if p.dominated is False else ""
        parts.append(
            f'<circle class="point" cx="{plot.x(p.x):.1f}" cy="{plot.y(p.y):.1f}" r="5" fill="{fill}" '
            f'stroke="{colour(systems, p.system)}" stroke-width="2"><title>{escape(p.system)}: '
            f"{escape(y_label)} {figure(p.y)}, {escape(x_label)} {figure(p.x)}{mark}</title></circle>"
        )
        x, y = plot.x(p.x), plot.y(p.y)
        right = x > WIDTH * 0.7  # a name near the right edge reads leftwards, inside the frame
        parts.append(
            _label(x - 7 if right else x + 7, y - 7, escape(p.system), anchor="end" if right else "start")
        )
    return _close(parts)


def curve(
    title: str,
    lines: dict[str, list[Setting]],
    baseline: tuple[str, float] | None,
    systems: Sequence[str],
    y_label: str,
) -> str:
    """A sweep: each swept system's mean (up) against its achieved input ratio (right), its
    settings joined by a line in order of the ratio, their intervals a band around it, and the
    baseline's mean a dashed reference line."""
    lines = {system: sorted(own, key=lambda s: s.x) for system, own in lines.items() if own}
    if not lines:
        return ""
    found = [s for own in lines.values() for s in own]
    ys = [v for s in found for v in (s.y, s.low, s.high) if v is not None]
    height = 260
    plot = _Plot(_span([s.x for s in found]), _span([*ys, *([baseline[1]] if baseline else [])]), height)
    parts = [_frame(title, height), *plot.axes("achieved input ratio", y_label)]
    if baseline is not None:
        y = plot.y(baseline[1])
        parts.append(
            f'<line class="baseline" x1="{plot.left}" x2="{WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="#444" stroke-dasharray="6 4"><title>{escape(baseline[0])}: {figure(baseline[1])}'
            "</title></line>"
        )
    for system, own in lines.items():
        stroke = colour(systems, system)
        banded = [s for s in own if s.low is not None and s.high is not None]
        if len(banded) > 1:
            edge = [(plot.x(s.x), plot.y(s.high)) for s in banded]  # type: ignore[arg-type]
            edge += [(plot.x(s.x), plot.y(s.low)) for s in reversed(banded)]  # type: ignore[arg-type]
            corners = " ".join(f"{x:.1f},{y:.1f}" for x, y in edge)
            parts.append(f'<polygon class="band" points="{corners}" fill="{stroke}" fill-opacity="0.15"/>')
        line = " ".join(f"{plot.x(s.x):.1f},{plot.y(s.y):.1f}" for s in own)
        parts.append(
            f'<polyline class="curve" points="{line}" fill="none" stroke="{stroke}" stroke-width="2"/>'
        )
        for s in own:
            shown = f"{figure(s.y)} [{figure(s.low)}, {figure(s.high)}], input ratio {figure(s.x)}"
            x, y = plot.x(s.x), plot.y(s.y)
            parts.append(
                f'<circle class="setting" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{stroke}">'
                f"<title>{escape(system)} {escape(s.label)}: {shown}</title></circle>"
            )
    return _close(parts)


def overview(title: str, panels: Sequence[Panel], systems: Sequence[str], x_label: str) -> str:
    """Small multiples on one row: per data set, its headline score (up) against ``x_label``
    (right), one dot per system, each panel on its own scales (the data sets' scores differ)."""
    panels = [p for p in panels if p.points]
    if not panels:
        return ""
    width = PANEL * len(panels)
    parts = [_frame(title, PANEL + _TITLE, width)]
    for n, panel in enumerate(panels):
        plot = _Plot(
            _span([p.x for p in panel.points]), _span([p.y for p in panel.points]), PANEL, width=PANEL
        )
        parts.append(f'<g class="panel" transform="translate({PANEL * n} {_TITLE})">')
        parts += plot.axes(x_label, panel.field)
        name = escape(panel.dataset)
        bold = 'font-size="11" font-weight="600"'
        parts.append(f'<text class="dataset" x="{plot.left}" y="{_TOP - 4}" {bold}>{name}</text>')
        for p in panel.points:
            parts.append(
                f'<circle class="point" cx="{plot.x(p.x):.1f}" cy="{plot.y(p.y):.1f}" r="4" '
                f'fill="{colour(systems, p.system)}"><title>{escape(panel.dataset)}, {escape(p.system)}: '
                f"{escape(panel.field)} {figure(p.y)}, {escape(x_label)} {figure(p.x)}</title></circle>"
            )
        parts.append("</g>")
    return _close(parts)


def intervals(title: str, items: Sequence[Interval], systems: Sequence[str]) -> str:
    """Each mean as a dot with its 95% interval as a bar, one line per (system, field)."""
    if not items:
        return ""
    values = [v for i in items for v in (i.mean, i.low, i.high) if v is not None]
    span = _span([*values, 0.0])
    height = _TOP + _BOTTOM + ROW * len(items)
    plot = _Plot(span, (0.0, 1.0), height, left=180)
    parts = [_frame(title, height), *plot.x_axis("mean, 95% interval")]
    for n, item in enumerate(items):
        y = _TOP + ROW * n + ROW / 2
        stroke = colour(systems, item.system)
        parts.append(_label(plot.left - 6, y + 4, escape(item.label), anchor="end"))
        if item.low is not None and item.high is not None:
            parts.append(
                f'<line class="ci" x1="{plot.x(item.low):.1f}" x2="{plot.x(item.high):.1f}" y1="{y:.1f}" '
                f'y2="{y:.1f}" stroke="{stroke}" stroke-width="2"/>'
            )
        shown = f"{figure(item.mean)} [{figure(item.low)}, {figure(item.high)}]"
        parts.append(
            f'<circle class="mean" cx="{plot.x(item.mean):.1f}" cy="{y:.1f}" r="4" fill="{stroke}">'
            f"<title>{escape(item.label)}: {shown}</title></circle>"
        )
    return _close(parts)


def bars(
    title: str,
    items: Sequence[Interval],
    systems: Sequence[str],
    bounds: tuple[float, float],
    reference: float | None = None,
) -> str:
    """Each figure as a bar from the start of its range (``bounds``), its interval as a line over
    it, one line per item, and ``reference`` as a dashed line: a summary section's figure per
    (system, data set)."""
    if not items:
        return ""
    height = _TOP + _BOTTOM + ROW * len(items)
    plot = _Plot(bounds, (0.0, 1.0), height, left=180)
    marked = "" if reference is None else f"; dashed: {_tick(reference)}"
    parts = [_frame(title, height), *plot.x_axis(f"value with its interval{marked}")]
    for n, item in enumerate(items):
        y = _TOP + ROW * n + ROW / 2
        fill = colour(systems, item.system)
        start, end = plot.x(bounds[0]), plot.x(min(max(item.mean, bounds[0]), bounds[1]))
        shown = f"{figure(item.mean)} [{figure(item.low)}, {figure(item.high)}]"
        parts.append(_label(plot.left - 6, y + 4, escape(item.label), anchor="end"))
        parts.append(
            f'<rect class="bar" x="{start:.1f}" y="{y - 6:.1f}" width="{end - start:.1f}" height="12" '
            f'fill="{fill}" fill-opacity="0.7"><title>{escape(item.label)}: {shown}</title></rect>'
        )
        if item.low is not None and item.high is not None:
            parts.append(
                f'<line class="ci" x1="{plot.x(item.low):.1f}" x2="{plot.x(item.high):.1f}" y1="{y:.1f}" '
                f'y2="{y:.1f}" stroke="#222" stroke-width="2"/>'
            )
    if reference is not None:
        x = plot.x(reference)
        parts.append(
            f'<line class="reference" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{height - _BOTTOM}" '
            'stroke="#444" stroke-dasharray="4 3"/>'
        )
    return _close(parts)


def latency(title: str, items: Sequence[Spread], systems: Sequence[str]) -> str:
    """Each system's latency as a box from the median to p95, a whisker to p99 and a tick at the mean."""
    items = [i for i in items if any(v is not None for v in (i.mean, i.p50, i.p95, i.p99))]
    if not items:
        return ""
    values = [v for i in items for v in (i.mean, i.p50, i.p95, i.p99) if v is not None]
    height = _TOP + _BOTTOM + ROW * len(items)
    plot = _Plot(_span([*values, 0.0]), (0.0, 1.0), height, left=180)
    parts = [_frame(title, height), *plot.x_axis("seconds: box p50 to p95, whisker to p99, | mean")]
    for n, item in enumerate(items):
        y = _TOP + ROW * n + ROW / 2
        stroke = colour(systems, item.system)
        parts.append(_label(plot.left - 6, y + 4, escape(item.label), anchor="end"))
        low = item.p50 if item.p50 is not None else item.mean
        if item.p99 is not None and low is not None:
            x1, x2 = plot.x(low), plot.x(item.p99)
            parts.append(f'<line x1="{x1:.1f}" x2="{x2:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{stroke}"/>')
        if item.p50 is not None and item.p95 is not None:
            left, right = plot.x(item.p50), plot.x(item.p95)
            parts.append(
                f'<rect class="box" x="{left:.1f}" y="{y - 6:.1f}" width="{max(right - left, 1):.1f}" '
                f'height="12" fill="{stroke}" fill-opacity="0.35" stroke="{stroke}"/>'
            )
        if item.mean is not None:
            parts.append(
                f'<line x1="{plot.x(item.mean):.1f}" x2="{plot.x(item.mean):.1f}" y1="{y - 8:.1f}" '
                f'y2="{y + 8:.1f}" stroke="#222" stroke-width="2"/>'
            )
        shown = ", ".join(
            f"{name} {figure(v)} s"
            for name, v in (("mean", item.mean), ("p50", item.p50), ("p95", item.p95), ("p99", item.p99))
        )
        parts.append(f"<title>{escape(item.label)}: {shown}</title>")
    return _close(parts)


# -- drawing -----------------------------------------------------------------------------------


@attrs.frozen
class _Plot:
    """Maps data to the drawing: ``xs``/``ys`` are the data ranges shown."""

    xs: tuple[float, float]
    ys: tuple[float, float]
    height: int
    left: int = _LEFT
    width: int = WIDTH

    def x(self, value: float) -> float:
        return self.left + _fraction(value, *self.xs) * (self.width - self.left - _RIGHT)

    def y(self, value: float) -> float:
        return self.height - _BOTTOM - _fraction(value, *self.ys) * (self.height - _TOP - _BOTTOM)

    def x_axis(self, label: str) -> list[str]:
        base = self.height - _BOTTOM
        parts = [f'<line x1="{self.left}" x2="{self.width - _RIGHT}" y1="{base}" y2="{base}" stroke="#444"/>']
        for tick in _ticks(*self.xs):
            x = self.x(tick)
            parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{base}" stroke="#eee"/>')
            parts.append(
                f'<text x="{x:.1f}" y="{base + 14}" font-size="10" text-anchor="middle">{_tick(tick)}</text>'
            )
        mid = (self.left + self.width - _RIGHT) / 2
        parts.append(_label(mid, self.height - 8, escape(label), anchor="middle"))
        return parts

    def axes(self, x_label: str, y_label: str) -> list[str]:
        parts = self.x_axis(x_label)
        base = self.height - _BOTTOM
        parts.append(f'<line x1="{self.left}" x2="{self.left}" y1="{_TOP}" y2="{base}" stroke="#444"/>')
        for tick in _ticks(*self.ys):
            y = self.y(tick)
            parts.append(_label(self.left - 4, y + 3, _tick(tick), size=10, anchor="end"))
        middle = (_TOP + base) / 2
        parts.append(
            f'<text transform="translate(14 {middle:.1f}) rotate(-90)" font-size="11" text-anchor="middle">'
            f"{escape(y_label)}</text>"
        )
        return parts


def _label(x: float, y: float, markup: str, size: int = 11, anchor: str = "start") -> str:
    """A ``<text>`` at (x, y); ``markup`` is escaped already."""
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}">{markup}</text>'


def _frame(title: str, height: int, width: int = WIDTH) -> str:
    return (
        f'<svg class="chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="system-ui, sans-serif"><title>{escape(title)}</title>'
        f'<text x="8" y="16" font-size="12" font-weight="600">{escape(title)}</text>'
    )


def _close(parts: list[str]) -> str:
    return "".join(parts) + "</svg>"


def _tick(value: float) -> str:
    """A tick's value, as short as it reads (0.2, 1500, 0.0015)."""
    return f"{value:.6g}"


# Every distance below is taken between halves (``high / 2 - low / 2``): the difference of two
# finite figures near the float's limit (1e308 and -1e308) would overflow to infinity.


def _fraction(value: float, low: float, high: float) -> float:
    """Where ``value`` lies from ``low`` (0) to ``high`` (1); an infinite one at the edge it passes."""
    if not math.isfinite(value):
        return 1.0 if value > 0 else 0.0  # NaN too: at the start, never a coordinate "nan"
    return (value / 2 - low / 2) / (high / 2 - low / 2)


def _span(values: Sequence[float]) -> tuple[float, float]:
    """A range holding every finite value, padded so that no dot sits on the frame."""
    values = [v for v in values if math.isfinite(v)] or [0.0]
    low, high = min(values), max(values)
    if high == low:  # one value: a range around it, not below 0 when it is not
        pad = abs(high) * 0.1 or 1.0
        low, high = (low - pad if low - pad >= 0 or low < 0 else 0.0), high + pad
    else:
        pad = (high / 2 - low / 2) * 0.16
        low, high = (low - pad if low < 0 or low - pad >= 0 else 0.0), high + pad
    return max(low, -sys.float_info.max), min(high, sys.float_info.max)


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round values between ``low`` and ``high``."""
    raw = (high / 2 - low / 2) / (count / 2)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    steps = int((high / 2 - first / 2) / (step / 2))
    return [round(first + n * step, 12) for n in range(steps + 1)]
