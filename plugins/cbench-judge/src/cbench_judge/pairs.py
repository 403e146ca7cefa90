"""The pairs a pairwise judge is asked about: per (system, data set), every row both the system and
the baseline answered, gathered from rows as ``score`` reads them (a ``system``, a data set and an
``id`` per row, the system's ``response``), whether from files (``context-bench pairwise``) or from
a run's finished rows (``--pairwise``).  A row either system did not answer (an error, no
response) is counted as unanswered, never judged."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import attrs

from .base import as_text
from .rating import QUESTION_KEYS, reference_of


@attrs.frozen
class Pairs:
    """One (system, data set)'s pairs: ``id``, ``question``, ``reference``, ``system``, ``baseline`` each."""

    pairs: list[dict[str, Any]]
    unanswered: int = 0

    def length_differences(self) -> list[float]:
        """The system's answer length minus the baseline's, per pair (what length control reads)."""
        return [len(p["system"]) - len(p["baseline"]) for p in self.pairs]


def answered(row: dict[str, Any]) -> str | None:
    """The row's response as text, or None when its system gave none (an error).  An empty response
    is an answer, judged as any other: leaving it out would raise the win rate of a system that
    answers nothing where it cannot answer well."""
    response = row.get("response")
    if row.get("errors") or response is None:
        return None
    return as_text(response)


class Answers:
    """Rows of several systems by data set and id, then paired against a baseline."""

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)  # dataset -> id -> system -> row
        self.systems: dict[str, None] = {}

    def add(self, row: dict[str, Any], dataset: str, key: str) -> bool:
        """One system's row (``system`` in it); False, and the row left out, when the system
        answered that id of ``dataset`` already."""
        system = str(row["system"])
        self.systems[system] = None
        by_system = self._rows[dataset].setdefault(key, {})
        if system in by_system:
            return False
        by_system[system] = row
        return True

    def paired(self, baseline: str) -> dict[tuple[str, str], Pairs]:
        """Per (system, data set), every other system's pairs with ``baseline``."""
        found = {}
        others = [s for s in self.systems if s != baseline]
        for dataset, by_id in self._rows.items():
            for system in others:
                pairs, unanswered = [], 0
                for key, rows in by_id.items():
                    if system not in rows or baseline not in rows:
                        continue
                    ours, theirs = answered(rows[system]), answered(rows[baseline])
                    if ours is None or theirs is None:
                        unanswered += 1
                        continue
                    original = rows[baseline]
                    question = next(
                        (original[k] for k in QUESTION_KEYS if original.get(k) not in (None, "")), ""
                    )
                    pairs.append(
                        {
                            "id": key,
                            "question": as_text(question),
                            "reference": reference_of(original),
                            "system": ours,
                            "baseline": theirs,
                        }
                    )
                found[(system, dataset)] = Pairs(pairs, unanswered)
        return found
