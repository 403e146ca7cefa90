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
  again (:class:`RetryPolicy`: jittered exponential backoff; the endpoint's wait hint, read from
  ``retry-after-ms``, ``Retry-After`` (seconds or an HTTP date) or LiteLLM's
  ``llm_provider-retry-after``, wins up to a cap; 429s get a larger budget while the URL answers
  others); 401 and 403 (the key refused), other 4xx, empty ``choices``, null or non-text content are final;
* the shared cool-down: when 429s dominate a URL's recent answers, every request to that URL, from
  either face, waits out the (capped) hint, not only the one that got it;
* deadlines: one HTTP request may take ``timeout`` seconds in all (a body dripping in slowly is cut
  off there, not only a silent socket), and one call ``deadline`` seconds with its retries, its waits
  and the cool-down; a call that would pass its deadline fails at once with the endpoint's last word;
* an error says the endpoint's own ``error.message``; the API key and the URL's password (any 8
  characters of either in a row) and whatever reads as a secret are redacted from every error text
  (:func:`context_bench.secrets.redact`) before the text is shortened, and from every answer;
* the cost the endpoint reports (LiteLLM's ``x-litellm-response-cost``, a ``usage.cost``) is kept on
  the :class:`Completion`, and content given as OpenAI content parts is joined as text.

The async face sends through a lean HTTP/1.1 transport (:mod:`context_bench._transport`) unless the
environment routes the URL through a proxy or ``transport="httpx"`` is asked for.

Exceptions::

    ValueError                 a bad URL, model, timeout, deadline, concurrency or unset key variable
                               (up front)
    RuntimeError
     └── EndpointError         no completion after the retries the policy allows;
                               ``.reason`` (without the URL), ``.url``, ``.attempts``
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
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

from .secrets import KEY_RUN, check_key_variable, looks_like_key, mask, redact, url_password

log = logging.getLogger("context_bench.client")

DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY"
#: Seconds one call may take in all (attempts, waits, cool-down) unless told; at least its timeout.
DEFAULT_DEADLINE = 300.0
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
    """The assistant's text, the tokens the reply states (None when it states none), the HTTP
    requests it took, retries included, and the cost the endpoint reports (None when it reports none)."""

    content: str
    usage: dict[str, float] | None = None
    attempts: int = 1
    cost: float | None = None


@attrs.frozen
class RetryPolicy:
    """Exponential backoff with jitter; a server's ``Retry-After`` wins, up to ``max_retry_after``.

    ``max_retries`` bounds retries after errors (5xx, resets, timeouts, bad bodies); a 429 says wait,
    so 429s get ``rate_limit_factor`` times as many while the URL answers others (not a spent quota).
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
        raise ValueError(f"url must be a non-empty URL, got {redact(repr(url))}")
    clean = url.strip().rstrip("/")
    parts = urlsplit(clean)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"url {redact(repr(url))} is not an http(s) URL")
    if parts.query or parts.fragment:
        raise ValueError(f"url {redact(repr(url))} may not carry a query or fragment")
    if clean.endswith("/chat/completions"):
        return clean
    if not clean.endswith("/v1"):
        clean += "/v1"
    return clean + "/chat/completions"


def api_key_from(
    api_key: str | None = None, variable: str | None = None, what: str = "api_key_env"
) -> str | None:
    """An explicit key, else the value of the named variable (checked by :func:`check_key_variable`,
    as ``what``: unset is a ValueError, a setup bug, not a thousand failed calls), else
    ``$OPENAI_API_KEY``, else none (local relays often need none)."""
    if api_key:
        return api_key
    if variable is not None:
        return os.environ[check_key_variable(variable, what)]
    return os.environ.get(DEFAULT_KEY_VARIABLE) or None


def api_key_variable(api_key: str | None = None, variable: str | None = None) -> str | None:
    """The variable :func:`api_key_from` takes the key from (None for an explicit key, or none), for
    messages such as "the endpoint refused the key (from $VAR)"; never a value that looks like a key."""
    if api_key:
        return None
    if variable is not None:
        return None if looks_like_key(variable) else variable.strip()
    return DEFAULT_KEY_VARIABLE if os.environ.get(DEFAULT_KEY_VARIABLE) else None


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
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    seconds = max(0.0, seconds)
    return seconds if cap is None else min(seconds, cap)


def retry_hint(headers: Mapping[str, str], *, cap: float, now: float | None = None) -> float | None:
    """Seconds the endpoint asks us to wait, at most ``cap``: ``retry-after-ms`` (OpenAI's), then
    ``Retry-After`` (seconds or an HTTP date), then LiteLLM's ``llm_provider-retry-after``.  A hint
    of 0 or less, in the past or unreadable is none: the backoff applies, never a storm of retries
    without a wait.  ``headers`` is case-insensitive (httpx's)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0), ("llm_provider-retry-after", 1.0)):
        raw = headers.get(name)
        if not raw:
            continue
        if scale != 1.0:
            try:
                seconds: float | None = float(raw.strip()) * scale
            except ValueError:
                seconds = None
        else:
            seconds = retry_after_seconds(raw, now=now)
        if seconds is not None and seconds == seconds and seconds > 0:
            return min(seconds, cap)
    return None


# -- what an error may show ------------------------------------------------------------------------

#: Characters of an error text read at all (redacted, then shortened to what is shown).
_READ_LIMIT = 8192
_SHOWN_LIMIT = 300


def _snippet(text: str, limit: int = _SHOWN_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _error_text(error: Mapping[str, Any]) -> str:
    """An error object's message first, then its other plain fields (type, code: a key they echo is
    redacted later); nested ones (LiteLLM's ``provider_specific_fields``) only repeat the message."""
    message = error.get("message") or error.get("type")
    if not message:
        return str(dict(error))
    rest = ", ".join(
        f"{k}: {v}"
        for k, v in error.items()
        if k != "message" and isinstance(v, (str, int, float)) and v not in (None, "")
    )
    return f"{message} ({rest})" if rest else str(message)


def _message_of(data: Any) -> str | None:
    """What an OpenAI-style error body says: its ``error`` object's message (then its type, code...),
    or its ``error`` string, or FastAPI's ``detail``, or a top-level ``message``; None for none."""
    if not isinstance(data, Mapping):
        return None
    for field in ("error", "detail", "message"):
        value = data.get(field)
        if isinstance(value, Mapping) and value:
            return _error_text(value)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _endpoint_message(text: str) -> str:
    """What an error response says: its JSON's message, else its raw text (shortened later)."""
    try:
        found = _message_of(json.loads(text))
    except (ValueError, RecursionError):
        found = None
    return found if found is not None else text


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


def reported_cost(headers: Mapping[str, str], usage: Any) -> float | None:
    """The cost the endpoint reports: LiteLLM's ``x-litellm-response-cost`` header, else ``usage.cost``."""
    raw: Any = headers.get("x-litellm-response-cost")
    if raw is None and isinstance(usage, Mapping):
        raw = usage.get("cost")
    if isinstance(raw, bool) or raw is None:
        return None
    try:
        cost = float(raw)
    except (TypeError, ValueError):
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None


def _text(content: Any) -> str | None:
    """Reply content as text: a string, or OpenAI content parts (``[{"type": "text", "text": ...}]``)
    joined; None for anything else (a dict, a number, other parts), which is no answer."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str)
        for part in content
    ):
        return "".join(part["text"] for part in content)
    return None


# -- one attempt's outcome -------------------------------------------------------------------------


@attrs.frozen
class _Failure:
    """One attempt that gave no completion, and whether trying again may help."""

    reason: str
    retryable: bool
    retry_after: float | None = None
    rate_limited: bool = False


class _Tries:
    """The retry policy applied to one call: counts its failures, keeps its deadline (a
    ``time.monotonic()`` instant) and the last failure, whose reason a call past it fails with."""

    __slots__ = ("policy", "errors", "limited", "until", "last")

    def __init__(self, policy: RetryPolicy, deadline: float) -> None:
        self.policy = policy
        self.errors = self.limited = 0
        self.until = time.monotonic() + deadline
        self.last: _Failure | None = None

    @property
    def attempts(self) -> int:
        return self.errors + self.limited + 1

    def left(self) -> float:
        return self.until - time.monotonic()


# -- the shared cool-down --------------------------------------------------------------------------


class _CoolDown:
    """A URL's recent answers; a storm of 429s pauses every request to it for the (capped) hint."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.until = 0.0  # time.monotonic(), the clock of asyncio's loops too
        self.reason = "HTTP 429 (rate limited)"
        self._recent: deque[bool] = deque(maxlen=STORM_WINDOW)
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return self.until - time.monotonic()

    def only_429(self) -> bool:
        """Whether every recent answer was a 429 (a limit that does not lift): no larger budget then."""
        with self._lock:
            return all(self._recent)

    def note(self, outcome: Completion | _Failure, cap: float) -> None:
        limited = isinstance(outcome, _Failure) and outcome.rate_limited
        with self._lock:
            self._recent.append(limited)
            if not limited:
                return
            hits = sum(self._recent)
            if hits < STORM_MIN or hits * 2 < len(self._recent):
                return
            pause = outcome.retry_after if outcome.retry_after is not None else 1.0
            pause = min(max(pause, 0.0), cap)
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
                self.reason = outcome.reason


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
    """Configuration, request bodies, reading replies and the retry decisions: all but the I/O.

    ``url`` is shown (errors, logs, cache keys) without a password it may carry; requests go to the
    URL as given.  ``api_key_env`` names the variable the key came from, for messages only.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        deadline: float | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = 64,
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if not timeout or timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        if deadline is not None and not deadline > 0:
            raise ValueError(f"deadline must be positive, got {deadline!r}")
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
        self._endpoint = chat_completions_url(url)
        self.url = redact(self._endpoint)
        self.model = model
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.parameters = {k: v for k, v in (parameters or {}).items() if v is not None}
        self.timeout = float(timeout)
        self.deadline = float(deadline) if deadline is not None else max(DEFAULT_DEADLINE, self.timeout)
        self._connect_timeout = float(connect_timeout)
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._keyed = bool(api_key)
        # masked in every error text and every answer: the key and the URL's password
        self._secrets = tuple(s for s in (api_key, url_password(url)) if s)
        self._key_source = api_key_env if api_key_env and not looks_like_key(api_key_env) else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self.url!r}, model={self.model!r})"

    def body(self, messages: Messages) -> dict[str, Any]:
        """The request body for ``messages``: the model, the messages, then every parameter set
        (one set to None is left out: some models reject ``temperature`` or ``max_tokens``)."""
        return {"model": self.model, "messages": [dict(m) for m in messages], **self.parameters}

    def _timeouts(self, budget: float) -> httpx.Timeout:
        return httpx.Timeout(budget, connect=min(self._connect_timeout, budget))

    def _shown(self, text: str) -> str:
        """Redacted first, then shortened: a key cut in half by the shortening would leak its head."""
        return _snippet(redact(text[:_READ_LIMIT], *self._secrets))

    def _failed_transport(self, exc: httpx.TransportError, budget: float) -> _Failure:
        if isinstance(exc, httpx.TimeoutException):
            return _Failure(f"{type(exc).__name__} after {budget:g}s", retryable=True)
        return _Failure(f"connection error: {type(exc).__name__}: {self._shown(str(exc))}", retryable=True)

    def _overtime(self, budget: float) -> _Failure:
        return _Failure(f"no complete answer within {budget:g}s (timeout for the whole request)", True)

    def _refused(self) -> str:
        if not self._keyed:
            return "the endpoint wants a key and none was sent"
        source = f" (from ${self._key_source})" if self._key_source else ""
        return f"the endpoint refused the key{source}"

    def _read(self, status: int, headers: Mapping[str, str], raw: bytes) -> Completion | _Failure:
        text = raw.decode("utf-8", "replace")
        if status >= 300:
            said = self._shown(_endpoint_message(text)) if text.strip() else ""
            detail = f": {said}" if said else ""
            hint = retry_hint(headers, cap=self.retry.max_retry_after)
            if status == 429:
                return _Failure(f"HTTP 429 (rate limited){detail}", True, hint, rate_limited=True)
            if status in _RETRY_STATUS or status >= 500:
                return _Failure(f"HTTP {status}{detail}", True, hint)
            if status in (401, 403):
                return _Failure(f"HTTP {status}: {self._refused()}{detail}", False)
            return _Failure(f"HTTP {status}{detail}", False)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return _Failure(f"malformed JSON in a {status} response: {self._shown(text)}", True)
        if not isinstance(data, dict):
            return _Failure(f"response body is a JSON {type(data).__name__}, not an object", True)
        if data.get("error"):
            said = self._shown(_message_of(data) or str(data["error"]))
            return _Failure(f"error in a {status} response: {said}", True)
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
        answer = _text(content)
        if answer is None:
            kind = "content parts other than text" if isinstance(content, list) else type(content).__name__
            return _Failure(f"response content is a {kind}, not text", False)
        usage = data.get("usage")
        # a model echoing the key must not carry it into results, caches or reports (a short "key"
        # such as vLLM's EMPTY is a placeholder, and may be a word of the answer)
        answer = mask(answer, *(s for s in self._secrets if len(s) >= KEY_RUN))
        return Completion(content=answer, usage=_usage(usage), cost=reported_cost(headers, usage))

    def _give_up(self, tries: _Tries, reason: str, why: str) -> EndpointError:
        attempts = tries.errors + tries.limited
        return EndpointError(
            self.url, f"{reason} ({why} after {attempts} attempt{'s' * (attempts != 1)})", attempts
        )

    def _overdue(self, tries: _Tries, reason: str | None = None) -> EndpointError:
        """The call has run out of time: it fails with the endpoint's last word."""
        said = reason or (tries.last.reason if tries.last else "no answer")
        return self._give_up(tries, said, f"its deadline of {self.deadline:g}s passed")

    def _budget(self, tries: _Tries) -> float:
        """Seconds the next request may take: its timeout, or what is left of the call's deadline."""
        left = tries.left()
        if left <= 0:
            raise self._overdue(tries)
        return min(self.timeout, left)

    def _paused(self, cool: _CoolDown, tries: _Tries) -> float:
        """Seconds the URL's cool-down still holds requests; raises when that passes the deadline."""
        left = cool.remaining()
        if left > 0 and left >= tries.left():
            raise self._overdue(tries, tries.last.reason if tries.last else cool.reason)
        return left

    def _retry_delay(self, tries: _Tries, failure: _Failure) -> float:
        """Seconds to wait before trying again; raises :class:`EndpointError` when it is final."""
        tries.last = failure
        policy = tries.policy
        if failure.rate_limited:
            tries.limited += 1
            budget = policy.max_retries if _cool_down(self.url).only_429() else policy.max_rate_limited
            exhausted, nth = tries.limited > budget, tries.limited
        else:
            tries.errors += 1
            exhausted, nth = tries.errors > policy.max_retries, tries.errors
        attempts = tries.errors + tries.limited
        if not failure.retryable:
            raise EndpointError(self.url, failure.reason, attempts)
        if exhausted:
            raise self._give_up(tries, failure.reason, "gave up")
        delay = policy.honour(failure.retry_after) if failure.retry_after is not None else policy.backoff(nth)
        if delay >= tries.left():
            raise self._overdue(tries)
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

    def send(self, body: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> Completion:
        """:meth:`complete` for a body made by :meth:`body` (or by hand), with ``headers`` added."""
        data = json.dumps(body).encode()
        tries = _Tries(self.retry, self.deadline)
        while True:  # ``headers``: a metered run's row header
            outcome = self._attempt(data, tries, {**self._headers, **(headers or {})})
            if isinstance(outcome, Completion):
                return outcome if tries.attempts == 1 else attrs.evolve(outcome, attempts=tries.attempts)
            time.sleep(self._retry_delay(tries, outcome))

    def _attempt(self, data: bytes, tries: _Tries, headers: Mapping[str, str]) -> Completion | _Failure:
        cool = _cool_down(self.url)
        while (left := self._paused(cool, tries)) > 0:
            time.sleep(left)
        if not self._slots.acquire(timeout=max(0.0, tries.left())):
            raise self._overdue(tries, tries.last.reason if tries.last else "no free connection")
        try:
            while (left := self._paused(cool, tries)) > 0:
                time.sleep(left)
            budget = self._budget(tries)
            try:
                outcome = self._post(data, budget, headers)
            except httpx.TransportError as exc:
                outcome = self._failed_transport(exc, budget)
        finally:
            self._slots.release()
        cool.note(outcome, self.retry.max_retry_after)
        return outcome

    def _post(self, data: bytes, budget: float, headers: Mapping[str, str]) -> Completion | _Failure:
        """One request, cut off ``budget`` seconds after it starts even while bytes keep dripping in
        (httpx's timeouts bound each read, not the whole)."""
        until = time.monotonic() + budget
        with self._client().stream(
            "POST", self._endpoint, content=data, headers=headers, timeout=self._timeouts(budget)
        ) as response:
            chunks = []
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                if time.monotonic() > until:
                    return self._overtime(budget)
            return self._read(response.status_code, response.headers, b"".join(chunks))

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                limits = httpx.Limits(
                    max_connections=self.concurrency, max_keepalive_connections=self.concurrency
                )
                self._http = httpx.Client(
                    limits=limits, timeout=self._timeouts(self.timeout), follow_redirects=False
                )
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

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled empty: the pools are this process's live connections; a copy elsewhere (a Ray
        worker's judge) opens its own."""
        return (AsyncPools, (self.transport,))

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
        self._extensions = {"timeout": self._timeouts(self.timeout).as_dict()}

    async def complete(self, messages: Messages) -> Completion:
        """The assistant's answer to ``messages``; raises :class:`EndpointError` once retries are spent."""
        return await self.send(self.body(messages))

    async def send(self, body: Mapping[str, Any]) -> Completion:
        """:meth:`complete` for a request body made by :meth:`body` (or by hand)."""
        data = json.dumps(body).encode()
        tries = _Tries(self.retry, self.deadline)
        while True:
            outcome = await self._attempt(data, tries)
            if isinstance(outcome, Completion):
                return outcome if tries.attempts == 1 else attrs.evolve(outcome, attempts=tries.attempts)
            await asyncio.sleep(self._retry_delay(tries, outcome))

    async def _attempt(self, data: bytes, tries: _Tries) -> Completion | _Failure:
        pool = self._pools.get(self._endpoint, self.concurrency)
        cool = _cool_down(self.url)
        while (left := self._paused(cool, tries)) > 0:
            await asyncio.sleep(left)
        if pool.slots.locked():
            try:
                await asyncio.wait_for(pool.slots.acquire(), max(0.0, tries.left()))
            except asyncio.TimeoutError:
                raise self._overdue(
                    tries, tries.last.reason if tries.last else "no free connection"
                ) from None
        else:
            await pool.slots.acquire()
        try:
            while (left := self._paused(cool, tries)) > 0:
                await asyncio.sleep(left)
            budget = self._budget(tries)
            extensions = self._extensions
            if budget < self.timeout:
                extensions = {"timeout": self._timeouts(budget).as_dict()}
            request = httpx.Request(
                "POST", pool.target, headers=self._headers, content=data, extensions=extensions
            )
            try:
                # the whole exchange, not each read: a body dripping in slowly is cut off too
                response = await asyncio.wait_for(pool.http.send(request), budget)
                outcome = self._read(response.status_code, response.headers, response.content)
            except asyncio.TimeoutError:
                outcome = self._overtime(budget)
            except httpx.TransportError as exc:
                outcome = self._failed_transport(exc, budget)
        finally:
            pool.slots.release()
        cool.note(outcome, self.retry.max_retry_after)
        return outcome

    async def aclose(self) -> None:
        if self._own:
            await self._pools.aclose()

    async def __aenter__(self) -> AsyncChatClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
