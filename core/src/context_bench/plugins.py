"""The plugin host: discovers plugins through entry points and keeps what they register.

Discovery is the only place that touches installed distributions.  Every plugin is loaded in
isolation: an import error or an incompatible API version marks that plugin alone, and within a
plugin every registering hook runs at discovery on its own: one that raises loses only what it
registers, and a record refused (a name already taken) only itself.  Each failure is one warning
line naming the plugin, its version and the error; everything else keeps working, and a name the
user asks for that a failed or disabled plugin might have offered says so.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import pluggy

from . import hookspecs
from .direction import Directions
from .errors import AmbiguousEvaluator, EvaluatorNotFound, PluginError, UsageError
from .hookspecs import SHARED_OPTIONS
from .providers import providers
from .specs import (
    AutowireRule,
    CommandSpec,
    DatasetSpec,
    EvaluatorSpec,
    ExecutorSpec,
    FormatSpec,
    SectionSpec,
    resolve,
)

ENTRY_POINT_GROUP = "context_bench.plugins"
#: The plugin API this core provides.  A plugin declares the one it was built for as
#: ``CBENCH_PLUGIN_API``; a plugin built for another one is skipped, not half-registered.
PLUGIN_API_VERSION = 1
BUILTIN = "context-bench"

#: Each registering hook: the record it takes, the PluginInfo field that keeps them, what one is called.
_HOOKS = {
    "cbench_register_evaluators": (EvaluatorSpec, "evaluators", "evaluator"),
    "cbench_register_autowire": (AutowireRule, "rules", "auto-wire rule"),
    "cbench_register_datasets": (DatasetSpec, "datasets", "data set"),
    "cbench_register_commands": (CommandSpec, "commands", "command"),
    "cbench_register_executors": (ExecutorSpec, "executors", "executor"),
    "cbench_register_formats": (FormatSpec, "formats", "report format"),
    "cbench_register_sections": (SectionSpec, "sections", "summary section"),
}
#: The hooks whose names are one namespace: the core's are reserved, and the first plugin's stays.
_TAKEN_ONCE = (
    "cbench_register_commands",
    "cbench_register_executors",
    "cbench_register_formats",
    "cbench_register_sections",
)
#: The hook that registers each kind of name a user asks for.
_KIND_HOOKS = {kind: hook for hook, (_, _, kind) in _HOOKS.items()}


class PluginWarning(UserWarning):
    """A plugin was skipped; the message names it, its version and why."""


@attrs.frozen
class Failure:
    """A part of a plugin that did not load: a hook that raised (``raised``; what it registered
    before it raised, ``names``, is dropped with it) or one record refused (its name, ``names``)."""

    hook: str
    reason: str
    names: tuple[str, ...] = ()
    raised: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"hook": self.hook, "reason": self.reason, "names": list(self.names), "raised": self.raised}


@attrs.define
class PluginInfo:
    """What the host knows about one plugin (one row of ``context-bench plugins``).

    ``status`` is ``loaded``, ``partial`` (some of its hooks or records failed: ``failures``; the
    rest works), ``failed`` (nothing of it loaded), ``disabled`` or ``incompatible``; ``reason``
    says why in one line.
    """

    name: str
    distribution: str | None = None
    version: str | None = None
    status: str = "loaded"
    reason: str = ""
    evaluators: list[EvaluatorSpec] = attrs.Factory(list)
    rules: list[AutowireRule] = attrs.Factory(list)
    datasets: list[DatasetSpec] = attrs.Factory(list)
    commands: list[CommandSpec] = attrs.Factory(list)
    executors: list[ExecutorSpec] = attrs.Factory(list)
    formats: list[FormatSpec] = attrs.Factory(list)
    sections: list[SectionSpec] = attrs.Factory(list)
    info: dict[str, str] = attrs.Factory(dict)
    failures: list[Failure] = attrs.Factory(list)

    @property
    def usable(self) -> bool:
        """Whether what it registered is in use (``loaded`` or ``partial``)."""
        return self.status in ("loaded", "partial")

    def settle(self) -> None:
        """The status and reason its failures make: partial while anything of it is left."""
        if not self.failures:
            return
        left = any(getattr(self, field) for _, field, _ in _HOOKS.values())
        self.status = "partial" if left else "failed"
        self.reason = "; ".join(failure.reason for failure in self.failures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "reason": self.reason,
            "failures": [failure.to_dict() for failure in self.failures],
            "evaluators": [
                {
                    "name": e.name,
                    "fields": list(e.fields),
                    "score_fields": e.score_fields(),
                    "description": e.description,
                }
                for e in self.evaluators
            ],
            "autowire": [_rule_dict(r) for r in self.rules],
            "datasets": [
                {"name": d.name, "kind": d.kind, "description": d.description} for d in self.datasets
            ],
            "commands": [{"name": c.name, "help": c.help} for c in self.commands],
            "executors": [
                {"name": x.name, "description": x.description, "options": list(x.options)}
                for x in self.executors
            ],
            "formats": [
                {"name": f.name, "description": f.description, "extension": f.extension, "streams": f.streams}
                for f in self.formats
            ],
            "sections": [{"name": s.name, "description": s.description} for s in self.sections],
            "info": dict(self.info),
        }


def _rule_dict(rule: AutowireRule) -> dict[str, Any]:
    return {
        "evaluator": rule.evaluator,
        "datasets": list(rule.datasets),
        "fields": list(rule.fields),
        "requires": list(rule.requires),
        "runs": list(rule.runs),
    }


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def _env_list(name: str) -> list[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return [part.strip() for part in raw.split(",") if part.strip()]


class PluginHost:
    """Loads plugins and answers questions about what they registered.

    ``autoload`` (default: not ``CBENCH_DISABLE_PLUGIN_AUTOLOAD``) discovers entry points; ``allow``
    (default: ``CBENCH_PLUGINS``, comma-separated) keeps only the named plugins; ``deny`` drops
    plugins by name; ``strict`` (default: ``CBENCH_STRICT_PLUGINS``) raises instead of warning.
    """

    def __init__(
        self,
        *,
        autoload: bool | None = None,
        allow: Iterable[str] | None = None,
        deny: Iterable[str] = (),
        strict: bool | None = None,
        builtin: bool = True,
    ) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.autoload = not _env_flag("CBENCH_DISABLE_PLUGIN_AUTOLOAD") if autoload is None else autoload
        self._allowed_by = "CBENCH_PLUGINS" if allow is None else "the allowed plugins"
        allow = _env_list("CBENCH_PLUGINS") if allow is None else list(allow)
        self.allow = None if allow is None else set(allow)
        self.deny = set(deny)
        self.strict = _env_flag("CBENCH_STRICT_PLUGINS") if strict is None else strict
        self.plugins: dict[str, PluginInfo] = {}
        self._evaluators: dict[str, list[tuple[str, EvaluatorSpec]]] = {}
        self._option_dests: dict[str, set[str]] | None = None
        self._lock = threading.RLock()
        self._discovered = False
        self._builtin = builtin

    # -- loading ---------------------------------------------------------------------------

    def ensure_loaded(self) -> PluginHost:
        with self._lock:
            if not self._discovered:
                self._discovered = True
                if self._builtin:
                    from . import _builtin as builtin

                    self.register(builtin, name=BUILTIN, distribution=BUILTIN, version=_core_version())
                if self.autoload:
                    self._discover()
        return self

    def _discover(self) -> None:
        from importlib.metadata import entry_points  # costs ~40 ms: only when discovery runs

        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            info = PluginInfo(
                name=ep.name,
                distribution=dist.metadata["Name"] if dist is not None else None,
                version=dist.version if dist is not None else None,
            )
            if ep.name in self.plugins:  # kept beside the first, which stays as it loaded
                self._fail(info, "failed", f"another plugin is already registered as {ep.name!r}")
                continue
            if ep.name in self.deny:
                info.status, info.reason = "disabled", f"disabled by -p no:{ep.name}"
                self.plugins[ep.name] = info
                continue
            if self.allow is not None and ep.name not in self.allow:
                info.status, info.reason = "disabled", f"disabled: not in {self._allowed_by}"
                self.plugins[ep.name] = info
                continue
            try:
                obj = ep.load()
            except Exception as exc:  # noqa: BLE001 - isolation is the point
                self._fail(info, "failed", f"import failed: {type(exc).__name__}: {exc}")
                continue
            self._register(obj, info)
        self._warn_unknown_names()

    def _warn_unknown_names(self) -> None:
        """A misspelt allow/deny name would silently keep (or drop) every plugin: say so."""
        named = self.deny | (self.allow or set())
        unknown = sorted(named - set(self.plugins))
        if unknown:
            known = ", ".join(sorted(set(self.plugins) - {BUILTIN})) or "none"
            warnings.warn(
                f"context-bench: no plugin named {', '.join(map(repr, unknown))} to allow or deny "
                f"(installed: {known})",
                PluginWarning,
                stacklevel=4,
            )

    def register(
        self,
        plugin: Any,
        name: str | None = None,
        *,
        distribution: str | None = None,
        version: str | None = None,
    ) -> PluginInfo:
        """Register a plugin object directly (``context_bench.testing`` uses this)."""
        with self._lock:
            self.ensure_loaded()
            name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
            info = PluginInfo(name=name, distribution=distribution, version=version)
            if name in self.plugins:
                raise PluginError(f"a plugin named {name!r} is already registered")
            self._register(plugin, info)
            return info

    def _register(self, plugin: Any, info: PluginInfo) -> None:
        api = getattr(plugin, "CBENCH_PLUGIN_API", None)
        if api != PLUGIN_API_VERSION:
            declared = (
                "does not declare CBENCH_PLUGIN_API" if api is None else f"is built for plugin API {api}"
            )
            self._fail(
                info, "incompatible", f"{declared}; this context-bench provides API {PLUGIN_API_VERSION}"
            )
            return
        try:
            self.pm.register(plugin, name=info.name)
        except Exception as exc:  # noqa: BLE001 - pluggy refuses a malformed hook implementation
            self._fail(info, "failed", f"registration failed: {type(exc).__name__}: {exc}")
            return
        for hook, (_, field, _) in _HOOKS.items():
            setattr(info, field, self._collect(hook, plugin, info))
        info.info = self._plugin_info(plugin)
        info.settle()
        if not info.usable:  # nothing of it is left: its other hooks are not called either
            self.pm.unregister(plugin)
        self.plugins[info.name] = info
        for spec in info.evaluators:
            self._evaluators.setdefault(spec.name, []).append((info.name, spec))
        for failure in info.failures:
            self._warn(info, failure.reason)

    def _collect(self, hook: str, plugin: Any, info: PluginInfo) -> list[Any]:
        """What ``plugin``'s implementation of ``hook`` registers, less what is refused.

        The host calls each plugin's implementation itself, rather than through ``pm.hook``, so that
        one that raises costs only what it registers (noted in ``info.failures``).
        """
        kind = _HOOKS[hook][0]
        items: list[Any] = []

        def register(item: Any) -> None:
            if not isinstance(item, kind):
                raise TypeError(f"{hook} registered {item!r}, expected a {kind.__name__}")
            items.append(item)

        try:
            for impl in getattr(self.pm.hook, hook).get_hookimpls():
                if impl.plugin is plugin:
                    impl.function(register)
        except Exception as exc:  # noqa: BLE001 - isolation is the point
            names = tuple(_name(item) for item in items)
            info.failures.append(Failure(hook, f"{hook} raised {type(exc).__name__}: {exc}", names))
            return []
        admitted = []
        for item in items:
            refused = self._refusal(hook, item, info.name, admitted)
            if refused:
                reason = f"{_HOOKS[hook][2]} {_name(item)!r} {refused}"
                info.failures.append(Failure(hook, reason, (_name(item),), raised=False))
            else:
                admitted.append(item)
        return admitted

    def _refusal(self, hook: str, item: Any, plugin: str, admitted: list[Any]) -> str:
        """Why a record cannot be had (a name that is malformed or taken), or ""."""
        name = _name(item)
        if hook == "cbench_register_evaluators":
            builtin = self.plugins.get(BUILTIN)
            if "/" in name:
                return "may not contain '/'"
            if builtin is not None and name in {s.name for s in builtin.evaluators}:
                return "is reserved for a built-in evaluator"
        elif hook == "cbench_register_sections" and name in _summary_fields():
            return "is a field of the core's summary"
        if hook in _TAKEN_ONCE:
            field = _HOOKS[hook][1]
            taken = {_name(x): p.name for p in self.plugins.values() if p.usable for x in getattr(p, field)}
            taken.update({_name(x): plugin for x in admitted})
            owner = taken.get(name)
            # The core registers its commands, executor and formats first: each name it has, now or
            # in any later release, is refused here.
            if owner == BUILTIN:
                return "is reserved for the core"
            if owner is not None:
                verb = "added" if hook == "cbench_register_commands" else "registered"
                return f"is already {verb} by {owner}"
        return ""

    @staticmethod
    def _plugin_info(plugin: Any) -> dict[str, str]:
        fn = getattr(plugin, "cbench_plugin_info", None)
        if fn is None:
            return {}
        try:
            return {str(k): str(v) for k, v in (fn() or {}).items()}
        except Exception as exc:  # noqa: BLE001 - a status probe must not break listing
            return {"info_error": f"{type(exc).__name__}: {exc}"}

    def _fail(self, info: PluginInfo, status: str, reason: str) -> None:
        info.status, info.reason = status, reason
        key = info.name
        while self.plugins.get(key, info) is not info:  # a second plugin of a name: beside the first
            key += "+"
        self.plugins[key] = info
        self._warn(info, reason)

    def _warn(self, info: PluginInfo, reason: str) -> None:
        """One line naming the plugin, its version, its status and what failed; strict: an error."""
        version = f" {info.version}" if info.version else ""
        message = f"context-bench: plugin {info.name}{version} {info.status}: {reason}"
        if self.strict:
            raise PluginError(message)
        warnings.warn(message, PluginWarning, stacklevel=4)

    def mark_failed(self, plugin: str, hook: str, name: str, reason: str) -> None:
        """A record of ``plugin`` that failed after discovery (a command whose parser could not be
        set up): it is dropped and noted like a refused one."""
        info = self.plugins[plugin]
        field, noun = _HOOKS[hook][1], _HOOKS[hook][2]
        setattr(info, field, [item for item in getattr(info, field) if _name(item) != name])
        info.failures.append(Failure(hook, f"{noun} {name!r} {reason}", (name,), False))
        info.settle()
        self._warn(info, info.failures[-1].reason)

    # -- queries ---------------------------------------------------------------------------

    def loaded(self) -> list[PluginInfo]:
        """The plugins whose registrations are in use: ``loaded`` and ``partial`` ones."""
        self.ensure_loaded()
        return [p for p in self.plugins.values() if p.usable]

    def evaluator_specs(self) -> list[tuple[str, EvaluatorSpec]]:
        """Every (plugin name, spec), in registration order."""
        self.ensure_loaded()
        return [pair for pairs in self._evaluators.values() for pair in pairs]

    def find_evaluator(self, name: str) -> EvaluatorSpec:
        """Resolve a short (``WordCountDiff``) or qualified (``cbench-wordcount/WordCountDiff``) name."""
        return self.locate_evaluator(name)[1]

    def locate_evaluator(self, name: str, prefer: str | None = None) -> tuple[str, EvaluatorSpec]:
        """The (plugin, spec) a name resolves to.

        A qualified name picks that plugin's evaluator.  ``prefer`` is the plugin whose own rule
        names the evaluator: its own registration wins, so another plugin reusing the name is
        ambiguous only where the short name itself is used.
        """
        self.ensure_loaded()
        plugin, sep, short = name.rpartition("/")
        candidates = self._evaluators.get(short)
        if candidates is None:
            folded = {k.lower(): v for k, v in self._evaluators.items()}
            candidates = folded.get(short.lower(), [])
        if sep:
            candidates = [c for c in candidates if c[0] == plugin]
        elif prefer is not None and len(candidates) > 1:
            candidates = [c for c in candidates if c[0] == prefer] or candidates
        if len(candidates) == 1:
            return candidates[0]
        if candidates:
            sources = ", ".join(f"{p}/{s.name}" for p, s in candidates)
            raise AmbiguousEvaluator(
                f"evaluator {short!r} is registered by several plugins: {sources}; use one of those names"
            )
        if sep and self._evaluators.get(short):
            owners = ", ".join(f"{p}/{s.name}" for p, s in self._evaluators[short])
            raise EvaluatorNotFound(f"no plugin {plugin!r} registers {short!r} (registered: {owners})")
        raise EvaluatorNotFound(self.missing_hint(short))

    def missing_hint(self, name: str) -> str:
        dist = providers().evaluators.get(name)
        if dist and not self.failed_registration("evaluator", name):
            for info in self.plugins.values():
                if info.status != "loaded" and info.distribution == dist:
                    return f"evaluator {name!r} comes from {dist}, which is {info.status}: {info.reason}"
            return f"evaluator {name!r} is not installed: pip install {dist}"
        known = ", ".join(sorted(self._evaluators)) or "none"
        return self.not_found(
            "evaluator", name, f"no loaded plugin registers an evaluator named {name!r} (available: {known})"
        )

    def not_found(self, kind: str, name: str, message: str) -> str:
        """What to say when no loaded plugin offers the ``kind`` named ``name``: the failed
        registration of it, else ``message`` and every plugin that was not searched."""
        return self.failed_registration(kind, name) or "; ".join([message, *self.unsearched(kind)])

    def failed_registration(self, kind: str, name: str) -> str:
        """A plugin registered the ``kind`` (``evaluator``, ``data set``, ``command``, ``executor``)
        ``name`` and it failed: ``"<kind> 'name' of plugin P is installed but failed: <reason>"``."""
        self.ensure_loaded()
        hook = _KIND_HOOKS[kind]
        for info in self.plugins.values():
            for failure in info.failures:
                if failure.hook == hook and name.lower() in {n.lower() for n in failure.names}:
                    return f"{kind} {name!r} of plugin {info.name} is installed but failed: {failure.reason}"
        return ""

    def unsearched(self, kind: str) -> list[str]:
        """Why a ``kind`` of name may be missing: each plugin that failed before it said what it
        registers (``"plugin P is installed but failed: <reason>"``), or is disabled."""
        self.ensure_loaded()
        hook = _KIND_HOOKS[kind]
        found = []
        for info in self.plugins.values():
            raised = [f.reason for f in info.failures if f.hook == hook and f.raised]
            if info.status == "disabled":
                found.append(f"plugin {info.name} is {info.reason}")
            elif raised:
                found.append(f"plugin {info.name} is installed but failed: {'; '.join(raised)}")
            elif not info.usable and not info.failures:  # it never got to its hooks
                found.append(f"plugin {info.name} is installed but {info.status}: {info.reason}")
        return found

    def broken(self) -> list[str]:
        """Every plugin of which something failed (``"plugin P is installed but failed: <reason>"``)."""
        self.ensure_loaded()
        return [
            f"plugin {info.name} is installed but {'failed' if info.usable else info.status}: {info.reason}"
            for info in self.plugins.values()
            if info.status not in ("loaded", "disabled")
        ]

    def directions(self, evaluators: Iterable[Any] = ()) -> Directions:
        """Which way each score field points: lower-is-better where an installed evaluator's spec
        declares it, or one of ``evaluators`` (a run's) declares it of itself
        (:meth:`EvaluatorSpec.declared_by`); every figure, report and gate reads the result."""
        specs = [spec for _, spec in self.evaluator_specs()]
        lower: dict[str, float] = {}
        for spec in [*specs, *map(EvaluatorSpec.declared_by, evaluators)]:
            for field, worst in spec.failure_values().items():
                lower.setdefault(field, worst)  # the first declaration of a field wins
        return Directions(lower)

    def spec_of(self, evaluator: Any) -> EvaluatorSpec | None:
        """The spec whose factory is ``evaluator``'s class; a factory not yet imported is not imported
        (the evaluator's own module is already loaded if it is the factory)."""
        kind = type(evaluator)
        for _, spec in self.evaluator_specs():
            factory = spec.factory
            if isinstance(factory, str):
                if factory.partition(":")[0] != kind.__module__:
                    continue
                factory = resolve(factory)
            if factory is kind:
                return spec
        return None

    def evaluator_owners(self, name: str) -> list[str]:
        """The plugins that register an evaluator under this short name."""
        self.ensure_loaded()
        return [plugin for plugin, _ in self._evaluators.get(name, [])]

    def has_evaluator(self, name: str) -> bool:
        self.ensure_loaded()
        return name in self._evaluators

    def rules(self) -> list[AutowireRule]:
        return [rule for _, rule in self.plugin_rules()]

    def plugin_rules(self) -> list[tuple[str, AutowireRule]]:
        """Every (plugin name, rule), in registration order: whose options a rule's build gets."""
        return [(info.name, rule) for info in self.loaded() for rule in info.rules]

    def commands(self) -> list[tuple[str, CommandSpec]]:
        """Every (plugin name, command) that loaded plugins add, in registration order."""
        return [(info.name, command) for info in self.loaded() for command in info.commands]

    def executors(self) -> list[tuple[str, ExecutorSpec]]:
        """Every (plugin name, executor) that loaded plugins register, the core's ``local`` first."""
        return self._registered("executors")

    def find_executor(self, name: str) -> ExecutorSpec:
        """The executor registered as ``name``; a UsageError listing the installed ones otherwise."""
        found = self._named("executors", name)
        if found is not None:
            return found
        known = ", ".join(spec.name for _, spec in self.executors())
        dist = providers().executors.get(name)
        hint = f" (pip install {dist})" if dist else ""
        raise UsageError(
            self.not_found("executor", name, f"no executor named {name!r}{hint}; installed: {known}")
        )

    def formats(self) -> list[tuple[str, FormatSpec]]:
        """Every (plugin name, report format) that loaded plugins register, the core's first."""
        return self._registered("formats")

    def find_format(self, name: str) -> FormatSpec:
        """The report format registered as ``name``; a UsageError naming the valid ones otherwise."""
        found = self._named("formats", name)
        if found is not None:
            return found
        valid = ", ".join(spec.name for _, spec in self.formats())
        raise UsageError(
            self.not_found("report format", name, f"unknown report format {name!r}; valid formats: {valid}")
        )

    def sections(self) -> list[tuple[str, SectionSpec]]:
        """Every (plugin name, summary section) that loaded plugins register."""
        return self._registered("sections")

    def _registered(self, field: str) -> list[tuple[str, Any]]:
        """Every (plugin name, record) of a PluginInfo field that loaded plugins registered, in order."""
        return [(info.name, spec) for info in self.loaded() for spec in getattr(info, field)]

    def _named(self, field: str, name: str) -> Any:
        """The record of a PluginInfo field registered as ``name`` (one per name), or None."""
        return next((spec for _, spec in self._registered(field) if spec.name == name), None)

    def datasets(self) -> dict[str, tuple[str, DatasetSpec]]:
        """Data sets by lower-case name; the first plugin to register a name wins."""
        found: dict[str, tuple[str, DatasetSpec]] = {}
        for info in self.loaded():
            for spec in info.datasets:
                found.setdefault(spec.name.lower(), (info.name, spec))
        return found

    def add_options(self, group: Any) -> None:
        """Let every loaded plugin add its CLI options to ``group``; a hook that raises loses the
        options it added (a failure of its plugin, said once).  The host notes which ``dest`` each
        plugin added, for :meth:`options_for`."""
        self.ensure_loaded()
        dests: dict[str, set[str]] = {}
        for impl in self.pm.hook.cbench_add_options.get_hookimpls():
            info = self.plugins[impl.plugin_name]
            if any(failure.hook == "cbench_add_options" for failure in info.failures):
                continue  # failed on an earlier parser: said once
            recorder = _Recorder(group)
            try:
                impl.function(recorder)
            except Exception as exc:  # noqa: BLE001 - its options go, the rest of it stays
                recorder.discard()
                reason = f"cbench_add_options raised {type(exc).__name__}: {exc}"
                info.failures.append(Failure("cbench_add_options", reason, tuple(recorder.dests)))
                info.settle()
                self._warn(info, reason)
                continue
            dests.setdefault(impl.plugin_name, set()).update(recorder.dests)
        with self._lock:
            if self._option_dests is None:
                self._option_dests = dests

    def _dests(self) -> dict[str, set[str]]:
        if self._option_dests is None:  # an API run: learn the dests on a parser of our own
            import argparse

            self.add_options(argparse.ArgumentParser(add_help=False).add_argument_group())
        return self._option_dests or {}

    def option_dests(self) -> set[str]:
        """The ``dest`` of every option that loaded plugins add."""
        return set().union(*self._dests().values())

    def options_for(self, plugin: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """The part of a run's ``options`` that ``plugin`` may see: its own, the shared ones, and
        those no plugin declared (an API caller's own keys); never another plugin's."""
        owned = self._dests()
        foreign = set().union(*(d for name, d in owned.items() if name != plugin))
        mine = owned.get(plugin, set())
        return {
            key: value
            for key, value in options.items()
            if key in SHARED_OPTIONS or key in mine or key not in foreign
        }


class _Recorder:
    """An argument group that notes the ``dest`` of every option added through it."""

    def __init__(self, group: Any) -> None:
        self._group = group
        self.dests: list[str] = []
        self._actions: list[Any] = []

    def add_argument(self, *names: str, **kwargs: Any) -> Any:
        action = self._group.add_argument(*names, **kwargs)
        self.dests.append(action.dest)
        self._actions.append(action)
        return action

    def discard(self) -> None:
        """Take back the options added so far (as argparse's own conflict handler removes one)."""
        for action in self._actions:
            self._group._remove_action(action)
            for option in action.option_strings:
                self._group._option_string_actions.pop(option, None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._group, name)


def _name(record: Any) -> str:
    """What a record is known by: its name (an auto-wire rule: the evaluator it wires)."""
    return str(getattr(record, "name", None) or record.evaluator)


def _core_version() -> str:
    from . import __version__

    return __version__


_host: PluginHost | None = None
_host_lock = threading.Lock()


def get_host() -> PluginHost:
    """The process-wide host, configured from the environment and loaded on first use."""
    global _host
    with _host_lock:
        if _host is None:
            _host = PluginHost()
    return _host.ensure_loaded()


def set_host(host: PluginHost | None) -> PluginHost | None:
    """Replace the process-wide host (the CLI does this for ``-p no:NAME``); returns the old one."""
    global _host
    with _host_lock:
        old, _host = _host, host
    return old


def _summary_fields() -> set[str]:
    """The JSON names of the summary's own fields, which no section may take."""
    from .records import Summary

    return set(attrs.fields_dict(Summary))
