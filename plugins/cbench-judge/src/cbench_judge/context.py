"""A conversation as text: the one layout and the one BM25 of context-bench's judges and baselines.

:func:`conversation_lines` lays turns out (``[Session N, date]`` headings, ``SPEAKER: text``
lines) for the judge's prompt and for cbench-memory's baselines alike, so the judge sees the
conversation as the system under test saw it; :class:`BM25` ranks turns for both.

Fitting a conversation into a judge prompt: by default the judge sees the whole conversation. Under
a character budget it sees the turns most relevant to the question and answer being judged (BM25
over the turns), in their original order, with the gaps marked: a fact recalled from the first
session of a long conversation stays in view, where keeping the last turns would drop it and make a
correct recollection look invented.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)
_SPEAKER_KEYS = ("speaker", "role", "name", "author")
_TEXT_KEYS = ("text", "content", "message", "utterance")
_TIME_KEYS = ("date", "timestamp", "time", "session_date", "date_time")
_NESTED_KEYS = ("turns", "messages", "dialogue", "conversation", "sessions")


def turns_of(context: Any, where: str = "context") -> list[str]:
    """The conversation as one line of text per turn (and one per session heading).

    Accepts a string (one turn per non-empty line), a list of strings, a list of turn dicts
    (``speaker``/``role`` + ``text``/``content``, optional ``session`` and ``date``, laid out by
    :func:`conversation_lines`), sessions nesting either, or a dict holding them under
    ``turns``/``messages``/``sessions``.
    """
    if context is None:
        raise ValueError(f"{where} is missing")
    if isinstance(context, str):
        return [line.strip() for line in context.splitlines() if line.strip()]
    if isinstance(context, Mapping):
        for key in _NESTED_KEYS:
            if key in context:
                prefix = _time_of(context)
                inner = turns_of(context[key], f"{where}[{key!r}]")
                return ([f"[{prefix}]"] if prefix else []) + inner
        return _lines([(context, where)])
    if isinstance(context, Iterable):
        lines: list[str] = []
        turns: list[tuple[Mapping[str, Any], str]] = []  # a run of plain turns, laid out together
        for number, item in enumerate(context):
            if isinstance(item, Mapping) and not any(key in item for key in _NESTED_KEYS):
                turns.append((item, f"{where}[{number}]"))
                continue
            lines.extend(_lines(turns))
            turns = []
            lines.extend(turns_of(item, f"{where}[{number}]"))
        return lines + _lines(turns)
    raise ValueError(f"{where} is a {type(context).__name__}; expected text, turns or sessions")


def conversation_lines(turns: Iterable[Mapping[str, Any]], where: str = "turns") -> list[str]:
    """The one layout of a conversation, for the system under test and its judge alike.

    A ``SPEAKER: text`` line per turn, each session opened by a ``[Session N, date]`` line when the
    turns carry a ``session`` or a ``date``.  Raises ValueError, located at ``where[N]``, for a turn
    with no text.
    """
    return _lines([(turn, f"{where}[{number}]") for number, turn in enumerate(turns)])


def conversation_text(turns: Iterable[Mapping[str, Any]]) -> str:
    """:func:`conversation_lines` as one string."""
    return "\n".join(conversation_lines(turns))


def _lines(turns: Sequence[tuple[Mapping[str, Any], str]]) -> list[str]:
    lines: list[str] = []
    current: tuple[Any, str] | None = None
    for turn, where in turns:
        session, date = turn.get("session"), _time_of(turn)
        if (session, date) != current and (session is not None or date):
            head = ", ".join(
                part for part in (f"Session {session}" if session is not None else "", date) if part
            )
            lines.append(f"[{head}]")
        current = (session, date)
        lines.append(_turn_line(turn, where))
    return lines


def _time_of(item: Mapping[str, Any]) -> str:
    for key in _TIME_KEYS:
        if item.get(key):
            return str(item[key])
    return ""


def _turn_line(turn: Mapping[str, Any], where: str) -> str:
    text = next((turn[k] for k in _TEXT_KEYS if turn.get(k) is not None), None)
    if text is None:
        raise ValueError(f"{where} has none of the text keys {', '.join(_TEXT_KEYS)}")
    speaker = next((str(turn[k]) for k in _SPEAKER_KEYS if turn.get(k)), "")
    return f"{speaker}: {text}" if speaker else f"{text}"


def words(text: str) -> list[str]:
    """The lower-case words of ``text``: what BM25 matches on."""
    return _WORD.findall(text.lower())


class BM25:
    """A BM25 index over texts (a conversation's turns), filled as turns arrive.

    The judge ranks turns with the classic ``k1=1.2``; cbench-memory's bm25 baseline keeps its own
    ``k1=1.5`` (part of its cache identity).
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._docs: list[Counter[str]] = []
        self._lengths: list[int] = []
        self._frequency: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, texts: Iterable[str]) -> None:
        for text in texts:
            found = words(text)
            self._docs.append(Counter(found))
            self._lengths.append(len(found))
            self._frequency.update(set(found))

    def scores(self, query: str) -> list[float]:
        """BM25 score of every text added so far, for the query's words."""
        count = len(self._docs)
        if not count:
            return []
        average = sum(self._lengths) / count or 1.0
        terms = set(words(query))
        idf = {
            t: math.log(1 + (count - self._frequency[t] + 0.5) / (self._frequency[t] + 0.5)) for t in terms
        }
        k1, b = self.k1, self.b
        scores = []
        for doc, length in zip(self._docs, self._lengths, strict=True):
            norm = k1 * (1 - b + b * length / average)
            scores.append(sum(idf[t] * doc[t] * (k1 + 1) / (doc[t] + norm) for t in terms & doc.keys()))
        return scores


def relevance(turns: Sequence[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 score of each turn for the query's words."""
    index = BM25(k1, b)
    index.add(turns)
    return index.scores(query)


def fit_turns(turns: Sequence[str], query: str, budget: int | None) -> str:
    """The turns as text, all of them when they fit ``budget`` characters (or no budget is set).

    Otherwise the most relevant turns that fit, in conversation order, each gap shown as a
    ``[... N turns omitted ...]`` line (counted against the budget too).
    """
    full = "\n".join(turns)
    if budget is None or len(full) <= budget:
        return full
    if budget <= 0:
        raise ValueError(f"context budget must be positive, got {budget}")
    scores = relevance(turns, query)
    order = sorted(range(len(turns)), key=lambda i: (-scores[i], -i))
    chosen: set[int] = set()
    used = _MARKER  # a trailing gap marker, at most
    for index in order:  # each turn may open one gap before it: count a marker with every turn
        cost = len(turns[index]) + 1 + _MARKER
        if used + cost <= budget:
            chosen.add(index)
            used += cost
    if not chosen:  # not even the best turn fits whole: show as much of it as fits
        return turns[order[0]][:budget]
    return _render(turns, chosen)


#: Room for one ``[... N turns omitted ...]`` line and its newline.
_MARKER = 32


def _render(turns: Sequence[str], chosen: set[int]) -> str:
    lines: list[str] = []
    skipped = 0
    for index, turn in enumerate(turns):
        if index in chosen:
            if skipped:
                lines.append(f"[... {skipped} turns omitted ...]")
                skipped = 0
            lines.append(turn)
        else:
            skipped += 1
    if skipped:
        lines.append(f"[... {skipped} turns omitted ...]")
    return "\n".join(lines)
