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
* a setting or flag holds a secret by its name (``api_key``, ``--token``; not ``api_key_env``
  when it holds a variable's name) or by its value's shape (:func:`key_shaped`), unless it names a
  public thing (a model, a file, a data set): :func:`secret_setting`, :func:`public_name`;
* by those rules a configuration loses its secret settings (:func:`scrub_config`), and a command
  line keeps its shape with each secret replaced by ``***``, inside the words that are command
  lines themselves (``--command '... --api-key X'``), JSON (``--extra-body``) or headers
  (``-H 'Authorization: ...'``) too: :func:`redact_command`, :func:`redact_command_line`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "KEY_RUN",
    "MASK",
    "check_key_variable",
    "join_command",
    "key_shaped",
    "looks_like_key",
    "mask",
    "public_name",
    "redact",
    "redact_command",
    "redact_command_line",
    "scrub_config",
    "secret_name",
    "secret_setting",
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
#: ...unless it is a count (``max_tokens``, ``--max-new-tokens``) or names a tokenizer (``--tokenizer``).
_COUNT_NAME = re.compile(r"(?i)(?:max|min)[\w-]*tokens$|tokenizer$")
#: Settings and flags that name public things (a model, a data set, a file or folder), whose
#: values are kept even when they look like keys (``meta-llama/Meta-Llama-3.1-8B-Instruct``).
_PUBLIC_NAME = re.compile(
    r"(?:\w+_)?(?:model|name|path|file|dir|out|split|config|dataset|mirror|rerun|prices)"
)
#: A flag on a command line (``-H``, ``--token``), not a negative number or ``-`` alone.
_FLAG = re.compile(r"--?[A-Za-z]")
#: A header as curl's ``-H`` takes it: ``Name: value``.
_HEADER = re.compile(r"\s*([\w-]+)\s*:\s*(.*)", re.DOTALL)
#: Words nested deeper than this (a command line in a command line in ...) are masked whole.
_MAX_NESTING = 4
#: A word a shell reads as it is (others are quoted when a command line is written).
_SHELL_SAFE = re.compile(r"[\w@%+=:,./*-]+")

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
    a count such as ``max_tokens`` and a ``tokenizer`` do not."""
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


def secret_setting(name: str, value: object) -> bool:
    """Whether a setting or flag of this name holds a secret (a key, a token, a password...): not a
    count (``max_tokens``), nor a ``..._env`` / ``--...-env`` that holds a variable's name."""
    name = _setting(name)
    return secret_name(name) and not (name.endswith("_env") and not looks_like_key(value))


def public_name(name: str) -> bool:
    """Whether a setting or flag of this name names a public thing (a model, a file, a data set):
    its value is kept even when it looks like a key."""
    return bool(_PUBLIC_NAME.fullmatch(_setting(name)))


def _setting(name: str) -> str:
    """A flag's name as a setting's (``--api-key-env`` is ``api_key_env``)."""
    return name.lstrip("-").replace("-", "_")


def scrub_config(value: Any, name: str = "") -> Any:
    """A configuration fit for a report: a secret setting (:func:`secret_setting`) is dropped, and
    so is a key-shaped string wherever it is, but in the settings that name public things; a
    ``command`` is masked as a command line (:func:`redact_command_line`); every other string is
    :func:`redact`-ed (a URL's password, a secret query parameter, a bearer token, ``sk-...``)."""
    return _scrubbed(value, name, _DROPPED)


#: What :func:`scrub_config` leaves out of a list or table.
_DROPPED = object()


def _scrubbed(value: Any, name: str, hidden: Any) -> Any:
    """``value`` with each secret replaced by ``hidden`` (left out when it is ``_DROPPED``)."""
    if isinstance(value, Mapping):
        kept = {}
        for key, item in value.items():
            key = str(key)
            shown = hidden if secret_setting(key, item) else _scrubbed(item, key, hidden)
            if shown is not _DROPPED:
                kept[key] = shown
        return kept
    if isinstance(value, (list, tuple)):
        return [shown for item in value if (shown := _scrubbed(item, name, hidden)) is not _DROPPED]
    if isinstance(value, str):
        if name == "command":
            return redact_command_line(value)
        return hidden if key_shaped(value) and not public_name(name) else redact(value)
    return value


def redact_command(argv: Sequence[str]) -> list[str]:
    """A command line fit for a report, each word kept but a secret replaced by ``***``: the value
    of a flag named like a secret (``--api-key X``, ``--token=Y``; a ``-env`` flag keeps a variable's
    name), a header's value when the header is (``-H 'Authorization: ...'``), a key-shaped word
    unless a flag naming a public thing precedes it (``--model``, ``--dataset``); a word that is JSON
    (``--extra-body``) or a command line itself (``--command '...'``) is masked by the same rules
    inside; every other word is :func:`redact`-ed."""
    return _redacted(argv, 0)


def redact_command_line(text: str) -> str:
    """A command line given as one string (``--command``'s) masked word by word, as
    :func:`redact_command` does; the text as it was when nothing in it is secret."""
    return _redacted_line(text, 0)


def join_command(words: Sequence[str]) -> str:
    """Words as one command line a shell splits back into them (a mask ``***`` left bare)."""
    return " ".join(w if _SHELL_SAFE.fullmatch(w) else "'" + w.replace("'", "'\\''") + "'" for w in words)


def _redacted_line(text: str, depth: int) -> str:
    if depth > _MAX_NESTING:
        return MASK
    try:
        words = shlex.split(text)
    except ValueError:  # unbalanced quotes: its words as whitespace splits them
        words = text.split()
    masked = _redacted(words, depth + 1)
    return text if masked == words else join_command(masked)


def _redacted(argv: Sequence[str], depth: int) -> list[str]:
    shown: list[str] = []
    flag: str | None = None  # the flag before this word: whose value it may be
    for arg in map(str, argv):
        if flag is not None and (not _FLAG.match(arg) or secret_name(_setting(flag))):
            shown.append(_flag_value(flag, arg, depth))
            flag = None
        elif _FLAG.match(arg):
            name, equals, value = arg.partition("=")
            if equals:
                shown.append(f"{name}={_flag_value(name, value, depth)}")
                flag = None
            else:
                shown.append(arg)
                flag = arg
        else:
            shown.append(_word(arg, depth))
            flag = None
    return shown


def _flag_value(flag: str, value: str, depth: int) -> str:
    if secret_setting(flag, value):
        return MASK
    return redact(value) if public_name(flag) else _word(value, depth)


def _word(word: str, depth: int) -> str:
    """One word no flag names: a header, JSON or a command line masked inside, else itself or ``***``."""
    header = _HEADER.fullmatch(word)
    if header and secret_name(header[1]):
        return f"{header[1]}: {MASK}"
    if word[:1] in ("{", "["):
        try:
            value = json.loads(word)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, (dict, list)):
            scrubbed = _scrubbed(value, "", MASK)
            return word if scrubbed == value else json.dumps(scrubbed)
    if any(c.isspace() for c in word):
        return _redacted_line(word, depth)
    # a file here by its absolute path (the program, /tmp/tmp.EJjdzI8hEy/venv/bin/python) is no key,
    # whatever its random parts look like
    on_disk = os.path.isabs(word) and os.path.exists(word)
    return MASK if key_shaped(word) and not on_disk else redact(word)
