"""Choosing each data set's evaluators from the rules that plugins register."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .builtin import PLUGIN_DATASETS
from .errors import ContextBenchError, UsageError
from .plugins import KNOWN_PROVIDERS, PluginHost
from .specs import AutowireRule, resolve

#: What a fields rule needs of a row: for each field, the keys any one of which will do.
Needs = tuple[frozenset[str], ...]


def _needs(fields: Iterable[str]) -> Needs:
    """``("question|prompt", "answer")``: a question or a prompt, and an answer."""
    return tuple(frozenset(field.split("|")) for field in fields)


def _is_set(value: Any) -> bool:
    return value not in (None, "", False, [], ())


def _applies(rule: AutowireRule, exclude: set[str], run: str, options: Mapping[str, Any]) -> bool:
    """A rule serves this kind of run, its evaluator is not excluded and the options it needs are set."""
    if rule.evaluator.lower() in exclude or not rule.serves(run):
        return False
    return all(_is_set(options.get(opt)) for opt in rule.requires)


def _check_excluded(host: PluginHost, exclude: Iterable[str]) -> None:
    known = {spec.name.lower() for _, spec in host.evaluator_specs()}
    for name in exclude:
        if name.lower() not in known:
            raise UsageError(f"cannot exclude evaluator {name!r}: no such evaluator is installed")


#: Split names a data set file often carries (``gsm8k_test.jsonl``, ``mmlu-dev.jsonl``).
_SPLIT = re.compile(r"^(?P<base>.+?)[_.-](?:train|test|dev|val|valid|validation|eval|evaluation)$")


def rule_name(dataset: str, host: PluginHost) -> str:
    """The name rules know ``dataset`` by: itself, or without a split suffix when that is a known
    data set (``gsm8k_test`` -> ``gsm8k``; ``my_test`` stays itself)."""
    name = dataset.lower()
    match = _SPLIT.match(name)
    if match is None:
        return name
    known = set(PLUGIN_DATASETS).union(*(rule.datasets for _, rule in host.plugin_rules()))
    return match["base"] if name not in known and match["base"] in known else name


@attrs.define
class Wiring:
    """The evaluators of one data set: those it gets by name, and those it gets per row by fields."""

    by_name: list[Any]
    by_fields: list[tuple[Needs, Any]]
    _memo: dict[frozenset[str], list[Any]] = attrs.Factory(dict)

    def for_row(self, row: Mapping[str, Any]) -> list[Any]:
        if not self.by_fields:
            return self.by_name
        keys = frozenset(row)
        chosen = self._memo.get(keys)
        if chosen is None:
            chosen = list(self.by_name)
            for fields, evaluator in self.by_fields:
                if all(one_of & keys for one_of in fields) and evaluator not in chosen:
                    chosen.append(evaluator)
            self._memo[keys] = chosen
        return chosen


class Wirer:
    """Builds evaluators once per run and wires them to data sets.

    ``explicit`` replaces auto-wiring; ``add`` and ``exclude`` adjust it (names or instances).
    ``run`` is the kind of run (``"rows"``, ``"memory"``): only the rules that serve it apply.
    """

    def __init__(
        self,
        host: PluginHost,
        options: Mapping[str, Any] | None = None,
        *,
        explicit: Sequence[Any] | None = None,
        add: Sequence[Any] = (),
        exclude: Iterable[str] = (),
        run: str = "rows",
    ) -> None:
        self.host = host
        self.options = dict(options or {})
        self.run = run
        exclude = list(exclude)
        self.exclude = {name.lower() for name in exclude}
        self.hints: list[str] = []
        self._built: dict[Any, Any] = {}
        self._explicit = None if explicit is None else [self._instance(e) for e in explicit]
        self._add = [self._instance(e) for e in add]
        _check_excluded(host, exclude)

    def _instance(self, evaluator: Any) -> Any:
        """An evaluator the user named (or passed): built as its rule would build it, from the options."""
        if not isinstance(evaluator, str):
            return evaluator
        spec = self.host.find_evaluator(evaluator)
        builds = [
            (plugin, r.build)
            for plugin, r in self.host.plugin_rules()
            if r.evaluator == spec.name and r.build is not None
        ]
        for plugin, build in builds or [("", None)]:  # the first rule whose build gives one for these options
            try:
                built = self._build(spec.name, build, plugin)
            except ContextBenchError:
                raise
            except Exception as exc:  # noqa: BLE001 - the user asked for it: say why it cannot be had
                raise UsageError(f"cannot build evaluator {evaluator}: {type(exc).__name__}: {exc}") from exc
            if built is not None:
                return built
        raise UsageError(f"cannot build evaluator {evaluator}: no rule builds it for this run's options")

    def _build(self, name: str, build: Any, plugin: str) -> Any:
        """Built once per run; ``build`` gets the options of the ``plugin`` whose rule names it."""
        key = (name, build)
        if key not in self._built:
            if build is None:
                self._built[key] = resolve(self.host.find_evaluator(name).factory)()
            else:
                self._built[key] = resolve(build)(self.host.options_for(plugin, self.options))
        return self._built[key]

    def _from_rule(self, plugin: str, rule: AutowireRule) -> Any | None:
        if not _applies(rule, self.exclude, self.run, self.options):
            return None
        if not self.host.has_evaluator(rule.evaluator):
            self._hint(rule.evaluator, rule.datasets or rule.fields)
            return None
        try:
            return self._build(rule.evaluator, rule.build, plugin)
        except ContextBenchError:
            raise  # a setup mistake the user must fix (an unset API key variable): stop, in one line
        except Exception as exc:  # noqa: BLE001 - a broken plugin costs its evaluator, not the run
            self._built[(rule.evaluator, rule.build)] = None
            hint = f"{rule.evaluator} could not be built and is skipped: {type(exc).__name__}: {exc}"
            if hint not in self.hints:
                self.hints.append(hint)
            return None

    def _hint(self, evaluator: str, where: Iterable[str]) -> None:
        dist = KNOWN_PROVIDERS.get(evaluator)
        install = f"install {dist}" if dist else f"install the plugin that provides {evaluator}"
        hint = f"{install} to score {', '.join(where)} with {evaluator}"
        if hint not in self.hints:
            self.hints.append(hint)

    def wire(self, dataset: str) -> Wiring:
        if self._explicit is not None:
            return Wiring(by_name=list(self._explicit), by_fields=[])
        name = rule_name(dataset, self.host)
        by_name: list[Any] = []
        by_fields: list[tuple[Needs, Any]] = []
        for plugin, rule in self.host.plugin_rules():
            if rule.limited_away(name, self.options):
                continue
            if name in rule.datasets or "*" in rule.datasets:
                evaluator = self._from_rule(plugin, rule)
                if evaluator is not None and evaluator not in by_name:
                    by_name.append(evaluator)
            elif rule.fields and self.host.has_evaluator(rule.evaluator):
                evaluator = self._from_rule(plugin, rule)
                if evaluator is not None:
                    by_fields.append((_needs(rule.fields), evaluator))
        suggested = PLUGIN_DATASETS.get(name)
        if suggested and not self.host.has_evaluator(suggested):
            self._hint(suggested, [dataset])
        for evaluator in self._add:
            if evaluator not in by_name:
                by_name.append(evaluator)
        return Wiring(by_name=by_name, by_fields=by_fields)


def describe_wiring(
    host: PluginHost,
    datasets: Mapping[str, Iterable[Any]],
    options: Mapping[str, Any] | None = None,
    *,
    explicit: Sequence[Any] | None = None,
    add: Sequence[Any] = (),
    exclude: Iterable[str] = (),
    run: str = "rows",
) -> str:
    """One line saying which evaluators each data set gets and why (its name, or its rows' fields),
    as :class:`Wirer` will choose them; builds nothing.  Rows with a ``dataset`` field count there."""
    exclude = list(exclude)
    _check_excluded(host, exclude)
    for named in [*(explicit or ()), *add]:
        if isinstance(named, str):
            host.find_evaluator(named)  # an unknown name: its one-line error, before this line
    if explicit is not None:
        return f"evaluators (named with --evaluator): {', '.join(map(_label, explicit)) or 'none'}"
    options = dict(options or {})
    excluded = {name.lower() for name in exclude}
    keys: dict[str, set[frozenset[str]]] = {}
    for name, rows in datasets.items():
        for row in rows:
            if isinstance(row, Mapping):
                dataset = row.get("dataset") or name
                keys.setdefault(str(dataset), set()).add(frozenset(row))
    parts = []
    for dataset, shapes in keys.items():
        name = rule_name(dataset, host)
        chosen: dict[str, str] = {}  # in the order Wiring uses: by name, --evaluator, by fields
        by_fields: dict[str, str] = {}
        for _, rule in host.plugin_rules():
            if not _applies(rule, excluded, run, options) or not host.has_evaluator(rule.evaluator):
                continue
            if name in rule.datasets or "*" in rule.datasets:
                why = f"name {name}" if name in rule.datasets else "every data set"
                chosen.setdefault(rule.evaluator, why)
            elif rule.fields and any(set(rule.fields) <= shape for shape in shapes):
                by_fields.setdefault(rule.evaluator, f"fields {'+'.join(rule.fields)}")
        for evaluator in add:
            chosen.setdefault(_label(evaluator), "--evaluator")
        for evaluator, why in by_fields.items():
            chosen.setdefault(evaluator, why)
        listed = ", ".join(f"{evaluator} ({why})" for evaluator, why in chosen.items())
        parts.append(f"{dataset}: {listed or 'none'}")
    return f"evaluators: {'; '.join(parts)}"


def _label(evaluator: Any) -> str:
    return evaluator if isinstance(evaluator, str) else str(getattr(evaluator, "name", evaluator))
