"""A report is data, not orders: the run it records is shown first, and run only when the user says so.

``--rerun report.json`` (or ``--config`` naming a report) repeats a run that someone else may have
recorded, and a report can name any program to run, any URL to send a key to and any file to
write.  So its run is printed first as a plan: each system with the endpoint its rows go to and the
key variable it sends, or the program it runs; the data sets it reads; every option it sets (a
plugin's judge URL among them); where the report goes.  Without ``--yes`` (or a "y" typed at a
terminal) the command stops there, exit 2, before anything is read, run or sent.  The report's own
output path is never used: the new report goes to stdout unless ``--out`` is on the command line.
A hand-written run file (TOML, or JSON that is not a report) is the user's own and runs as it is.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..client import DEFAULT_KEY_VARIABLE
from ..errors import UsageError
from ..reports._sections import printable
from ..secrets import redact
from ._system_flags import SystemSettings, systems_from_entries


def confirmed(data: dict[str, Any], path: str, args: argparse.Namespace) -> dict[str, Any]:
    """The run ``data`` (what a report records) without its output path, once its plan is printed
    and confirmed (``--yes``, or "y" at a terminal); a UsageError when it is not."""
    output = data.get("output")
    dropped = output.get("out") if isinstance(output, dict) else None
    if isinstance(output, dict):
        data = {**data, "output": {key: value for key, value in output.items() if key != "out"}}
    flag = "--rerun" if getattr(args, "rerun", None) else "--config"
    print(f"context-bench: {printable(path)} is a report: the run it records would", file=sys.stderr)
    for line in plan(data, path, args.out, dropped):
        print(f"  {printable(redact(line))}", file=sys.stderr)
    if args.yes or _answered_yes():
        return data
    raise UsageError(
        f"{flag} {path}: not run: a report's run runs only with --yes (or a 'y' typed at a terminal), "
        "once its plan above is what you want"
    )


def plan(data: dict[str, Any], path: str, out: str | None, dropped: Any = None) -> list[str]:
    """What the run ``data`` would do, a line each: its systems, data sets, options and output."""
    lines = []
    if "systems" in data:
        lines += _systems(systems_from_entries(data["systems"], path))
    else:
        lines.append("run the systems of this command line")
    for entry in data.get("datasets") or ():
        if isinstance(entry, dict) and "path" in entry:
            lines.append(f"read the file {entry['path']} (its rows go to every system)")
        elif isinstance(entry, dict):
            lines.append(f"load the data set {entry.get('name')}")
    options = data.get("options")
    for key, value in options.items() if isinstance(options, dict) else ():
        lines.append(f"set {key} = {value!r}{_what(key, value)}")
    where = f"write its report to {out} (--out)" if out else "write its report to stdout"
    if dropped is not None:
        where += f"; the report's own output path, {dropped!r}, is not used"
    lines.append(where)
    return lines


def _systems(systems: list[SystemSettings]) -> list[str]:
    keys_named = any(system.api_key_env for system in systems)  # as proxy_kwargs decides
    lines = []
    for system in systems:
        if system.url is None:
            lines.append(
                f"run the program {system.command!r} on this machine, once per row (system {system.name})"
            )
            continue
        if system.api_key_env:
            key = f"the key in ${system.api_key_env}"
        elif keys_named:
            key = "no key"
        else:
            key = _default_key()
        lines.append(f"send each row to {system.url} (system {system.name}, model {system.model}) with {key}")
    return lines


def _default_key() -> str:
    if os.environ.get(DEFAULT_KEY_VARIABLE):
        return f"the key in ${DEFAULT_KEY_VARIABLE}"
    return f"no key (${DEFAULT_KEY_VARIABLE} is not set)"


def _what(key: str, value: Any) -> str:
    """What an option does that the plan should say: a URL is sent rows (and a key), a key
    variable's value is sent."""
    if isinstance(value, str) and value.lower().startswith(("http://", "https://")):
        return f": an endpoint; unless a key variable is named for it, it gets {_default_key()}"
    if key.endswith("key_env"):
        return f": the key in ${value} is sent"
    return _PATHS.get(key, "")


#: The core's options that name a path, and what the run does with it.
_PATHS = {"cache_dir": ": files are written under it", "prices": ": read", "hub_mirror": ": read"}


def _answered_yes() -> bool:
    """A "y" typed at a terminal (never read from a pipe or a file: a script says --yes)."""
    if not sys.stdin or not sys.stdin.isatty():
        return False
    print("context-bench: run it? [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")
