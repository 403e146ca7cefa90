"""assert_scores: a score threshold as an assertion, for tests and scripts (no pytest needed).

A bound is a floor, or a ceiling for a field where lower is better (the summary's direction of
the field, :mod:`context_bench.direction`).  A failed threshold is only useful with the evidence
beside it, so the message shows each failing mean with the report's 95% interval of it (Wilson's
for 0/1 scores, the seeded bootstrap or t for others:
:func:`~context_bench.metrics.intervals.estimate`, over the values the mean is over, so one data
set's interval is the report's) and the worst rows, each with its id, response, reference and
scores (or its error).
"""

from __future__ import annotations

import math
from typing import Any

from .metrics.interval import Interval
from .metrics.intervals import estimate
from .records import EvalResult, EvalRow

__all__ = ["ScoreAssertionError", "assert_scores"]

#: The fields a row's reference is read from, in order (what the built-in evaluators score against).
REFERENCE_FIELDS = ("answer", "answers", "reference", "label", "expected", "summary")
_SHOWN = 120  # characters of a response or reference in the message


class ScoreAssertionError(AssertionError):
    """A mean on the wrong side of its bound (below a floor, above a ceiling); ``failures`` holds
    ``(system, dataset, field, mean, bound)``."""

    def __init__(self, message: str, failures: list[tuple[str, str | None, str, float | None, float]]):
        super().__init__(message)
        self.failures = failures


def _row_value(row: EvalRow, field: str, failed: float) -> float | None:
    """The row's value as the summary counts it: an errored row lacking the field counts
    ``failed``, the field's failure value (0, or its worst where lower is better)."""
    if field in row.scores:
        return float(row.scores[field])
    return failed if row.errors else None


def _values(result: EvalResult, system: str, dataset: str | None, field: str, failed: float) -> list[float]:
    """The values the summary's mean of ``field`` is over (its groups' columns: an errored row's
    failure value included), else each row's :func:`_row_value`."""
    groups = getattr(result.summarize, "groups", None)
    if not groups:
        return [v for r in result.rows if r.system == system and (dataset is None or r.dataset == dataset)
                if (v := _row_value(r, field, failed)) is not None]  # fmt: skip
    return [
        value
        for (name, where), group in groups.items()
        if name == system and (dataset is None or where == dataset)
        for value in group.columns.scores.get(field, ())
        if value == value
    ]


def _shown(mean: float, values: list[float]) -> str:
    """``0.612 (95% CI 0.550 to 0.674, n=50)``: the mean with the report's interval of its values."""
    found = estimate(values)
    if found is None:
        return f"{mean:.3f}"
    low = -math.inf if found.low is None else found.low
    high = math.inf if found.high is None else found.high
    return Interval(mean, low, high, found.n).describe()


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _reference(row: EvalRow) -> Any:
    example = row.example or {}
    for field in REFERENCE_FIELDS:
        if field in example:
            return example[field]
    return None


def _describe(row: EvalRow) -> str:
    said = f"error: {_short(str(row.errors[0]))}" if row.errors else f"response={_short(row.response)}"
    scores = ", ".join(f"{name}={value:.3g}" for name, value in sorted(row.scores.items())) or "none"
    return (
        f"    {row.example_id} ({row.dataset}): {said}  reference={_short(_reference(row))}  scores: {scores}"
    )


def assert_scores(
    result: EvalResult,
    *,
    system: str | None = None,
    dataset: str | None = None,
    worst: int = 3,
    **bounds: float,
) -> None:
    """Assert that every bound holds: ``assert_scores(result, f1=0.7, exact_match=0.5)``.

    Each bound is a minimum of the field's mean, or its maximum where lower is better
    (``profanity=0.1``), for every system of ``result`` (or ``system`` alone), over all its data
    sets (or ``dataset`` alone).  The means are the summary's: a row the system could not answer
    counts its worst value (0, or the top of the range where lower is better), so failures never
    make a mean look better.  A field no row scored fails.  On failure, a
    :class:`ScoreAssertionError` names each failing mean with its interval and shows the ``worst``
    rows of each past its bound (worst first).
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    if not bounds:
        raise TypeError("assert_scores needs at least one bound, such as f1=0.7")
    summary = result.summary
    names = [system] if system is not None else list(summary.systems)
    if system is not None and system not in summary.systems:
        raise AssertionError(f"no system {system!r} in the result (systems: {', '.join(summary.systems)})")
    failures: list[tuple[str, str | None, str, float | None, float]] = []
    lines: list[str] = []
    for name in names:
        if dataset is None:
            means = summary.systems[name].scores
        else:
            group = next((g for g in summary.groups if g.system == name and g.dataset == dataset), None)
            if group is None:
                raise AssertionError(f"system {name!r} did not run data set {dataset!r}")
            means = group.scores
        rows = [r for r in result.rows if r.system == name and (dataset is None or r.dataset == dataset)]
        where = name if dataset is None else f"{name}/{dataset}"
        for field, bound in bounds.items():
            mean, direction = means.get(field), summary.direction(field)
            if mean is not None and direction.passes(mean, bound):
                continue
            failures.append((name, dataset, field, mean, bound))
            if mean is None:
                lines.append(
                    f"{where}: {field} was not scored on any row (fields: {', '.join(means) or 'none'})"
                )
                continue
            failed = summary.score_fields[field].failure_value
            scored = [(v, r) for r in rows if (v := _row_value(r, field, failed)) is not None]
            shown = _shown(mean, _values(result, name, dataset, field, failed))
            past = "above" if direction.lower else "below"
            lines.append(
                f"{where}: {field} mean {shown} is {past} {bound:g}"
                + (" (lower is better)" if direction.lower else "")
            )
            beyond = [(v, r) for v, r in scored if not direction.passes(v, bound)]
            if worst > 0 and beyond:
                lines.append(f"  worst rows by {field}:")
                worst_first = sorted(beyond, key=lambda pair: (direction.gain(pair[0]), pair[1].index))
                lines.extend(_describe(row) for _, row in worst_first[:worst])
    if failures:
        raise ScoreAssertionError("scores past their bounds:\n" + "\n".join(lines), failures)
