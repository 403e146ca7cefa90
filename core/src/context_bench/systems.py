"""The built-in system: an OpenAI-compatible endpoint (a proxy, a relay, a model server)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from .client import (
    DEFAULT_KEY_VARIABLE,
    ChatClient,
    EndpointError,
    RetryPolicy,
    api_key_from,
    api_key_variable,
    chat_completions_url,
)
from .metering import MeterLink, current
from .secrets import check_key_variable, redact

__all__ = ["EndpointError", "OpenAIProxy", "build_messages", "conversation_turns"]

#: Builds an example's chat messages (``OpenAIProxy(build_messages=...)``).
MessageBuilder = Callable[[Mapping[str, Any]], list[dict[str, Any]]]


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


#: Request fields that limit the answer's length: a row's ``max_tokens`` never overrides one set.
_LIMITS = frozenset({"max_tokens", "max_completion_tokens"})


def row_max_tokens(value: Any) -> int:
    """A row's ``max_tokens``: a whole number of at least 1 (anything else is the row's error)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"the row's max_tokens must be a whole number of at least 1, not {value!r}")
    return value


def conversation_turns(example: Mapping[str, Any]) -> list[str] | None:
    """The user turns of a multi-turn row (``turns: list[str]``), the row's context
    before the first; None for a row of one prompt (or one that brings its own ``messages``)."""
    turns = example.get("turns")
    if example.get("messages") or not isinstance(turns, list) or not turns:
        return None
    if not all(isinstance(turn, str) for turn in turns):
        raise ValueError("turns must be a list of strings (the user's turns)")
    context = example.get("context")
    return [f"{context}\n\n{turns[0]}" if context else turns[0], *turns[1:]]


class OpenAIProxy:
    """Sends each example to ``POST {base_url}/v1/chat/completions`` and returns the reply.

    Blocking calls of :class:`~context_bench.client.ChatClient` (pooled, at most ``max_connections``
    in flight): the runner runs them in its worker threads.  Its retry policy, with a shorter
    backoff than the judges' (0.5 s doubling to 8 s, ``Retry-After`` capped at 30 s), raises
    :class:`EndpointError` once ``max_retries`` are spent.

    The key is ``api_key``, else the value of the environment variable ``api_key_env``: the default,
    ``$OPENAI_API_KEY``, is sent when it is set; any other variable must be set (a ValueError
    naming it, never a value: :func:`context_bench.secrets.check_key_variable`); ``api_key_env=None``
    sends no key.  It is read when the first request is made and never stored in the configuration
    that names cache entries.
    ``temperature`` and ``max_tokens`` are sent only when set (some reasoning models refuse them);
    a row's own ``max_tokens`` (the generation budget its benchmark prescribes, per task for some)
    is sent when neither ``max_tokens`` nor ``extra_body`` sets a limit.  ``extra_body`` adds
    fields to every request body and ``system_prompt`` a system message first.
    ``build_messages`` (an example to its chat messages) replaces :func:`build_messages`, the
    default prompt; ``retry_base_delay`` is the first retry's wait in seconds (it doubles, to 8 s).

    A row with ``turns`` (a list of user turns) is a conversation: each turn is sent
    with the conversation so far, the model's own replies included; the response is the last reply,
    the earlier ones are kept in the row's ``meta["output"]["replies"]``, and tokens and cost are
    summed over the turns (the row's latency is the whole conversation's).

    In a metered run (:mod:`context_bench.metering`) every request carries the row's
    ``X-Context-Bench-Row`` header (a conversation's also ``X-Context-Bench-Turn``), and goes
    through the meter when this endpoint is the meter's upstream; the endpoint named here still
    names the system (its report, its cache entries).
    """

    def __init__(
        self,
        base_url: str,
        model: str = "gpt-4o-mini",
        *,
        name: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = DEFAULT_KEY_VARIABLE,
        system_prompt: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        timeout: float = 60.0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_retries: int = 2,
        max_connections: int = 64,
        build_messages: MessageBuilder | None = None,
        retry_base_delay: float = 0.5,
    ) -> None:
        self.base_url = base_url
        self.url = chat_completions_url(base_url)
        self.model = model
        self.name = name or "proxy"
        self.api_key_env = api_key_env
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        reserved = sorted({"model", "messages"} & set(self.extra_body))
        if reserved:
            raise ValueError(f"extra_body may not set {', '.join(reserved)}")
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.max_connections = max_connections
        if not retry_base_delay >= 0:  # NaN too
            raise ValueError(f"retry_base_delay must be 0 or more seconds (got {retry_base_delay!r})")
        self.retry_base_delay = float(retry_base_delay)
        self.build_messages = build_messages
        self._api_key = api_key
        if not api_key and api_key_env not in (None, DEFAULT_KEY_VARIABLE):
            check_key_variable(api_key_env)
        self._clients: dict[str, ChatClient] = {}
        self._lock = threading.Lock()

    def config(self) -> dict[str, Any]:
        config = {
            "url": redact(self.url),
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.system_prompt is not None:
            config["system_prompt"] = self.system_prompt
        if self.extra_body:
            config["extra_body"] = self.extra_body
        if self.build_messages is not None:  # another prompt: other answers, other cache entries
            builder = self.build_messages
            config["build_messages"] = (
                f"{builder.__module__}.{getattr(builder, '__qualname__', repr(builder))}"
            )
        return config

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_clients"] = {}
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _key(self) -> str | None:
        if self._api_key or self.api_key_env is None:
            return self._api_key or None
        if self.api_key_env == DEFAULT_KEY_VARIABLE:
            return api_key_from()
        return api_key_from(variable=self.api_key_env)

    def _key_variable(self) -> str | None:
        """The variable the key came from, for "the endpoint refused the key (from $VAR)"."""
        if self._api_key or self.api_key_env is None:
            return None
        if self.api_key_env == DEFAULT_KEY_VARIABLE:
            return api_key_variable()
        return api_key_variable(variable=self.api_key_env)

    def _http(self, link: MeterLink | None = None) -> ChatClient:
        """The client of this endpoint, or of the meter in front of it (``link``, when the meter's
        upstream is this endpoint)."""
        url = link.url if link is not None and link.upstream == self.url else self.base_url
        with self._lock:
            client = self._clients.get(url)
            if client is None:
                parameters = {**self.extra_body}
                for field, value in (("temperature", self.temperature), ("max_tokens", self.max_tokens)):
                    if value is not None:
                        parameters[field] = value
                client = self._clients[url] = ChatClient(
                    url,
                    self.model,
                    api_key=self._key(),
                    api_key_env=self._key_variable(),
                    timeout=self.timeout,
                    retry=RetryPolicy(
                        max_retries=self.max_retries,
                        base_delay=self.retry_base_delay,
                        max_delay=max(8.0, self.retry_base_delay),
                        max_retry_after=30.0,
                    ),
                    concurrency=self.max_connections,
                    parameters=parameters,
                )
            return client

    def process(self, example: dict) -> dict:
        turns = None if self.build_messages is not None else conversation_turns(example)
        if turns is not None:
            return self._converse(example, turns)
        messages = (self.build_messages or build_messages)(example)
        then = follow_up(example)  # a malformed one is the row's error before any call
        completion = self._send(self._body(example, self._with_system_prompt(messages)))
        if then is None:
            cost = {} if completion.cost is None else {"cost": completion.cost}
            return {"response": completion.content, **(completion.usage or {}), **cost}
        prompt = then["prompt"].replace(then["reply"], completion.content.strip())
        limit = {"max_tokens": then["max_tokens"]} if then.get("max_tokens") is not None else {}
        second = self._send(self._body(limit, self._with_system_prompt([_user(prompt)])))
        return _answered([completion, second])

    def _send(self, body: dict[str, Any], turn: int | None = None) -> Any:
        """One request, with the row's header (and through the meter) in a metered run, and the
        turn's when it is made for a turn of a conversation."""
        link = current()
        if link is None:
            return self._http().send(body, None)
        return self._http(link).send(body, link.headers if turn is None else link.turn_headers(turn))

    def _body(self, example: Mapping[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The request body: the row's ``max_tokens`` unless the system sets a limit of its own."""
        body = self._http().body(messages)
        if example.get("max_tokens") is not None and not _LIMITS & body.keys():
            body["max_tokens"] = row_max_tokens(example["max_tokens"])
        return body

    def _with_system_prompt(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.system_prompt is None:
            return list(messages)
        return [{"role": "system", "content": self.system_prompt}, *messages]

    def _converse(self, example: Mapping[str, Any], turns: list[str]) -> dict:
        """Send the turns one by one, the conversation growing with the model's own replies."""
        messages = self._with_system_prompt([])
        completions = []
        for number, turn in enumerate(turns, 1):
            messages.append(_user(turn))
            completions.append(self._send(self._body(example, messages), number))
            messages.append({"role": "assistant", "content": completions[-1].content})
        return _answered(completions)


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _answered(completions: list[Any]) -> dict[str, Any]:
    """A row's output from its calls: the last reply is the response, the earlier ones are kept
    (``replies``); tokens are summed, and the cost when every call's is known (a partial sum
    would understate it)."""
    totals: dict[str, float] = {}
    for completion in completions:
        for field, value in (completion.usage or {}).items():
            totals[field] = totals.get(field, 0.0) + value
    replies = [completion.content for completion in completions]
    output: dict[str, Any] = {"response": replies[-1], **totals, "replies": replies[:-1]}
    costs = [completion.cost for completion in completions]
    if all(cost is not None for cost in costs):
        output["cost"] = sum(cost for cost in costs if cost is not None)
    return output


def follow_up(example: Mapping[str, Any]) -> dict[str, Any] | None:
    """A row's second call, ``followup``: ``prompt``, sent alone once the row's prompt is answered,
    with ``reply`` in it replaced by that answer (stripped), and its own ``max_tokens``; None for
    a row of one call.  A chain-of-thought benchmark asks for the reasoning first, then for the
    answer with the reasoning quoted."""
    then = example.get("followup")
    if then is None:
        return None
    if not (isinstance(then, Mapping) and isinstance(then.get("prompt"), str) and then.get("reply")):
        raise ValueError(
            "the row's followup must be {prompt, reply, max_tokens}: the second prompt, the text in "
            "it the first answer replaces, and its token budget"
        )
    return dict(then)
