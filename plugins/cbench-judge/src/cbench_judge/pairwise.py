"""Pairwise judging: which of two answers is better, asked twice with the answers swapped.

A judge prefers a position (MT-Bench's authors found the first answer favoured), so every pair is
judged in both orders and a verdict counts only when the two agree; otherwise the pair is a tie,
counted as position-inconsistent.  A pair whose either call failed (no answer, or no verdict in
it) is neither a win nor a tie: it is counted as failed, with its reason.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from . import loop
from .errors import JudgeConfigError, JudgeParseError
from .verdicts import plain

if TYPE_CHECKING:
    from .client import JudgeClient

#: The final verdict every pairwise template asks for: ``[[A]]``, ``[[B]]`` or ``[[C]]`` (a tie).
_VERDICT = re.compile(r"\[\[\s*(A|B|C|tie)\s*\]\]", re.I)

_ENDING = (
    "After a short explanation, give your final verdict strictly in this format: [[A]] if "
    "assistant A's answer is better, [[B]] if assistant B's answer is better, [[C]] for a tie."
)
_IMPARTIAL = (
    "Please act as an impartial judge and evaluate the quality of the answers two AI assistants "
    "gave to the user question below. Choose the assistant that follows the user's instructions "
    "and answers the question better, considering helpfulness, relevance, accuracy, depth and "
    "level of detail. Do not let the order of the answers, their length or the assistants' names "
    "influence you; be as objective as possible."
)
_ANSWERS = (
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)

#: The built-in templates (``--pairwise-template``): MT-Bench's pairwise prompt without and with a
#: reference answer, and AlpacaEval's instruction-following comparison.  Placeholders:
#: ``{question}``, ``{answer_a}``, ``{answer_b}`` and, for a reference template, ``{reference}``.
TEMPLATES: dict[str, str] = {
    "mt_bench": f"{_IMPARTIAL} {_ENDING}\n\n[User Question]\n{{question}}\n\n{_ANSWERS}",
    "mt_bench_reference": (
        f"{_IMPARTIAL} You are given a reference answer: compare both answers with it, identify "
        f"and correct any mistakes. {_ENDING}\n\n[User Question]\n{{question}}\n\n"
        f"[The Start of Reference Answer]\n{{reference}}\n[The End of Reference Answer]\n\n{_ANSWERS}"
    ),
    "alpaca_eval": (
        "You are a helpful assistant that ranks models by the quality of their answers. Below is an "
        "instruction and the outputs of two assistants. Select the output that is more helpful, "
        f"accurate and harmless for a human reader. {_ENDING}\n\n"
        "## Instruction\n{question}\n\n## Output of assistant A\n{answer_a}\n\n"
        "## Output of assistant B\n{answer_b}"
    ),
}

#: A pair's outcome for the system against the baseline.
WIN, TIE, LOSS = "win", "tie", "loss"


def template_text(name: str) -> str:
    """A built-in template by name, or the text itself when it has the answers' placeholders."""
    if name in TEMPLATES:
        return TEMPLATES[name]
    if "{answer_a}" in name and "{answer_b}" in name:
        return name
    raise JudgeConfigError(
        f"unknown pairwise template {name!r}: use one of {', '.join(TEMPLATES)} or a text with "
        "{question}, {answer_a} and {answer_b}"
    )


def read_verdict(text: str) -> str:
    """``A``, ``B`` or ``C`` (a tie): the last ``[[X]]`` in the judge's answer."""
    found = _VERDICT.findall(plain(text)) if isinstance(text, str) else []
    if not found:
        flat = " ".join(str(text).split())
        raise JudgeParseError(f"no [[A]], [[B]] or [[C]] verdict in {flat[:120]!r}")
    last = found[-1].upper()
    return "C" if last == "TIE" else last


@attrs.frozen
class PairVerdict:
    """One row's judgement: the outcome for the system in each order (system first, then second),
    the outcome that counts, and the failure that left it without one."""

    first: str | None
    second: str | None
    failure: str | None = None

    @property
    def outcome(self) -> str | None:
        """The agreed outcome, a tie when the orders disagree, None when a call failed."""
        if self.failure is not None:
            return None
        return self.first if self.first == self.second else TIE

    @property
    def consistent(self) -> bool:
        return self.failure is None and self.first == self.second


_AS_SYSTEM_FIRST = {"A": WIN, "B": LOSS, "C": TIE}
_AS_SYSTEM_SECOND = {"A": LOSS, "B": WIN, "C": TIE}


class PairwiseJudge:
    """Asks ``client`` which of two answers is better, in both orders, with ``template``."""

    def __init__(self, client: JudgeClient, template: str = "mt_bench") -> None:
        self.client = client
        self.text = template_text(template)
        self.template = template if template in TEMPLATES else "custom"

    def needs_reference(self) -> bool:
        return "{reference}" in self.text

    def _prompt(self, question: str, reference: str | None, a: str, b: str) -> str:
        values = {"question": question, "reference": reference or "", "answer_a": a, "answer_b": b}
        return self.text.format(**values)

    async def ask(
        self, question: str, reference: str | None, a: str, b: str
    ) -> tuple[str | None, str | None]:
        """One order's verdict, ``A``, ``B`` or ``C``, or None and why the call failed."""
        from .base import verdict  # the client, imported when a judge asks, not when the CLI is built

        scores = await verdict(
            self.client,
            [{"role": "user", "content": self._prompt(question, reference, a, b)}],
            lambda text: {"verdict": read_verdict(text)},
            {"verdict": None},
            False,
        )
        return scores["verdict"], scores.failure

    async def _judge(self, question: str, reference: str | None, system: str, baseline: str) -> PairVerdict:
        (first, failed_first), (second, failed_second) = await asyncio.gather(
            self.ask(question, reference, system, baseline),
            self.ask(question, reference, baseline, system),
        )
        failure = failed_first or failed_second
        if failure is not None:
            return PairVerdict(None, None, failure)
        return PairVerdict(_AS_SYSTEM_FIRST[first], _AS_SYSTEM_SECOND[second])

    def judge_all(self, pairs: list[Mapping[str, Any]]) -> list[PairVerdict]:
        """Every pair (``question``, ``reference``, ``system``, ``baseline``), concurrently; the
        client bounds the requests in flight."""

        async def every() -> list[PairVerdict]:
            return list(
                await asyncio.gather(
                    *(
                        self._judge(p["question"], p.get("reference"), p["system"], p["baseline"])
                        for p in pairs
                    )
                )
            )

        return loop.run_sync(every())
