"""The plugins' part of a run's configuration: typed, one namespace per plugin.

A plugin's options reach its auto-wire rules (``build(options)``, ``requires``) and its executor as
a mapping keyed by each flag's ``dest`` (``--acme-url`` -> ``acme_url``): that is plugin API 1,
and :class:`PluginSettings` keeps it.  A plugin reads and sets its own share typed, through a
:class:`Settings` record declared beside its flags, whose fields are the flags' dests less the
plugin's prefix (``AcmeSettings.url`` is ``acme_url``): ``config.plugins.get(AcmeSettings)``
reads it, ``config.plugins.with_(settings)`` gives new plugin settings with it, and nothing edits a
dict in place.  ``context_bench.testing.check_settings`` keeps a record and its flags in step.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

import attrs

__all__ = ["PluginSettings", "Settings"]

S = TypeVar("S", bound="Settings")


class Settings:
    """The base of a plugin's own settings: subclass it with ``@attrs.frozen``, set ``namespace``
    to the prefix of the plugin's flags, and give it one field (with its default) per flag."""

    #: The prefix of the plugin's flags and of their dests (``acme``: ``--acme-url``, ``acme_url``).
    namespace: ClassVar[str]
    #: What makes a subclass an attrs class (``attrs.fields`` reads it); declared for the type checker.
    __attrs_attrs__: ClassVar[tuple[attrs.Attribute[Any], ...]]

    @classmethod
    def dest(cls, field: str) -> str:
        """The run option (a flag's dest) that ``field`` stands for: ``AcmeSettings.dest("url")``
        is ``acme_url``, what a rule ``requires``."""
        if field not in attrs.fields_dict(cls):
            raise AttributeError(f"{cls.__name__} has no setting {field!r}")
        return f"{cls.namespace}_{field}"

    @classmethod
    def read(cls: type[S], options: Mapping[str, Any]) -> S:
        """The record in a run's options (a rule's build gets its plugin's share): a setting left
        unset (None, or absent) keeps its default."""
        given = {}
        for field in attrs.fields(cls):
            value = options.get(f"{cls.namespace}_{field.name}")
            if value is not None:
                given[field.name] = value
        return cls(**given)

    def options(self) -> dict[str, Any]:
        """The record as run options: each setting by its dest."""
        return {
            f"{self.namespace}_{field.name}": getattr(self, field.name) for field in attrs.fields(type(self))
        }


def _frozen(options: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(options))


@attrs.frozen
class PluginSettings:
    """Every plugin's options of a run by dest: what the rules' builds and ``requires`` and the
    executors read (each plugin gets its own share, the shared ones and the keys no plugin
    declared: :meth:`~context_bench.plugins.PluginHost.options_for`).  Read-only: a plugin changes
    its share by :meth:`with_`, which returns new settings."""

    options: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen, hash=False)

    def get(self, kind: type[S]) -> S:
        """One plugin's settings, typed: ``config.plugins.get(AcmeSettings).url``."""
        return kind.read(self.options)

    def with_(self, settings: Settings) -> PluginSettings:
        """These settings with one plugin's replaced by ``settings``."""
        return PluginSettings({**self.options, **settings.options()})
