"""What a report says about its run: when, with which versions, against which endpoints, from which
command line.  Nothing secret gets in: the command line and the configuration are masked by the one
set of rules in :mod:`context_bench.secrets` (keys, passwords, tokens, key-shaped values)."""

from __future__ import annotations

import datetime
import platform
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .secrets import join_command, redact, redact_command, scrub_config

__all__ = ["describe_system", "run_metadata", "scrub_config"]


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
            described["endpoint"] = redact(url)
            break
    return described


def run_metadata(
    argv: Sequence[str] | None = None,
    systems: Iterable[Any] = (),
    versions: dict[str, str | None] | None = None,
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The metadata of a run as reports show it: UTC date, versions (context-bench, Python and
    each loaded plugin's distribution), the systems, the command line and the resolved
    configuration (``config``, in a run file's shape: what ``run --config REPORT`` repeats), all
    redacted."""
    from . import __version__

    found: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": {"context-bench": __version__, "python": platform.python_version(), **(versions or {})},
    }
    described = [describe_system(s) for s in systems]
    if described:
        found["systems"] = described
    if argv is not None:
        found["command"] = join_command(["context-bench", *redact_command(argv)])
    if config is not None:
        found["config"] = scrub_config(config)
    return found
