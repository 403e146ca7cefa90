"""A judge's view of the core client: its model and parameters, its statistics and its response cache.

Every request goes through :class:`context_bench.client.AsyncChatClient` (retries, ``Retry-After``,
the shared cool-down, redaction) on the plugin's judge loop, where one set of pools lives: every
judge on the same URL and concurrency shares its connections and its bound on requests in flight.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from context_bench.client import AsyncChatClient, AsyncPools, EndpointError, RetryPolicy
from context_bench.secrets import mask, redact, url_password

from . import loop
from .cache import Answer, ResponseCache, request_key
from .defaults import DEFAULT_CONCURRENCY
from .errors import JudgeCallError, JudgeConfigError

log = logging.getLogger("cbench_judge")

#: The judge loop's pools; closed with the loop, forgotten (not closed) in a forked child.
_pools = AsyncPools()
loop.on_close(_pools.aclose)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pools.forget)


@attrs.define
class JudgeStats:
    """What one judge's calls did, kept on the evaluator so failures show outside a run too.

    ``calls`` are verdicts asked of the endpoint (cache hits are ``cached``); ``attempts`` are HTTP
    requests, retries included.
    """

    calls: int = 0
    attempts: int = 0
    cached: int = 0
    call_errors: int = 0
    parse_errors: int = 0
    input_tokens: float = 0.0
    output_tokens: float = 0.0


class JudgeClient:
    """One judge: an endpoint, a model and the parameters of every request it sends."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        cache_dir: str | Path | None = None,
        parameters: Mapping[str, Any] | None = None,
        api_key_env: str | None = None,
    ) -> None:
        """``api_key_env`` names the variable the key came from, for the message of a refused key."""
        self._secrets = (api_key, url_password(url))
        self._key = api_key
        self.api_key_env = api_key_env if api_key else None
        try:
            self._chat = AsyncChatClient(
                url,
                model,
                api_key=api_key,
                api_key_env=self.api_key_env,
                timeout=timeout,
                retry=retry,
                concurrency=concurrency,
                parameters=parameters,
                pools=_pools,
            )
        except ValueError as exc:
            raise JudgeConfigError(self.redact(f"judge {exc}")) from None
        self.url = self._chat.url  # shown without the password, which stays inside, out of caches
        self.model = model
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self.stats = JudgeStats()

    def __repr__(self) -> str:
        return f"JudgeClient(url={self.url!r}, model={self.model!r})"

    async def chat(self, messages: Sequence[Mapping[str, str]]) -> Answer:
        """The judge's answer to ``messages``; raises :class:`JudgeCallError` once retries are spent."""
        return await loop.run_async(self._chat_once(self._chat.body(messages)))

    async def _chat_once(self, body: dict[str, Any]) -> Answer:
        key = request_key(self.url, body) if self.cache is not None else ""
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cached += 1
                return hit
        self.stats.calls += 1
        try:
            completion = await self._chat.send(body)
        except EndpointError as exc:
            self.stats.attempts += exc.attempts
            self.stats.call_errors += 1
            raise JudgeCallError(self.redact(exc.reason)) from None
        self.stats.attempts += completion.attempts
        usage = completion.usage
        if usage:
            self.stats.input_tokens += usage.get("input_tokens", 0.0)
            self.stats.output_tokens += usage.get("output_tokens", 0.0)
        if completion.cost is not None:  # the endpoint's own price, used when no --price names the model
            usage = {**(usage or {}), "cost": completion.cost}
        # A judge may echo the key in its answer: masked before anything reads, reports or caches it
        # (only the secrets themselves: a verdict is not free text to scrub).
        return Answer(content=mask(completion.content, *self._secrets), usage=usage, key=key)

    def redact(self, text: str) -> str:
        """Error text without the key or the URL's password (nor any run of 8 of their characters),
        nor anything else that reads as a secret."""
        return redact(text, *self._secrets)

    def store(self, answer: Answer) -> None:
        """Cache a fresh answer once its verdict was read (an unreadable one is asked again next run)."""
        if self.cache is None or answer.cached or not answer.key:
            return
        try:
            self.cache.put(answer.key, answer, self.url, self.model)
        except OSError as exc:
            log.warning(
                "judge cache %s is not writable (%s); going on without storing", self.cache.directory, exc
            )
