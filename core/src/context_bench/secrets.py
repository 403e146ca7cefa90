"""Keeping keys and passwords out of text: errors, logs, caches, reports and command lines.

One place for every rule, so the client, ``OpenAIProxy``, the CLI, the report metadata and the
judges hide the same things the same way:

* a known secret (the API key, a URL's password) is masked wherever it appears, and so is every run
  of :data:`KEY_RUN` or more of its characters (a key cut in two by a shortening, or echoed in part,
  is still the key): :func:`mask`;
* free text loses what reads as a secret on its own: a URL's password (``user:***@host``), the value
  of a secret query parameter (``api_key=***``), a bearer token and a key-prefixed token
  (``sk-***``): :func:`redact`, which also masks the secrets it is given;
* a value put where a variable's NAME belongs (``--api-key-env sk-...``) is never echoed:
  :func:`looks_like_key` tells, and :func:`check_key_variable` says what is wrong with a key
  variable in one wording (``--api-key-env X names a variable that is not set``);
* a command line keeps its shape, the values of secret flags replaced: :func:`redact_command`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

__all__ = [
    "KEY_RUN",
    "MASK",
    "check_key_variable",
    "key_shaped",
    "looks_like_key",
    "mask",
    "redact",
    "redact_command",
    "secret_name",
    "url_password",
]

MASK = "***"
#: A run of this many characters of a secret is the secret, wherever it appears.
KEY_RUN = 8

#: An environment variable's name, by convention; a longer "name" is no name.
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
#: How known keys begin (OpenAI and Stripe ``sk-``/``sk_``, ``pk_``, ``rk_``, GitHub, Slack, Google,
#: Hugging Face): case matters, so ``HF_TOKEN`` stays a variable's name.
_KEY_PREFIX = r"(?:sk|pk|rk)[-_]|gh[pousr]_|xox[abpr]-|AIza|hf_"
_KEY_START = re.compile(rf"(?i:bearer\s+)|(?:{_KEY_PREFIX})[A-Za-z0-9_\-]{{6,}}")
#: A name that says its value is secret (a flag, a setting, a query parameter)...
_SECRET_NAME = re.compile(r"(?i)key|token|secret|passw|credential|authori[sz]|auth(?!or)")
#: ...unless it is a count (``max_tokens``, ``--max-new-tokens``).
_COUNT_NAME = re.compile(r"(?i)(?:max|min)[\w-]*tokens$")

_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/?#@:]*):[^\s/?#]*@")
_PARAMETER = re.compile(r"(?<![\w.-])([A-Za-z_][\w.-]*)=([^&\s#'\"]+)")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s'\"]+")
_KEY_TOKEN = re.compile(rf"\b({_KEY_PREFIX})[A-Za-z0-9_\-]{{6,}}")


def mask(text: str, *secrets: str | None) -> str:
    """``text`` with each secret masked, and every run of :data:`KEY_RUN` or more of its characters
    (overlapping or adjacent runs become one mask).  A secret shorter than that is masked only whole."""
    if not text:
        return text
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        if not secret:
            continue
        if len(secret) < KEY_RUN:
            spans.extend((m.start(), m.end()) for m in re.finditer(re.escape(secret), text))
            continue
        for start in range(len(secret) - KEY_RUN + 1):
            window = secret[start : start + KEY_RUN]
            at = text.find(window)
            while at >= 0:
                spans.append((at, at + KEY_RUN))
                at = text.find(window, at + 1)
    if not spans:
        return text
    spans.sort()
    merged = [list(spans[0])]
    for begin, end in spans[1:]:
        if begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([begin, end])
    for begin, end in reversed(merged):
        text = text[:begin] + MASK + text[end:]
    return text


def redact(text: str, *secrets: str | None) -> str:
    """``text`` without ``secrets`` (see :func:`mask`), URL passwords (``user:***@host``), the values
    of secret query parameters (``api_key=***``), bearer tokens and key-prefixed tokens (``sk-***``)."""
    text = mask(text, *secrets)
    text = _URL_PASSWORD.sub(rf"\1:{MASK}@", text)
    text = _PARAMETER.sub(lambda m: f"{m[1]}={MASK}" if secret_name(m[1]) else m[0], text)
    text = _BEARER.sub(rf"\1{MASK}", text)
    return _KEY_TOKEN.sub(rf"\1{MASK}", text)


def url_password(url: str) -> str | None:
    """The password a URL carries (``user:pass@host``), if any: a secret to mask wherever it is echoed."""
    try:
        return urlsplit(url).password or None
    except (TypeError, ValueError):
        return None


def secret_name(name: str) -> bool:
    """Whether a flag, setting or parameter of this name holds a secret (a key, token, password...);
    a count such as ``max_tokens`` does not."""
    return bool(_SECRET_NAME.search(name)) and not _COUNT_NAME.search(name.strip("-"))


def key_shaped(value: str) -> bool:
    """A known key prefix (``sk-``, ``Bearer ``, ...), or a long unbroken run of letters and digits
    (mixed case, or with no separator at all): whatever field holds it, such a value is never echoed."""
    value = value.strip()
    if _KEY_START.match(value):
        return True
    if len(value) < 16 or any(c.isspace() for c in value):
        return False
    letters, digits = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    if letters and digits and value.isalnum():  # a hex or base62 key
        return True
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return len(value) >= 20 and mixed and digits


def looks_like_key(name: object) -> bool:
    """For a field that holds a variable's NAME: anything that is not a variable's name, or is
    key-shaped, may be the key itself."""
    return not isinstance(name, str) or not _VARIABLE.fullmatch(name.strip()) or key_shaped(name)


def check_key_variable(name: object, what: str = "api_key_env") -> str:
    """``name`` (stripped) when it names a set environment variable; else a ValueError about
    ``what`` (the flag or setting that holds the name) which shows the name only when it looks like
    a variable's name: ``--api-key-env X names a variable that is not set``."""
    if isinstance(name, str) and not name.strip():
        raise ValueError(f"{what} is empty: give the NAME of an environment variable")
    if looks_like_key(name):
        raise ValueError(
            f"{what} looks like a key, not the NAME of a variable (its name is not shown: it may be "
            "the key itself); put the key in an environment variable and give that variable's NAME"
        )
    name = str(name).strip()
    if not os.environ.get(name):
        raise ValueError(f"{what} {name} names a variable that is not set")
    return name


def redact_command(argv: Sequence[str]) -> list[str]:
    """A command line fit for a report: the value of every flag named like a secret is replaced (a
    flag ending in ``-env`` keeps a value that reads as a variable's name), and every other
    argument is :func:`redact`-ed."""
    shown: list[str] = []
    hide: str | None = None
    for arg in map(str, argv):
        if hide is not None:
            shown.append(_flag_value(hide, arg))
            hide = None
        elif arg.startswith("-") and secret_name(arg.split("=", 1)[0]):
            flag, equals, value = arg.partition("=")
            if equals:
                shown.append(f"{flag}={_flag_value(flag, value)}")
            else:
                shown.append(arg)
                hide = arg
        else:
            shown.append(redact(arg))
    return shown


def _flag_value(flag: str, value: str) -> str:
    return value if flag.endswith("-env") and not looks_like_key(value) else MASK
