"""A saved summary (the ``summary`` of a JSON report, or of a stored run) read back into the typed
:class:`~context_bench.records.Summary` the reports render, so a saved run is shown by the same
code as a live one.

The records are read field by field from their own declarations, so a field a later release adds
reads back with its default from an older report, and one this release does not know is left out.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Mapping
from typing import Any

import attrs

from . import records
from .records import Summary
from .summary_sections import SummarySection

#: JSON names that differ from the field's (``GroupSummary.passing`` is written ``pass``).
_RENAMED = {"passing": "pass"}


def summary_from_dict(data: Mapping[str, Any]) -> Summary:
    """The :class:`Summary` whose ``to_dict()`` is ``data``."""
    summary = _record(Summary, {k: v for k, v in data.items() if k != "sections"})
    parts = data.get("sections")
    if not isinstance(parts, Mapping):
        return summary
    sections = {
        name: SummarySection.from_dict(part, data.get(name))
        for name, part in parts.items()
        if isinstance(part, Mapping)
    }
    return attrs.evolve(summary, sections=sections)


def _record(cls: type, data: Any) -> Any:
    if not isinstance(data, Mapping):
        return cls()
    hints = _hints(cls)
    values = {}
    for field in attrs.fields(cls):
        key = _RENAMED.get(field.name, field.name)
        if key in data:
            values[field.name] = _value(hints[field.name], data[key])
    return cls(**values)


def _value(hint: Any, value: Any) -> Any:
    """``value`` read as ``hint`` says: records within lists and dicts; everything else as it is."""
    if value is None:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if attrs.has(hint):
        return _record(hint, value)
    if origin is list and args and isinstance(value, list):
        return [_value(args[0], item) for item in value]
    if origin is dict and len(args) == 2 and isinstance(value, Mapping):
        return {key: _value(args[1], item) for key, item in value.items()}
    if origin is typing.Union:
        records_in = [a for a in args if attrs.has(a)]
        return _record(records_in[0], value) if records_in else value
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(records))
