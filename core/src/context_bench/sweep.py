"""Sweeps: a system run once per setting of a parameter (or of a grid of them), each setting a
system of its own named ``SYSTEM[NAME=value]``, so it is cached, resumed and reported like any
other; the baseline runs once (docs/sweeps.md).

A setting reaches its system as the system takes parameters: an endpoint as a key of the request
body (merged like ``--extra-body``), a ``--command`` as the ``{NAME}`` placeholders of its command
line, a Python system as keywords of its factory (:func:`factory_systems`).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from .bounds import bounded
from .defaults import DEFAULT_MARGIN

__all__ = ["Axis", "Setting", "Sweep", "axis_range", "parse_axis", "read_value"]

#: A parameter's name: a request body's key, a placeholder's or a keyword's name.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
#: Settings a ``start``/``stop``/``step`` range may make: a step too small for its range is a mistake.
MAX_VALUES = 1000


def read_value(text: str) -> int | float | str:
    """A swept value as written: a whole number, a finite number, else the text itself."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


@attrs.frozen
class Axis:
    """One swept parameter and its values, in the order given."""

    name: str
    values: tuple[Any, ...] = attrs.field(converter=tuple)

    def __attrs_post_init__(self) -> None:
        if not NAME.fullmatch(self.name):
            raise ValueError(f"{self.name!r} is not a parameter name (letters, digits, _ . -)")
        if not self.values:
            raise ValueError(f"{self.name}: no values to sweep")
        if len(set(map(repr, self.values))) != len(self.values):
            raise ValueError(f"{self.name}: a value is given twice")


def parse_axis(text: str) -> Axis:
    """``NAME=V1,V2,...`` (``--sweep``'s words); a ValueError of one line when it does not parse."""
    name, equals, listed = text.partition("=")
    if not equals:
        raise ValueError(f"expected NAME=V1,V2,... (got {text!r})")
    words = [word.strip() for word in listed.split(",")]
    if any(not word for word in words):
        raise ValueError(f"{name.strip()}: an empty value in {listed!r}")
    return Axis(name.strip(), [read_value(word) for word in words])


def axis_range(name: str, start: float, stop: float, step: float) -> Axis:
    """``start``, ``start + step``, ... up to ``stop`` included (a run file's ``[[sweeps]]``), each
    rounded to 10 decimals so 0.1 + 0.2 reads 0.3."""
    if step == 0 or not all(math.isfinite(x) for x in (start, stop, step)):
        raise ValueError(f"{name}: step must be a finite number other than 0")
    if (stop - start) / step < 0:
        raise ValueError(f"{name}: step {step:g} does not go from {start:g} to {stop:g}")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_VALUES:
        raise ValueError(f"{name}: {count} values from {start:g} to {stop:g}: at most {MAX_VALUES}")
    values = [round(start + i * step, 10) for i in range(count)]
    whole = all(isinstance(x, int) for x in (start, stop, step))
    return Axis(name, [int(v) if whole else v for v in values])


@attrs.frozen
class Setting:
    """One setting of a swept system: the system's own name and its values, in the axes' order."""

    system: str
    values: tuple[tuple[str, Any], ...] = attrs.field(converter=tuple)

    @property
    def name(self) -> str:
        """The setting as a system's name: ``compressed[rate=0.3]``, ``compressed[rate=0.3,k=5]``."""
        return f"{self.system}[{','.join(f'{key}={value}' for key, value in self.values)}]"

    @property
    def parameter(self) -> str:
        """The swept parameter's name (a grid's names joined by commas)."""
        return ",".join(key for key, _ in self.values)

    @property
    def value(self) -> Any:
        """The setting's value (a grid's, a list in the axes' order)."""
        return self.values[0][1] if len(self.values) == 1 else [value for _, value in self.values]


@attrs.frozen(kw_only=True)
class Sweep:
    """A run's sweep: its axes (none: no sweep), the margin of the safe operating point
    (``--margin``), the parameters declared rates (``--sweep-rate``, a setting's achieved input
    ratio checked against them), and each setting's system by its name (the systems expanded)."""

    axes: tuple[Axis, ...] = attrs.field(default=(), converter=tuple)
    margin: float = attrs.field(default=DEFAULT_MARGIN, validator=bounded("--margin"))
    rates: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    settings: Mapping[str, Setting] = attrs.Factory(dict)

    def __attrs_post_init__(self) -> None:
        names = [axis.name for axis in self.axes]
        twice = next((name for name in names if names.count(name) > 1), None)
        if twice is not None:
            raise ValueError(f"{twice} is swept twice: give its values in one --sweep")
        unknown = next((name for name in self.rates if name not in names), None)
        if unknown is not None:
            raise ValueError(f"--sweep-rate {unknown}: no --sweep {unknown}=... to declare a rate")

    def grid(self, system: str, taken: Collection[str]) -> list[Setting]:
        """The settings of ``system``, which takes the parameters ``taken``: every combination of
        their values, the first axis slowest."""
        axes = [axis for axis in self.axes if axis.name in taken]
        if not axes:
            return []
        return [
            Setting(system, zip([axis.name for axis in axes], values, strict=True))
            for values in itertools.product(*(axis.values for axis in axes))
        ]

    def untaken(self, taken: Collection[str]) -> str | None:
        """The first axis no system takes (``taken``: every parameter some system takes)."""
        return next((axis.name for axis in self.axes if axis.name not in taken), None)

    def with_settings(self, settings: Collection[Setting]) -> Sweep:
        return attrs.evolve(self, settings={setting.name: setting for setting in settings})
