"""Bias probes (``judge-check --probes``): pairs where the fair verdict is known, asked of a judge.

- ``position``: the same answer in both places; any verdict but a tie prefers a position.
- ``length``: an answer against itself padded with sentences that add nothing; preferring the
  padded one is length bias.
- ``verbosity``: a correct answer against the same answer in a longer, list-shaped format that
  says nothing more; preferring the reformatted one is verbosity bias.

Each verdict is one trial (the length and verbosity pairs are asked in both orders, the position
pair once, its two orders being the same prompt); a failed call is counted apart, not a trial
(for a pair asked in both orders, both its verdicts).
"""

from __future__ import annotations

import asyncio

import attrs

from context_bench.metrics.intervals import wilson

from . import loop
from .pairwise import WIN, PairwiseJudge

#: (question, a correct answer): short, checkable facts, so only the form differs within a pair.
ITEMS = (
    ("What is the capital of France?", "The capital of France is Paris."),
    ("Who wrote Hamlet?", "William Shakespeare wrote Hamlet."),
    ("What is 12 times 12?", "12 times 12 is 144."),
    ("What is the chemical symbol for gold?", "The chemical symbol for gold is Au."),
    ("How many continents are there?", "There are seven continents."),
    ("What planet is closest to the Sun?", "Mercury is the planet closest to the Sun."),
    ("In which year did the Second World War end?", "The Second World War ended in 1945."),
    ("What gas do plants absorb from the air for photosynthesis?", "Plants absorb carbon dioxide."),
)

_PADDING = (
    " Questions like this come up often. It is worth taking a moment to think about them. Many people"
    " find this kind of topic interesting, and there is always more one could say about it."
)


def _reformatted(answer: str) -> str:
    return (
        f"Here is a detailed answer:\n\n- **Answer:** {answer}\n- **Summary:** {answer}\n\nI hope this helps!"
    )


@attrs.frozen
class ProbeResult:
    """One probe: verdicts that showed the bias, of ``n`` answered, with Wilson's interval."""

    probe: str
    biased: int
    n: int
    rate: float | None
    ci: tuple[float, float] | None
    failed: int


def _result(probe: str, flags: list[bool | None]) -> ProbeResult:
    answered = [flag for flag in flags if flag is not None]
    n, biased = len(answered), sum(answered)
    return ProbeResult(
        probe, biased, n, biased / n if n else None, wilson(biased, n) if n else None, len(flags) - n
    )


def run_probes(judge: PairwiseJudge) -> list[ProbeResult]:
    """The three probes over :data:`ITEMS`."""

    async def position() -> list[bool | None]:
        found = await asyncio.gather(*(judge.ask(q, None, a, a) for q, a in ITEMS))
        return [None if verdict is None else verdict != "C" for verdict, _ in found]

    results = [_result("position", loop.run_sync(position()))]
    for probe, changed in (("length", lambda a: a + _PADDING), ("verbosity", _reformatted)):
        verdicts = judge.judge_all(
            [{"question": q, "reference": None, "system": changed(a), "baseline": a} for q, a in ITEMS]
        )
        flags: list[bool | None] = []
        for v in verdicts:
            flags += [None, None] if v.failure else [v.first == WIN, v.second == WIN]
        results.append(_result(probe, flags))
    return results
