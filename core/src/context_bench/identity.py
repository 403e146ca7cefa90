"""Stable identities for systems and evaluators, so a cache never mixes two configurations.

An identity must differ whenever the configuration does, and must be the same for the same
configuration in every process: it names cache files that a later run reads.  So a configuration is
described by value only (never by ``id()``, an address or a hash-ordered iteration):

- numbers, strings, lists, dicts: as they are; sets sorted; enums by name; paths as text; compiled
  patterns by pattern and flags; classes by qualified name;
- any other object: its class and, recursively, its own configuration (see :func:`config_of`); if it
  has none, its ``repr`` when that says more than the class name (addresses removed); else just the
  class, since an object whose state is all private has nothing to configure by that convention;
- an object Python cannot look into (no attributes, no informative ``repr``) and anything nested
  deeper than ``_MAX_DEPTH``: these cannot be told apart, so they are described by a token that is
  new in every process.  The identity then differs from any earlier run's and nothing is reused from
  a cache (a warning says which class to give a ``config`` or a ``repr``).
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
import warnings
from collections.abc import Mapping
from typing import Any

from .secrets import secret_name

_MAX_DEPTH = 20
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: Describes what cannot be described: it differs in every process, so it never matches a cache.
_THIS_PROCESS = os.urandom(8).hex()

_Seen = tuple[int, ...]  # ids of the containers being described, to stop at a cycle


def _class_name(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _plain(value: Any, path: _Seen) -> Any:
    if isinstance(value, enum.Enum):
        return f"{_class_name(type(value))}.{value.name}"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, type):
        return _class_name(value)
    if isinstance(value, re.Pattern):
        return {"pattern": value.pattern, "flags": value.flags}
    if id(value) in path:
        return "<cycle>"
    if len(path) >= _MAX_DEPTH:
        return _indescribable(value, f"is nested more than {_MAX_DEPTH} levels deep")
    path = (*path, id(value))
    if isinstance(value, (list, tuple)):
        return [_plain(v, path) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v, path) for v in value), key=_canonical)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, path) for k, v in value.items() if not secret_name(str(k))}
    return _describe(value, path)


def _describe(obj: Any, path: _Seen) -> dict[str, Any]:
    described: dict[str, Any] = {"class": _class_name(type(obj))}
    config = _config(obj, path)
    if config:
        return {**described, "config": config}
    text = _ADDRESS.sub("", repr(obj))
    if text != _ADDRESS.sub("", object.__repr__(obj)):
        # hashed: a repr may show a secret, and config_of's result must not
        return {**described, "repr": hashlib.sha256(text.encode()).hexdigest()[:16]}
    if config is None:
        return _indescribable(obj, "has no attributes and no repr to describe it by")
    return described


def _indescribable(obj: Any, why: str) -> dict[str, Any]:
    kind = _class_name(type(obj))
    warnings.warn(
        f"context-bench: a {kind} in a configuration {why}; what holds it is never reused from a cache "
        "(give it a `config` or a repr that shows its settings)",
        RuntimeWarning,
        stacklevel=2,
    )
    return {"class": kind, "process": _THIS_PROCESS}


def _settings(obj: Any) -> dict[str, Any] | None:
    """The ``config`` mapping or the public attributes; None if Python sees no state at all."""
    config = getattr(obj, "config", None)
    if callable(config):
        config = config()
    if isinstance(config, dict):
        return config
    slots = [s for kind in type(obj).__mro__ for s in kind.__dict__.get("__slots__", ())]
    try:
        attributes = dict(vars(obj))
    except TypeError:
        if not slots:
            return None
        attributes = {}
    attributes.update({s: getattr(obj, s) for s in slots if hasattr(obj, s)})
    return {k: v for k, v in attributes.items() if not k.startswith("_")}


def _config(obj: Any, path: _Seen) -> dict[str, Any] | None:
    settings = _settings(obj)
    if settings is None:
        return None
    plain = {k: _plain(v, path) for k, v in settings.items() if not secret_name(k)}
    return {k: v for k, v in plain.items() if v is not None}


def config_of(obj: Any) -> dict[str, Any]:
    """What configures ``obj``: its ``config`` mapping if it has one, else its plain public attributes.

    Nested objects are described by their own configuration (the module docstring has the rules).
    Secrets (anything named like a key, token or password) are left out, so they never reach a cache
    key or a cache file.
    """
    return _config(obj, (id(obj),)) or {}


def identity(obj: Any) -> str:
    """A short stable hash of the object's class, name and configuration."""
    payload = {
        "class": _class_name(type(obj)),
        "name": getattr(obj, "name", None),
        "config": config_of(obj),
    }
    return hashlib.sha256(_canonical(payload).encode()).hexdigest()[:16]


def content_hash(value: Any) -> str:
    # surrogatepass: a row with a lone surrogate has a hash too (the same bytes as before for all else)
    blob = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha1(blob).hexdigest()[:16]
