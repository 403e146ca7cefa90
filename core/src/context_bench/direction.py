"""Which way a score field points: the one definition every figure, report and gate reads.

A field is higher-is-better unless an evaluator declares it lower-is-better
(``EvaluatorSpec(lower_is_better=...)``, or the same attribute on an evaluator no plugin
registers).  Whatever orders two values of a field asks its :class:`Direction`: whether a row
passes the threshold (pass rate, lost and gained), which of two means is better (the frontier),
what a paired difference says in words and whether its interval lies on the worse side
(``--fail-if-worse``, ``compare``), which bound a mean gate sets (``--fail-under`` a floor,
``--fail-over`` a ceiling, ``assert_scores``), and what a failed row counts (the field's worst
value).  A figure that orders values (pairwise wins, a sweep's best setting) asks here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs


@attrs.frozen
class Direction:
    """One field's direction: ``name`` is ``"higher"`` or ``"lower"`` (what is better)."""

    name: str

    @property
    def lower(self) -> bool:
        return self.name == "lower"

    @property
    def sign(self) -> str:
        """How a passing value relates to the threshold: ``≥`` or ``≤``."""
        return "≤" if self.lower else "≥"

    def passing(self, values: Iterable[float], threshold: float) -> list[bool]:
        """Whether each value passes: reaches the threshold, at least it, or at most it where
        lower is better (NaN, a row without the value, never passes).  A column at a time: the
        summary asks it of every row."""
        if self.lower:
            return [value <= threshold for value in values]
        return [value >= threshold for value in values]

    def passes(self, value: float, threshold: float) -> bool:
        """Whether one value passes (:meth:`passing`)."""
        return self.passing((value,), threshold)[0]

    def gain(self, difference: float) -> float:
        """A difference (or a value) read as a gain: positive when it is better."""
        return -difference if self.lower else difference

    def gains(self, interval: Iterable[float]) -> tuple[float, float]:
        """An interval of differences read as gains, lowest first."""
        low, high = sorted(self.gain(bound) for bound in interval)
        return low, high

    def words(self, difference: float) -> str:
        """The sign of a difference in words: ``better``, ``worse``, or ``same`` for none."""
        gained = self.gain(difference)
        return "better" if gained > 0 else "worse" if gained < 0 else "same"

    def label(self, field: str) -> str:
        """The field as a header names it: ``profanity ↓`` where lower is better."""
        return f"{field} ↓" if self.lower else field


HIGHER = Direction("higher")
LOWER = Direction("lower")
#: What the table and Markdown say of the ``↓`` beside a field.
LOWER_MARK = "↓: lower is better"


def named(name: str | None) -> Direction:
    """The direction a report writes as ``name`` (anything but ``"lower"`` is higher)."""
    return LOWER if name == LOWER.name else HIGHER


@attrs.frozen
class Directions:
    """The lower-is-better fields of a run, each with the value a failed row counts there (its
    worst: the top of its declared range, 1 without one); every other field is higher-is-better
    and a failed row counts 0 in it."""

    lower: Mapping[str, float] = attrs.Factory(dict)

    @classmethod
    def reported(cls, fields: Mapping[str, Any]) -> Directions:
        """What a JSON report's ``summary.score_fields`` says (a saved report read back)."""
        return cls(
            {
                str(field): float(info.get("failure_value", 1.0))
                for field, info in fields.items()
                if isinstance(info, Mapping) and info.get("direction") == LOWER.name
            }
        )

    def of(self, field: str) -> Direction:
        return LOWER if field in self.lower else HIGHER

    def failure_value(self, field: str) -> float:
        return self.lower.get(field, 0.0)

    def merged(self, other: Directions) -> Directions:
        """These fields, and ``other``'s that these do not name."""
        return Directions({**other.lower, **self.lower})
