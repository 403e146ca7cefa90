"""What every judge evaluator shares: the client, sync and async entry points, honest fallbacks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from context_bench import Scores
from context_bench.client import RetryPolicy, api_key_from, api_key_variable
from context_bench.secrets import redact

from . import loop
from .client import JudgeClient, JudgeStats
from .defaults import DEFAULT_CONCURRENCY, DEFAULT_MODEL
from .errors import JudgeConfigError, JudgeError, JudgeInputError


def require(row: Mapping[str, Any], key: str, where: str, evaluator: str) -> Any:
    """``row[key]``, or an error naming the evaluator, the mapping and the key."""
    if not isinstance(row, Mapping):
        raise JudgeInputError(f"{evaluator}: {where} is a {type(row).__name__}, not a dict")
    if key not in row or row[key] is None:
        raise JudgeInputError(f"{evaluator}: {where}[{key!r}] is missing")
    return row[key]


def spelled(value: Any, old: Any, name: str, old_name: str, where: str) -> Any:
    """A setting given by its name in the judge vocabulary or by the old spelling a seed uses, not both."""
    if old is None:
        return value
    if value is not None:
        raise JudgeConfigError(f"{where}: give {name!r} or its old spelling {old_name!r}, not both")
    return old


def resolve_key(api_key: str | None, variable: str | None, where: str) -> tuple[str | None, str | None]:
    """The key (given, else ``$variable``, else ``$OPENAI_API_KEY``) and the variable it came from
    (None for a key given as such), for messages; a variable that is unset, or that looks like a key
    itself, is a :class:`JudgeConfigError` that never shows the value."""
    if api_key:
        return api_key, None
    try:
        key = api_key_from(None, variable, f"{where}: api_key_env")
    except ValueError as exc:  # shows the variable's name only when it reads as one
        raise JudgeConfigError(str(exc)) from None
    return key, api_key_variable(None, variable) if key else None


def as_text(value: Any) -> str:
    """Gold answers come as strings, numbers or lists of acceptable answers."""
    if isinstance(value, (list, tuple)):
        return " / ".join(str(v) for v in value)
    return str(value)


async def verdict(
    client: JudgeClient,
    messages: Sequence[Mapping[str, str]],
    read: Callable[[str], dict[str, Any]],
    fallback: Mapping[str, Any],
    strict: bool,
) -> Scores:
    """Ask the judge and read its answer; a failure is ``fallback`` with its reason, or raises if strict."""
    try:
        completion = await client.chat(messages)
    except JudgeError as exc:
        if strict:
            raise
        return Scores(fallback, failure=exc.failure)
    try:
        scores = read(completion.content)
    except JudgeError as exc:
        client.stats.parse_errors += 1
        if strict:
            raise
        return Scores(fallback, failure=exc.failure, usage=completion.usage)
    client.store(completion)
    return Scores(scores, usage=completion.usage)


class BaseJudge:
    """A judge evaluator.  ``ascore`` is what the runner awaits; ``score`` serves plain, blocking use.

    Both run the call on the plugin's judge loop, so ``score`` works from any thread, including one
    whose own event loop is running.  Public attributes are the configuration (the runner hashes them
    into its cache keys); the key lives only inside the client.  The judge vocabulary is ``url``,
    ``model``, ``api_key_env`` (or the key itself as ``api_key``) and ``concurrency``; ``base_url``
    is the old spelling of ``url``.
    """

    name = "judge"

    def __init__(
        self,
        url: str | None = None,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry_base_delay: float = 1.0,
        *,
        api_key_env: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        cache_dir: str | Path | None = None,
        strict: bool = False,
        max_tokens: int | None = 512,
        base_url: str | None = None,
    ) -> None:
        url = spelled(url, base_url, "url", "base_url", type(self).__name__)
        if url is None:
            raise JudgeConfigError(f"{type(self).__name__} needs the judge endpoint's url")
        self.url = redact(url)  # public attributes are configuration: never a password
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.concurrency = concurrency
        self.strict = strict
        key, variable = resolve_key(api_key, api_key_env, type(self).__name__)
        self._client = JudgeClient(
            url,
            model,
            api_key=key,
            api_key_env=variable,
            timeout=timeout,
            retry=RetryPolicy(max_retries=max_retries, base_delay=retry_base_delay),
            concurrency=concurrency,
            cache_dir=cache_dir,
            parameters={"temperature": 0.0, "max_tokens": max_tokens},
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self.url!r}, model={self.model!r})"

    @property
    def stats(self) -> JudgeStats:
        """Calls, cache hits, failures and tokens of this evaluator's judge so far."""
        return self._client.stats

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        return loop.run_sync(self._score(original, processed))

    async def ascore(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        return await loop.run_async(self._score(original, processed))

    async def _score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> Scores:
        raise NotImplementedError

    async def _ask(
        self, prompt: str, read: Callable[[str], dict[str, Any]], fallback: Mapping[str, Any]
    ) -> Scores:
        return await verdict(self._client, [{"role": "user", "content": prompt}], read, fallback, self.strict)
