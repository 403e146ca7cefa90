"""The structural types a user or plugin implements; none of them needs an import from context_bench."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Evaluator(Protocol):
    """Scores one processed example against its original.

    Any object with a ``name`` and a ``score`` method is an evaluator.  It may also offer
    ``async def ascore(original, processed)``, which the runner awaits instead of calling ``score``
    in a worker thread (the right choice for network-bound judges).  An evaluator that does not
    apply to an example returns an empty dict.  One with something to say about the whole run
    (a sandbox layer that was off) offers ``notices() -> list[str]``: the summary's warnings
    show each line.
    """

    @property
    def name(self) -> str: ...

    def score(self, original: dict[str, Any], processed: dict[str, Any]) -> dict[str, float]: ...


@runtime_checkable
class System(Protocol):
    """The system under test: turns an example into at least ``{"response": str}``.

    It may also offer ``async def aprocess(example)``.  Optional keys in the returned dict that the
    runner records: ``input_tokens``, ``output_tokens``, ``cost``.
    """

    @property
    def name(self) -> str: ...

    def process(self, example: dict[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class Metric(Protocol):
    """Aggregates the rows of one (system, data set) group into named figures."""

    @property
    def name(self) -> str: ...

    def compute(self, rows: Sequence[Any]) -> dict[str, float]: ...
