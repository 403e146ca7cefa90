"""Which first-party distribution provides what: the hints about plugins that are not installed.

The core names no plugin in its code.  What it says when a name belongs to a first-party plugin
that is absent ("evaluator 'X' is not installed: pip install D", "install D to score S with X",
an executor, a public name that moved to a plugin, a file that belongs to a plugin's command)
comes from ``data/providers.json``, which a test keeps in step with the plugins' own
registrations.  Read on first use only: importing the core reads no file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

import attrs

__all__ = ["ForeignFile", "Providers", "providers"]


@attrs.frozen
class ForeignFile:
    """A kind of file another command runs, known by fields its records carry (a memory
    benchmark's conversations): ``run`` and ``score`` refuse it, naming that command."""

    looks_like: str
    fields: frozenset[str]
    command: str


@attrs.frozen
class Providers:
    """What each first-party distribution provides, by name: ``evaluators``, ``datasets``,
    ``executors`` and ``commands`` map a name to its distribution, ``names`` a public name of
    ``context_bench`` that moved to a plugin to its (module, distribution), ``scored_by`` a data
    set to the evaluator a plugin scores it with, ``files`` the files of plugins' commands."""

    evaluators: Mapping[str, str]
    datasets: Mapping[str, str]
    executors: Mapping[str, str]
    commands: Mapping[str, str]
    names: Mapping[str, tuple[str, str]]
    scored_by: Mapping[str, str]
    files: tuple[ForeignFile, ...]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Providers:
        kinds = ("evaluators", "datasets", "executors", "commands")
        by_kind: dict[str, dict[str, str]] = {kind: {} for kind in kinds}
        names: dict[str, tuple[str, str]] = {}
        for distribution, provided in data["distributions"].items():
            for kind, found in by_kind.items():
                found.update(dict.fromkeys(provided.get(kind, ()), distribution))
            for name in provided.get("names", ()):
                names[name] = (provided["module"], distribution)
        files = tuple(
            ForeignFile(entry["looks_like"], frozenset(entry["fields"]), entry["command"])
            for entry in data["files"]
        )
        return cls(names=names, scored_by=dict(data["scored_by"]), files=files, **by_kind)


_loaded: Providers | None = None


def providers() -> Providers:
    """The first-party providers the core ships (``data/providers.json``), read once."""
    global _loaded
    if _loaded is None:
        text = resources.files(__package__).joinpath("data", "providers.json").read_text(encoding="utf-8")
        _loaded = Providers.from_dict(json.loads(text))
    return _loaded
