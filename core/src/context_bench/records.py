"""The records a run produces: one EvalRow per (system, example), gathered in an EvalResult with
the Summary of its rows."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from .defaults import DEFAULT_THRESHOLD
from .direction import Direction, named
from .summary_sections import SummarySection

if TYPE_CHECKING:
    from .analysis import Analysis


@attrs.define
class RowError:
    """Why part of a row is missing: the stage (``system``, ``evaluator``, ``input``), who, and what."""

    stage: str
    source: str
    type: str
    message: str

    @classmethod
    def from_exception(cls, stage: str, source: str, exc: BaseException) -> RowError:
        return cls(stage=stage, source=source, type=type(exc).__name__, message=str(exc))

    def __str__(self) -> str:
        return f"{self.stage} {self.source}: {self.type}: {self.message}"


@attrs.define
class EvalRow:
    """One example as processed by one system and scored by every evaluator that applied.

    ``latency`` is the system's time in seconds.  ``failures`` maps an evaluator to a soft failure
    (its score is a fallback, e.g. a judge call that failed); ``errors`` lists what raised.
    """

    system: str
    dataset: str
    example_id: str
    scores: dict[str, float] = attrs.Factory(dict)
    response: str | None = None
    latency: float | None = None
    input_tokens: float | None = None
    output_tokens: float | None = None
    cost: float | None = None
    errors: list[RowError] = attrs.Factory(list)
    failures: dict[str, str] = attrs.Factory(dict)
    usage: dict[str, dict[str, float]] = attrs.Factory(dict)
    meta: dict[str, Any] = attrs.Factory(dict)
    #: A score field's weight in the summary's mean, where an evaluator set one (default 1).
    weights: dict[str, float] | None = None
    index: int = 0
    #: What the run's meter measured of the row's calls (``calls``, ``input_tokens``, ...:
    #: :func:`context_bench.metering.metered_figures`); None when the run is not metered.
    metered: dict[str, Any] | None = None
    #: The tokens of the prompt the harness gave the system (its chat as the run's tokenizer frames
    #: it); None without ``--tokenizer``.
    counted_input_tokens: float | None = None
    #: The share of the row's ``evidence`` passages found in the prompt the model received (the
    #: meter's captured input, :mod:`context_bench.evidence`); None where the row marks none or
    #: no prompt was seen.
    evidence_kept: float | None = None
    #: Why the row was lost against the baseline (``"evidence dropped"`` or ``"evidence kept,
    #: answer wrong"``); None on rows not lost or without evidence.
    loss_cause: str | None = None
    #: Each repeat's scores with ``--repeats`` (the row's ``scores`` their mean), else None.
    repeats: list[dict[str, float]] | None = None
    #: What this run computed afresh (system output, scores by evaluator identity), for the cache;
    #: never serialized.
    fresh: dict[str, Any] | None = attrs.field(default=None, repr=False, eq=False)
    #: The input row as the system got it (None for an unreadable one): the JSONL report writes its
    #: fields beside the results, so ``score`` can score a run's rows again.  Not in ``to_dict``.
    example: Mapping[str, Any] | None = attrs.field(default=None, repr=False, eq=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "dataset": self.dataset,
            "example_id": self.example_id,
            "scores": self.scores,
            "response": self.response,
            "latency": self.latency,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "errors": [attrs.asdict(e) for e in self.errors] if self.errors else [],
            "failures": self.failures,
            "usage": self.usage,
            "meta": self.meta,
            "weights": self.weights,
            "index": self.index,
            **({"metered": self.metered} if self.metered is not None else {}),
            **({"counted_input_tokens": c} if (c := self.counted_input_tokens) is not None else {}),
            **({"repeats": self.repeats} if self.repeats is not None else {}),
            **(
                {"evidence_kept": self.evidence_kept, "loss_cause": self.loss_cause}
                if self.evidence_kept is not None
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalRow:
        """The row ``to_dict`` gave, or a line of the JSONL report (its input fields left out)."""
        data = {key: value for key, value in data.items() if key in _ROW_FIELDS}
        data["errors"] = [RowError(**e) for e in data.get("errors", ())]
        return cls(**data)


#: What ``EvalRow.from_dict`` reads: the fields ``to_dict`` writes.
_ROW_FIELDS = frozenset(field.name for field in attrs.fields(EvalRow)) - {"fresh", "example"}

#: A score field's mean over a set of rows; None when all of them weigh 0 (JSON has no NaN).
Means = dict[str, float | None]


@attrs.frozen
class BreakdownPart:
    """The rows of a group whose ``meta`` has one value of a breakdown key, and their means."""

    rows: int
    scores: Means = attrs.Factory(dict)


#: ``--score-field``'s default (earlier releases' flag and default).
DEFAULT_SCORE_FIELD = "f1"


@attrs.frozen
class Tokens:
    """The system's tokens: mean input and output per row that reported them, and their total."""

    input_mean: float | None = None
    output_mean: float | None = None
    total: float | None = None


@attrs.frozen
class Cost:
    """The system's dollars, from one ``source``: ``priced`` from its tokens by ``--price`` (a price
    for its model prices every row), else ``reported`` by the endpoint; None (not 0) when a row's
    tokens have no price or nothing reported a cost (``priced`` False, ``source`` None)."""

    dollars: float | None = None
    priced: bool = False
    source: str | None = None


@attrs.frozen
class LatencyFigures:
    """The system's seconds per row (None when no row recorded one)."""

    mean: float | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None


@attrs.frozen
class Passing:
    """The share of rows whose primary score reaches the threshold (at most it where lower is
    better; a row without it fails), and the dollars per passing row."""

    field: str = DEFAULT_SCORE_FIELD
    threshold: float = DEFAULT_THRESHOLD
    pass_rate: float | None = None
    cost_of_pass: float | None = None


@attrs.frozen
class JudgeFigures:
    """What judges did for a group (or, named, over the run): rows judged, soft failures, parse
    errors among them, tokens and dollars, counted apart from the system's; ``alpha`` is a panel's
    agreement (Krippendorff's), None for a single judge."""

    calls: int = 0
    failures: int = 0
    parse_errors: int = 0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    dollars: float | None = None
    name: str | None = None
    alpha: float | None = None


@attrs.frozen
class FrontierPlace:
    """A group's place on its data set's quality-versus-cost frontier: rank 1 is not dominated (no
    other system scores at least as well for at most the cost, better in one); None: no score."""

    rank: int | None = None
    dominated: bool | None = None


@attrs.frozen
class Comparison:
    """``system`` minus ``baseline`` on ``dataset`` in ``field`` over ``n`` pairs (see
    :mod:`context_bench.comparisons`): the mean difference, its interval at ``1 - alpha``, the
    p-value of ``test`` (``mcnemar``, ``sign_flip``, ``sign_flip_mc`` or ``t``; all None with
    nothing to test), ``significant`` (p below alpha) and ``mdd``, the smallest difference these
    pairs could show at 80% power.  ``coverage`` is the share of the baseline's ids the system
    has, ``only_baseline``/``only_system`` the ids one side lacks.  The token and dollar figures
    are the (system, baseline, data set)'s and repeat for each field; ``cost_source`` is where
    both sides' dollars came from (None: not from one source, no dollars saved)."""

    system: str
    baseline: str
    dataset: str
    field: str
    delta: float | None
    ci: list[float] | None
    p_value: float | None
    n: int
    test: str | None
    compression_ratio: float | None
    tokens_saved: float | None
    cost_saved: float | None
    lost: list[str]
    gained: list[str]
    significant: bool | None = None
    mdd: float | None = None
    coverage: float | None = None
    only_baseline: list[str] = attrs.Factory(list)
    only_system: list[str] = attrs.Factory(list)
    cost_source: str | None = None
    #: Which way ``field`` points (``higher`` or ``lower`` is better): ``delta`` is the system's
    #: minus the baseline's either way, so a positive one is worse where lower is better.
    direction: str = "higher"
    #: The ``lost`` rows by cause (:mod:`context_bench.evidence`): ``evidence_dropped`` and
    #: ``evidence_kept``; None where the system's rows mark no evidence.
    lost_by_cause: dict[str, int] | None = None
    #: A multi-turn replay's mean dollars at each turn (the first item turn 1) of the baseline's and
    #: the system's rows both reached it (``{"baseline": [...], "system": [...]}``), and the first
    #: turn from which the system's cumulative cost is above the baseline's to the end (None:
    #: never, or no turns; :mod:`context_bench._turn_costs`).
    cost_per_turn: dict[str, list[float | None]] | None = None
    stops_paying_from_turn: int | None = None

    def shared(self) -> str:
        """``4 of 10 rows shared`` where the system lacks some of the baseline's rows, else ''
        (the baseline's rows are ``len(only_baseline) / (1 - coverage)``, a whole number)."""
        if self.coverage is None or self.coverage >= 1:
            return ""
        missing = len(self.only_baseline)
        total = round(missing / (1 - self.coverage))
        return f"{total - missing} of {total} rows shared"


@attrs.frozen
class ScoreField:
    """What a report says of one score field: which way it points (``higher`` or ``lower`` is
    better, :mod:`context_bench.direction`) and what a row that failed counts in its means."""

    direction: str = "higher"
    failure_value: float = 0.0


@attrs.frozen
class FailedField:
    """A score field's rows whose evaluator failed (their value is a fallback), of the rows that
    have the field, and their share."""

    count: int
    rows: int
    rate: float


@attrs.frozen
class ByPart:
    """The rows of a group in one part of a ``--by`` field (:mod:`context_bench._by`), named
    ``value``: the group's summary over them, and their comparisons with the baseline."""

    value: str
    group: GroupSummary
    comparisons: list[Comparison] = attrs.Factory(list)


@attrs.frozen
class Discrepancy:
    """A group whose own input tokens differ from what the meter measured by more than 5%, each
    summed over the ``rows`` that have both (:mod:`context_bench._measured`)."""

    system: str
    dataset: str
    reported_input_tokens: float
    metered_input_tokens: float
    rows: int


@attrs.frozen
class GroupSummary:
    """One (system, data set): its rows, the means of every score field, each metric's figures,
    soft failures per evaluator, and the breakdowns asked for (key -> value -> part)."""

    system: str
    dataset: str
    rows: int = 0
    errors: int = 0
    scores: Means = attrs.Factory(dict)
    metrics: dict[str, dict[str, Any]] = attrs.Factory(dict)
    failures: dict[str, int] = attrs.Factory(dict)
    #: Per score field, the rows where it is a failed evaluator's fallback (fields with none left out).
    failed: dict[str, FailedField] = attrs.Factory(dict)
    breakdown: dict[str, dict[str, BreakdownPart]] = attrs.Factory(dict)
    #: ``errors / rows``: the share of rows that count their worst value in ``scores`` for the
    #: fields they lack (0, or the top of the range where lower is better).
    error_rate: float | None = None
    #: The means over the rows that produced each field, errored rows left out (never the headline).
    scores_scored_only: Means = attrs.Factory(dict)
    #: Each mean's 95% interval (None with fewer than two values) and standard error
    #: (:mod:`context_bench.metrics.intervals`).
    ci: dict[str, list[float] | None] = attrs.Factory(dict)
    stderr: dict[str, float | None] = attrs.Factory(dict)
    tokens: Tokens = attrs.Factory(Tokens)
    cost: Cost = attrs.Factory(Cost)
    latency: LatencyFigures = attrs.Factory(LatencyFigures)
    #: Pass rate and cost of pass on the primary score (JSON ``pass``).
    passing: Passing = attrs.Factory(Passing)
    judge: JudgeFigures = attrs.Factory(JudgeFigures)
    frontier: FrontierPlace = attrs.Factory(FrontierPlace)
    #: Per ``--by`` field, the group's figures in each part of its rows.
    by: dict[str, list[ByPart]] = attrs.Factory(dict)
    #: Whose counts ``tokens``, ``cost``, the savings and the frontier read: ``metered`` (the run's
    #: meter, when every system on the data set was metered), ``counted``, ``reported`` (the
    #: system's own) or None (none).
    tokens_source: str | None = None
    #: The share of its input tokens the provider's cache served (metered groups whose calls said;
    #: their dollars price those at ``--price``'s cached price).
    cache_hit_share: float | None = None
    #: The mean ``evidence_kept`` of its rows that mark evidence (None: none does).
    evidence_retention: float | None = None
    #: A multi-turn replay's mean dollars at each turn, the first item turn 1, over the rows that
    #: reached it (metered rows whose calls said their turn; None: none did).
    cost_per_turn: list[float | None] | None = None
    #: With ``--repeats``, per score field (:mod:`context_bench.repeats`): the within-row standard
    #: deviation, the rows whose repeats disagree at the threshold, pass@k and pass^k (0/1 fields).
    within_row_sd: dict[str, float | None] = attrs.Factory(dict)
    unstable_rows: dict[str, int] = attrs.Factory(dict)
    pass_at_k: dict[str, float] = attrs.Factory(dict)
    pass_all_k: dict[str, float] = attrs.Factory(dict)

    def failed_on_every_row(self, field: str) -> bool:
        """Whether every value of ``field`` is a fallback: it has no mean and no interval to show."""
        failed = self.failed.get(field)
        return failed is not None and failed.count >= failed.rows


@attrs.frozen
class SystemSummary:
    """One system over every data set it ran: its rows pooled, each row weighing the same, so a
    field two unlike data sets share (F1 of short answers and of summaries) is averaged across
    them; ``datasets`` names what was pooled."""

    rows: int = 0
    errors: int = 0
    scores: Means = attrs.Factory(dict)
    error_rate: float | None = None
    scores_scored_only: Means = attrs.Factory(dict)
    datasets: list[str] = attrs.Factory(list)


@attrs.frozen
class ErrorMessage:
    """One distinct error of a run and how often it occurred: ``source`` is the system or the
    evaluator, or for an input error the data set; ``examples`` are the first rows it hit."""

    stage: str
    source: str
    type: str
    message: str
    count: int = 0
    examples: list[str] = attrs.Factory(list)


@attrs.frozen
class ErrorCounts:
    """Errors of a run: how many, on how many rows, by system (its own errors only), evaluator,
    stage and, for input errors, data set; ``messages`` are the distinct errors, most frequent first."""

    total: int = 0
    rows: int = 0
    by_system: dict[str, int] = attrs.Factory(dict)
    by_evaluator: dict[str, int] = attrs.Factory(dict)
    by_stage: dict[str, int] = attrs.Factory(dict)
    by_input: dict[str, int] = attrs.Factory(dict)
    messages: list[ErrorMessage] = attrs.Factory(list)


@attrs.frozen
class EvaluatorFailures:
    """An evaluator's soft failures: how many, of the rows it scored, their share, and by kind."""

    count: int
    rows: int
    rate: float
    kinds: dict[str, int] = attrs.Factory(dict)


@attrs.frozen
class SweepPoint:
    """One setting of a swept system on a data set, in its headline ``field``
    (:mod:`context_bench.sweep_curve`): the achieved input ratio, the mean and its interval, the
    paired difference from the baseline with its interval and p-value over ``n`` pairs, whether
    it is ``safe`` at the run's margin, and ``flagged`` when the ratio is more than 10% from the
    rate asked for (None: the parameter is not declared a rate, or no ratio)."""

    system: str
    parameter: str
    value: Any
    dataset: str
    field: str
    input_ratio: float | None
    mean: float | None
    ci: list[float] | None
    delta: float | None
    delta_ci: list[float] | None
    p_value: float | None
    n: int
    safe: bool = False
    flagged: bool | None = None


@attrs.frozen
class OperatingPoint:
    """A swept system's safe operating point on ``dataset`` (None: on every data set together):
    the setting with the lowest achieved input ratio whose loss is not significantly beyond the
    margin, with its paired difference and interval."""

    system: str
    parameter: str
    value: Any
    dataset: str | None
    input_ratio: float | None
    delta: float | None
    delta_ci: list[float] | None


@attrs.frozen
class Summary:
    """What a run's rows add up to; reports read it by attribute, ``to_dict`` is its JSON form."""

    groups: list[GroupSummary] = attrs.Factory(list)
    systems: dict[str, SystemSummary] = attrs.Factory(dict)
    errors: ErrorCounts = attrs.Factory(ErrorCounts)
    failures: dict[str, EvaluatorFailures] = attrs.Factory(dict)
    #: Token usage per evaluator (``input_tokens``, ``output_tokens``), summed over the rows.
    usage: dict[str, dict[str, float]] = attrs.Factory(dict)
    warnings: list[str] = attrs.Factory(list)
    #: False (the default): an errored row counts its worst value in ``scores`` for every field of
    #: its group it lacks; True: the headline means are over scored rows alone (``--exclude-errors``).
    exclude_errors: bool = False
    #: The unit of each metric's figures, where it has one (``{"latency": "s"}``).
    units: dict[str, str] = attrs.Factory(dict)
    #: Every other system against the baseline, per data set and score field
    #: (:mod:`context_bench.comparisons`).
    comparisons: list[Comparison] = attrs.Factory(list)
    #: The primary score and its pass threshold: ``{"field": ..., "threshold": ...}``.
    primary: dict[str, Any] = attrs.Factory(dict)
    #: The system the others are compared with (None: no comparison).
    baseline: str | None = None
    #: Per judge over the run, with a panel's agreement (``alpha``).
    judges: list[JudgeFigures] = attrs.Factory(list)
    #: ``{"missing": [models]}``: the models (or systems, judges) whose tokens have no price.
    prices: dict[str, Any] = attrs.Factory(lambda: {"missing": []})
    #: The comparisons' significance level (``--alpha``); their intervals are at ``1 - alpha``.
    alpha: float = 0.05
    #: Every score field of the run: its direction and what a failed row counts in it.
    score_fields: dict[str, ScoreField] = attrs.Factory(dict)
    #: Per data set, the score fields of evaluators wired to it by its rows' fields alone beside
    #: one wired by its name (AnswerQuality's ``f1`` on an NLI set): the Scores tables leave them
    #: out unless ``--detail``; ``--evaluator`` names an evaluator, so its fields are never here.
    by_fields: dict[str, list[str]] = attrs.Factory(dict)
    #: Every call the run's meter relayed (``calls``, ``input_tokens``, ... as a row's ``metered``),
    #: and under ``unattributed`` those no row could be given; None when the run was not metered.
    metered: dict[str, Any] | None = None
    #: The groups whose own input tokens are off the meter's by more than 5% (each also warned).
    discrepancies: list[Discrepancy] = attrs.Factory(list)
    #: A sweep's curve: each setting per data set in its headline field (docs/sweeps.md).
    sweeps: list[SweepPoint] = attrs.Factory(list)
    #: Each swept system's safe operating point per data set and over all (``dataset`` None).
    operating_points: list[OperatingPoint] = attrs.Factory(list)
    #: What plugins add from the run's rows (:mod:`context_bench.summary_sections`), by name; the
    #: JSON report writes each one's records as ``summary.<name>``.
    sections: dict[str, SummarySection] = attrs.Factory(dict)

    def direction(self, field: str) -> Direction:
        """Which way ``field`` points (higher is better for a field the summary does not know)."""
        found = self.score_fields.get(field)
        return named(found.direction if found is not None else None)

    def to_dict(self) -> dict[str, Any]:
        """Plain dicts and lists, keys in field order: the ``summary`` of the JSON report (a
        group's ``passing`` is written ``pass``; its ``judge`` has no name or alpha)."""
        found = attrs.asdict(self, filter=lambda field, _: field.name != "sections")
        for group in found["groups"]:
            _written(group)
        for name, section in self.sections.items():
            found[name] = [dict(record) for record in section.records]
        found["sections"] = {name: section.to_dict() for name, section in self.sections.items()}
        return found


def _written(group: dict[str, Any]) -> None:
    """A group's dict as the JSON report writes it, its ``--by`` parts' groups too."""
    group["pass"] = group.pop("passing")
    group["frontier"] = group.pop("frontier")
    del group["judge"]["name"], group["judge"]["alpha"]
    group["by"] = group.pop("by")
    for part in (part for parts in group["by"].values() for part in parts):
        _written(part["group"])


class Summarize(Protocol):
    """What summarizes a result's rows (the runner's :class:`~context_bench._summary.Summarizer`),
    kept so ``filter``, ``merge``, ``summarized`` and ``analyzed`` can summarize again, each time
    by a fresh one (:meth:`again`) with its settings said; ``notices`` are the run's warnings that
    no row shows, ``exclude_errors`` picks the headline means (see
    :attr:`Summary.exclude_errors`), ``rows`` is how many it counted."""

    notices: list[str]
    exclude_errors: bool
    by_fields: dict[str, list[str]]
    analysis: Analysis

    @property
    def rows(self) -> int: ...

    def again(self, *, analysis: Analysis | None = None, exclude_errors: bool | None = None) -> Summarize: ...

    def __call__(self, rows: Sequence[EvalRow], /) -> Summary: ...


@attrs.define
class EvalResult:
    """All rows of a run, in a deterministic order (system, data set, example), and their summary
    (None for a result built without one), and the summarizer that made it (:class:`Summarize`).

    ``metadata`` describes the run (date, versions, systems and their endpoints, the command line,
    secrets removed); the CLI fills it, and every report but JSONL shows it.
    """

    rows: list[EvalRow]
    summary: Summary | None = None
    summarize: Summarize | None = attrs.field(default=None, repr=False, eq=False)
    metadata: dict[str, Any] = attrs.Factory(dict)

    @classmethod
    def merge(cls, results: Sequence[EvalResult]) -> EvalResult:
        """One result of several runs (one per system): their rows in order, renumbered in place,
        summarized afresh with every run's notices kept, and the first run's metadata."""
        if len(results) == 1:
            return results[0]
        rows = [row for result in results for row in result.rows]
        for index, row in enumerate(rows):
            row.index = index
        metadata = dict(results[0].metadata) if results else {}
        if results[0].summarize is None:
            return cls(rows=rows, metadata=metadata)
        summarize = results[0].summarize.again()
        summarize.notices = list(
            dict.fromkeys(n for r in results if r.summarize is not None for n in r.summarize.notices)
        )
        summarize.by_fields = {
            k: v for r in results if r.summarize is not None for k, v in r.summarize.by_fields.items()
        }
        return cls(rows=rows, summary=summarize(rows), summarize=summarize, metadata=metadata)

    def filter(self, system: str | None = None, dataset: str | None = None) -> EvalResult:
        rows = [
            r
            for r in self.rows
            if (system is None or r.system == system) and (dataset is None or r.dataset == dataset)
        ]
        if self.summarize is None:
            return EvalResult(rows=rows, summary=None, summarize=None, metadata=self.metadata)
        return self._summarized_again(rows, self.summarize.again())

    def summarized(self, *, exclude_errors: bool) -> EvalResult:
        """The same rows summarized again: with ``exclude_errors`` the headline means are over the
        scored rows alone; without, an errored row counts its worst value (the default).  Unchanged when the
        result has no summarizer or already reads that way."""
        if self.summarize is None or self.summarize.exclude_errors == exclude_errors:
            return self
        return self._summarized_again(self.rows, self.summarize.again(exclude_errors=exclude_errors))

    def analyzed(self, analysis: Analysis) -> EvalResult:
        """The same rows summarized again with other figure settings (a
        :class:`~context_bench.analysis.Analysis`: primary score, threshold, baseline, prices);
        unchanged when the result has no summarizer or already reads that way."""
        if self.summarize is None or self.summarize.analysis == analysis:
            return self
        return self._summarized_again(self.rows, self.summarize.again(analysis=analysis))

    def _summarized_again(self, rows: list[EvalRow], summarize: Summarize) -> EvalResult:
        """``rows`` summarized by ``summarize``, a fresh summarizer (the result's own keeps what it
        counted).  A streamed result kept no rows: summing it again would show an empty run, whose
        gates pass, so that is refused."""
        if self.summarize is not None and self.summarize.rows > len(self.rows):
            raise ValueError(
                "this result was streamed (evaluate(stream=...)) and kept no rows: it cannot be "
                "filtered or summarized again; pass the settings to evaluate() instead"
            )
        return EvalResult(rows, summarize(rows), summarize, self.metadata)

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self._summary_dict(),
            "rows": [r.to_dict() for r in self.rows],
            "metadata": self.metadata,
        }

    def to_json(self) -> str:
        """The whole result as valid JSON: the summary indented, the run's metadata, then one row
        per line.  A number JSON cannot hold (NaN, infinity, e.g. in a system's extra output) is
        written as null.

        Rows are encoded compactly (the C encoder) so a 100,000-row result writes in a second.
        """
        summary = json.dumps(json_safe(self._summary_dict()), indent=2, ensure_ascii=False, default=jsonable)
        metadata = json.dumps(json_safe(self.metadata), ensure_ascii=False, default=jsonable)
        rows = ",\n".join(map(encode_row, self.rows))
        return (
            f'{{"summary": {summary},\n"metadata": {metadata},\n"rows": [\n{rows}\n]}}'
            if rows
            else f'{{"summary": {summary},\n"metadata": {metadata}, "rows": []}}'
        )

    def _summary_dict(self) -> dict[str, Any]:
        return self.summary.to_dict() if self.summary is not None else {}

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (pandas is optional: ``pip install pandas``): one line per
        row with its system, data set, id, every score (``score.FIELD``), tokens, latency, cost,
        error count and response; the same table as ``--output csv``."""
        try:
            import pandas
        except ImportError:
            raise ImportError("EvalResult.to_pandas needs pandas: pip install pandas") from None
        header, lines = row_table(self.rows)
        return pandas.DataFrame(lines, columns=header)

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(r.system for r in self.rows))

    @property
    def datasets(self) -> list[str]:
        return list(dict.fromkeys(r.dataset for r in self.rows))


#: The columns of :func:`row_table` before the scores.
ROW_COLUMNS = (
    "system",
    "dataset",
    "example_id",
    "input_tokens",
    "output_tokens",
    "latency",
    "cost",
    "errors",
)


def row_table(rows: Sequence[EvalRow]) -> tuple[list[str], list[list[Any]]]:
    """The rows as one flat table: :data:`ROW_COLUMNS`, a ``score.FIELD`` column per score field
    (None where a row has none) and the response; ``errors`` counts a row's errors."""
    fields = list(dict.fromkeys(field for row in rows for field in row.scores))
    header = [*ROW_COLUMNS, *(f"score.{field}" for field in fields), "response"]
    lines = [
        [
            row.system,
            row.dataset,
            row.example_id,
            row.input_tokens,
            row.output_tokens,
            row.latency,
            row.cost,
            len(row.errors),
            *(row.scores.get(field) for field in fields),
            row.response,
        ]
        for row in rows
    ]
    return header, lines


def jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def compact_encoder(separators: tuple[str, str] = (", ", ": ")) -> Callable[[Any], str]:
    """A function writing a value as JSON, not ASCII-escaped, NaN refused, a value JSON has no
    type for as :func:`jsonable` says: ``json.JSONEncoder.encode``'s C encoder, built once rather
    than on every call as that builds it (a report's row in 7.8 us rather than 10.1: a row is
    encoded for its report and again for the store)."""
    from json import encoder

    c_make_encoder = getattr(encoder, "c_make_encoder", None)  # the C accelerator's (not typed)
    if c_make_encoder is None:  # a Python without it
        return json.JSONEncoder(
            ensure_ascii=False, separators=separators, default=jsonable, allow_nan=False
        ).encode
    item, key = separators
    # no check for cycles (a row has none; one would overflow the stack, as json_safe's walk would)
    encode = c_make_encoder(None, jsonable, encoder.encode_basestring, None, key, item, False, False, False)
    return lambda value: "".join(encode(value, 0))


_encode = compact_encoder()


def encode_row(row: EvalRow) -> str:
    """One row as compact JSON; NaN and infinities (JSON has none) become null."""
    return encode_compact(row.to_dict())


def encode_compact(data: dict[str, Any]) -> str:
    """``data`` as compact JSON (the C encoder); NaN and infinities become null, and a value JSON
    has no type for is written as its text."""
    try:
        return _encode(data)
    except ValueError:  # the rare row with a non-finite number in its meta, usage or input
        return _encode(json_safe(data))


def json_safe(value: Any) -> Any:
    """``value`` with every float that JSON cannot hold (NaN, +-infinity) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    return value
