"""What the meter reads from a request: its model, whether it streams, its input as the model sees
it (counted with the tokenizer) and its text (for the evidence check).

The input is read from the request shapes OpenAI-compatible clients send: chat ``messages`` (an
Anthropic ``system`` prompt counted as a first system message), a completions ``prompt``, or a
Responses ``input`` and ``instructions``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..token_count import Tokenizer, message_text

__all__ = ["RequestView", "view_request"]


@attrs.frozen
class RequestView:
    model: str | None = None
    streamed: bool = False
    counted_input_tokens: int | None = None
    prompt: str | None = None


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The request's input as chat messages, or None for a plain completions prompt."""
    messages: list[Mapping[str, Any]] = []
    for key in ("system", "instructions"):
        if body.get(key):
            messages.append({"role": "system", "content": body[key]})
    given = body.get("messages", body.get("input"))
    if isinstance(given, str):
        given = [{"role": "user", "content": given}]
    if isinstance(given, Sequence) and not isinstance(given, str):
        messages += [m for m in given if isinstance(m, Mapping)]
    if not messages and "prompt" in body:
        return None
    return messages


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        return "\n\n".join(p for p in prompt if isinstance(p, str))
    return ""


def view_request(raw: bytes, tokenizer: Tokenizer | None, capture: bool) -> RequestView:
    """Read a request body; anything that is not a JSON object is a request with nothing to count."""
    if not raw.lstrip().startswith(b"{"):
        return RequestView()
    try:
        body = json.loads(raw)
    except ValueError:
        return RequestView()
    model = body.get("model") if isinstance(body.get("model"), str) else None
    streamed = body.get("stream") is True
    messages = _messages(body)
    if messages is None:
        text = _prompt_text(body.get("prompt"))
    else:
        text = "\n\n".join(message_text(message.get("content")) for message in messages)
    count = None
    if tokenizer is not None:
        try:
            count = tokenizer.count(text) if messages is None else tokenizer.count_chat(messages)
        except Exception:  # a template that refuses these messages: the call is relayed, uncounted
            count = None
    return RequestView(model, streamed, count, text if capture else None)
