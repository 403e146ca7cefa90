"""``--pairwise`` on ``run`` and ``score``: every system judged against ``--baseline`` on the rows
both answered, answers in both orders, as the summary's ``pairwise`` section (``summary.pairwise``
in the JSON report, a table in every other, a bar per data set in the HTML one).

The judge is the run's (``--judge-url``, ``--judge-model``, ...), its answers cached beside the
judge evaluators' in the run's cache directory (``--judge-no-cache`` turns that off), so a rerun
resumes without asking again; its calls that failed, and the rows a system did not answer, are
counted per (system, data set) and, over ``--max-failure-rate``, fail the run (exit 4), never a tie.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from context_bench.comparisons import baseline_of
from context_bench.summary_sections import Figure, SummarySection

from .pairs import Answers
from .rating import QUESTION_KEYS
from .settings import JudgeSettings

if TYPE_CHECKING:
    from context_bench.analysis import Analysis
    from context_bench.config import RunConfig
    from context_bench.records import EvalRow

    from .pairwise import PairwiseJudge

#: The records' keys the reports' tables show, in order (``summary.pairwise`` holds more).
COLUMNS = (
    *("system", "dataset", "baseline", "wins", "ties", "losses", "n", "win_rate", "ci"),
    *("lc_win_rate", "lc_ci", "position_consistency", "p_value", "failed", "unanswered", "judge_dollars"),
)
#: The figures a gate may name: ``--fail-under win_rate=0.45``, ``--fail-if-worse lc_win_rate=0.45``.
FIGURES = (Figure("win_rate", "ci", reference=0.5), Figure("lc_win_rate", "lc_ci", reference=0.5))


def section(config: RunConfig, options: Mapping[str, Any]) -> PairwiseSection | None:
    """The run's pairwise section, None without ``--pairwise``; a UsageError (before any row) when it
    lacks a judge.  Its baseline is the summary's: ``--baseline``, else the first system."""
    from .pairwise_command import endpoint_judge, read_template

    settings = JudgeSettings.read(options)
    if not settings.pairwise:
        return None
    cache_dir = options.get("cache_dir")
    endpoint = {
        "url": settings.url,
        "model": settings.model,
        "api_key_env": settings.api_key_env,
        "concurrency": settings.concurrency,
        "cache_dir": None if not cache_dir or settings.no_cache else str(Path(cache_dir) / "judge"),
    }
    template = read_template(settings.pairwise_template or "mt_bench")
    judge, model = endpoint_judge(endpoint, template, "--pairwise")
    return PairwiseSection(judge, model, config.analysis)


class PairwiseSection:
    """Keeps each row's answer (text, question, reference) until the run is done, then judges the
    pairs: a :class:`~context_bench.summary_sections.SectionBuilder`."""

    def __init__(self, judge: PairwiseJudge, model: str, analysis: Analysis) -> None:
        self.judge, self.model, self.analysis = judge, model, analysis
        self.answers = Answers()

    def add(self, row: EvalRow) -> None:
        answered = [e for e in row.errors if e.stage != "evaluator"]  # a failed evaluator answered
        # the question and the reference only: a long context stays with the row, not here
        kept = {k: v for k, v in (row.example or {}).items() if k in _KEPT}
        kept.update(system=row.system, response=row.response, errors=answered)
        self.answers.add(kept, row.dataset, row.example_id)  # a repeated id is the core's to report

    def finish(self) -> SummarySection:
        from .pairwise_figures import judged, no_verdict

        # the summary's baseline: --baseline, else the first system
        systems = list(self.answers.systems)
        baseline = baseline_of(systems, self.analysis)
        if baseline is None or len(systems) < 2:
            return SummarySection(_TITLE, notes=("--pairwise: the run has one system, so nothing to judge",))
        found = self.answers.paired(baseline)
        if self.judge.needs_reference() and any(
            p["reference"] is None for f in found.values() for p in f.pairs
        ):
            pairs = sum(len(f.pairs) for f in found.values())
            failure = "the pairwise template needs a reference answer ('answer') in every row"
            return SummarySection(_TITLE, failed=pairs, total=pairs, failure=failure, unit="pairs")
        figures, used = judged(self.judge, found, baseline, self.model)
        price = self.analysis.prices.find(self.model)
        records = []
        for figure, usage in zip(figures, used, strict=True):
            cost = None if price is None else price.dollars(usage["input_tokens"], usage["output_tokens"])
            records.append({**figure.to_dict(), **_judge_usage(usage), "judge_dollars": cost})
        failed, total, why = no_verdict(figures)
        return SummarySection(
            f"{_TITLE} against {baseline}, answers in both orders (judge {self.model}, "
            f"{self.judge.template}; a tie is half a win; lc: length-controlled)",
            records,
            columns=COLUMNS,
            figures=FIGURES,
            failed=failed,
            total=total,
            failure=why,
            unit="pairs",
        )


_TITLE = "Pairwise judging"
#: What a pair needs of a row besides its answer: its question and reference (:func:`reference_of`).
_KEPT = frozenset((*QUESTION_KEYS, "answer", "reference", "correct_letter"))


def _judge_usage(usage: dict[str, float]) -> dict[str, Any]:
    """What the judge's calls of one (system, data set) did, by the record's keys."""
    return {f"judge_{key}": value for key, value in usage.items()}
