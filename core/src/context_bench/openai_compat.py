"""What every OpenAI-compatible client here agrees on: the URL, the message layout, the reply."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any


def chat_completions_url(base_url: str) -> str:
    """``http://host:8080``, ``.../v1`` and ``.../v1/chat/completions`` all name the same endpoint."""
    url = base_url.strip().rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if not url.endswith("/v1"):
        url += "/v1"
    return url + "/chat/completions"


def retry_after_seconds(
    value: str | None, *, cap: float | None = None, now: float | None = None
) -> float | None:
    """Seconds a ``Retry-After`` asks for (delay-seconds or an HTTP date), at least 0 and at most
    ``cap``; None when absent or unreadable.  ``now`` (epoch seconds) is for tests."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    seconds = max(0.0, seconds)
    return seconds if cap is None else min(seconds, cap)


class BadReply(ValueError):
    """A 200 reply that carries no answer (an error body, no choices, null content)."""


def reply_text(payload: Any) -> tuple[str, dict[str, float]]:
    """The assistant's text and the token usage of a chat-completions reply."""
    if not isinstance(payload, Mapping):
        raise BadReply(f"reply is {type(payload).__name__}, not a JSON object")
    if payload.get("error"):
        raise BadReply(f"reply carries an error: {str(payload['error'])[:200]}")
    choices = payload.get("choices")
    if not choices or not isinstance(choices, list):
        raise BadReply("reply has no choices")
    first = choices[0]
    message = first.get("message") if isinstance(first, Mapping) else None
    if not isinstance(message, Mapping):
        raise BadReply(f"reply's first choice has no message: {str(first)[:200]}")
    content = message.get("content")
    if content is None:
        raise BadReply("reply content is null")
    return str(content), _usage(payload.get("usage"))


def _usage(usage: Any) -> dict[str, float]:
    """Token counts the reply states; an unreadable count is left out rather than losing the answer."""
    tokens: dict[str, float] = {}
    if not isinstance(usage, Mapping):
        return tokens
    for field, key in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens")):
        value = usage.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            tokens[field] = float(value)
    return tokens
