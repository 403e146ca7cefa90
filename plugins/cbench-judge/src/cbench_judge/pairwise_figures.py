"""What the pairwise verdicts of one (system, data set) against the baseline add up to.

The win rate counts a tie as half a win, over the rows judged (``n``: both orders answered), with
Wilson's interval of that share; its significance is the exact two-sided sign test of wins
against losses (ties left out), the binomial tail McNemar's test sums.  Rows whose judge calls
failed are not in ``n``: they are ``failed``, shown beside it; they and the rows a system did not
answer (``unanswered``) gate the exit status (:func:`no_verdict`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from context_bench.metrics.intervals import wilson
from context_bench.metrics.paired import mcnemar_p

from .length_control import length_controlled
from .pairwise import LOSS, TIE, WIN, PairVerdict

if TYPE_CHECKING:
    from .pairs import Pairs
    from .pairwise import PairwiseJudge


@attrs.frozen
class PairwiseFigures:
    """One line of ``summary.pairwise``; rates are None when no row was judged."""

    system: str
    baseline: str
    dataset: str
    wins: int
    ties: int
    losses: int
    win_rate: float | None
    ci: tuple[float, float] | None
    lc_win_rate: float | None
    lc_ci: tuple[float, float] | None
    position_consistency: float | None
    n: int
    #: Two-sided exact sign test of wins against losses.
    p_value: float | None
    #: Rows whose judge calls failed (not in ``n``), and rows a system did not answer.
    failed: int = 0
    unanswered: int = 0
    template: str = ""
    judge_model: str = ""
    #: Why the first failed row got no verdict (the judge's error, keys removed by the client).
    failure: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found = attrs.asdict(self)
        for key in ("ci", "lc_ci"):
            if found[key] is not None:
                found[key] = list(found[key])
        return found


def pairwise_figures(
    verdicts: Sequence[PairVerdict],
    length_differences: Sequence[float],
    *,
    system: str,
    baseline: str,
    dataset: str,
    unanswered: int = 0,
    template: str = "",
    judge_model: str = "",
) -> PairwiseFigures:
    """The figures of ``verdicts``, each with the system's answer length minus the baseline's."""
    judged = [(v, d) for v, d in zip(verdicts, length_differences, strict=True) if v.outcome is not None]
    outcomes = [v.outcome for v, _ in judged]
    wins, ties, losses = (outcomes.count(kind) for kind in (WIN, TIE, LOSS))
    n = len(judged)
    win_rate = ci = consistency = p_value = None
    lc_rate = lc_ci = None
    if n:
        win_rate = (wins + ties / 2) / n
        ci = wilson(wins + ties / 2, n)
        consistency = sum(v.consistent for v, _ in judged) / n
        p_value = mcnemar_p(losses, wins)
        preferences = [{WIN: 1.0, TIE: 0.5, LOSS: 0.0}[o] for o in outcomes]
        fit = length_controlled(preferences, [d for _, d in judged])
        if fit is not None:
            lc_rate, lc_ci = fit.rate, fit.ci
    return PairwiseFigures(
        system=system,
        baseline=baseline,
        dataset=dataset,
        wins=wins,
        ties=ties,
        losses=losses,
        win_rate=win_rate,
        ci=ci,
        lc_win_rate=lc_rate,
        lc_ci=lc_ci,
        position_consistency=consistency,
        n=n,
        p_value=p_value,
        failed=len(verdicts) - n,
        failure=next((v.failure for v in verdicts if v.failure is not None), None),
        unanswered=unanswered,
        template=template,
        judge_model=judge_model,
    )


def judged(
    judge: PairwiseJudge, found: Mapping[tuple[str, str], Pairs], baseline: str, model: str
) -> tuple[list[PairwiseFigures], list[dict[str, float]]]:
    """Every (system, data set)'s pairs judged in both orders, their figures, and what the judge's
    calls for each did and cost in tokens (:class:`~cbench_judge.client.JudgeStats`' fields)."""
    figures, used = [], []
    for (system, dataset), pairs in found.items():
        before = attrs.asdict(judge.client.stats)  # a client is shared by every run of its judge in a process
        verdicts = judge.judge_all(pairs.pairs)
        used.append({k: v - before[k] for k, v in attrs.asdict(judge.client.stats).items()})
        figures.append(
            pairwise_figures(
                verdicts,
                pairs.length_differences(),
                system=system,
                baseline=baseline,
                dataset=dataset,
                unanswered=pairs.unanswered,
                template=judge.template,
                judge_model=model,
            )
        )
    return figures, used


def no_verdict(figures: Sequence[PairwiseFigures]) -> tuple[int, int, str | None]:
    """How many pairs got no verdict, of how many, and why the first: a failed judge call, or a row
    the system or the baseline did not answer (an error).  Both count against
    ``--max-failure-rate``: a win rate over the rows both answered alone would read better the more
    rows a system fails on."""
    failed = sum(f.failed + f.unanswered for f in figures)
    total = failed + sum(f.n for f in figures)
    why = next((f.failure for f in figures if f.failure), None)
    if why is None:
        why = next(
            (
                f"{f.unanswered} row(s) of {f.dataset} that {f.system} or {f.baseline} did not answer"
                for f in figures
                if f.unanswered
            ),
            None,
        )
    return failed, total, why
