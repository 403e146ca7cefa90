"""Each system against the baseline, per data set, matched by id: the paired difference of every
score field they share with its interval, p-value, significance and minimum detectable
difference, the coverage (which of the baseline's ids the system has), the compression ratio, the
tokens and dollars saved, and the loss audit (rows that pass on the baseline and fail on the
system at the run's threshold, and the reverse).

Each field is read in its direction (:mod:`context_bench.direction`): a row passes a
lower-is-better field at most at the threshold (an errored row never passes, whatever its
failure value reaches: :meth:`Columns.passing`), and the comparison carries the direction, so its
difference reads "worse" when positive there.

The rows the baseline has and the system lacks are in the system's columns as errored rows (the
summary adds them, :attr:`Columns.missing`), so they pair as its failures, unless the run allows
missing rows (then the comparison is over the shared rows alone).  Savings are over the rows both
really have.  The sign is fixed here once: every figure is the system's minus the baseline's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._turn_costs import paired_cost_per_turn, stops_paying_from
from .evidence import EVIDENCE_DROPPED, EVIDENCE_KEPT, loss_cause
from .metrics.paired import PairedTest, paired
from .records import Comparison

if TYPE_CHECKING:
    from .analysis import Analysis
    from .columns import Columns
    from .direction import Direction, Directions
    from .prices import Price
    from .records import Cost, Tokens

Key = tuple[str, str]


def baseline_of(systems: Sequence[str], analysis: Analysis) -> str | None:
    """The run's baseline: the one asked for when the run has it, else the first of several systems."""
    if analysis.baseline is not None and analysis.baseline in systems:
        return analysis.baseline
    return systems[0] if len(systems) > 1 else None


def compare(
    columns: Mapping[Key, Columns],
    dollars: Mapping[Key, Sequence[float]],
    costs: Mapping[Key, Cost],
    analysis: Analysis,
    directions: Directions,
) -> list[Comparison]:
    """Every other system against the baseline on each data set both ran."""
    baseline = baseline_of(list(dict.fromkeys(system for system, _ in columns)), analysis)
    found = []
    for (system, dataset), own in columns.items():
        base_key = (baseline, dataset)
        if system == baseline or base_key not in columns:
            continue
        base = columns[base_key]
        where: dict[str, int] = {}
        for i, example in enumerate(base.ids):
            where.setdefault(example, i)
        ids = list(own.ids)
        pairs = [(where[example], i) for i, example in enumerate(ids) if example in where]
        present = len(own) - own.missing  # the rows the system has; the rest stand for missing ones
        real = [(b, o) for b, o in pairs if o < present]
        held = {ids[o] for _, o in real}
        coverage = (
            len(held) / len(where) if where else None,
            [example for example in where if example not in held],
            [example for example in ids[:present] if example not in where],
        )
        source = costs[base_key].source
        same = source is not None and source == costs[(system, dataset)].source
        cost_saved = (
            sum(dollars[base_key][b] - dollars[(system, dataset)][o] for b, o in real) if same else None
        )
        savings = (*_tokens(base, own, real), cost_saved, source if same else None)
        turns = _turns(base, own, real, analysis.price(baseline), analysis.price(system))
        for field in [f for f in own.scores if f in base.scores]:
            found.append(
                _field(
                    system,
                    baseline,
                    dataset,
                    field,
                    directions.of(field),
                    base,
                    own,
                    ids,
                    pairs,
                    analysis,
                    savings,
                    coverage,
                    turns,
                )
            )
    return found


def _tokens(base: Columns, own: Columns, pairs: list[tuple[int, int]]) -> tuple[float | None, float | None]:
    """The compression ratio (the system's input tokens over the baseline's) and the tokens saved
    (the baseline's input and output tokens minus the system's), each over the pairs where both
    sides reported them; None where no pair did (a side that reports no tokens saves none)."""
    inputs = [(base.input_tokens[b], own.input_tokens[o]) for b, o in pairs]
    inputs = [(b, o) for b, o in inputs if b == b and o == o]
    base_in = sum(b for b, _ in inputs)
    ratio = sum(o for _, o in inputs) / base_in if inputs and base_in > 0 else None

    def total(columns: Columns, i: int) -> float | None:
        given, taken = columns.input_tokens[i], columns.output_tokens[i]
        if given != given and taken != taken:
            return None
        return sum(x for x in (given, taken) if x == x)

    both = [
        (t, u) for b, o in pairs if (t := total(base, b)) is not None and (u := total(own, o)) is not None
    ]
    return ratio, (sum(t - u for t, u in both) if both else None)


def _field(
    system: str,
    baseline: str,
    dataset: str,
    field: str,
    direction: Direction,
    base: Columns,
    own: Columns,
    ids: list[str],
    pairs: list[tuple[int, int]],
    analysis: Analysis,
    savings: tuple[float | None, float | None, float | None, str | None],
    coverage: tuple[float | None, list[str], list[str]],
    turns: dict[str, list[float | None]] | None,
) -> Comparison:
    before_column, after_column = base.scores[field], own.scores[field]
    before = [before_column[b] for b, _ in pairs]
    after = [after_column[o] for _, o in pairs]
    test = paired(before, after, alpha=analysis.alpha) if pairs else None
    base_passed = base.passing(field, direction, analysis.threshold)
    own_passed = own.passing(field, direction, analysis.threshold)
    passed = zip(pairs, [base_passed[b] for b, _ in pairs], [own_passed[o] for _, o in pairs], strict=True)
    lost, gained, lost_at = [], [], []
    for (_, o), b, a in passed:
        if b != a:
            (lost if b else gained).append(ids[o])
            if b:
                lost_at.append(o)
    ratio, tokens_saved, cost_saved, cost_source = savings
    return Comparison(
        system,
        baseline,
        dataset,
        field,
        **verdict(test, analysis.alpha),
        compression_ratio=ratio,
        tokens_saved=tokens_saved,
        cost_saved=cost_saved,
        lost=lost,
        gained=gained,
        coverage=coverage[0],
        only_baseline=coverage[1],
        only_system=coverage[2],
        cost_source=cost_source,
        direction=direction.name,
        lost_by_cause=_by_cause(own, lost_at),
        cost_per_turn=turns,
        stops_paying_from_turn=stops_paying_from(turns["baseline"], turns["system"]) if turns else None,
    )


def _turns(
    base: Columns,
    own: Columns,
    pairs: list[tuple[int, int]],
    base_price: Price | None,
    own_price: Price | None,
) -> dict[str, list[float | None]] | None:
    """Both sides' cost per turn over the pairs, when both have turns and their dollars come from
    one source (both priced by ``--price``, or both the upstream's reported cost)."""
    if base.turns is None or own.turns is None or (base_price is None) != (own_price is None):
        return None
    return paired_cost_per_turn(base.turns, own.turns, pairs, (base_price, own_price))


def _by_cause(own: Columns, lost_at: list[int]) -> dict[str, int] | None:
    """The lost rows (their positions in ``own``) by cause: the evidence dropped, or kept and the
    answer wrong; a lost row without evidence is in neither.  None where no row marks evidence."""
    if own.evidence is None:
        return None
    causes = [loss_cause(own.evidence[o]) for o in lost_at]
    return {"evidence_dropped": causes.count(EVIDENCE_DROPPED), "evidence_kept": causes.count(EVIDENCE_KEPT)}


def verdict(test: PairedTest | None, alpha: float) -> dict[str, Any]:
    """A paired test as a comparison's figures: the difference, its (finite) interval, the p-value,
    the test, whether p is below ``alpha`` and the minimum detectable difference; all None (n 0)
    without a test."""
    if test is None:
        return {
            "delta": None,
            "ci": None,
            "p_value": None,
            "n": 0,
            "test": None,
            "significant": None,
            "mdd": None,
        }
    finite = test.low is not None and math.isfinite(test.low) and math.isfinite(test.high)  # type: ignore[arg-type]
    return {
        "delta": test.delta,
        "ci": [test.low, test.high] if finite else None,
        "p_value": test.p_value,
        "n": test.n,
        "test": test.test,
        "significant": None if test.p_value is None else test.p_value < alpha,
        "mdd": test.mdd,
    }


def notes(
    comparisons: Sequence[Comparison],
    costs: Mapping[Key, Cost],
    tokens: Mapping[Key, Tokens],
    analysis: Analysis,
) -> list[str]:
    """What a reader of the comparisons must know: each system that lacks some of the baseline's
    rows ("4 of 10 rows shared") and what they counted as, and the savings left out because the
    two sides' dollars do not come from one source or one side reported no tokens (a line each)."""
    lines = []
    mixed, tokenless = [], []
    seen = set()
    for c in comparisons:
        key = (c.system, c.dataset)
        if key in seen:
            continue
        seen.add(key)
        if c.shared():
            counted = (
                "compared on the shared rows alone (--allow-missing)"
                if analysis.allow_missing
                else f"the {len(c.only_baseline)} it lacks count as its failures in every figure and gate "
                "(--allow-missing: compare the shared rows alone)"
            )
            lines.append(f"{c.system} on {c.dataset}: {c.shared()} with the baseline {c.baseline}; {counted}")
        sources = (costs[(c.baseline, c.dataset)].source, costs[key].source)
        if None not in sources and sources[0] != sources[1]:
            mixed.append(f"{c.system} ({sources[1]}) against {c.baseline} ({sources[0]}) on {c.dataset}")
        if (tokens[(c.baseline, c.dataset)].total is None) != (tokens[key].total is None):
            tokenless.append(f"{c.system} against {c.baseline} on {c.dataset}")
    if mixed:
        lines.append(
            "no dollars saved where the two sides' costs come from different sources (reported by the "
            f"endpoint, or priced by --price): {'; '.join(mixed)}; --price MODEL=IN,OUT prices every call "
            "of a model, so both sides of one model are priced alike"
        )
    if tokenless:
        lines.append(
            "no tokens saved or compression ratio where one side reported no token counts: "
            + "; ".join(tokenless)
        )
    return lines
