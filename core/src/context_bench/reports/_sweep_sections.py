"""A sweep in the table and Markdown reports: the curve of each swept system on each data set (one
row per setting) and the line of each safe operating point, read from the summary's ``sweeps`` and
``operating_points`` (:mod:`context_bench.sweep_curve`); and with ``--repeats``, each group's
spread across repeats (:mod:`context_bench.repeats`)."""

from __future__ import annotations

from ..records import OperatingPoint, Summary
from ._sections import Section, percent, score
from .numbers import interval, p_value, ratio

HEADERS = ("setting", "input ratio", "mean", "95% CI", "vs baseline", "diff CI", "p", "n", "safe")


def curves(summary: Summary) -> list[Section]:
    """One table per swept system, data set and field: its settings in the order they ran."""
    tables: dict[tuple[str, str, str], list[tuple[str, ...]]] = {}
    for point in summary.sweeps:
        flag = " (off rate)" if point.flagged else ""
        tables.setdefault((point.system, point.dataset, point.field), []).append(
            (
                f"{point.parameter}={_value(point.value)}",
                ratio(point.input_ratio) + flag,
                score(point.mean),
                interval(point.ci),
                "-" if point.delta is None else f"{point.delta:+.3f}",
                interval(point.delta_ci),
                p_value(point.p_value, summary.alpha),
                str(point.n),
                "yes" if point.safe else "no",
            )
        )
    return [
        Section(
            f"Sweep: {system} on {dataset} ({summary.direction(field).label(field)} vs {summary.baseline})",
            HEADERS,
            tuple(rows),
            (False, True, True, True, True, True, True, True, False),
        )
        for (system, dataset, field), rows in tables.items()
    ]


def operating_lines(summary: Summary) -> list[str]:
    """``safe operating point: compressed at rate=0.5 on hotpotqa: 0.50x input tokens, f1 -0.010
    [-0.05, 0.03]``, each swept system's, and ``... on no data set`` where no setting is safe."""
    lines = [_line(point) for point in summary.operating_points]
    found = {point.system for point in summary.operating_points if point.dataset is None}
    for system in dict.fromkeys(point.system for point in summary.sweeps):
        if system not in found:
            lines.append(f"safe operating point: {system} has no setting safe on every data set")
    return lines


def _line(point: OperatingPoint) -> str:
    where = "every data set" if point.dataset is None else point.dataset
    delta = "" if point.delta is None else f", {point.delta:+.3f}"
    delta += f" {interval(point.delta_ci)}" if point.delta_ci else ""
    return (
        f"safe operating point: {point.system} at {point.parameter}={_value(point.value)} on {where}: "
        f"{ratio(point.input_ratio)} input tokens{delta} vs the baseline"
    )


def _value(value: object) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def repeats(summary: Summary) -> list[Section]:
    """Per group and score field: the within-row standard deviation, the rows whose repeats
    disagree at the threshold, pass@k and pass^k (0/1 fields; "-" otherwise)."""
    rows = [
        (
            group.system,
            group.dataset,
            summary.direction(field).label(field),
            score(sd),
            str(group.unstable_rows.get(field, 0)),
            percent(group.pass_at_k.get(field)),
            percent(group.pass_all_k.get(field)),
        )
        for group in summary.groups
        for field, sd in group.within_row_sd.items()
    ]
    if not rows:
        return []
    headers = ("system", "data set", "field", "within-row sd", "unstable rows", "pass@k", "pass^k")
    return [Section("Repeats", headers, tuple(rows), (False, False, False, True, True, True, True), keys=3)]
