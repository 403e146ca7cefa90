"""The IFEval evaluator: IFEval's four accuracies for one row, with the reference's verdicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from context_bench import Scores

from .fields import FIELDS
from .rules import Check, InstructionError, build_check
from .text import Text, loose_variants


@attrs.frozen
class Verdicts:
    """Per-instruction verdicts of one response, in the order of ``instruction_id_list``."""

    strict: tuple[bool, ...]
    loose: tuple[bool, ...]

    def scores(self) -> dict[str, float]:
        n = len(self.strict)
        figures = (all(self.strict), all(self.loose), sum(self.strict) / n, sum(self.loose) / n)
        return dict(zip(FIELDS, map(float, figures), strict=True))


def build_checks(instruction_ids: Any, kwargs: Any) -> list[Check]:
    """The verdict functions of a row's instructions; errors name the instruction and its position."""
    if isinstance(instruction_ids, str) or not isinstance(instruction_ids, Sequence) or not instruction_ids:
        raise InstructionError(
            f"'instruction_id_list' must be a non-empty list of ids, got {instruction_ids!r}"
        )
    if kwargs is None:
        kwargs = [None] * len(instruction_ids)
    if isinstance(kwargs, str) or not isinstance(kwargs, Sequence) or len(kwargs) != len(instruction_ids):
        raise InstructionError(
            f"'kwargs' must be a list with one entry per instruction ({len(instruction_ids)}), got {kwargs!r}"
        )
    checks = []
    for index, (instruction_id, args) in enumerate(zip(instruction_ids, kwargs, strict=True)):
        try:
            checks.append(build_check(instruction_id, args))
        except InstructionError as exc:
            raise InstructionError(f"instruction {index}: {exc}") from None
    return checks


def judge(checks: Sequence[Check], response: str) -> Verdicts:
    """Strict and loose verdicts of ``response`` for each check.

    Strict: the response follows the instruction.  Loose: the response or one of its loose
    variants does.  A blank text follows nothing.
    """
    texts = [Text(v) if v.strip() else None for v in loose_variants(response)]
    first, others = texts[0], [t for t in texts[1:] if t is not None]
    strict, loose = [], []
    for check in checks:
        followed = first is not None and check(first)
        strict.append(followed)
        loose.append(followed or any(check(t) for t in others))
    return Verdicts(tuple(strict), tuple(loose))


class IFEvalChecker:
    """Google's IFEval verifiable instructions, verdict for verdict with the reference checker.

    Reads ``original["instruction_id_list"]`` and ``original["kwargs"]`` (Google's layout, or
    Hugging Face's where unused keys are None) and ``processed["response"]``.  ``ifeval_strict``
    and ``ifeval_loose`` are IFEval's prompt-level accuracies for the row, ``ifeval_inst_strict``
    and ``ifeval_inst_loose`` the fraction of its instructions followed.  A row IFEval cannot
    score (unknown instruction id, malformed kwargs, no response) raises
    :class:`InstructionError` naming what is wrong.
    """

    name = "ifeval"

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        checks = build_checks(original.get("instruction_id_list"), original.get("kwargs"))
        response = processed.get("response")
        if not isinstance(response, str):
            raise InstructionError(f"processed['response'] must be a string, got {type(response).__name__}")
        count = float(len(checks))
        # Instruction-level accuracy counts every instruction once, so the row weighs its count.
        return Scores(judge(checks, response).scores(), weights=dict.fromkeys(FIELDS[2:], count))
