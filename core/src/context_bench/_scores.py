"""A score dict that can also say *why* it is what it is."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


class Scores(dict[str, Any]):
    """The scores of one evaluator for one row, plus an optional soft failure and token usage.

    It compares equal to a plain dict, so an evaluator's documented return value still holds.  An
    evaluator returns one when a score is a fallback rather than a verdict (a judge call that failed
    scores 0.0 with ``failure="call_error: ..."``, a check that timed out, ...).  The runner
    records ``failure`` on the row and counts failures per evaluator in the summary, so a dead
    endpoint never passes for a bad system.  ``usage`` (``input_tokens``, ``output_tokens``) lets a
    run report what its judges cost.  ``weights`` give a field's weight in the summary's mean (by
    default every row weighs 1): a row that scores the fraction of its 3 instructions followed
    weighs 3, so the mean is the fraction of all instructions followed.

    Its values are numbers; a template judge's also carry the judge's grade, a string.
    """

    __slots__ = ("failure", "usage", "weights")

    def __init__(
        self,
        scores: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
        *,
        failure: str | None = None,
        usage: Mapping[str, float] | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(scores)
        self.failure = failure
        self.usage = dict(usage) if usage else None
        self.weights = dict(weights) if weights else None

    def __reduce__(self) -> tuple[Callable[..., Scores], tuple[object, ...]]:
        return (_rebuild, (dict(self), self.failure, self.usage, self.weights))


def _rebuild(
    scores: dict[str, Any],
    failure: str | None,
    usage: dict[str, float] | None,
    weights: dict[str, float] | None = None,
) -> Scores:
    return Scores(scores, failure=failure, usage=usage, weights=weights)
