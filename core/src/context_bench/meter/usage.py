"""The usage an upstream states in its answer, read from every form the relay meets.

Providers say the same four figures in different words, and one of them counts differently:

* OpenAI chat and vLLM: ``prompt_tokens``, of which ``prompt_tokens_details.cached_tokens`` were
  read from the cache;
* LiteLLM (OpenAI's form for any provider): the same, and ``cache_creation_input_tokens`` written;
* OpenAI Responses: ``input_tokens``, of which ``input_tokens_details.cached_tokens`` cached;
* Anthropic Messages: ``input_tokens`` + ``cache_read_input_tokens`` (read) +
  ``cache_creation_input_tokens`` (written);
* DeepSeek: ``prompt_tokens``, of which ``prompt_cache_hit_tokens`` cached.

Anthropic's own ``input_tokens`` leaves out the tokens read from or written to its cache, so they
are added back: :attr:`Usage.input_tokens` is always every token of the prompt, and the cached and
cache-write tokens are parts of it.  A streamed answer states its usage in events (OpenAI's last
chunk with ``stream_options.include_usage``, vLLM's on every chunk, Anthropic's ``message_start``
and ``message_delta``, the Responses API's ``response.completed``): each event's figures replace
the earlier ones they name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["Usage", "read_usage", "usage_of"]


@attrs.frozen
class Usage:
    """Tokens one answer states; None where it states none."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return int(value)


def _first(usage: Mapping[str, Any], *paths: str) -> int | None:
    """The first figure found at a dotted path (``prompt_tokens_details.cached_tokens``)."""
    for path in paths:
        value: Any = usage
        for key in path.split("."):
            value = value.get(key) if isinstance(value, Mapping) else None
        found = _count(value)
        if found is not None:
            return found
    return None


def usage_of(usage: Any) -> Usage | None:
    """The :class:`Usage` of one ``usage`` object in any of the forms above; None for no usage."""
    if not isinstance(usage, Mapping):
        return None
    cached = _first(
        usage,
        "prompt_tokens_details.cached_tokens",
        "input_tokens_details.cached_tokens",
        "cache_read_input_tokens",
        "prompt_cache_hit_tokens",
    )
    written = _first(usage, "cache_creation_input_tokens", "prompt_tokens_details.cache_creation_tokens")
    total = _first(usage, "prompt_tokens")
    if total is None:
        total = _first(usage, "input_tokens")
        anthropic = "input_tokens_details" not in usage and (
            "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage
        )
        if total is not None and anthropic:
            total += (cached or 0) + (written or 0)
    found = Usage(total, _first(usage, "completion_tokens", "output_tokens"), cached, written)
    return None if found == Usage() else found


def _merged(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for event in events:
        for holder in (event, event.get("message"), event.get("response")):
            if isinstance(holder, Mapping) and isinstance(holder.get("usage"), Mapping):
                merged.update(holder["usage"])
    return merged


def _events(body: bytes) -> Iterable[Mapping[str, Any]]:
    """The JSON events of an SSE body that mention usage (the others are not parsed: speed)."""
    for line in body.splitlines():
        if line.startswith(b"data:") and b'"usage"' in line:
            try:
                event = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(event, Mapping):
                yield event


def read_usage(body: bytes, *, streamed: bool) -> tuple[Usage | None, Mapping[str, Any] | None]:
    """The usage an answer's body states and the merged raw ``usage`` object it was read from (where
    a ``usage.cost`` may be), from a JSON body or a server-sent-events one."""
    if streamed:
        raw: Any = _merged(_events(body)) or None
    else:
        try:
            document = json.loads(body)
        except ValueError:
            return None, None
        raw = _merged([document]) if isinstance(document, Mapping) else None
        raw = raw or None
    return usage_of(raw), raw
