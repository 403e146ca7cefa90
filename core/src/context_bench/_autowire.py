"""Choosing each data set's evaluators from the rules that plugins register."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .errors import AmbiguousEvaluator, ContextBenchError, UsageError
from .plugins import PluginHost
from .providers import providers
from .specs import AutowireRule, resolve

#: What a fields rule needs of a row: for each field, the keys any one of which will do.
Needs = tuple[frozenset[str], ...]


def _needs(fields: Iterable[str]) -> Needs:
    """``("question|prompt", "answer")``: a question or a prompt, and an answer."""
    return tuple(frozenset(field.split("|")) for field in fields)


def _carries(keys: frozenset[str], needs: Needs) -> bool:
    return all(one_of & keys for one_of in needs)


def _is_set(value: Any) -> bool:
    return value not in (None, "", False, [], ())


def _limited_away(rule: AutowireRule, dataset: str, name: str, options: Mapping[str, Any]) -> bool:
    """A rule limited to some data sets (a plugin's ``datasets_option``) serves one listed by its own
    name (``squad_test``) or by the name rules know it by (``squad``)."""
    return rule.limited_away(dataset.lower(), options) and rule.limited_away(name, options)


#: Split names a data set file often carries (``gsm8k_test.jsonl``, ``mmlu-dev.jsonl``).
_SPLIT = re.compile(r"^(?P<base>.+?)[_.-](?:train|test|dev|val|valid|validation|eval|evaluation)$")


def rule_name(dataset: str, host: PluginHost) -> str:
    """The name rules know ``dataset`` by: itself, or without a split suffix when that is a known
    data set (``mmlu_test`` -> ``mmlu``; ``my_test`` stays itself): one a rule names, or one a
    first-party plugin scores (:mod:`~context_bench.providers`), installed or not."""
    name = dataset.lower()
    match = _SPLIT.match(name)
    if match is None:
        return name
    known = set(providers().scored_by).union(*(rule.datasets for _, rule in host.plugin_rules()))
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
                if _carries(keys, fields) and evaluator not in chosen:
                    chosen.append(evaluator)
            self._memo[keys] = chosen
        return chosen

    def by_fields_alone(self) -> list[Any]:
        """The evaluators some row so far got by its fields that it would not get by name."""
        given = {id(e) for chosen in self._memo.values() for e in chosen}
        return [e for _, e in self.by_fields if id(e) in given and e not in self.by_name]


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
        known = {spec.name.lower() for _, spec in host.evaluator_specs()}
        for name in exclude:
            if name.lower() not in known:
                raise UsageError(f"cannot exclude evaluator {name!r}: no such evaluator is installed")

    def _instance(self, evaluator: Any) -> Any:
        """An evaluator the user named (or passed): built as its rule would build it, from the options."""
        if not isinstance(evaluator, str):
            return evaluator
        owner, spec = self.host.locate_evaluator(evaluator)
        rules = [(p, r) for p, r in self.host.plugin_rules() if r.evaluator == spec.name and r.build]
        # A name two plugins register is built only by its owner's rules: never the other's evaluator.
        builds = [(p, r.build) for p, r in rules if p == owner] or (
            [(p, r.build) for p, r in rules] if len(self.host.evaluator_owners(spec.name)) == 1 else []
        )
        for plugin, build in builds or [(owner, None)]:  # the first build that gives one for these options
            try:
                built = self._build(spec.name, build, plugin)
            except ContextBenchError:
                raise
            except Exception as exc:  # noqa: BLE001 - the user asked for it: say why it cannot be had
                raise UsageError(f"cannot build evaluator {evaluator}: {type(exc).__name__}: {exc}") from exc
            if built is not None:
                return built
        raise UsageError(f"cannot build evaluator {evaluator}: no rule builds it for this run's options")

    def _key(self, name: str, build: Any, plugin: str) -> tuple[Any, ...]:
        """Without a build, the evaluator is its owner's factory: the owner is part of what is built."""
        return (name, build, None if build is not None else self.host.locate_evaluator(name, plugin)[0])

    def _build(self, name: str, build: Any, plugin: str) -> Any:
        """Built once per run; ``build`` gets the options of the ``plugin`` whose rule names it."""
        key = self._key(name, build, plugin)
        if key not in self._built:
            if build is None:
                self._built[key] = resolve(self.host.locate_evaluator(name, plugin)[1].factory)()
            else:
                self._built[key] = resolve(build)(self.host.options_for(plugin, self.options))
        return self._built[key]

    def _from_rule(self, plugin: str, rule: AutowireRule) -> Any | None:
        if rule.evaluator.lower() in self.exclude or not rule.serves(self.run):
            return None
        if not all(_is_set(self.options.get(opt)) for opt in rule.requires):
            return None
        if not self.host.has_evaluator(rule.evaluator):
            self._hint(rule.evaluator, rule.datasets or rule.fields)
            return None
        try:
            return self._build(rule.evaluator, rule.build, plugin)
        except AmbiguousEvaluator as exc:  # matters only where the name is used: not this rule's rows
            hint = f"{exc} to score {', '.join(rule.datasets or rule.fields)}"
            if hint not in self.hints:
                self.hints.append(hint)
            return None
        except ContextBenchError:
            raise  # a setup mistake the user must fix (an unset API key variable): stop, in one line
        except Exception as exc:  # noqa: BLE001 - a broken plugin costs its evaluator, not the run
            self._built[self._key(rule.evaluator, rule.build, plugin)] = None
            hint = f"{rule.evaluator} could not be built and is skipped: {type(exc).__name__}: {exc}"
            if hint not in self.hints:
                self.hints.append(hint)
            return None

    def _hint(self, evaluator: str, where: Iterable[str]) -> None:
        failed = self.host.failed_registration("evaluator", evaluator)
        dist = providers().evaluators.get(evaluator)
        install = f"install {dist}" if dist else f"install the plugin that provides {evaluator}"
        hint = (
            f"{failed} ({', '.join(where)} is not scored with it)"
            if failed
            else f"{install} to score {', '.join(where)} with {evaluator}"
        )
        if hint not in self.hints:
            self.hints.append(hint)

    def wire(self, dataset: str) -> Wiring:
        if self._explicit is not None:
            return Wiring(by_name=list(self._explicit), by_fields=[])
        name = rule_name(dataset, self.host)
        by_name: list[Any] = []
        by_fields: list[tuple[Needs, Any]] = []
        for plugin, rule in self.host.plugin_rules():
            if _limited_away(rule, dataset, name, self.options):
                continue
            if name in rule.datasets or "*" in rule.datasets:
                evaluator = self._from_rule(plugin, rule)
                if evaluator is not None and evaluator not in by_name:
                    by_name.append(evaluator)
            elif rule.fields and self.host.has_evaluator(rule.evaluator):
                evaluator = self._from_rule(plugin, rule)
                if evaluator is not None:
                    by_fields.append((_needs(rule.fields), evaluator))
        suggested = providers().scored_by.get(name)
        if suggested and not self.host.has_evaluator(suggested):
            self._hint(suggested, [dataset])
        for evaluator in self._add:
            if evaluator not in by_name:
                by_name.append(evaluator)
        return Wiring(by_name=by_name, by_fields=by_fields)

    def choices(self, datasets: Mapping[str, Iterable[Any]]) -> dict[str, dict[str, str]]:
        """The evaluators each data set gets (as :meth:`wire` builds them, so a setup mistake raises
        first), each with why: its name, every data set, ``--evaluator``, or the fields of at least
        one of its rows.  Rows with a ``dataset`` field count there."""
        shapes: dict[str, set[frozenset[str]]] = {}
        for name, rows in datasets.items():
            for row in rows:
                if isinstance(row, Mapping):
                    shapes.setdefault(str(row.get("dataset") or name), set()).add(frozenset(row))
        if self._explicit is not None:
            named = dict.fromkeys(map(self._label, self._explicit), "--evaluator")
            return {dataset: dict(named) for dataset in shapes}
        found = {}
        for dataset, keys in shapes.items():
            wiring, name = self.wire(dataset), rule_name(dataset, self.host)
            chosen: dict[str, str] = {}
            for evaluator in wiring.by_name:
                label = self._label(evaluator)
                named = any(r.evaluator == label and name in r.datasets for _, r in self.host.plugin_rules())
                why = (
                    "--evaluator" if evaluator in self._add else f"name {name}" if named else "every data set"
                )
                chosen.setdefault(label, why)
            for needs, evaluator in wiring.by_fields:
                if any(_carries(shape, needs) for shape in keys):
                    fields = "+".join("|".join(sorted(one_of)) for one_of in needs)
                    chosen.setdefault(self._label(evaluator), f"fields {fields}")
            found[dataset] = chosen
        return found

    def describe(self, choices: Mapping[str, Mapping[str, str]]) -> str:
        """One line: the evaluators of each data set and why (:meth:`choices`)."""
        if self._explicit is not None:
            named = ", ".join(self._label(e) for e in self._explicit) or "none"
            return f"evaluators (named with --evaluator): {named}"
        parts = [
            f"{dataset}: {', '.join(f'{label} ({why})' for label, why in chosen.items()) or 'none'}"
            for dataset, chosen in choices.items()
        ]
        return f"evaluators: {'; '.join(parts)}"

    def _label(self, evaluator: Any) -> str:
        """The name the evaluator is registered under (what the user types), else its own name."""
        for key, built in self._built.items():
            if built is evaluator:
                return str(key[0])
        return str(getattr(evaluator, "name", type(evaluator).__name__))
