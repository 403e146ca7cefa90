"""Whether the evidence an answer needs reached the model: the share of a row's evidence passages
found whole in the prompt the model received, and why each row a system lost against the baseline
was lost (docs/savings.md, "Where the loss comes from").

Passages and prompt are compared as the answer evaluators compare text
(:func:`context_bench.text.normalize_tokens`: case, punctuation, articles and spacing do not
matter), so a compressor that reflows whitespace or drops a comma still keeps a passage, and one
that drops or rewrites any word of it does not.  A passage is kept or dropped whole: the retention
is the share of passages kept.  A conversation-memory row may name its evidence by dialog id
("D1:3"); those passages are the text of the turns the ids name.  A lost row whose evidence all
reached the model was lost by the model ("evidence kept, answer wrong"); one with any passage
missing, by what dropped it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .text import normalize_tokens

if TYPE_CHECKING:
    from .records import EvalRow, Summary

__all__ = [
    "EVIDENCE_DROPPED",
    "EVIDENCE_KEPT",
    "dialog_passages",
    "evidence_kept",
    "loss_cause",
    "lost_rows",
    "mark_losses",
    "passages",
]

#: A row's ``loss_cause``: some evidence passage did not reach the model.
EVIDENCE_DROPPED = "evidence dropped"
#: A row's ``loss_cause``: every passage reached the model and its answer was still wrong.
EVIDENCE_KEPT = "evidence kept, answer wrong"


def evidence_kept(passages: Iterable[str], prompt: str) -> float | None:
    """The share of ``passages`` found whole in ``prompt`` (None when there is no passage with a
    word in it: a row without evidence has no retention, not a perfect one)."""
    wanted = [" ".join(tokens) for tokens in map(normalize_tokens, passages) if tokens]
    if not wanted:
        return None
    text = f" {' '.join(normalize_tokens(prompt))} "
    return sum(f" {passage} " in text for passage in wanted) / len(wanted)


def passages(example: Any) -> list[str]:
    """The evidence passages a row marks: the strings of its ``evidence`` list, dialog ids
    among them read as the text of those turns of the row's ``conversation``
    (:func:`dialog_passages`); none for a row without evidence, or one naming a turn it lacks."""
    found = example.get("evidence") if isinstance(example, Mapping) else None
    if not isinstance(found, list):
        return []
    strings = [passage for passage in found if isinstance(passage, str)]
    if not any(_DIALOG_IDS.fullmatch(passage.strip()) for passage in strings):
        return strings
    return dialog_passages(strings, example.get("conversation")) or []


#: One or more dialog ids ("D1:3" is session 1's third turn; a few may come together, "D8:6; D9:17").
_DIALOG_IDS = re.compile(r"D\d+:\d+(?:[;,\s]+D\d+:\d+)*")
_DIALOG_ID = re.compile(r"D(\d+):(\d+)")


def dialog_passages(evidence: Iterable[str], conversation: Any) -> list[str] | None:
    """The text of each turn ``evidence`` names by its dialog id (``dia_id``) in
    ``conversation``, a mapping of ``session_N`` lists of turns; a passage that is no
    dialog id stays as it is.  None when an id names no turn there: a retention over the turns
    found would read as better than it is, and one counting the missing turn as dropped as worse."""
    said: dict[tuple[int, int], str] = {}
    if isinstance(conversation, Mapping):
        for turns in conversation.values():
            for turn in turns if isinstance(turns, list) else ():
                if isinstance(turn, Mapping) and (named := _DIALOG_ID.fullmatch(str(turn.get("dia_id")))):
                    said[(int(named[1]), int(named[2]))] = str(turn.get("text", ""))
    found = []
    for passage in evidence:
        if not _DIALOG_IDS.fullmatch(passage.strip()):
            found.append(passage)
            continue
        for session, turn in _DIALOG_ID.findall(passage):
            text = said.get((int(session), int(turn)))
            if text is None:
                return None
            found.append(text)
    return found


def loss_cause(kept: float | None) -> str | None:
    """Why a lost row was lost, from its ``evidence_kept`` (None: the row has no evidence)."""
    if kept is None or kept != kept:
        return None
    return EVIDENCE_KEPT if kept >= 1.0 else EVIDENCE_DROPPED


def lost_rows(summary: Summary) -> dict[tuple[str, str], set[str]]:
    """Per (system, data set) whose rows mark evidence, the rows it lost against the baseline in
    its primary comparison (the loss audit's)."""
    from .reports._verdict import primary

    return {key: set(c.lost) for key, c in primary(summary).items() if c.lost_by_cause is not None}


def mark_losses(rows: Iterable[EvalRow], lost: Mapping[tuple[str, str], set[str]]) -> None:
    """Give each of ``rows`` that is ``lost`` (:func:`lost_rows`) its ``loss_cause``."""
    for row in rows:
        if row.example_id in lost.get((row.system, row.dataset), ()):
            row.loss_cause = loss_cause(row.evidence_kept)
