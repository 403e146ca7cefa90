"""The verdict every report starts with: one line per system against the baseline on each data set.

A line says what the user asked (``compressed vs baseline on hotpotqa: 0.54x input tokens (-46%),
f1 -0.525 [-0.62, -0.44], significant (p=0.002), 20 of 80 rows lost, 0 gained``), read from the
summary's comparison on the data set's primary score: the figures are the summary's, computed
once, never again here.  With one system (no baseline) each data set's line gives its primary
score with its interval.
"""

from __future__ import annotations

import textwrap

import attrs

from ..direction import named
from ..records import Comparison, GroupSummary, Summary
from ._sections import mean, printable
from .numbers import interval, money, p_value, ratio

#: Up to this many data sets the verdict keeps the run's order; with more, the worst come first.
FEW = 4
#: How a wrapped verdict's continuation lines are indented.
INDENT = "  "
_GLUE = "\x00"  # holds a figure's words together while wrapping: printable() leaves no NUL


@attrs.frozen
class Verdict:
    """One line of the verdict: who on what (``head``), then its figures (``parts``)."""

    head: str
    parts: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.head}: {', '.join(self.parts)}"

    def wrapped(self, width: int) -> list[str]:
        """The line cut to ``width`` between its figures (or before an interval), continuation
        lines indented; a figure is cut only when it alone is wider."""
        parts = [printable(p).replace(" ", _GLUE).replace(_GLUE + "[", " [") for p in self.parts]
        text = " ".join([printable(self.head) + ":", *(p + "," for p in parts[:-1]), *parts[-1:]])
        lines = textwrap.wrap(text, width, subsequent_indent=INDENT, break_on_hyphens=False)
        return [line.replace(_GLUE, " ") for line in lines]


def verdicts(summary: Summary) -> list[Verdict]:
    """The report's first lines: every system against the baseline on each data set, on the primary
    score (the worst data sets first, by the field's direction, when there are more than
    :data:`FEW`); each data set's primary
    score when there is nothing to compare."""
    chosen = list(primary(summary).values())
    if not chosen:
        return [_alone(g, summary) for g in summary.groups]
    if len({c.dataset for c in chosen}) > FEW:
        chosen.sort(key=lambda c: (c.delta is None, c.delta and named(c.direction).gain(c.delta)))
    return [_against(c, summary.alpha) for c in chosen]


def primary(summary: Summary) -> dict[tuple[str, str], Comparison]:
    """Per (system, data set), its comparison on the group's primary score (its pass figures'
    field), else on the first field both sides share."""
    field = {(g.system, g.dataset): g.passing.field for g in summary.groups}
    chosen: dict[tuple[str, str], Comparison] = {}
    for c in summary.comparisons:
        key = (c.system, c.dataset)
        if key not in chosen or c.field == field.get(key):
            chosen[key] = c
    return chosen


def significance(c: Comparison, alpha: float) -> str:
    """ "significant (p=0.002)", "not significant (p=0.31)", or "too few rows to tell"."""
    if c.significant is None:
        return "too few rows to tell"
    p = p_value(c.p_value, alpha)
    said = p if p.startswith("<") else f"={p}"
    return f"{'significant' if c.significant else 'not significant'} (p{said})"


def _against(c: Comparison, alpha: float) -> Verdict:
    parts = []
    if c.compression_ratio is not None:
        parts.append(f"{ratio(c.compression_ratio)} input tokens ({c.compression_ratio - 1:+.0%})")
    if c.cost_saved is not None:
        parts.append(f"{money(c.cost_saved)} saved")
    direction = named(c.direction)
    field = direction.label(str(c.field))
    if c.delta is None:
        parts.append(f"{field}: no pair to compare")
    else:
        # where lower is better the sign alone misleads: the words say which way it went
        said = f" {direction.words(c.delta)}" if direction.lower and c.delta else ""
        parts.append(f"{field} {c.delta:+.3f}{said}" + (f" {interval(c.ci)}" if c.ci else ""))
    parts.append(significance(c, alpha))
    if c.shared():
        parts.append(c.shared())
    parts.append(f"{len(c.lost)} of {c.n} rows lost, {len(c.gained)} gained")
    return Verdict(f"{c.system} vs {c.baseline} on {c.dataset}", tuple(parts))


def _alone(g: GroupSummary, summary: Summary) -> Verdict:
    field = g.passing.field if g.passing.field in g.scores else next(iter(g.scores), g.passing.field)
    label = summary.direction(field).label(field)
    ci = None if g.failed_on_every_row(field) else g.ci.get(field)
    parts = [f"{label} {mean(g, field)}" + (f" {interval(ci)}" if ci else "")]
    parts.append(f"{g.rows} row{'s' * (g.rows != 1)}")
    if g.errors:
        parts.append(f"{g.errors} error{'s' * (g.errors != 1)}")
    if g.cost.dollars is not None:
        parts.append(money(g.cost.dollars))
    return Verdict(f"{g.system} on {g.dataset}", tuple(parts))
