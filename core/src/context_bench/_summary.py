"""The Summarizer: a run's rows into its :class:`~context_bench.records.Summary`, every score field
per (system, data set), errors, failures, warnings."""

from __future__ import annotations

import itertools
import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ._by import Parts
from ._measured import discrepancy_warning
from ._rowtask import FALLBACKS, SCORED_BY
from .analysis import Analysis
from .columns import NAN, Columns
from .comparisons import baseline_of
from .direction import Directions, named
from .figures import JudgeTally, RunFigures, run_figures
from .metrics import Latency
from .records import (
    BreakdownPart,
    ErrorCounts,
    ErrorMessage,
    EvalRow,
    EvaluatorFailures,
    FailedField,
    GroupSummary,
    RowError,
    ScoreField,
    Summary,
    SystemSummary,
)
from .repeats import RepeatTally
from .summary_sections import SummarySection
from .sweep import Sweep
from .sweep_curve import with_curve

#: Above this share of rows, an evaluator's soft failures are a warning of their own.
FAILURE_WARNING_RATE = 0.05
#: Example ids kept per distinct error message.
MESSAGE_EXAMPLES = 3
#: Characters of an error message kept in the summary (whitespace runs count as one space).
MESSAGE_LENGTH = 300
#: Distinct error messages kept in the summary; errors with any other message are counted together.
MESSAGE_KINDS = 1000
#: Characters of the most frequent error message the warning quotes.
WARNING_MESSAGE = 120
#: The error type of a row the summary adds for a row the baseline has and a system lacks.
MISSING_ROW = "MissingRow"
#: Every summary's ``metrics["latency"]``: the group's latency figures, as the metric shows them.
LATENCY = Latency()


@attrs.define
class _Tally:
    """Running sums of one set of rows, filled one row at a time (the rows are not kept).

    ``sums``/``counts`` are over the rows that produced each field; ``missing`` (set by
    :meth:`settle`) is the weight of the errored rows that lack a field, each counting as a 0, or
    as the field's failure value where 0 would flatter it (``missing_sums``).  Errored rows are
    kept as a count per set of fields they have, which is all :meth:`settle` needs.
    """

    rows: int = 0
    errors: int = 0
    errored: Counter[frozenset[str]] = attrs.Factory(Counter)
    sums: dict[str, float] = attrs.Factory(dict)
    counts: dict[str, float] = attrs.Factory(dict)  # summed weights
    missing: dict[str, float] = attrs.Factory(dict)
    missing_sums: dict[str, float] = attrs.Factory(dict)
    #: Rows that have each field, kept from the first weighted row on (before it, ``counts``).
    having: dict[str, float] | None = None

    def add(self, row: EvalRow) -> None:
        self.rows += 1
        scores = row.scores
        if row.errors:
            self.errors += 1
            self.errored[frozenset(scores)] += 1
        sums, counts = self.sums, self.counts
        weights = row.weights
        if weights and self.having is None:
            self.having = dict(counts)  # every row so far weighed 1
        having = self.having
        for field, value in scores.items():
            weight = weights.get(field, 1.0) if weights else 1.0
            if field in sums:
                sums[field] += value * weight
                counts[field] += weight
            else:
                sums[field] = value * weight
                counts[field] = weight
            if having is not None:
                having[field] = having.get(field, 0.0) + 1.0

    def settle(self, fields: Iterable[str], failure_values: Mapping[str, float]) -> None:
        """Count each errored row as a 0 (or the field's failure value) for every one of ``fields``
        it lacks, weighing as much as an average row that has the field (1 unless an evaluator
        weighs its rows).  Settling again starts over."""
        self.missing.clear()
        self.missing_sums.clear()
        if not self.errored:
            return
        weight = self.average_weights()
        missing, missing_sums = self.missing, self.missing_sums
        for present, rows in self.errored.items():
            for field in fields:
                if field not in present:
                    w = weight.get(field, 1.0) * rows
                    missing[field] = missing.get(field, 0.0) + w
                    if field in failure_values:
                        missing_sums[field] = missing_sums.get(field, 0.0) + failure_values[field] * w

    def average_weights(self) -> dict[str, float]:
        """The average weight of a row that has each field (empty: every row weighs 1)."""
        if self.having is None:
            return {}
        return {field: self.counts[field] / n for field, n in self.having.items()}

    def absorb(self, other: _Tally) -> None:
        self.rows += other.rows
        self.errors += other.errors
        for field, total in other.sums.items():
            self.sums[field] = self.sums.get(field, 0.0) + total
            self.counts[field] = self.counts.get(field, 0) + other.counts[field]
        for field, weight in other.missing.items():
            self.missing[field] = self.missing.get(field, 0.0) + weight
        for field, total in other.missing_sums.items():
            self.missing_sums[field] = self.missing_sums.get(field, 0.0) + total

    def means(self, scored_only: bool = False) -> dict[str, float | None]:
        """Weighted means; a field whose rows all weigh 0 has no mean (None: JSON has no NaN).
        Errored rows count 0 (or their failure value) for the fields they lack unless ``scored_only``."""
        sums, counts, missing, missing_sums = self.sums, self.counts, self.missing, self.missing_sums
        if scored_only or not missing:
            return {field: total / counts[field] if counts[field] else None for field, total in sums.items()}
        found: dict[str, float | None] = {}
        for field in (*sums, *(f for f in missing if f not in sums)):
            weight = counts.get(field, 0.0) + missing.get(field, 0.0)
            total = sums.get(field, 0.0) + missing_sums.get(field, 0.0)
            found[field] = total / weight if weight else None
        return found

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.rows if self.rows else None


class _Group:
    """One (system, data set) as its rows stream by: running sums, the per-row :class:`Columns`
    the statistics read, soft failures, breakdown parts, and the rows themselves only when a
    metric of the run needs them."""

    __slots__ = (
        "breakdown",
        "columns",
        "errored",
        "failed",
        "failures",
        "judges",
        "repeats",
        "rows",
        "tally",
        "weights",
    )

    def __init__(self, keep_rows: bool) -> None:
        self.tally = _Tally()
        self.columns = Columns()
        self.judges = JudgeTally()
        #: Positions (in ``columns``) of the errored rows: they get their failure values at the end.
        self.errored = array("q")
        #: A score field's per-row weight, kept from the first weighted row on (else every row weighs 1).
        self.weights: dict[str, array[float]] | None = None
        self.failures: Counter[str] = Counter()
        #: Per score field, the rows where it is a fallback (its evaluator failed on them).
        self.failed: Counter[str] = Counter()
        self.breakdown: dict[str, dict[str, _Tally]] = {}
        self.rows: list[EvalRow] | None = [] if keep_rows else None
        self.repeats: RepeatTally | None = None

    def add(self, row: EvalRow, breakdown: Sequence[str]) -> None:
        self.tally.add(row)
        columns = self.columns
        if row.errors:
            self.errored.append(len(columns))
        if row.weights or self.weights is not None:
            self._weigh(row)
        columns.add(row, row.scores)
        if row.usage or row.failures:  # what a judge's rows have (a call per row saved elsewhere)
            self.judges.add(row)
        if row.failures:
            self.failures.update(row.failures.keys())
            self.failed.update(row.meta.get(FALLBACKS, ()))
        for key in breakdown:
            value = row.meta.get(key)
            if value is not None:
                parts = self.breakdown.setdefault(key, {})
                part = parts.get(str(value))
                if part is None:
                    part = parts[str(value)] = _Tally()
                part.add(row)
        if self.rows is not None:
            self.rows.append(row)

    def _weigh(self, row: EvalRow) -> None:
        position = len(self.columns)
        if self.weights is None:
            self.weights = {}
        weights = row.weights or {}
        for field in row.scores.keys() - self.weights.keys():
            self.weights[field] = array("d", [1.0]) * position
        for field, column in self.weights.items():
            column.append(float(weights.get(field, 1.0)))

    def fill_failed(self, fields: Sequence[str], failure_values: Mapping[str, float]) -> None:
        """Give every errored row the value its headline mean counts for each of ``fields`` it
        lacks: 0, or the field's failure value (weighing like the group's average row)."""
        if not self.errored:
            return
        scores, count = self.columns.scores, len(self.columns)
        average = self.tally.average_weights()
        for field in fields:
            column = scores.get(field)
            if column is None:
                column = scores[field] = array("d", [NAN]) * count
            failed = failure_values.get(field, 0.0)
            weights = self.weights.get(field) if self.weights is not None else None
            if weights is None and average and self.weights is not None:
                weights = self.weights[field] = array("d", [1.0]) * count
            counted = self.columns.failed.setdefault(field, array("q"))
            for position in self.errored:
                if math.isnan(column[position]):
                    column[position] = failed
                    counted.append(position)
                    if weights is not None:
                        weights[position] = average.get(field, 1.0)


def _unpriced(figures: RunFigures) -> list[str]:
    """One line naming what had tokens but no price, so no dollar figure reads 0."""
    if not figures.missing:
        return []
    names = ", ".join(figures.missing)
    return [
        f"no price for {names}: no dollars shown for {'them' if len(figures.missing) > 1 else 'it'} "
        "(--price MODEL=IN,OUT in dollars per million tokens, or --prices FILE)"
    ]


def _counted(score_fields: Mapping[str, ScoreField]) -> str:
    """What an errored row counts in the means: 0, or a lower-is-better field's worst value."""
    worst = [
        f"{info.failure_value:g} for {field}"
        for field, info in score_fields.items()
        if named(info.direction).lower
    ]
    if not worst:
        return "each counts 0 in the means for the scores it lacks"
    said = ", ".join(worst)
    where = (
        f"{said}: lower is better"
        if len(worst) == len(score_fields)
        else f"0, or {said}, where lower is better"
    )
    return f"each counts its worst value in the means for the scores it lacks ({where})"


def _message_key(error: RowError, row: EvalRow) -> tuple[str, str, str, str]:
    """What makes errors alike: stage, source, type and message, one line, trimmed.  An input
    error's source is the row's place in the file; its data set stands in, and the message loses
    that prefix, so the same fault on many rows is one entry."""
    source, message = error.source, error.message
    if error.stage == "input":
        if message.startswith(source):
            message = message[len(source) :].lstrip(" :,")
        source = row.dataset
    return error.stage, source, error.type, _shorten(" ".join(message.split()), MESSAGE_LENGTH)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _failed(group: _Group) -> dict[str, FailedField]:
    """Per score field with fallbacks, how many of the rows that have it its evaluator failed on."""
    tally = group.tally
    having = tally.having if tally.having is not None else tally.counts
    found = {}
    for field, count in group.failed.items():
        rows = round(having.get(field, 0))
        found[field] = FailedField(count, rows, count / rows if rows else 1.0)
    return found


def _finite(figures: Mapping[str, float | None]) -> dict[str, float | None]:
    """JSON has no NaN or infinity: those become None."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in figures.items()}


class _ErrorTally:
    """A run's errors counted as rows come: by stage, source and distinct message (at most
    :data:`MESSAGE_KINDS` of them, each with its first few rows)."""

    def __init__(self) -> None:
        self.rows = 0
        self.by_system: Counter[str] = Counter()
        self.by_evaluator: Counter[str] = Counter()
        self.by_stage: Counter[str] = Counter()
        self.by_input: Counter[str] = Counter()
        self.messages: dict[tuple[str, str, str, str], tuple[list[int], list[str]]] = {}
        self.others = 0  # errors whose message came after MESSAGE_KINDS distinct ones

    def add(self, row: EvalRow) -> None:
        self.rows += 1
        for error in row.errors:
            stage = error.stage
            self.by_stage[stage] += 1
            if stage == "evaluator":
                self.by_evaluator[error.source] += 1
            elif stage == "system":
                self.by_system[row.system] += 1
            elif stage == "input":
                self.by_input[row.dataset] += 1
            key = _message_key(error, row)
            found = self.messages.get(key)
            if found is None:
                if len(self.messages) >= MESSAGE_KINDS:
                    self.others += 1
                    continue
                found = self.messages[key] = ([0], [])
            count, examples = found
            count[0] += 1
            if len(examples) < MESSAGE_EXAMPLES:
                examples.append(row.example_id)

    def counts(self) -> ErrorCounts:
        messages = [
            ErrorMessage(*key, count=count[0], examples=examples)
            for key, (count, examples) in self.messages.items()
        ]
        if self.others:
            messages.append(
                ErrorMessage(
                    "", "", "", f"errors with {MESSAGE_KINDS} other messages or more", count=self.others
                )
            )
        return ErrorCounts(
            total=sum(self.by_stage.values()),
            rows=self.rows,
            by_system=dict(self.by_system),
            by_evaluator=dict(self.by_evaluator),
            by_stage=dict(self.by_stage),
            by_input=dict(self.by_input),
            messages=sorted(messages, key=lambda m: -m.count),
        )


class FailureCounts:
    """What ``--max-failure-rate`` reads, counted row by row: per system the rows it was asked and
    could not answer (a system or an input error), per evaluator the rows it was given and failed
    on (a soft failure or an error)."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.unanswered: Counter[str] = Counter()
        self.unreadable: Counter[str] = Counter()
        self.missing: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.raised: Counter[str] = Counter()
        self._scored: Counter[Any] = Counter()  # evaluator names (or a row's tuple of them) -> rows

    def add(self, row: EvalRow) -> None:
        self.asked[row.system] += 1
        if not row.errors and not row.failures:
            self._scored[tuple(row.meta.get(SCORED_BY, ()))] += 1  # alike rows: one tuple
            return
        if any(error.stage in ("system", "input") for error in row.errors):
            self.unanswered[row.system] += 1
            if any(error.stage == "input" for error in row.errors):
                self.unreadable[row.system] += 1
            elif row.errors[0].type == MISSING_ROW:
                self.missing[row.system] += 1
        raised = {error.source for error in row.errors if error.stage == "evaluator"}
        self.raised.update(raised)
        self.failed.update(raised.union(row.failures))
        self._scored.update(raised.union(row.meta.get(SCORED_BY, ()), row.failures))

    @property
    def scored(self) -> Counter[str]:
        """Rows each evaluator was given."""
        found: Counter[str] = Counter()
        for key, count in self._scored.items():
            for name in key if type(key) is tuple else (key,):
                found[name] += count
        return found

    def lines(self, limit: float) -> list[str]:
        """One line per system and evaluator whose share of failed rows is above ``limit``."""
        lines = []
        for system, count in self.unanswered.items():
            asked = self.asked[system]
            if count / asked > limit:
                inputs, missing = self.unreadable.get(system, 0), self.missing.get(system, 0)
                lines.append(
                    f"too many failures: system {system} could not answer {count} of {asked} rows "
                    f"({count / asked:.1%}, more than --max-failure-rate {limit:g})"
                    + (f"; {inputs} of them unreadable input rows" if inputs else "")
                    + (f"; {missing} of them rows the baseline has and it lacks" if missing else "")
                )
        scored = self.scored if self.failed else {}
        for name, count in sorted(self.failed.items()):
            if count / scored[name] > limit:
                lines.append(
                    f"too many failures: evaluator {name} failed on {count} of the {scored[name]} rows it "
                    f"scored ({count / scored[name]:.1%}, more than --max-failure-rate {limit:g})"
                )
        return lines


class Summarizer:
    """Turns rows into a :class:`Summary`, one row at a time: :meth:`add` each row, then
    :meth:`finish`; calling it on rows does both.  Kept on the result so ``filter`` can
    re-summarize.

    It keeps no row (unless a metric of the run computes from rows): per (system, data set) group,
    running sums and the per-row :class:`~context_bench.columns.Columns` the statistics read
    (about a hundred bytes a row), and counts of errors and failures with a few example messages.

    A row with an error (the system could not answer, the input was unreadable, an evaluator
    raised) counts its worst value in the headline means for every score field of its group it
    lacks: the fields any row of the same (system, data set) produced, or, when none did, any row
    of that data set.  That is 0, or where lower is better (``directions``: the run's
    :class:`~context_bench.direction.Directions`, which every figure reads) the top of the field's
    range, so a failure never makes a mean look better.  ``exclude_errors`` makes the headline
    the means over scored rows alone; those are always in ``scores_scored_only`` too.
    """

    def __init__(
        self,
        metrics: Sequence[Any] = (),
        breakdown: Sequence[str] = (),
        failure_rate: float = FAILURE_WARNING_RATE,
        notices: Sequence[str] = (),
        exclude_errors: bool = False,
        directions: Directions | None = None,
        analysis: Analysis | None = None,
        sweep: Sweep | None = None,
    ) -> None:
        #: Which way each score field points; the runner sets it from the run's evaluators.
        self.directions = directions or Directions()
        #: The primary score, threshold, baseline and prices the figures read.
        self.analysis = analysis or Analysis()
        #: The run's sweep: the summary draws its curve from the comparisons.
        self.sweep = sweep or Sweep()
        #: The run's own metrics, computed from its rows (latency is a figure of every summary).
        self.metrics = list(metrics)
        self.breakdown = tuple(breakdown)
        self.failure_rate = failure_rate
        self.notices = list(notices)
        self.exclude_errors = exclude_errors
        #: The model of each evaluator that calls one (a judge), by name: its tokens' price.
        self.judge_models: dict[str, str] = {}
        #: :attr:`Summary.by_fields`; the runner sets it from the run's wiring.
        self.by_fields: dict[str, list[str]] = {}
        #: :attr:`Summary.metered`; the runner sets it from the run's meter.
        self.metered: dict[str, Any] | None = None
        #: :attr:`Summary.sections`; the runner sets them from the run's section builders.
        self.sections: dict[str, SummarySection] = {}
        self.reset()

    def reset(self) -> None:
        """Forget the rows added so far."""
        #: The groups of the rows added, in the order they first appeared.
        self.groups: dict[tuple[str, str], _Group] = {}
        self.failure_counts = FailureCounts()
        self._rows = 0
        self._missing: int | None = None  # rows added for the baseline's rows a system lacks
        self._absent: list[str] = []  # the warning naming data sets a system did not run
        self._usage: dict[str, dict[str, float]] = {}
        self._errors = _ErrorTally()
        self._kinds: dict[str, Counter[str]] = {}
        self._fields_of: dict[tuple[str, str], tuple[str, ...]] | None = None
        self._keep_rows = bool(self.metrics)
        self._by = Parts(self.analysis.by, self._part)

    def again(self, *, analysis: Analysis | None = None, exclude_errors: bool | None = None) -> Summarizer:
        """A summarizer of other rows (``EvalResult.filter``, ``merge``, ``analyzed``): nothing
        counted yet, this one's settings but ``analysis`` and ``exclude_errors`` where given."""
        clone = Summarizer.__new__(Summarizer)
        clone.__dict__.update(self.__dict__)
        clone.notices = list(self.notices)
        clone.analysis = self.analysis if analysis is None else analysis
        clone.exclude_errors = self.exclude_errors if exclude_errors is None else exclude_errors
        clone.reset()
        return clone

    def __call__(self, rows: Iterable[EvalRow]) -> Summary:
        self.reset()
        for row in rows:
            self.add(row)
        return self.finish()

    def add(self, row: EvalRow) -> None:
        """Count one finished row."""
        self._rows += 1
        self._count(row)
        if self._by.by:  # a run without --by makes no call here
            self._by.add(row)

    def _part(self) -> Summarizer:
        """A summarizer of one ``--by`` part's rows: these settings, not split again."""
        analysis = attrs.evolve(self.analysis, by=())
        return Summarizer(
            self.metrics,
            self.breakdown,
            self.failure_rate,
            exclude_errors=self.exclude_errors,
            analysis=analysis,
        )

    def _count(self, row: EvalRow) -> None:
        key = (row.system, row.dataset)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group(self._keep_rows)
        group.add(row, self.breakdown)
        if row.repeats is not None:
            group.repeats = group.repeats or RepeatTally()
            group.repeats.add(row, self.analysis.threshold, self.directions)
        self.failure_counts.add(row)
        if row.errors:
            self._errors.add(row)
        if row.failures:
            for name, failure in row.failures.items():
                self._kinds.setdefault(name, Counter())[failure.split(":", 1)[0].strip()] += 1
        if row.usage:
            for name, usage in row.usage.items():
                totals = self._usage.setdefault(name, {})
                for kind, value in usage.items():
                    totals[kind] = totals.get(kind, 0.0) + value

    def finish(self) -> Summary:
        """The summary of the rows added; each group's columns are complete from here on."""
        if self._missing is None:  # once: a summary finished again counts the same rows
            self._missing = self._add_missing()
        groups = self.groups
        fields = self._fields_of = self._fields({key: group.tally for key, group in groups.items()})
        failure_values = self.directions.lower
        for key, group in groups.items():
            group.tally.settle(fields[key], failure_values)
            if not self.exclude_errors:
                group.fill_failed(fields[key], failure_values)
        systems: dict[str, _Tally] = {}
        datasets: dict[str, list[str]] = {}
        for (system, dataset), group in groups.items():
            systems.setdefault(system, _Tally()).absorb(group.tally)
            datasets.setdefault(system, []).append(dataset)
        failures = self._failures()
        errors = self._errors.counts()
        overflow: list[str] = []
        figures = self._figures(groups)
        score_fields = self._score_fields()
        summary = Summary(
            groups=[
                self._group(system, dataset, group, fields[(system, dataset)], overflow, figures)
                for (system, dataset), group in groups.items()
            ],
            systems={
                name: SystemSummary(
                    rows=t.rows,
                    errors=t.errors,
                    scores=self._checked(t.means(self.exclude_errors), f"{name} (all data sets)", overflow),
                    error_rate=t.error_rate,
                    scores_scored_only=_finite(t.means(scored_only=True)),
                    datasets=datasets[name],
                )
                for name, t in systems.items()
            },
            errors=errors,
            failures=failures,
            usage=dict(self._usage),
            warnings=self.notices
            + self._warnings(failures, errors, self._rows + self._missing, score_fields)
            + overflow
            + self._absent
            + figures.notes
            + [discrepancy_warning(found) for found in figures.discrepancies]
            + _unpriced(figures),
            exclude_errors=self.exclude_errors,
            units={m.name: m.unit for m in (LATENCY, *self.metrics) if getattr(m, "unit", None)},
            comparisons=figures.comparisons,
            primary={"field": self.analysis.score_field, "threshold": self.analysis.threshold},
            baseline=figures.baseline,
            judges=figures.judges,
            prices={"missing": figures.missing},
            alpha=self.analysis.alpha,
            score_fields=score_fields,
            by_fields={d: list(f) for _, d in groups if (f := self.by_fields.get(d))},
            metered=self.metered,
            discrepancies=figures.discrepancies,
            sections=dict(self.sections),
        )
        return with_curve(self._by.attach(summary, self), self.sweep, self.analysis.field_of)

    def _score_fields(self) -> dict[str, ScoreField]:
        """Every score field of the run, with its direction and what a failed row counts in it."""
        names = dict.fromkeys(f for key in self.groups for f in (self._fields_of or {}).get(key, ()))
        return {
            field: ScoreField(self.directions.of(field).name, self.directions.failure_value(field))
            for field in names
        }

    def _add_missing(self) -> int:
        """Give each system an errored row for every row the baseline has on a data set both ran
        and the system lacks (unless the analysis allows missing rows), so they count as its
        failures in every figure and gate, as a row it could not answer does; return how many
        were added.  A data set a system did not run at all is named in a warning instead."""
        baseline = baseline_of(list(dict.fromkeys(system for system, _ in self.groups)), self.analysis)
        if baseline is None:
            return 0
        bases = [(dataset, group) for (system, dataset), group in self.groups.items() if system == baseline]
        others = [
            system for system in dict.fromkeys(system for system, _ in self.groups) if system != baseline
        ]
        added, absent = 0, []
        for system, (dataset, base) in itertools.product(others, bases):
            own = self.groups.get((system, dataset))
            if own is None:
                absent.append(f"{system} on {dataset}")
            elif not self.analysis.allow_missing:
                have = set(own.columns.ids)
                lacking = [example for example in dict.fromkeys(base.columns.ids) if example not in have]
                message = (
                    f"the baseline {baseline} has this row and {system} has none "
                    "(--allow-missing: compare the shared rows alone)"
                )
                for example in lacking:
                    self._count(
                        EvalRow(
                            system,
                            dataset,
                            example,
                            errors=[RowError("system", system, MISSING_ROW, message)],
                        )
                    )
                own.columns.missing = len(lacking)
                added += len(lacking)
        if absent:
            self._absent = [
                f"no rows of a data set the baseline {baseline} ran, so no comparison: {'; '.join(absent)}"
            ]
        return added

    def _figures(self, groups: dict[tuple[str, str], _Group]) -> RunFigures:
        """Costs, intervals and comparisons, from each group's columns of headline values."""
        columns = {key: group.columns for key, group in groups.items()}
        judges = {key: group.judges for key, group in groups.items()}
        analysis = self.analysis
        if self.judge_models:
            analysis = attrs.evolve(analysis, models={**self.judge_models, **analysis.models})
        return run_figures(columns, judges, analysis, self.directions)

    @property
    def rows(self) -> int:
        """How many rows were added."""
        return self._rows

    @staticmethod
    def _fields(groups: dict[tuple[str, str], _Tally]) -> dict[tuple[str, str], tuple[str, ...]]:
        """The score fields each group's errored rows count their worst value for: those of its
        scored rows, or of the data set's rows under any system when the group has none (every row
        failed)."""
        own = {key: tuple(tally.sums) for key, tally in groups.items()}
        by_dataset: dict[str, dict[str, None]] = {}
        for (_, dataset), names in own.items():
            by_dataset.setdefault(dataset, {}).update(dict.fromkeys(names))
        return {key: names or tuple(by_dataset[key[1]]) for key, names in own.items()}

    def _group(
        self,
        system: str,
        dataset: str,
        group: _Group,
        fields: tuple[str, ...],
        overflow: list[str],
        figures: RunFigures,
    ) -> GroupSummary:
        tally = group.tally
        found = figures.groups[(system, dataset)]
        return GroupSummary(
            system=system,
            dataset=dataset,
            rows=tally.rows,
            errors=tally.errors,
            scores=self._checked(tally.means(self.exclude_errors), f"{system} on {dataset}", overflow),
            metrics={
                LATENCY.name: LATENCY.shown(found.latency),
                **{m.name: _finite(m.compute(group.rows or [])) for m in self.metrics},
            },
            failures=dict(group.failures),
            failed=_failed(group),
            breakdown={key: self._breakdown(group, key, fields) for key in self.breakdown},
            error_rate=tally.error_rate,
            scores_scored_only=_finite(tally.means(scored_only=True)),
            ci=found.ci,
            stderr=found.stderr,
            tokens=found.tokens,
            cost=found.cost,
            latency=found.latency,
            passing=found.passing,
            judge=found.judge,
            frontier=figures.frontier[(system, dataset)],
            tokens_source=figures.sources.get((system, dataset)),
            cache_hit_share=figures.cache_hit_shares.get((system, dataset)),
            evidence_retention=figures.evidence_retentions.get((system, dataset)),
            cost_per_turn=figures.turn_costs.get((system, dataset)),
            **(group.repeats.figures() if group.repeats is not None else {}),
        )

    @staticmethod
    def _checked(means: dict[str, float | None], where: str, overflow: list[str]) -> dict[str, float | None]:
        """The means, a non-finite one (scores too large to add up) made None with a warning."""
        for field, value in means.items():
            if value is not None and not math.isfinite(value):
                overflow.append(
                    f"the mean of {field} for {where} is not a finite number (its scores overflow); "
                    "reported as null"
                )
                means[field] = None
        return means

    def _breakdown(self, group: _Group, key: str, fields: tuple[str, ...]) -> dict[str, BreakdownPart]:
        parts = group.breakdown.get(key, {})
        for part in parts.values():
            part.settle(fields, self.directions.lower)
        return {
            value: BreakdownPart(rows=t.rows, scores=_finite(t.means(self.exclude_errors)))
            for value, t in sorted(parts.items())
        }

    def _failures(self) -> dict[str, EvaluatorFailures]:
        """Soft failures per evaluator, as a share of the rows it scored (not of every row of the run)."""
        if not self._kinds:
            return {}
        scored = self._scored_counts()
        return {
            name: EvaluatorFailures(
                count=sum(c.values()), rows=scored[name], rate=sum(c.values()) / scored[name], kinds=dict(c)
            )
            for name, c in self._kinds.items()
        }

    def _scored_counts(self) -> Counter[str]:
        """Rows each evaluator scored or softly failed on (an evaluator that raised is not counted)."""
        found = self.failure_counts.scored
        found.subtract(self.failure_counts.raised)
        return found

    def _warnings(
        self,
        failures: dict[str, EvaluatorFailures],
        errors: ErrorCounts,
        rows: int,
        score_fields: dict[str, ScoreField],
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
            counted = (
                "the means leave them out (--exclude-errors)"
                if self.exclude_errors
                else f"{_counted(score_fields)} (--exclude-errors: the means over scored rows alone)"
            )
            common = errors.messages[0]
            found.append(
                f"{errors.total} error{'s' * (errors.total != 1)} in {errors.rows} of {rows} rows "
                f"({errors.rows / rows:.1%}); {counted}; most frequent ({common.count}x): "
                f"{common.stage} {common.source}: {common.type}: {_shorten(common.message, WARNING_MESSAGE)}"
            )
        return found
