"""Keeping secrets out of what the judges say and store: errors, the response cache, reports.

A key can arrive where a name was expected (``--judge-api-key-env sk-...``, NeMo's ``api_key``), a
password inside a URL (``http://user:pass@host``), and a judge can echo the key back in its answer.
Each is masked here before it reaches any text the plugin writes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
#: A run of a key at least this long is masked wherever it appears, even cut from the rest of the key.
MIN_RUN = 8

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_PREFIX = re.compile(r"(?i)^(?:bearer\s+|sk[-_]|pk[-_]|rk[-_]|gh[pousr]_|xox[abpr]-|aiza|hf_)")


def key_shaped(value: str) -> bool:
    """A known key prefix (``sk-``, ``Bearer ``, ...), or a long unbroken run mixing lower case, upper
    case and digits: whatever field holds it, such a value is never echoed."""
    value = value.strip()
    if _KEY_PREFIX.match(value):
        return True
    if len(value) < 20 or any(c.isspace() for c in value):
        return False
    return (
        any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )


def looks_like_key(name: str) -> bool:
    """For a field that holds a variable's NAME: anything that is not a variable name, or is key-shaped."""
    return not _VARIABLE.fullmatch(name.strip()) or key_shaped(name)


def key_variable_problem(name: object) -> str | None:
    """What is wrong with the name of a key variable, said without ever showing a value that may be
    the key itself; None when the variable is set."""
    if not isinstance(name, str) or not name.strip():
        return "the API key variable name must be a non-empty string"
    if looks_like_key(name):
        return (
            "the API key variable's name looks like a key itself (not shown): put the key in an "
            "environment variable and give the variable's NAME"
        )
    if not os.environ.get(name.strip()):
        return f"the API key variable {name.strip()!r} is not set in the environment"
    return None


def mask_secret(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` masked, and every run of at least :data:`MIN_RUN` of its characters."""
    if not secret or not text:
        return text
    text = text.replace(secret, MASK)
    if len(secret) < MIN_RUN:
        return text
    spans: list[list[int]] = []
    for start in range(len(secret) - MIN_RUN + 1):
        window = secret[start : start + MIN_RUN]
        at = text.find(window)
        while at >= 0:
            spans.append([at, at + MIN_RUN])
            at = text.find(window, at + 1)
    if not spans:
        return text
    spans.sort()
    merged = [spans[0]]
    for begin, end in spans[1:]:
        if begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([begin, end])
    for begin, end in reversed(merged):
        text = text[:begin] + MASK + text[end:]
    return text


def mask_secrets(text: str, secrets: Iterable[str | None]) -> str:
    for secret in secrets:
        text = mask_secret(text, secret)
    return text


def url_password(url: str) -> str | None:
    """The password a URL carries (``user:pass@host``), if any."""
    try:
        return urlsplit(url).password or None
    except ValueError:
        return None


def public_url(url: str) -> str:
    """``url`` without the password of ``user:pass@host`` (the user name stays, to tell endpoints apart)."""
    if not isinstance(url, str):
        return url
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if not password:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:{MASK}@{host}"))
