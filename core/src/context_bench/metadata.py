"""What a report says about its run: when, with which versions, against which endpoints, from which
command line.  Nothing secret gets in: keys are dropped from command lines, passwords from URLs."""

from __future__ import annotations

import datetime
import platform
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = ["describe_system", "redact_command", "redact_text", "redact_url", "run_metadata"]

REDACTED = "***"

# A flag whose value is a secret (--api-key, --judge-token, --password ...).
_SECRET_FLAG = re.compile(r"key|token|secret|passw|auth|credential", re.IGNORECASE)
# A flag that names an environment variable: its value is shown when it reads like one.
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Secrets written in free text: a bearer token, an sk-/key-like token, a key=value query parameter.
_SECRET_TEXT = (
    (re.compile(r"(?i)\b(bearer\s+)\S+"), r"\1" + REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), "sk-" + REDACTED),
    (re.compile(r"(?i)\b((?:api[_-]?)?key|token|secret|password)=[^&\s]+"), r"\1=" + REDACTED),
)


def redact_url(url: str) -> str:
    """``url`` without the password of its user part (``user:pass@host`` reads ``user:***@host``)
    and without the values of secret-looking query parameters."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:{REDACTED}@{host}"
    return redact_text(urlunsplit(parts._replace(netloc=netloc)))


def redact_text(text: str) -> str:
    """Free text with bearer tokens, ``sk-...`` keys and ``key=...`` parameters replaced."""
    for pattern, replacement in _SECRET_TEXT:
        text = pattern.sub(replacement, text)
    return text


def redact_command(argv: Sequence[str]) -> list[str]:
    """A command line fit for a report: the value of any flag that names a secret is replaced (a
    flag ending in ``-env`` keeps a value that reads like a variable name), URLs lose passwords."""
    shown: list[str] = []
    hide: str | None = None
    for arg in map(str, argv):
        if hide is not None:
            shown.append(_secret_value(hide, arg))
            hide = None
        elif arg.startswith("-") and _SECRET_FLAG.search(arg.split("=", 1)[0]):
            flag, equals, value = arg.partition("=")
            if equals:
                shown.append(f"{flag}={_secret_value(flag, value)}")
            else:
                shown.append(arg)
                hide = arg
        else:
            shown.append(redact_url(arg) if "://" in arg else redact_text(arg))
    return shown


def _secret_value(flag: str, value: str) -> str:
    if flag.endswith("-env") and _VARIABLE.fullmatch(value) and value.upper() == value:
        return value
    return REDACTED


def describe_system(system: Any) -> dict[str, Any]:
    """A system as a report names it: its name, class, and where it has them its model and
    endpoint (secrets removed); never its key."""
    described: dict[str, Any] = {"name": getattr(system, "name", type(system).__name__)}
    described["type"] = type(system).__name__
    model = getattr(system, "model", None)
    if isinstance(model, str):
        described["model"] = model
    for attribute in ("base_url", "url"):
        url = getattr(system, attribute, None)
        if isinstance(url, str):
            described["endpoint"] = redact_url(url)
            break
    return described


def run_metadata(
    argv: Sequence[str] | None = None,
    systems: Iterable[Any] = (),
    versions: dict[str, str | None] | None = None,
) -> dict[str, Any]:
    """The metadata of a run as reports show it: UTC date, versions (context-bench, Python and
    each loaded plugin's distribution), the systems and the command line, both redacted."""
    from . import __version__

    found: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": {"context-bench": __version__, "python": platform.python_version(), **(versions or {})},
    }
    described = [describe_system(s) for s in systems]
    if described:
        found["systems"] = described
    if argv is not None:
        found["command"] = " ".join(_quoted(arg) for arg in ["context-bench", *redact_command(argv)])
    return found


def _quoted(arg: str) -> str:
    return arg if arg and re.fullmatch(r"[\w@%+=:,./*-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"
