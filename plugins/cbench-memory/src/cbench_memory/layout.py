"""The conversation layout of a memory data set, and the rows (one per QA pair) it yields.

A memory data set is an iterable of conversations::

    {"id": "conv-1",
     "turns": [{"speaker": "Alice", "text": "...", "session": 1, "date": "8 May 2023"}, ...],
     "qa_pairs": [{"question": "...", "answer": "...", "qa_type": "single-hop", "id": "q1"}, ...]}

``session`` and ``date`` are optional, as are ``qa_type`` and ``id``; other keys of a QA pair
(LoCoMo's ``evidence``, say) ride along into its row.  The loaders below turn the public JSON of
LoCoMo and LongMemEval into this layout (:mod:`cbench_memory.loaders`); a user may pass the layout
directly.  The conversation is rendered by :func:`cbench_judge.context.conversation_text`, the one
layout that the baselines send their model and the judges show theirs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from cbench_judge.context import conversation_text
from context_bench.datasets import MalformedRow
from context_bench.errors import UsageError

_QA_KEYS = ("question", "answer", "qa_type", "id")


@attrs.frozen
class Conversation:
    """One validated conversation: its turns (plain dicts) and its rows, one per QA pair.

    A QA pair that could not be read is a :class:`MalformedRow` in ``rows``; the runner reports it
    as an input error and scores the rest.
    """

    id: str
    turns: tuple[dict[str, Any], ...]
    rows: tuple[dict[str, Any] | MalformedRow, ...]


def _text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{where} is {type(value).__name__}, not text")


def _turn(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} is a {type(raw).__name__}, not a turn dict")
    for key in ("speaker", "text"):
        if raw.get(key) is None:
            raise ValueError(f"{where} has no {key!r}")
    turn = {
        "speaker": _text(raw["speaker"], f"{where}['speaker']"),
        "text": _text(raw["text"], f"{where}['text']"),
    }
    if raw.get("session") is not None:
        session = raw["session"]
        if isinstance(session, bool) or not isinstance(session, int):
            raise ValueError(f"{where}['session'] is {session!r}, not a whole number")
        turn["session"] = session
    if raw.get("date"):
        turn["date"] = _text(raw["date"], f"{where}['date']")
    return turn


def _row(
    raw: Any, number: int, conv_id: str, context: str, dataset: str, where: str
) -> dict[str, Any] | MalformedRow:
    if not isinstance(raw, Mapping):
        return MalformedRow(where, f"is a {type(raw).__name__}, not a QA dict")
    if not isinstance(raw.get("question"), str) or not raw["question"].strip():
        return MalformedRow(where, "has no 'question' text")
    answer = raw.get("answer")
    if answer is not None and not isinstance(answer, (str, int, float, list)):
        return MalformedRow(where, f"'answer' is {type(answer).__name__}, not text")
    row: dict[str, Any] = {k: v for k, v in raw.items() if k not in _QA_KEYS}
    row.update(
        id=str(raw["id"]) if raw.get("id") not in (None, "") else f"{conv_id}/{number}",
        dataset=dataset,
        conversation_id=conv_id,
        question=raw["question"],
        context=context,
    )
    if answer is not None:
        row["answer"] = answer if isinstance(answer, (str, list)) else str(answer)
    if raw.get("qa_type") not in (None, ""):
        row["qa_type"] = str(raw["qa_type"])
    return row


def parse_conversation(raw: Any, dataset: str, where: str) -> Conversation:
    """Validate one conversation of the layout.

    Raises ValueError saying what is wrong (``where`` is the caller's to add); a bad QA pair only
    costs its own row, as a MalformedRow located at ``where``.
    """
    if isinstance(raw, MalformedRow):
        raise ValueError(f"{raw.location}: {raw.message}")
    if not isinstance(raw, Mapping):
        raise ValueError(f"is a {type(raw).__name__}, not a conversation dict")
    if raw.get("id") in (None, ""):
        raise ValueError("has no 'id'")
    conv_id = str(raw["id"])
    turns_raw, pairs = raw.get("turns"), raw.get("qa_pairs")
    if not isinstance(turns_raw, list):
        raise ValueError(f"id {conv_id!r}: 'turns' must be a list of turns")
    if not isinstance(pairs, list):
        raise ValueError(f"id {conv_id!r}: 'qa_pairs' must be a list of QA pairs")
    turns = tuple(_turn(t, f"id {conv_id!r}: turn {n}") for n, t in enumerate(turns_raw))
    context = conversation_text(turns)
    rows = tuple(
        _row(p, n, conv_id, context, dataset, f"{where} (id {conv_id!r}) QA pair {n}")
        for n, p in enumerate(pairs)
    )
    return Conversation(id=conv_id, turns=turns, rows=rows)


def select_qa_types(conversations: Iterable[Any], qa_types: Sequence[str]) -> list[Any]:
    """Keep only QA pairs of the given types; an unknown type is an error listing those present."""
    conversations = list(conversations)
    wanted = {t.strip() for t in qa_types if t.strip()}
    present = {
        str(p.get("qa_type"))
        for c in conversations
        if isinstance(c, Mapping)
        for p in c.get("qa_pairs") or ()
        if isinstance(p, Mapping) and p.get("qa_type")
    }
    unknown = sorted(wanted - present)
    if unknown:
        raise UsageError(
            f"--qa-types {', '.join(unknown)}: not in this data set "
            f"(its types: {', '.join(sorted(present)) or 'none'})"
        )
    selected = []
    for conv in conversations:
        if isinstance(conv, Mapping) and isinstance(conv.get("qa_pairs"), list):
            conv = {
                **conv,
                "qa_pairs": [
                    p for p in conv["qa_pairs"] if isinstance(p, Mapping) and str(p.get("qa_type")) in wanted
                ],
            }
        selected.append(conv)
    return selected


def memory_rows(conversations: Iterable[Any], dataset: str) -> list[Conversation | MalformedRow]:
    """Each conversation validated; one that cannot be read becomes a MalformedRow naming where and why,
    and so does a QA row whose id an earlier row already has (its answer would overwrite the other's)."""
    parsed: list[Conversation | MalformedRow] = []
    seen: set[str] = set()
    for number, raw in enumerate(conversations):
        where = f"conversation {number} of data set {dataset!r}"
        try:
            conv = parse_conversation(raw, dataset, where)
        except ValueError as exc:
            parsed.append(MalformedRow(where, str(exc)))
            continue
        rows = []
        for position, row in enumerate(conv.rows):
            if isinstance(row, dict):
                if row["id"] in seen:
                    row = MalformedRow(
                        f"{where} (id {conv.id!r}) QA pair {position}",
                        f"row id {row['id']!r} appears twice in data set {dataset!r}",
                    )
                else:
                    seen.add(row["id"])
            rows.append(row)
        parsed.append(attrs.evolve(conv, rows=tuple(rows)))
    return parsed
