"""A Python system swept: its factory called once per setting of a :class:`~context_bench.sweep.Sweep`
(apart from sweep.py, which a RunConfig holds, so the settings import nothing of the plugin host)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .specs import resolve
from .sweep import Sweep

__all__ = ["factory_systems"]


def factory_systems(factory: str | Callable[..., Any], name: str, sweep: Sweep) -> tuple[list[Any], Sweep]:
    """A Python system swept: ``factory`` (a callable or ``"module:factory"``) called once per
    setting with the swept parameters it takes as keywords (``rate=0.3``), each system it returns
    named ``NAME[rate=0.3]``; returns the systems and ``sweep`` with their settings, for the
    RunConfig.  A factory that takes none of the parameters is a ValueError."""
    build = resolve(factory)
    parameters = inspect.signature(build).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        taken = {axis.name for axis in sweep.axes}
    else:
        taken = {p.name for p in parameters} & {axis.name for axis in sweep.axes}
    settings = sweep.grid(name, taken)
    if not settings:
        raise ValueError(f"{name}: its factory takes none of the swept parameters")
    systems = []
    for setting in settings:
        system = build(**dict(setting.values))
        system.name = setting.name
        systems.append(system)
    return systems, sweep.with_settings([*sweep.settings.values(), *settings])
