"""Metrics: figures computed over the rows of one (system, data set) group."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from ..defaults import DEFAULT_THRESHOLD
from ..direction import HIGHER, LOWER
from ..records import LatencyFigures

if TYPE_CHECKING:
    from ..records import EvalRow


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), ``q`` in 0..100."""
    if not len(values):
        return math.nan
    return interpolated(sorted(values), q)


def interpolated(ordered: Sequence[float], q: float) -> float:
    """:func:`percentile` of values already in ascending order (at least one)."""
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_figures(seconds: Iterable[float]) -> LatencyFigures:
    """The seconds per row every report and the :class:`Latency` metric show: mean, p50, p95 and
    p99 of the finite values (a column's NaN is a row that recorded none), all None without one.
    The one definition, so the metrics API and the report agree to the last digit."""
    ordered = sorted(v for v in seconds if math.isfinite(v))
    if not ordered:
        return LatencyFigures()
    return LatencyFigures(sum(ordered) / len(ordered), *(interpolated(ordered, q) for q in (50, 95, 99)))


def _passed(rows: Sequence[EvalRow], field: str, threshold: float, lower_is_better: bool) -> int:
    """Rows whose ``field`` passes ``threshold`` in its direction; a row without it fails."""
    passes = (LOWER if lower_is_better else HIGHER).passes
    return sum(1 for r in rows if field in r.scores and passes(r.scores[field], threshold))


@attrs.frozen
class MeanScore:
    """Mean of one score field over the rows that produced it and the rows with an error, which
    count 0, or 1 where ``lower_is_better`` (like the summary's means: a failure never makes a
    score look better)."""

    score_field: str
    lower_is_better: bool = False

    @property
    def name(self) -> str:
        return f"mean_{self.score_field}"

    def compute(self, rows: Sequence[EvalRow]) -> dict[str, float]:
        field = self.score_field
        values = [r.scores[field] for r in rows if field in r.scores]
        if not values:  # no row of these has the field: an errored one would not have had it either
            return {"mean": math.nan, "n": 0.0}
        failed = sum(1 for r in rows if r.errors and field not in r.scores)
        total = sum(values) + failed * float(self.lower_is_better)
        return {"mean": total / (len(values) + failed), "n": float(len(values) + failed)}


@attrs.frozen
class PassRate:
    """Share of rows whose field reaches ``threshold`` (at most it where ``lower_is_better``); rows
    without the field count as failures.  The threshold defaults to the run's (``--threshold``,
    ``Analysis.threshold``), so this metric and the report's pass rate agree unless told apart."""

    score_field: str
    threshold: float = DEFAULT_THRESHOLD
    lower_is_better: bool = False

    @property
    def name(self) -> str:
        return f"pass_rate_{self.score_field}"

    def compute(self, rows: Sequence[EvalRow]) -> dict[str, float]:
        if not rows:
            return {"rate": math.nan, "passed": 0.0}
        passed = _passed(rows, self.score_field, self.threshold, self.lower_is_better)
        return {"rate": passed / len(rows), "passed": float(passed)}


@attrs.frozen
class Latency:
    """The system's time per row in seconds: mean, p50, p95."""

    name: str = "latency"
    #: The unit of the figures, which reports show beside them.
    unit: str = "s"

    def compute(self, rows: Sequence[EvalRow]) -> dict[str, float]:
        return self.shown(latency_figures(r.latency for r in rows if r.latency is not None))

    @staticmethod
    def shown(figures: LatencyFigures) -> dict[str, float]:
        """The figures as a summary's ``metrics`` entry holds them: mean, p50, p95 ({} without)."""
        shown = {"mean": figures.mean, "p50": figures.p50, "p95": figures.p95}
        return {name: value for name, value in shown.items() if value is not None}


@attrs.frozen
class CostOfPass:
    """Cost per passing row: total cost / rows passing ``score_field >= threshold`` (``<=`` where
    ``lower_is_better``).

    A row's cost is its ``cost`` when the system reported one, else its tokens priced per million
    (``input_price``, ``output_price``).  No passing row gives ``inf``.  The threshold defaults to
    the run's, as :class:`PassRate`'s does.
    """

    score_field: str = "f1"
    threshold: float = DEFAULT_THRESHOLD
    input_price: float = 0.0
    output_price: float = 0.0
    name: str = "cost_of_pass"
    lower_is_better: bool = False

    def _cost(self, row: EvalRow) -> float:
        if row.cost is not None:
            return row.cost
        return (
            (row.input_tokens or 0.0) * self.input_price + (row.output_tokens or 0.0) * self.output_price
        ) / 1e6

    def compute(self, rows: Sequence[EvalRow]) -> dict[str, float]:
        total = sum(self._cost(r) for r in rows)
        passed = _passed(rows, self.score_field, self.threshold, self.lower_is_better)
        return {"cost_of_pass": total / passed if passed else math.inf, "total_cost": total}
