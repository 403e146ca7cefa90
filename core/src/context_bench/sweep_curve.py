"""A sweep's curve and safe operating points, read from the summary's own figures: each setting's
mean and interval (its group's) and its paired difference from the baseline with interval and
p-value (its comparison's), so no statistic here is computed a second time (docs/sweeps.md).

A setting is safe on a data set when its loss to the baseline is not significantly beyond the
margin: the better end of the paired interval is at least ``-margin`` (in the field's direction;
where lower is better, the lower end at most ``margin``), or it changed no pair at all.  The
operating point of a swept system on a data set is its safe setting with the lowest achieved input
ratio; across all data sets (``dataset`` None), the setting safe on every data set, its input ratio
the data sets' averaged (each weighing by its pairs) and its difference the least safe data set's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from .records import OperatingPoint, Summary, SweepPoint
from .sweep import Setting, Sweep

#: How far a rate's achieved input ratio may be from the rate asked for before it is flagged.
RATE_TOLERANCE = 0.10


def with_curve(summary: Summary, sweep: Sweep, field_of: Callable[[Iterable[str]], str | None]) -> Summary:
    """``summary`` with its sweep's curve, operating points and flagged rates (unchanged without a
    sweep); ``field_of`` picks each group's headline field."""
    if not sweep.settings or summary.baseline is None:
        return summary
    groups = {(group.system, group.dataset): group for group in summary.groups}
    points = []
    for comparison in summary.comparisons:
        setting = sweep.settings.get(comparison.system)
        group = groups.get((comparison.system, comparison.dataset))
        if setting is None or group is None or comparison.field != field_of(group.scores):
            continue
        points.append(
            SweepPoint(
                system=setting.system,
                parameter=setting.parameter,
                value=setting.value,
                dataset=comparison.dataset,
                field=comparison.field,
                input_ratio=comparison.compression_ratio,
                mean=group.scores.get(comparison.field),
                ci=group.ci.get(comparison.field),
                delta=comparison.delta,
                delta_ci=comparison.ci,
                p_value=comparison.p_value,
                n=comparison.n,
                safe=_safe(
                    comparison.delta, comparison.ci, summary.direction(comparison.field).lower, sweep.margin
                ),
                flagged=_off_rate(setting, comparison.compression_ratio, sweep.rates),
            )
        )
    return attrs.evolve(
        summary,
        sweeps=points,
        operating_points=_operating_points(points, summary),
        warnings=[*summary.warnings, *_flag_lines(points)],
    )


def _safe(delta: float | None, interval: list[float] | None, lower: bool, margin: float) -> bool:
    """Whether a paired interval's better end reaches the margin's.  Without an interval a setting
    that changed no pair (``delta`` 0: nothing to test) is safe, any other is not known to be."""
    if interval is None:
        return delta == 0
    return min(interval) <= margin if lower else max(interval) >= -margin


def _off_rate(setting: Setting, ratio: float | None, rates: Iterable[str]) -> bool | None:
    """Whether the achieved ratio is more than 10% from the rate asked for (None: no rate declared,
    or no ratio achieved)."""
    asked = [value for name, value in setting.values if name in rates and isinstance(value, (int, float))]
    if not asked or ratio is None:
        return None
    return any(abs(ratio - value) > RATE_TOLERANCE * abs(value) for value in asked)


def _flag_lines(points: list[SweepPoint]) -> list[str]:
    return [
        f"{point.system} at {point.parameter}={point.value} on {point.dataset}: achieved input ratio "
        f"{point.input_ratio:.3g}, more than 10% from the rate asked for"
        for point in points
        if point.flagged
    ]


def _operating_points(points: list[SweepPoint], summary: Summary) -> list[OperatingPoint]:
    found = []
    by_system: dict[str, list[SweepPoint]] = {}
    for point in points:
        by_system.setdefault(point.system, []).append(point)
    for own in by_system.values():
        datasets = list(dict.fromkeys(point.dataset for point in own))
        for dataset in datasets:
            safe = [p for p in own if p.dataset == dataset and p.safe and p.input_ratio is not None]
            if safe:
                best = min(safe, key=lambda p: p.input_ratio)
                found.append(_point(best, dataset, best.input_ratio))
        pooled = _pooled(own, datasets, summary)
        if pooled is not None:
            found.append(pooled)
    return found


def _pooled(own: list[SweepPoint], datasets: list[str], summary: Summary) -> OperatingPoint | None:
    """The setting safe on every data set, with the lowest input ratio over them all (their
    ratios averaged, each weighing by its pairs); its difference the least safe data set's."""
    settings: dict[str, list[SweepPoint]] = {}
    for point in own:
        settings.setdefault(repr(point.value), []).append(point)
    candidates = []
    for mine in settings.values():
        if len(mine) != len(datasets) or not all(p.safe and p.input_ratio is not None for p in mine):
            continue
        ratio = sum(p.input_ratio * p.n for p in mine) / sum(p.n for p in mine)  # type: ignore[operator]
        worst = min(mine, key=lambda p: summary.direction(p.field).gains(p.delta_ci or [0, 0])[1])
        candidates.append((ratio, worst))
    if not candidates:
        return None
    ratio, worst = min(candidates, key=lambda candidate: candidate[0])
    return _point(worst, None, ratio)


def _point(point: SweepPoint, dataset: str | None, ratio: float | None) -> OperatingPoint:
    return OperatingPoint(
        point.system, point.parameter, point.value, dataset, ratio, point.delta, point.delta_ci
    )
