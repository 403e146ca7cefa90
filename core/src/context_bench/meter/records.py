"""What the meter records: one :class:`MeterCall` per request it relayed, summed per row into a
:class:`Metered`."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from .usage import Usage

__all__ = ["MeterCall", "Metered"]


@attrs.frozen
class MeterCall:
    """One relayed request: whose it was, what the upstream said about it, and how it went.

    ``counted_input_tokens`` is the meter's own count of the request's input (None without a
    tokenizer); ``usage`` what the upstream's answer states (None when it states none); ``cost``
    the upstream's reported cost (LiteLLM's ``x-litellm-response-cost`` or a ``usage.cost``);
    ``status`` the HTTP status the client got (502 or 504 when the meter could not reach the
    upstream), ``error`` why the exchange did not complete (None when it did); ``latency`` seconds
    from the request read to its answer's end.  ``prompt`` is the request's text,
    kept only when the meter captures prompts; ``turn`` the conversation's turn the call was made
    for (its ``X-Context-Bench-Turn`` header, from 1; None without one).  No header is kept:
    keys are never recorded.
    """

    row: str | None
    model: str | None
    path: str
    status: int
    latency: float
    streamed: bool = False
    counted_input_tokens: int | None = None
    usage: Usage | None = None
    cost: float | None = None
    error: str | None = None
    prompt: str | None = None
    turn: int | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None or self.status >= 400


def _plus(total: float | None, value: float | None) -> float | None:
    if value is None:
        return total
    return value if total is None else total + value


@attrs.define
class Metered:
    """The calls of one row (or of a run) summed.

    Token figures sum the answered calls (status below 400, complete): ``input_tokens`` is what the
    upstream states where it states it, else the meter's own count; ``stated_input_tokens`` is the
    part the upstream stated and ``counted_input_tokens`` the meter's count alone (of every answered
    call), so a report can say which source its figure is and compare the two.  A figure is None
    when no call had it, never 0 for "unknown"; ``unmeasured_calls`` counts answered calls with no
    input figure at all, ``failed_calls`` the rest (a 429, a 500, an upstream that could not be
    reached).  ``cost`` sums the costs the upstream reported; ``prompts`` holds each call's text, in
    order, when prompts are captured; ``turns`` the same figures per turn of a conversation, for
    the calls that said their turn.

    It is summed in place (:meth:`add`): a row of thousands of calls costs each call once, its
    prompt appended, never the row's prompts copied.
    """

    calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost: float | None = None
    stated_input_tokens: int | None = None
    counted_input_tokens: int | None = None
    failed_calls: int = 0
    unmeasured_calls: int = 0
    prompts: list[str] = attrs.Factory(list)
    turns: dict[int, Metered] = attrs.Factory(dict)

    @classmethod
    def of(cls, calls: Iterable[MeterCall]) -> Metered:
        total = cls()
        for call in calls:
            total.add(call)
        return total

    def add(self, call: MeterCall) -> None:
        """Count one more call, its prompt and its turn's figures with it."""
        self.count(call)
        if call.prompt is not None:
            self.prompts.append(call.prompt)
        if call.turn is not None:
            self.turns.setdefault(call.turn, Metered()).count(call)

    def count(self, call: MeterCall) -> None:
        """Count one more call's figures alone (no prompt, no turn: a run's totals)."""
        self.calls += 1
        self.cost = _plus(self.cost, call.cost)
        if call.failed:
            self.failed_calls += 1
            return
        usage = call.usage or Usage()
        stated = usage.input_tokens
        input_tokens = stated if stated is not None else call.counted_input_tokens
        self.input_tokens = _plus(self.input_tokens, input_tokens)
        self.output_tokens = _plus(self.output_tokens, usage.output_tokens)
        self.cached_input_tokens = _plus(self.cached_input_tokens, usage.cached_input_tokens)
        self.cache_write_tokens = _plus(self.cache_write_tokens, usage.cache_write_tokens)
        self.stated_input_tokens = _plus(self.stated_input_tokens, stated)
        self.counted_input_tokens = _plus(self.counted_input_tokens, call.counted_input_tokens)
        self.unmeasured_calls += input_tokens is None
