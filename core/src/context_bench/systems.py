"""The built-in system: an OpenAI-compatible endpoint (a proxy, a relay, a model server)."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Mapping
from typing import Any

from .openai_compat import BadReply, chat_completions_url, reply_text, retry_after_seconds

_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class EndpointError(RuntimeError):
    """The endpoint failed for this row (after retries); the message says how."""


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

    Blocking httpx calls on a pooled client: the runner runs them in its worker threads.  Retries
    429, 5xx and connection failures with jittered exponential backoff, honouring Retry-After.
    The API key (``api_key`` or ``$OPENAI_API_KEY``) is sent, never stored in the configuration
    that names cache entries.
    """

    def __init__(
        self,
        base_url: str,
        model: str = "gpt-4o-mini",
        *,
        name: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        temperature: float = 0.0,
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
        self._client: Any = None
        self._lock = threading.Lock()

    def config(self) -> dict[str, Any]:
        return {
            "url": self.url,
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

    def _http(self) -> Any:
        with self._lock:
            if self._client is None:
                import httpx

                key = self._api_key or os.environ.get("OPENAI_API_KEY")
                headers = {"Authorization": f"Bearer {key}"} if key else {}
                limits = httpx.Limits(
                    max_connections=self.max_connections, max_keepalive_connections=self.max_connections
                )
                self._client = httpx.Client(
                    headers=headers,
                    limits=limits,
                    timeout=httpx.Timeout(self.timeout, connect=min(10.0, self.timeout)),
                )
            return self._client

    def process(self, example: dict) -> dict:
        import httpx

        body: dict[str, Any] = {
            "model": self.model,
            "messages": build_messages(example),
            "temperature": self.temperature,
        }
        if self.max_tokens:
            body["max_tokens"] = self.max_tokens
        client = self._http()
        problem = ""
        for attempt in range(self.max_retries + 1):
            wait = None
            try:
                reply = client.post(self.url, json=body)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if reply.status_code == 200:
                    try:
                        text, usage = reply_text(reply.json())
                    except (ValueError, BadReply) as exc:
                        raise EndpointError(self._redact(f"POST {self.url}: {exc}")) from None
                    return {"response": text, **usage}
                problem = f"HTTP {reply.status_code}: {reply.text[:200]}"
                if reply.status_code not in _RETRY_STATUS:
                    break
                wait = retry_after_seconds(reply.headers.get("retry-after"), cap=30.0)
            if attempt < self.max_retries:
                time.sleep(wait if wait is not None else min(8.0, 0.5 * 2**attempt) * (0.5 + random.random()))
        raise EndpointError(self._redact(f"POST {self.url}: {problem}"))

    def _redact(self, message: str) -> str:
        """An error body may echo the key back: it never reaches a row, a cache or a report."""
        key = self._api_key or os.environ.get("OPENAI_API_KEY")
        return message.replace(key, "***") if key else message
