"""The Summarizer: a run's rows into its :class:`~context_bench.records.Summary`, every score field
per (system, data set), errors, failures, warnings."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import attrs

from .metrics import Latency
from .records import (
    BreakdownPart,
    ErrorCounts,
    EvalRow,
    EvaluatorFailures,
    GroupSummary,
    Summary,
    SystemSummary,
)
from .rowtask import SCORED_BY

#: Above this share of rows, an evaluator's soft failures are a warning of their own.
FAILURE_WARNING_RATE = 0.05


@attrs.define
class _Tally:
    """Running sums of one set of rows, filled in one pass."""

    rows: list[EvalRow] = attrs.Factory(list)
    errors: int = 0
    sums: dict[str, float] = attrs.Factory(dict)
    counts: dict[str, float] = attrs.Factory(dict)  # summed weights

    def add(self, row: EvalRow) -> None:
        self.rows.append(row)
        if row.errors:
            self.errors += 1
        sums, counts = self.sums, self.counts
        weights = row.weights
        for field, value in row.scores.items():
            weight = weights.get(field, 1.0) if weights else 1.0
            if field in sums:
                sums[field] += value * weight
                counts[field] += weight
            else:
                sums[field] = value * weight
                counts[field] = weight

    def absorb(self, other: _Tally) -> None:
        self.rows.extend(other.rows)
        self.errors += other.errors
        for field, total in other.sums.items():
            self.sums[field] = self.sums.get(field, 0.0) + total
            self.counts[field] = self.counts.get(field, 0) + other.counts[field]

    def means(self) -> dict[str, float | None]:
        """Weighted means; a field whose rows all weigh 0 has no mean (None: JSON has no NaN)."""
        return {
            field: total / self.counts[field] if self.counts[field] else None
            for field, total in self.sums.items()
        }


def _finite(figures: dict[str, float]) -> dict[str, float | None]:
    """JSON has no NaN or infinity: those become None."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in figures.items()}


class Summarizer:
    """Turns rows into a :class:`Summary`; kept on the result so ``filter`` can re-summarize."""

    def __init__(
        self,
        metrics: Sequence[Any] = (),
        breakdown: Sequence[str] = (),
        failure_rate: float = FAILURE_WARNING_RATE,
        notices: Sequence[str] = (),
    ) -> None:
        self.metrics = [Latency(), *metrics]
        self.breakdown = tuple(breakdown)
        self.failure_rate = failure_rate
        self.notices = list(notices)

    def __call__(self, rows: Sequence[EvalRow]) -> Summary:
        groups: dict[tuple[str, str], _Tally] = {}
        for row in rows:
            group = groups.get((row.system, row.dataset))
            if group is None:
                group = groups[(row.system, row.dataset)] = _Tally()
            group.add(row)
        systems: dict[str, _Tally] = {}
        for (system, _), tally in groups.items():
            systems.setdefault(system, _Tally()).absorb(tally)
        failures = self._failures(rows)
        errors = self._error_counts(rows)
        return Summary(
            groups=[self._group(system, dataset, tally) for (system, dataset), tally in groups.items()],
            systems={
                name: SystemSummary(rows=len(t.rows), errors=t.errors, scores=t.means())
                for name, t in systems.items()
            },
            errors=errors,
            failures=failures,
            usage=self._usage(rows),
            warnings=self.notices + self._warnings(failures, errors, rows),
        )

    def _group(self, system: str, dataset: str, tally: _Tally) -> GroupSummary:
        return GroupSummary(
            system=system,
            dataset=dataset,
            rows=len(tally.rows),
            errors=tally.errors,
            scores=tally.means(),
            metrics={m.name: _finite(m.compute(tally.rows)) for m in self.metrics},
            failures=dict(Counter(name for r in tally.rows for name in r.failures)),
            breakdown={key: self._breakdown(tally.rows, key) for key in self.breakdown},
        )

    @staticmethod
    def _breakdown(rows: list[EvalRow], key: str) -> dict[str, BreakdownPart]:
        parts: dict[str, _Tally] = {}
        for row in rows:
            value = row.meta.get(key)
            if value is not None:
                parts.setdefault(str(value), _Tally()).add(row)
        return {
            value: BreakdownPart(rows=len(t.rows), scores=t.means()) for value, t in sorted(parts.items())
        }

    @staticmethod
    def _error_counts(rows: Sequence[EvalRow]) -> ErrorCounts:
        by_system: Counter[str] = Counter()
        by_evaluator: Counter[str] = Counter()
        by_stage: Counter[str] = Counter()
        for row in rows:
            for error in row.errors:
                by_stage[error.stage] += 1
                if error.stage == "evaluator":
                    by_evaluator[error.source] += 1
                else:
                    by_system[row.system] += 1
        return ErrorCounts(
            total=sum(by_stage.values()),
            rows=sum(1 for r in rows if r.errors),
            by_system=dict(by_system),
            by_evaluator=dict(by_evaluator),
            by_stage=dict(by_stage),
        )

    @staticmethod
    def _failures(rows: Sequence[EvalRow]) -> dict[str, EvaluatorFailures]:
        """Soft failures per evaluator, as a share of the rows it scored (not of every row of the run)."""
        kinds: dict[str, Counter[str]] = defaultdict(Counter)
        for row in rows:
            for name, failure in row.failures.items():
                kinds[name][failure.split(":", 1)[0].strip()] += 1
        if not kinds:
            return {}
        scored: Counter[str] = Counter()
        for row in rows:
            scored.update(set(row.meta.get(SCORED_BY, ())).union(row.failures))
        return {
            name: EvaluatorFailures(
                count=sum(c.values()), rows=scored[name], rate=sum(c.values()) / scored[name], kinds=dict(c)
            )
            for name, c in kinds.items()
        }

    @staticmethod
    def _usage(rows: Sequence[EvalRow]) -> dict[str, dict[str, float]]:
        totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for row in rows:
            for name, usage in row.usage.items():
                for key, value in usage.items():
                    totals[name][key] += value
        return {name: dict(values) for name, values in totals.items()}

    def _warnings(
        self, failures: dict[str, EvaluatorFailures], errors: ErrorCounts, rows: Sequence[EvalRow]
    ) -> list[str]:
        found = []
        for name, info in failures.items():
            if info.rate > self.failure_rate:
                kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(info.kinds.items()))
                found.append(
                    f"{name} failed on {info.count} of {info.rows} rows ({info.rate:.1%}: {kinds}); "
                    "their scores are fallbacks, not verdicts"
                )
        if errors.total:
            found.append(
                f"{errors.total} errors in {errors.rows} of {len(rows)} rows (see each row's errors)"
            )
        return found
