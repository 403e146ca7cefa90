"""A judge configured the way ``sample.config[judge_key]`` describes it."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

import attrs

from context_bench.client import RetryPolicy, chat_completions_url
from context_bench.secrets import key_shaped, looks_like_key, redact, url_password

from .base import resolve_key
from .client import JudgeClient
from .defaults import DEFAULT_CONCURRENCY
from .errors import JudgeConfigError

#: NeMo's judge config format names three settings its own way; both spellings are read.
NEMO_SPELLINGS = {"model_id": "model", "api_key": "api_key_env", "parallelism": "concurrency"}

_KEYS = (
    "url",
    "model",
    "api_key_env",
    "temperature",
    "top_p",
    "max_new_tokens",
    "concurrency",
    "max_retries",
    "request_timeout",
    "cache_dir",
)


_NUMBER = (int, float)


def _optional(kind: type | tuple[type, ...]):
    return attrs.validators.optional(attrs.validators.instance_of(kind))


def _at_least(kind: type | tuple[type, ...], low: float):
    return [attrs.validators.instance_of(kind), attrs.validators.ge(low)]


@attrs.frozen
class JudgeConfig:
    """One judge: ``{"url", "model", "api_key_env" (the NAME of an environment variable),
    "temperature", "top_p", "max_new_tokens", "concurrency", "max_retries", "request_timeout"}``
    (+ ``cache_dir``); NeMo's ``model_id``, ``api_key`` and ``parallelism`` are read as ``model``,
    ``api_key_env`` and ``concurrency``."""

    url: str = attrs.field(validator=attrs.validators.instance_of(str))
    model: str = attrs.field(validator=attrs.validators.instance_of(str))
    api_key_env: str | None = attrs.field(default=None, validator=_optional(str))
    temperature: float = attrs.field(default=0.0, validator=_at_least(_NUMBER, 0))
    top_p: float | None = attrs.field(default=None, validator=_optional(_NUMBER))
    max_new_tokens: int | None = attrs.field(default=None, validator=_optional(int))
    concurrency: int = attrs.field(default=DEFAULT_CONCURRENCY, validator=_at_least(int, 1))
    max_retries: int = attrs.field(default=3, validator=_at_least(int, 0))
    request_timeout: float = attrs.field(default=60.0, validator=_at_least(_NUMBER, 0.001))
    cache_dir: str | None = attrs.field(default=None, converter=attrs.converters.optional(str))

    @classmethod
    def from_mapping(cls, mapping: Any, where: str) -> JudgeConfig:
        if isinstance(mapping, JudgeConfig):
            return mapping
        if not isinstance(mapping, Mapping):
            raise JudgeConfigError(
                f"{where} must be a mapping with 'url' and 'model', got {type(mapping).__name__}"
            )
        unknown = sorted(set(mapping) - set(_KEYS) - set(NEMO_SPELLINGS))
        if unknown:
            known = ", ".join((*_KEYS, *NEMO_SPELLINGS))
            raise JudgeConfigError(f"{where} has unknown keys {unknown}; known keys: {known}")
        given = {}  # our name -> the name the mapping used, so an error names what the user wrote
        values = {}
        for key, value in mapping.items():
            name = NEMO_SPELLINGS.get(key, key)
            if name in given:
                raise JudgeConfigError(f"{where} gives both {given[name]!r} and {key!r}")
            given[name] = key
            if value is not None:
                values[name] = value
        for name in ("url", "model"):
            if not values.get(name):
                raise JudgeConfigError(f"{where} needs {given.get(name, name)!r}")
        try:
            config = cls(**values)
            chat_completions_url(config.url)
        except (TypeError, ValueError) as exc:
            # attrs validators raise with (message, attribute, ...) as their arguments
            message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
            for name, key in given.items():
                message = message.replace(f"'{name}'", f"'{key}'")
            raise JudgeConfigError(f"{where}: {_without_secrets(message, mapping)}") from None
        return config

    def resolve_key(self, where: str) -> tuple[str | None, str | None]:
        """The key's value and the variable it came from; a named variable that is unset is a setup error,
        not a thousand CALL_ERRORs, and one that looks like a key itself is never shown."""
        return resolve_key(None, self.api_key_env, where)


def _without_secrets(message: str, mapping: Mapping[str, Any]) -> str:
    """A config error never shows a key, whatever field it was put in, nor a URL's password."""
    secrets = []
    for key, value in mapping.items():
        names_a_variable = NEMO_SPELLINGS.get(key, key) == "api_key_env"
        if isinstance(value, str):
            if (looks_like_key(value) if names_a_variable else key_shaped(value)) and value.strip():
                secrets.append(value)
            secrets.append(url_password(value))
        elif names_a_variable and value is not None:  # a key given as a number is still a key
            secrets.append(str(value))
    return redact(message, *secrets)


_clients: dict[tuple[JudgeConfig, str], JudgeClient] = {}
_clients_lock = threading.Lock()


def client_for(
    config: JudgeConfig, where: str, response_format: Mapping[str, Any] | None = None
) -> JudgeClient:
    """One client per distinct configuration, reused across samples (and so across calls)."""
    key = (config, json.dumps(response_format, sort_keys=True))
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            api_key, variable = config.resolve_key(where)
            client = _clients[key] = JudgeClient(
                config.url,
                config.model,
                api_key=api_key,
                api_key_env=variable,
                timeout=config.request_timeout,
                retry=RetryPolicy(max_retries=config.max_retries),
                concurrency=config.concurrency,
                cache_dir=config.cache_dir,
                parameters={
                    "temperature": config.temperature,
                    "top_p": config.top_p,
                    "max_tokens": config.max_new_tokens,
                    "response_format": None if response_format is None else dict(response_format),
                },
            )
        return client
