"""The range of every number a run takes from its user or its endpoints, in one table.

A number past any sensible size is a mistake, not a wish: ``--timeout 1e308`` used to be accepted
and then failed every row with an OverflowError, and an endpoint that said it used 1e308 tokens
ended the run in a traceback.  Each numeric flag (and the run-file key that stands for it) is read
through :func:`flag_type`, so a value outside its range is one line and exit 2 before any row
runs; a setting given in Python (:class:`~context_bench.config.RunConfig`) is checked against the
same range by :func:`bounded`; the figures a system reports for a row are checked by
:func:`check_figure`, so one beyond its bound is that row's error.  docs/endpoints.md lists this
table, and a test keeps the two equal.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["BOUNDS", "FIGURES", "Bound", "bounded", "check_figure", "flag_type"]

#: A day, in seconds: the longest any deadline may be.
DAY = 86_400


@attrs.frozen
class Bound:
    """A closed range ``[low, high]`` (``low`` itself excluded when ``above`` is set), of whole
    numbers when ``whole``; ``unit`` names what is counted, for the message."""

    low: float
    high: float
    unit: str = ""
    whole: bool = False
    above: bool = False

    def holds(self, value: float) -> bool:
        try:
            if not math.isfinite(value) or value > self.high:
                return False
        except OverflowError:  # a whole number too big for a float (JSON has no limit)
            return False
        return value > self.low if self.above else value >= self.low

    def describe(self) -> str:
        """``a whole number from 1 to 10,000`` or ``a number of seconds above 0, at most 86,400``."""
        kind = "a whole number" if self.whole else "a number"
        unit = f" of {self.unit}" if self.unit else ""
        if self.above:
            return f"{kind}{unit} above {_shown(self.low)}, at most {_shown(self.high)}"
        return f"{kind}{unit} from {_shown(self.low)} to {_shown(self.high)}"

    def read(self, text: str) -> float | int:
        """``text`` as this range's number; a ValueError when it is none or out of range."""
        value: float | int = int(text) if self.whole else float(text)
        if not self.holds(value):
            raise ValueError(text)
        return value


def _shown(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


#: Every numeric flag, by its option string (a run file's key reads through the same flag).
BOUNDS: dict[str, Bound] = {
    # the run's shared flags
    "--max-examples": Bound(1, 1_000_000_000, "rows", whole=True),
    "--max-concurrency": Bound(1, 10_000, "rows in flight", whole=True),
    "--html-inline-rows": Bound(0, 1_000_000_000, "rows", whole=True),
    "--call-timeout": Bound(0, DAY, "seconds", above=True),
    "--max-row-bytes": Bound(1, 2**30, "bytes", whole=True),
    "--fail-fast": Bound(0, 1_000_000_000, "rows", whole=True),
    "--max-failure-rate": Bound(0, 1),
    "--threshold": Bound(-1_000_000, 1_000_000),
    "--alpha": Bound(0, 0.5, above=True),
    "--margin": Bound(0, 1_000_000),
    "--repeats": Bound(1, 1_000, "repeats", whole=True),
    "--refine": Bound(0, 20, "settings", whole=True),
    # each system's
    "--timeout": Bound(0, DAY, "seconds", above=True),
    "--max-retries": Bound(0, 100, "retries", whole=True),
    "--max-tokens": Bound(1, 100_000_000, "tokens", whole=True),
    "--temperature": Bound(0, 2),
    "--max-output-bytes": Bound(1, 2**30, "bytes", whole=True),
    # the meter's
    "--meter-port": Bound(0, 65_535, "", whole=True),
    # the gates' and the prices' values
    "--fail-under": Bound(-1_000_000, 1_000_000),
    "--fail-over": Bound(-1_000_000, 1_000_000),
    "--fail-if-worse": Bound(0, 1_000_000),
    "--require-operating-point": Bound(-1_000_000, 1_000_000),
    "--price": Bound(0, 1_000_000, "dollars per million tokens"),
    # the store's commands
    "--limit": Bound(0, 1_000_000_000, "runs", whole=True),
    # the plugins' (each plugin reads its own through this table)
    "--judge-concurrency": Bound(1, 10_000, "requests in flight", whole=True),
    "--min-agreement": Bound(-1, 1),
    "--math-timeout": Bound(0, DAY, "seconds", above=True),
    "--math-workers": Bound(1, 1_024, "processes", whole=True),
    "--ray-batch-size": Bound(1, 1_000_000, "rows", whole=True),
    "--top-k": Bound(1, 10_000, "turns", whole=True),
    "--port": Bound(0, 65_535, "", whole=True),
}

#: The figures a system reports for one row (an endpoint's usage and cost, a latency it measured
#: itself); one beyond its bound is the row's error.
FIGURES: dict[str, Bound] = {
    "input_tokens": Bound(0, 1_000_000_000, "tokens"),
    "output_tokens": Bound(0, 1_000_000_000, "tokens"),
    "cost": Bound(0, 1_000_000, "dollars"),
    "latency": Bound(0, 1_000_000, "seconds"),
}


def flag_type(option: str) -> Callable[[str], Any]:
    """The argparse ``type`` of the numeric flag ``option``: its number, or the flag's one-line
    error naming its range (a value that looks like a key is not shown)."""
    bound = BOUNDS[option]

    def read(text: str) -> float | int:
        try:
            return bound.read(text)
        except ValueError:
            from .secrets import key_shaped

            got = "a value that looks like a key, not shown" if key_shaped(text) else repr(text)
            raise argparse.ArgumentTypeError(f"must be {bound.describe()} (got {got})") from None

    read.__name__ = option  # argparse names the type in its own messages
    return read


def bounded(option: str, *, optional: bool = False) -> Callable[[Any, Any, Any], None]:
    """The attrs validator of the setting ``option`` stands for: a ValueError naming the setting
    and the flag's range when the value is out of it (or not a number; None passes when
    ``optional``), so a setting given in Python is held to the range its flag is."""
    bound = BOUNDS[option]
    kinds = int if bound.whole else (int, float)

    def check(instance: Any, attribute: Any, value: Any) -> None:
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, kinds) or not bound.holds(value):
            raise ValueError(f"{attribute.name} must be {bound.describe()} (got {value!r})")

    return check


def check_figure(field: str, value: float) -> None:
    """Raise a ValueError when a row's figure ``field`` is beyond its bound (:data:`FIGURES`)."""
    bound = FIGURES[field]
    if not bound.holds(value):
        raise ValueError(f"the system reported {field} = {value!r}, beyond {bound.describe()}")
