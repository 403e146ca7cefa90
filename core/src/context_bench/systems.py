"""The built-in system: an OpenAI-compatible endpoint (a proxy, a relay, a model server)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from .client import (
    ChatClient,
    EndpointError,
    RetryPolicy,
    api_key_from,
    api_key_variable,
    chat_completions_url,
    redact,
)

__all__ = ["EndpointError", "OpenAIProxy", "build_messages"]


def build_messages(example: Mapping[str, Any]) -> list[dict[str, str]]:
    """An example's chat messages: its own ``messages``, else context, question and choices as one turn."""
    messages = example.get("messages")
    if isinstance(messages, list) and messages:
        return [dict(m) for m in messages]
    parts = []
    if example.get("context"):
        parts.append(str(example["context"]))
    question = example.get("question") or example.get("prompt") or example.get("input")
    if question:
        parts.append(str(question))
    choices = example.get("choices")
    if isinstance(choices, list) and choices:
        parts.append("\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(choices)))
    if not parts:
        raise ValueError("example has none of messages, context, question, prompt, input")
    return [{"role": "user", "content": "\n\n".join(parts)}]


class OpenAIProxy:
    """Sends each example to ``POST {base_url}/v1/chat/completions`` and returns the reply.

    Blocking calls of :class:`~context_bench.client.ChatClient` (pooled, at most ``max_connections``
    in flight): the runner runs them in its worker threads.  Its retry policy, with a shorter
    backoff than the judges' (0.5 s doubling to 8 s, ``Retry-After`` capped at 30 s), raises
    :class:`EndpointError` once ``max_retries`` are spent.  The API key (``api_key`` or
    ``$OPENAI_API_KEY``) is sent, never stored in the configuration that names cache entries.
    """

    def __init__(
        self,
        base_url: str,
        model: str = "gpt-4o-mini",
        *,
        name: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        max_retries: int = 2,
        max_connections: int = 64,
    ) -> None:
        self.base_url = base_url
        self.url = chat_completions_url(base_url)
        self.model = model
        self.name = name or "proxy"
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.max_connections = max_connections
        self._api_key = api_key
        self._client: ChatClient | None = None
        self._lock = threading.Lock()

    def config(self) -> dict[str, Any]:
        return {
            "url": redact(self.url),
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = None
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _http(self) -> ChatClient:
        with self._lock:
            if self._client is None:
                self._client = ChatClient(
                    self.url,
                    self.model,
                    api_key=api_key_from(self._api_key),
                    api_key_env=api_key_variable(self._api_key),
                    timeout=self.timeout,
                    retry=RetryPolicy(
                        max_retries=self.max_retries, base_delay=0.5, max_delay=8.0, max_retry_after=30.0
                    ),
                    concurrency=self.max_connections,
                    parameters={"temperature": self.temperature, "max_tokens": self.max_tokens or None},
                )
            return self._client

    def process(self, example: dict) -> dict:
        completion = self._http().complete(build_messages(example))
        cost = {} if completion.cost is None else {"cost": completion.cost}
        return {"response": completion.content, **(completion.usage or {}), **cost}
