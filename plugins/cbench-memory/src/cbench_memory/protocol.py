"""The memory system a benchmark runs: what a user implements (no import from cbench_memory needed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class MemorySystem(Protocol):
    """A memory layer: ingests a conversation, then answers questions about it.

    ``query`` returns the answer, or a mapping with ``response`` plus optional token counts.
    """

    @property
    def name(self) -> str: ...

    def reset(self) -> None: ...

    def ingest(self, turns: Iterable[Mapping[str, Any]]) -> None: ...

    def query(self, question: str) -> str | Mapping[str, Any]: ...
