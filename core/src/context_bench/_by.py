"""``--by FIELD``: every group's figures and comparisons again for each part of its rows, by a
field of the input rows (a benchmark's length buckets, its questions' difficulty, the position of
the document that holds the answer).

A field's value names its part as it is (``--by difficulty``: ``easy``, ``hard``), or, with
numeric bins (``--by length:0-4000,4000-8000,8000-``), the bin that holds it: ``LOW-HIGH`` holds
``LOW <= value < HIGH``, ``LOW-`` every value from ``LOW`` on, as length buckets of ``0-4k``,
``4-8k`` and ``8k+`` do.  A row without the field is in the part ``(none)``, a value no bin holds in
``(other)``, so the parts' rows add up to the group's.

Each part is summarized by a summarizer of its own (the run's settings, the run's baseline), so a
part's means, intervals, pass rate, tokens, dollars, latency and comparisons are computed by the
code that computes the group's, never a second way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from .errors import UsageError
from .records import ByPart, EvalRow, Summary

#: A :class:`~context_bench._summary.Summarizer` (not imported: it imports this module).
Summarizer = Any

#: The part of the rows that lack the field, and of values no bin holds.
NONE, OTHER = "(none)", "(other)"

_BIN = re.compile(r"(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)?")
_FORM = "--by FIELD, or --by FIELD:LOW-HIGH,...,LOW- for numeric bins (--by length:0-4000,4000-8000,8000-)"


@attrs.frozen
class Bin:
    """``low <= value < high`` (``high`` None: no upper end), shown as it was written."""

    label: str
    low: float
    high: float | None

    def holds(self, value: float) -> bool:
        return self.low <= value and (self.high is None or value < self.high)


@attrs.frozen
class By:
    """One ``--by``: the row field, and its bins (none: each value is a part)."""

    field: str
    bins: tuple[Bin, ...] = ()

    @classmethod
    def parse(cls, text: str) -> By:
        """``FIELD`` or ``FIELD:BINS``; a bin that is not ``LOW-HIGH`` or ``LOW-``, an empty one
        and two that overlap are a UsageError."""
        field, colon, spec = text.partition(":")
        field = field.strip()
        if not field or (colon and not spec.strip()):
            raise UsageError(f"--by {text}: {_FORM}")
        if not colon:
            return cls(field)
        bins = []
        for part in spec.split(","):
            found = _BIN.fullmatch(part.strip())
            if found is None:
                raise UsageError(f"--by {text}: {part.strip()!r} is not a bin ({_FORM})")
            low, high = float(found[1]), None if found[2] is None else float(found[2])
            if high is not None and high <= low:
                raise UsageError(f"--by {text}: the bin {part.strip()} holds no value (LOW-HIGH, LOW < HIGH)")
            bins.append(Bin(part.strip(), low, high))
        ordered = sorted(bins, key=lambda b: b.low)
        for first, then in zip(ordered, ordered[1:], strict=False):
            if first.high is None or then.low < first.high:
                raise UsageError(f"--by {text}: the bins {first.label} and {then.label} overlap")
        return cls(field, tuple(ordered))

    def part(self, row: EvalRow) -> str:
        """The part ``row`` is in: its input row's field (else its ``meta``'s), or its bin."""
        example = row.example
        value = example.get(self.field) if isinstance(example, Mapping) else None
        if value is None:
            value = row.meta.get(self.field)
        if value is None:
            return NONE
        if not self.bins:
            return str(value)
        number = _number(value)
        if number is None:
            return OTHER
        return next((b.label for b in self.bins if b.holds(number)), OTHER)

    def order(self, parts: Iterable[str]) -> list[str]:
        """The parts as a table shows them: the bins in order, else the values (numbers by
        number), then ``(other)`` and ``(none)``."""
        parts = set(parts)
        if self.bins:
            found = [b.label for b in self.bins if b.label in parts]
        else:
            values = parts - {NONE, OTHER}
            found = sorted(values, key=lambda v: (0, _number(v), "") if _number(v) is not None else (1, 0, v))
        return found + [p for p in (OTHER, NONE) if p in parts]


def by_options(texts: Sequence[str]) -> tuple[By, ...]:
    """The ``--by`` flags read; a field given twice is a UsageError."""
    found = tuple(By.parse(text) for text in texts)
    fields = [by.field for by in found]
    for field in fields:
        if fields.count(field) > 1:
            raise UsageError(f"--by {field} is given twice: give each field once")
    return found


def check_fields(by: Sequence[By], rows: Mapping[str, Sequence[Any]]) -> None:
    """Before the run: a ``--by`` field no row read so far (each data set's first rows) has is a
    UsageError, naming the fields they have."""
    for one in by:
        having = [row for head in rows.values() for row in head if isinstance(row, Mapping)]
        if not any(one.field in row for row in having):
            fields = ", ".join(sorted({str(key) for row in having[:100] for key in row})) or "none"
            raise UsageError(f"--by {one.field}: no row has a field {one.field!r} (the rows have {fields})")


class Parts:
    """The rows of a run split by each ``--by``, each part counted by a summarizer of its own
    (``make``: one with the run's settings and no ``--by``)."""

    def __init__(self, by: Sequence[By], make: Callable[[], Summarizer]) -> None:
        self.by = tuple(by)
        self._make = make
        self._parts: dict[str, dict[str, Summarizer]] = {one.field: {} for one in self.by}

    def add(self, row: EvalRow) -> None:
        for one in self.by:
            parts = self._parts[one.field]
            name = one.part(row)
            found = parts.get(name)
            if found is None:
                found = parts[name] = self._make()
            found.add(row)

    def attach(self, summary: Summary, run: Summarizer) -> Summary:
        """``summary`` with each group's parts (``GroupSummary.by``), summarized with ``run``'s
        directions, judges' models and baseline."""
        if not self.by:
            return summary
        found: dict[tuple[str, str], dict[str, list[ByPart]]] = {}
        for one in self.by:
            parts = self._parts[one.field]
            for name in one.order(parts):
                part = parts[name]
                part.directions, part.judge_models = run.directions, run.judge_models
                # where the baseline has no row, no other system stands in for it: nothing is
                # compared and no row counts as missing
                alone = summary.baseline not in {system for system, _ in part.groups}
                allow = part.analysis.allow_missing or alone
                part.analysis = attrs.evolve(part.analysis, baseline=summary.baseline, allow_missing=allow)
                own = part.finish()
                for g in own.groups:
                    compared = [
                        c
                        for c in own.comparisons
                        if (c.system, c.dataset) == (g.system, g.dataset) and c.baseline == summary.baseline
                    ]
                    parts_of = found.setdefault((g.system, g.dataset), {})
                    parts_of.setdefault(one.field, []).append(ByPart(name, g, compared))
        groups = [attrs.evolve(g, by=found.get((g.system, g.dataset), {})) for g in summary.groups]
        return attrs.evolve(summary, groups=groups)


def _number(value: Any) -> float | None:
    """A value as a number, when it is one (or its text is one)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None
