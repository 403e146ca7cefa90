"""The one OpenAI-compatible chat-completions client: a blocking face and an async face, one retry policy.

    client = ChatClient("http://localhost:8080", "gpt-4o-mini", api_key=key, concurrency=8)
    client.complete([{"role": "user", "content": "Hi"}])       # Completion(content, usage, attempts)

    async with AsyncChatClient("http://localhost:8080", "gpt-4o-mini") as client:
        await client.complete([{"role": "user", "content": "Hi"}])

Both faces (like httpx's ``Client`` and ``AsyncClient``, over one base) send ``POST {url}`` after
normalizing ``url`` (``http://host:8080``, ``.../v1`` and ``.../v1/chat/completions`` name the same
endpoint) and share every rule:

* at most ``concurrency`` requests in flight per client (async clients sharing :class:`AsyncPools`
  share the bound of their URL);
* 429, 408, 409, 5xx, connection errors, timeouts, an ``error`` body and malformed JSON are tried
  again (:class:`RetryPolicy`: jittered exponential backoff, ``Retry-After`` winning; 429s get a
  larger budget); empty ``choices`` and null content are final;
* the shared cool-down: when 429s dominate a URL's recent answers, every request to that URL, from
  either face, waits out the ``Retry-After``, not only the one that got it;
* the API key is redacted from every error text, before the text is shortened.

The async face sends through a lean HTTP/1.1 transport (:mod:`context_bench._transport`) unless the
environment routes the URL through a proxy or ``transport="httpx"`` is asked for.

Exceptions::

    ValueError                 a bad URL, model, timeout, concurrency or unset key variable (up front)
    RuntimeError
     └── EndpointError         no completion after the retries the policy allows;
                               ``.reason`` (without the URL), ``.url``, ``.attempts``
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import attrs
import httpx

log = logging.getLogger("context_bench.client")

DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY"
#: Recent answers a URL's cool-down remembers to tell a 429 storm from a stray 429.
STORM_WINDOW = 32
STORM_MIN = 4
_RETRY_STATUS = frozenset({408, 409})  # and 429, which has its own budget, and every 5xx

Messages = Sequence[Mapping[str, Any]]


class EndpointError(RuntimeError):
    """The endpoint gave no completion; the message is ``POST {url}: {reason}``."""

    def __init__(self, url: str, reason: str, attempts: int) -> None:
        super().__init__(f"POST {url}: {reason}")
        self.url = url
        self.reason = reason
        self.attempts = attempts


@attrs.frozen
class Completion:
    """The assistant's text, the tokens the reply states (None when it states none) and the HTTP
    requests it took, retries included."""

    content: str
    usage: dict[str, float] | None = None
    attempts: int = 1


@attrs.frozen
class RetryPolicy:
    """Exponential backoff with jitter; a server's ``Retry-After`` wins, up to ``max_retry_after``.

    ``max_retries`` bounds retries after errors (5xx, resets, timeouts, bad bodies).  Rate limiting
    is the endpoint telling us to wait, not failing, so 429s get ``rate_limit_factor`` times as many.
    """

    max_retries: int = attrs.field(default=3, validator=attrs.validators.ge(0))
    base_delay: float = attrs.field(default=1.0, validator=attrs.validators.ge(0))
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    rate_limit_factor: int = 3

    @property
    def max_rate_limited(self) -> int:
        return max(1, self.max_retries * self.rate_limit_factor)

    def backoff(self, attempt: int) -> float:
        """Attempt ``n`` (1-based) waits in [d/2, d] with d = base * 2**(n-1), capped."""
        delay = min(self.max_delay, self.base_delay * 2 ** max(0, attempt - 1))
        return delay / 2 + random.uniform(0, delay / 2)

    def honour(self, retry_after: float) -> float:
        """At least what the server asked (capped), plus a little jitter so waiters do not return in step."""
        delay = min(max(0.0, retry_after), self.max_retry_after)
        return delay + random.uniform(0, 0.1 * delay)


def chat_completions_url(url: str) -> str:
    """``http://host:8080``, ``.../v1`` and ``.../v1/chat/completions`` all name the same endpoint;
    anything but an http(s) URL without query or fragment is a ValueError."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError(f"url must be a non-empty URL, got {url!r}")
    clean = url.strip().rstrip("/")
    parts = urlsplit(clean)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"url {url!r} is not an http(s) URL")
    if parts.query or parts.fragment:
        raise ValueError(f"url {url!r} may not carry a query or fragment")
    if clean.endswith("/chat/completions"):
        return clean
    if not clean.endswith("/v1"):
        clean += "/v1"
    return clean + "/chat/completions"


def api_key_from(api_key: str | None = None, variable: str | None = None) -> str | None:
    """An explicit key, else the value of the named variable (unset is a ValueError: a setup bug, not
    a thousand failed calls), else ``$OPENAI_API_KEY``, else none (local relays often need none)."""
    if api_key:
        return api_key
    if variable is not None:
        if not isinstance(variable, str) or not variable.strip():
            raise ValueError("the API key variable name must be a non-empty string")
        value = os.environ.get(variable.strip())
        if not value:
            raise ValueError(f"the API key variable {variable.strip()!r} is not set in the environment")
        return value
    return os.environ.get(DEFAULT_KEY_VARIABLE) or None


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


# -- one attempt's outcome -------------------------------------------------------------------------


@attrs.frozen
class _Failure:
    """One attempt that gave no completion, and whether trying again may help."""

    reason: str
    retryable: bool
    retry_after: float | None = None
    rate_limited: bool = False


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _error_text(error: Any) -> str:
    """An error body's message first, then its other fields (a key they echo is redacted later)."""
    if not isinstance(error, Mapping):
        return str(error)
    message = error.get("message") or error.get("type")
    if not message:
        return str(dict(error))
    rest = ", ".join(f"{k}: {v}" for k, v in error.items() if k != "message" and v not in (None, ""))
    return f"{message} ({rest})" if rest else str(message)


def _usage(usage: Any) -> dict[str, float] | None:
    """Token counts the reply states; an unreadable count is left out rather than losing the answer."""
    if not isinstance(usage, Mapping):
        return None
    found = {}
    for name, keys in (
        ("input_tokens", ("prompt_tokens", "input_tokens")),
        ("output_tokens", ("completion_tokens", "output_tokens")),
    ):
        for key in keys:
            value = usage.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                found[name] = float(value)
                break
    return found or None


class _Tries:
    """The retry policy applied to one request: counts its failures and says how long to wait."""

    __slots__ = ("policy", "errors", "limited")

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.errors = self.limited = 0

    @property
    def attempts(self) -> int:
        return self.errors + self.limited + 1


# -- the shared cool-down --------------------------------------------------------------------------


class _CoolDown:
    """A URL's recent answers; a storm of 429s pauses every request to it for the Retry-After."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.until = 0.0  # time.monotonic(), the clock of asyncio's loops too
        self._recent: deque[bool] = deque(maxlen=STORM_WINDOW)
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return self.until - time.monotonic()

    def note(self, outcome: Completion | _Failure) -> None:
        limited = isinstance(outcome, _Failure) and outcome.rate_limited
        with self._lock:
            self._recent.append(limited)
            if not limited:
                return
            hits = sum(self._recent)
            if hits < STORM_MIN or hits * 2 < len(self._recent):
                return
            pause = outcome.retry_after if outcome.retry_after is not None else 1.0
            until = time.monotonic() + pause
            if until > self.until:
                log.warning(
                    "endpoint %s is rate limiting (%d of the last %d answers were 429); pausing it for %.1fs",
                    self.url,
                    hits,
                    len(self._recent),
                    pause,
                )
                self.until = until


_cool_downs: dict[str, _CoolDown] = {}
_cool_downs_lock = threading.Lock()


def _cool_down(url: str) -> _CoolDown:
    cool = _cool_downs.get(url)
    if cool is None:
        with _cool_downs_lock:
            cool = _cool_downs.setdefault(url, _CoolDown(url))
    return cool


def _forget_cool_downs() -> None:
    global _cool_downs_lock
    _cool_downs_lock = threading.Lock()
    _cool_downs.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_cool_downs)


# -- the base both faces share ---------------------------------------------------------------------


class _BaseChatClient:
    """Configuration, request bodies, reading replies and the retry decisions: all but the I/O."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        concurrency: int = 64,
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if not timeout or timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
        self.url = chat_completions_url(url)
        self.model = model
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.parameters = {k: v for k, v in (parameters or {}).items() if v is not None}
        self.timeout = float(timeout)
        self._timeout = httpx.Timeout(timeout, connect=min(connect_timeout, timeout))
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._secret = api_key

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self.url!r}, model={self.model!r})"

    def body(self, messages: Messages) -> dict[str, Any]:
        """The request body for ``messages``: the model, the messages, then every parameter set."""
        return {"model": self.model, "messages": [dict(m) for m in messages], **self.parameters}

    def _redact(self, text: str) -> str:
        """An error body may echo the key back: it never leaves this client."""
        return text.replace(self._secret, "***") if self._secret else text

    def _failed_transport(self, exc: httpx.TransportError) -> _Failure:
        if isinstance(exc, httpx.TimeoutException):
            return _Failure(f"{type(exc).__name__} after {self._timeout.read:g}s", retryable=True)
        detail = _snippet(self._redact(str(exc)))
        return _Failure(f"connection error: {type(exc).__name__}: {detail}", retryable=True)

    def _read(self, response: httpx.Response) -> Completion | _Failure:
        status = response.status_code
        retry_after = retry_after_seconds(response.headers.get("retry-after"))
        if status == 429:
            return _Failure("HTTP 429 (rate limited)", True, retry_after, rate_limited=True)
        if status in _RETRY_STATUS or status >= 500:
            return _Failure(f"HTTP {status}", True, retry_after)
        if status >= 300:
            return _Failure(f"HTTP {status}: {self._shown(response.text)}", False)
        try:
            data = response.json()
        except ValueError:
            return _Failure(f"malformed JSON in a {status} response: {self._shown(response.text)}", True)
        if not isinstance(data, dict):
            return _Failure(f"response body is a JSON {type(data).__name__}, not an object", True)
        if data.get("error"):
            return _Failure(f"error in a {status} response: {self._shown(_error_text(data['error']))}", True)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            return _Failure("response has no choices", False)
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        if not isinstance(message, dict):
            return _Failure(f"response's first choice has no message: {self._shown(str(choices[0]))}", False)
        content = message.get("content")
        if content is None:
            refusal = message.get("refusal")
            detail = f" (refusal: {self._shown(str(refusal))})" if refusal else ""
            return _Failure(f"response content is null{detail}", False)
        if not isinstance(content, str):
            return _Failure(f"response content is a {type(content).__name__}, not text", False)
        return Completion(content=content, usage=_usage(data.get("usage")))

    def _shown(self, text: str) -> str:
        """Redacted first, then shortened: a key cut in half by the shortening would leak its head."""
        return _snippet(self._redact(text))

    def _retry_delay(self, tries: _Tries, failure: _Failure) -> float:
        """Seconds to wait before trying again; raises :class:`EndpointError` when it is final."""
        policy = tries.policy
        if failure.rate_limited:
            tries.limited += 1
            exhausted, nth = tries.limited > policy.max_rate_limited, tries.limited
        else:
            tries.errors += 1
            exhausted, nth = tries.errors > policy.max_retries, tries.errors
        attempts = tries.errors + tries.limited
        if not failure.retryable:
            raise EndpointError(self.url, failure.reason, attempts)
        if exhausted:
            plural = "s" * (attempts != 1)
            raise EndpointError(
                self.url, f"{failure.reason} (gave up after {attempts} attempt{plural})", attempts
            )
        delay = policy.honour(failure.retry_after) if failure.retry_after is not None else policy.backoff(nth)
        log.debug("request to %s failed (%s); retrying in %.2fs", self.url, failure.reason, delay)
        return delay


# -- the blocking face -----------------------------------------------------------------------------


class ChatClient(_BaseChatClient):
    """Blocking calls on a pooled ``httpx.Client``; one client serves many threads at once."""

    def __init__(self, url: str, model: str, **options: Any) -> None:
        super().__init__(url, model, **options)
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None

    def complete(self, messages: Messages) -> Completion:
        """The assistant's answer to ``messages``; raises :class:`EndpointError` once retries are spent."""
        return self.send(self.body(messages))

    def send(self, body: Mapping[str, Any]) -> Completion:
        """:meth:`complete` for a request body made by :meth:`body` (or by hand)."""
        data = json.dumps(body).encode()
        tries = _Tries(self.retry)
        while True:
            outcome = self._attempt(data)
            if isinstance(outcome, Completion):
                return outcome if tries.attempts == 1 else attrs.evolve(outcome, attempts=tries.attempts)
            time.sleep(self._retry_delay(tries, outcome))

    def _attempt(self, data: bytes) -> Completion | _Failure:
        cool = _cool_down(self.url)
        while (left := cool.remaining()) > 0:
            time.sleep(left)
        with self._slots:
            while (left := cool.remaining()) > 0:
                time.sleep(left)
            try:
                outcome = self._read(self._client().post(self.url, content=data, headers=self._headers))
            except httpx.TransportError as exc:
                outcome = self._failed_transport(exc)
        cool.note(outcome)
        return outcome

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                limits = httpx.Limits(
                    max_connections=self.concurrency, max_keepalive_connections=self.concurrency
                )
                self._http = httpx.Client(limits=limits, timeout=self._timeout, follow_redirects=False)
            return self._http

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# -- the async face --------------------------------------------------------------------------------

Transport = Literal["auto", "stream", "httpx"]


class AsyncPool:
    """Connections and the bound on requests in flight to one URL, on one event loop."""

    def __init__(self, url: str, concurrency: int, transport: Transport = "auto") -> None:
        self.url = url
        self.target = httpx.URL(url)  # parsed once: a request per row would parse it again
        self.slots = asyncio.Semaphore(concurrency)
        if transport == "auto":
            parts = urlsplit(url)
            proxied = parts.scheme in getproxies() and not proxy_bypass(parts.hostname or "")
            transport = "httpx" if proxied else "stream"
        if transport == "stream":
            from ._transport import StreamTransport

            self.http = httpx.AsyncClient(
                transport=StreamTransport(max_idle=concurrency), follow_redirects=False
            )
        else:
            limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
            self.http = httpx.AsyncClient(limits=limits, follow_redirects=False)

    async def aclose(self) -> None:
        await self.http.aclose()


class AsyncPools:
    """The pools of one event loop, one per URL and concurrency: clients of the same endpoint share
    its connections and its bound.  Close them (``await pools.aclose()``) before their loop ends."""

    def __init__(self, transport: Transport = "auto") -> None:
        self.transport = transport
        self._pools: dict[tuple[str, int], AsyncPool] = {}

    def get(self, url: str, concurrency: int) -> AsyncPool:
        pool = self._pools.get((url, concurrency))
        if pool is None:
            pool = self._pools[(url, concurrency)] = AsyncPool(url, concurrency, self.transport)
        return pool

    async def aclose(self) -> None:
        pools = list(self._pools.values())
        self._pools.clear()
        await asyncio.gather(*(pool.aclose() for pool in pools), return_exceptions=True)

    def forget(self) -> None:
        """Drop the pools without closing them (a forked child: they are the parent's to close)."""
        self._pools.clear()


class AsyncChatClient(_BaseChatClient):
    """Async calls; a waiting retry gives its slot to another request.

    ``pools`` shares connections and the concurrency bound with other clients on the same loop;
    without it the client keeps pools of its own, made with ``transport`` (``"stream"``: the lean
    transport; ``"httpx"``: httpx's own; ``"auto"``: the lean one unless a proxy applies) and closed
    by :meth:`aclose` (or ``async with``).
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        pools: AsyncPools | None = None,
        transport: Transport = "auto",
        **options: Any,
    ) -> None:
        super().__init__(url, model, **options)
        self._own = pools is None
        self._pools = AsyncPools(transport) if pools is None else pools
        self._extensions = {"timeout": self._timeout.as_dict()}

    async def complete(self, messages: Messages) -> Completion:
        """The assistant's answer to ``messages``; raises :class:`EndpointError` once retries are spent."""
        return await self.send(self.body(messages))

    async def send(self, body: Mapping[str, Any]) -> Completion:
        """:meth:`complete` for a request body made by :meth:`body` (or by hand)."""
        data = json.dumps(body).encode()
        tries = _Tries(self.retry)
        while True:
            outcome = await self._attempt(data)
            if isinstance(outcome, Completion):
                return outcome if tries.attempts == 1 else attrs.evolve(outcome, attempts=tries.attempts)
            await asyncio.sleep(self._retry_delay(tries, outcome))

    async def _attempt(self, data: bytes) -> Completion | _Failure:
        pool = self._pools.get(self.url, self.concurrency)
        cool = _cool_down(self.url)
        while (left := cool.remaining()) > 0:
            await asyncio.sleep(left)
        async with pool.slots:
            while (left := cool.remaining()) > 0:
                await asyncio.sleep(left)
            request = httpx.Request(
                "POST", pool.target, headers=self._headers, content=data, extensions=self._extensions
            )
            try:
                outcome = self._read(await pool.http.send(request))
            except httpx.TransportError as exc:
                outcome = self._failed_transport(exc)
        cool.note(outcome)
        return outcome

    async def aclose(self) -> None:
        if self._own:
            await self._pools.aclose()

    async def __aenter__(self) -> AsyncChatClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
