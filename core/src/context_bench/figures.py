"""What a (system, data set) group costs and how sure its means are: tokens, dollars, latency,
pass rate and cost of pass on the primary score, judge figures, intervals, and the frontier.

Everything is computed from a group's :class:`~context_bench.columns.Columns` (and, for judges,
a :class:`JudgeTally` fed row by row), so a run need not hold its rows to be summarized.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ._measured import cache_hit_share, discrepancies, sourced
from ._turn_costs import cost_per_turn
from .analysis import Analysis
from .comparisons import baseline_of, compare, notes
from .direction import HIGHER, Direction, Directions
from .metrics._aggregate import latency_figures
from .metrics.agreement import krippendorff_alpha
from .metrics.intervals import estimate, finite
from .prices import Price
from .records import (
    DEFAULT_SCORE_FIELD,
    Comparison,
    Cost,
    Discrepancy,
    FrontierPlace,
    JudgeFigures,
    LatencyFigures,
    Passing,
    Tokens,
)

if TYPE_CHECKING:
    from .columns import Columns
    from .records import EvalRow


Key = tuple[str, str]


@attrs.define
class JudgeTally:
    """Judge figures summed row by row, per evaluator that reported token usage or a judge's
    failure (``call_error``, ``parse_error``); a row it judged is a call."""

    judges: dict[str, list[float]] = attrs.Factory(
        dict
    )  # name -> calls, failures, parse errors, tokens in, out
    reported: dict[str, float] = attrs.Factory(dict)  # dollars the usage itself carried

    def add(self, row: EvalRow) -> None:
        if not row.usage and not row.failures:
            return
        kinds = {name: failure.split(":", 1)[0].strip() for name, failure in row.failures.items()}
        failed = [
            n for n, kind in kinds.items() if kind in ("call_error", "parse_error") and n not in row.usage
        ]
        for name in [*row.usage, *failed]:
            figures = self.judges.setdefault(name, [0.0] * 5)
            usage = row.usage.get(name) or {}
            figures[0] += 1
            figures[1] += name in kinds
            figures[2] += kinds.get(name) == "parse_error"
            figures[3] += float(usage.get("input_tokens") or 0.0)
            figures[4] += float(usage.get("output_tokens") or 0.0)
            if usage.get("cost") is not None:
                self.reported[name] = self.reported.get(name, 0.0) + float(usage["cost"])

    def absorb(self, other: JudgeTally) -> None:
        for name, figures in other.judges.items():
            mine = self.judges.setdefault(name, [0.0] * 5)
            for i, value in enumerate(figures):
                mine[i] += value
        for name, dollars in other.reported.items():
            self.reported[name] = self.reported.get(name, 0.0) + dollars

    def figures(self, analysis: Analysis, name: str | None = None) -> JudgeFigures:
        """One judge's figures (``name``), or all judges' summed (None).  A judge is priced like a
        system: by ``--price`` for its model (or its name) when there is one, else by the cost its
        endpoint reported; tokens with neither have no dollars."""
        names = [name] if name is not None else list(self.judges)
        totals = [sum(self.judges[n][i] for n in names) for i in range(5)]
        dollars: float | None = 0.0 if names else None
        known = False
        for n in names:
            judge = self.judges[n]
            price = analysis.price(n)
            if price is not None and (judge[3] or judge[4]):
                known = True
                dollars = None if dollars is None else dollars + price.dollars(judge[3], judge[4])
            elif n in self.reported:
                dollars, known = (None if dollars is None else dollars + self.reported[n]), True
            elif judge[3] or judge[4]:
                known, dollars = True, None
        return JudgeFigures(
            int(totals[0]),
            int(totals[1]),
            int(totals[2]),
            totals[3],
            totals[4],
            dollars if known else None,
            name,
        )

    def unpriced(self, analysis: Analysis) -> list[str]:
        return [
            analysis.model(n)
            for n, judge in self.judges.items()
            if n not in self.reported and (judge[3] or judge[4]) and analysis.price(n) is None
        ]


def row_dollars(columns: Columns, price: Price | None) -> list[float]:
    """Each row's dollars from one source: with a ``price`` (``--price`` for the system's model),
    its tokens priced, every row (an unknown count counts none); without, the cost the endpoint
    reported, NaN where a row has tokens but no reported cost, 0 where it has neither."""
    if price is not None:
        unknown = [math.nan] * len(columns.input_tokens)
        cached, written = columns.cached_input_tokens, columns.cache_write_tokens
        return [
            price.dollars(*figures)
            for figures in zip(
                columns.input_tokens,
                columns.output_tokens,
                unknown if cached is None else cached,
                unknown if written is None else written,
                strict=True,
            )
        ]
    found = []
    for cost, given, taken in zip(columns.cost, columns.input_tokens, columns.output_tokens, strict=True):
        if cost == cost:
            found.append(cost)
        else:
            found.append(0.0 if given != given and taken != taken else math.nan)
    return found


def cost_of(columns: Columns, dollars: Sequence[float], priced: bool) -> Cost:
    """The group's dollars, when every row has them and some row cost anything known; their
    source is ``priced`` (by ``--price``) or ``reported``."""
    known = any(c == c for c in columns.cost) or any(
        given == given or taken == taken
        for given, taken in zip(columns.input_tokens, columns.output_tokens, strict=True)
    )
    if not known or any(d != d for d in dollars):
        return Cost(None, False)
    return Cost(sum(dollars), True, "priced" if priced else "reported")


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def tokens_of(columns: Columns) -> Tokens:
    given, taken = finite(columns.input_tokens), finite(columns.output_tokens)
    if not given and not taken:
        return Tokens()
    return Tokens(_mean(given), _mean(taken), sum(given) + sum(taken))


def passing_of(columns: Columns, cost: Cost, analysis: Analysis, directions: Directions) -> Passing:
    """The share of rows whose primary score passes the threshold in its direction (at least it,
    or at most it where lower is better; an errored row never does), and the dollars per passing
    row."""
    threshold = analysis.threshold
    field = analysis.field_of(columns.scores)
    if field is None or not len(columns):
        return Passing(analysis.score_field or DEFAULT_SCORE_FIELD, threshold)
    passed = sum(columns.passing(field, directions.of(field), threshold))
    cost_of_pass = cost.dollars / passed if cost.dollars is not None and passed else None
    return Passing(field, threshold, passed / len(columns), cost_of_pass)


@attrs.frozen
class GroupFigures:
    """Everything :func:`group_figures` adds to a group's summary (its fields are the group's)."""

    ci: dict[str, list[float] | None]
    stderr: dict[str, float | None]
    tokens: Tokens
    cost: Cost
    latency: LatencyFigures
    passing: Passing
    judge: JudgeFigures
    dollars: list[float] = attrs.field(repr=False)


def group_figures(
    system: str, columns: Columns, judges: JudgeTally, analysis: Analysis, directions: Directions
) -> GroupFigures:
    ci: dict[str, list[float] | None] = {}
    stderr: dict[str, float | None] = {}
    for field, column in columns.scores.items():
        found = estimate(column)
        ci[field] = None if found is None or found.low is None else [found.low, found.high]  # type: ignore[list-item]
        stderr[field] = None if found is None else found.stderr
    price = analysis.price(system)
    dollars = row_dollars(columns, price)
    cost = cost_of(columns, dollars, price is not None)
    return GroupFigures(
        ci,
        stderr,
        tokens_of(columns),
        cost,
        latency_figures(columns.latency),
        passing_of(columns, cost, analysis, directions),
        judges.figures(analysis),
        dollars,
    )


def frontier(
    points: Mapping[Key, tuple[float | None, float | None]], direction: Direction = HIGHER
) -> dict[Key, FrontierPlace]:
    """Pareto ranks of (score, cost) points, the better score (in its ``direction``) and lower
    cost better: rank 1 is the points no other dominates, rank 2 those only rank 1 dominates, and
    so on; a point without a score or cost has no rank."""
    left = {
        key: (direction.gain(score), cost)
        for key, (score, cost) in points.items()
        if score is not None and cost is not None
    }
    places = {key: FrontierPlace() for key in points}
    rank = 1
    while left:
        front = [
            key
            for key, (score, cost) in left.items()
            if not any(
                s >= score and c <= cost and (s > score or c < cost)  # type: ignore[operator]
                for other, (s, c) in left.items()
                if other != key
            )
        ]
        for key in front:
            places[key] = FrontierPlace(rank, rank > 1)
            del left[key]
        rank += 1
    return places


def panel_alpha(name: str, columns: Sequence[Columns]) -> float | None:
    """Krippendorff's alpha of a panel's judges: its per-judge score fields (``NAME_KEY``, two or
    more), each row a unit; None for a single judge."""
    members = sorted({f for c in columns for f in c.scores if f.startswith(f"{name}_")})
    if len(members) < 2:
        return None
    nan = math.nan

    def units() -> Any:
        for group in columns:
            found = [group.scores.get(field) for field in members]
            for i in range(len(group)):
                yield [nan if column is None else column[i] for column in found]

    return krippendorff_alpha(units())


@attrs.frozen
class RunFigures:
    """The figures of a whole run: each group's, its place on the frontier, the comparisons with
    the baseline (None with a single system), each judge's, what had no price, and what the
    comparisons must say beside them (:func:`~context_bench.comparisons.notes`)."""

    groups: dict[Key, GroupFigures]
    frontier: dict[Key, FrontierPlace]
    comparisons: list[Comparison]
    judges: list[JudgeFigures]
    missing: list[str]
    baseline: str | None
    notes: list[str] = attrs.Factory(list)
    #: Each group's ``tokens_source`` and the groups whose own counts are off the meter's
    #: (:mod:`context_bench._measured`).
    sources: dict[Key, str | None] = attrs.Factory(dict)
    discrepancies: list[Discrepancy] = attrs.Factory(list)
    #: Each group's share of input tokens served by the provider's cache (metered groups alone).
    cache_hit_shares: dict[Key, float | None] = attrs.Factory(dict)
    #: Each group's mean ``evidence_kept`` over its rows that mark evidence.
    evidence_retentions: dict[Key, float | None] = attrs.Factory(dict)
    #: Each group's mean dollars per turn of a multi-turn replay (:mod:`context_bench._turn_costs`).
    turn_costs: dict[Key, list[float | None] | None] = attrs.Factory(dict)


def run_figures(
    columns: Mapping[Key, Columns],
    judges: Mapping[Key, JudgeTally],
    analysis: Analysis,
    directions: Directions | None = None,
) -> RunFigures:
    """Every group's figures, the frontier of each data set and the comparisons, each field read
    in its direction (``directions``; None: every field higher-is-better)."""
    directions = directions or Directions()
    found = discrepancies(columns)
    columns, sources = sourced(columns)
    groups = {
        key: group_figures(key[0], group, judges[key], analysis, directions) for key, group in columns.items()
    }
    baseline = baseline_of(list(dict.fromkeys(system for system, _ in columns)), analysis)
    costs = {key: figures.cost for key, figures in groups.items()}
    dollars = {key: figures.dollars for key, figures in groups.items()}
    comparisons = compare(columns, dollars, costs, analysis, directions) if baseline is not None else []
    said = notes(comparisons, costs, {key: figures.tokens for key, figures in groups.items()}, analysis)
    places: dict[Key, FrontierPlace] = {}
    for dataset in dict.fromkeys(d for _, d in columns):
        members = [key for key in columns if key[1] == dataset]
        priced = all(groups[key].cost.priced for key in members)
        points = {}
        field = analysis.field_of(dict.fromkeys(f for key in members for f in columns[key].scores))
        for key in members:
            scores = finite(columns[key].scores.get(field, ()) if field else ())
            spent = groups[key].cost.dollars if priced else groups[key].tokens.total
            points[key] = (sum(scores) / len(scores) if scores else None, spent)
        places.update(frontier(points, directions.of(field) if field else HIGHER))
    total = JudgeTally()
    for tally in judges.values():
        total.absorb(tally)
    named = [
        attrs.evolve(total.figures(analysis, name), alpha=panel_alpha(name, list(columns.values())))
        for name in total.judges
    ]
    unpriced = [
        analysis.model(system)
        for (system, _), figures in groups.items()
        if not figures.cost.priced and any(d != d for d in figures.dollars)
    ]
    missing = list(dict.fromkeys([*unpriced, *total.unpriced(analysis)]))
    shares = {key: cache_hit_share(group) for key, group in columns.items()}
    kept = {key: evidence_retention(group) for key, group in columns.items()}
    turns = {key: cost_per_turn(group.turns or (), analysis.price(key[0])) for key, group in columns.items()}
    return RunFigures(
        groups, places, comparisons, named, missing, baseline, said, sources, found, shares, kept, turns
    )


def evidence_retention(columns: Columns) -> float | None:
    """The mean ``evidence_kept`` of the group's rows that mark evidence (None: no row does)."""
    kept = finite(columns.evidence or ())
    return sum(kept) / len(kept) if kept else None
