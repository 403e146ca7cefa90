"""The core knows no plugin by name (issue 27, part A): what it says about first-party plugins that
are not installed comes from data/providers.json, which these tests keep in step with the plugins'
own registrations, and no first-party evaluator, data set or plugin is named in the core's source."""

from __future__ import annotations

import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

import context_bench
from context_bench import providers as providers_module
from context_bench._autowire import Wirer
from context_bench.errors import EvaluatorNotFound, UsageError
from context_bench.providers import ForeignFile, Providers, providers
from context_bench.testing import isolated_host

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "src" / "context_bench"
#: Every first-party distribution: a folder of plugins/ with its own pyproject.toml.
FIRST_PARTY = sorted(
    path.name for path in (ROOT / "plugins").iterdir() if (path / "pyproject.toml").is_file()
)


def _registered(distribution: str):
    module = importlib.import_module(distribution.replace("-", "_") + ".plugin")
    host = isolated_host()
    return host, host.register(module, name=distribution, distribution=distribution)


@pytest.fixture(scope="module")
def registered():
    return {distribution: _registered(distribution)[1] for distribution in FIRST_PARTY}


def test_every_first_party_distribution_is_in_the_file_as_it_registers(registered):
    known = providers()
    assert set(FIRST_PARTY) == {
        d
        for kind in (known.evaluators, known.datasets, known.executors, known.commands)
        for d in kind.values()
    }
    for distribution, info in registered.items():
        for kind in ("evaluators", "datasets", "executors", "commands"):
            listed = sorted(name for name, owner in getattr(known, kind).items() if owner == distribution)
            assert listed == sorted(record.name for record in getattr(info, kind)), (distribution, kind)


def test_each_data_set_a_plugin_scores_by_name_is_in_the_file_with_its_evaluator(registered):
    named: dict[str, set[str]] = {}
    for info in registered.values():
        for rule in info.rules:
            for dataset in rule.datasets:
                named.setdefault(dataset, set()).add(rule.evaluator)
    scored_by = providers().scored_by
    missing = sorted(set(named) - set(scored_by))
    assert not missing, f"add to scored_by in data/providers.json: {missing}"
    for dataset, evaluator in scored_by.items():
        if dataset in named:
            assert evaluator in named[dataset], dataset
        else:  # a data set wired by its fields, listed for its hint: a first-party one, and evaluator
            assert dataset in providers().datasets, dataset
        assert evaluator in providers().evaluators, evaluator


def test_the_moved_names_and_the_foreign_files_name_what_exists(registered):
    known = providers()
    for name, (module, distribution) in known.names.items():
        assert distribution in FIRST_PARTY
        assert getattr(importlib.import_module(module), name) is getattr(context_bench, name)
    for file in known.files:
        assert file.command in known.commands


def _first_party_names(registered) -> tuple[set[str], set[str]]:
    """(names matched exactly, data set names matched in any case) the core's source must not hold."""
    core = isolated_host().plugins["context-bench"]
    own = {spec.name.lower() for spec in core.datasets} | {
        name for rule in core.rules for name in rule.datasets
    }
    exact = set(FIRST_PARTY) | {d.replace("-", "_") for d in FIRST_PARTY}
    exact |= {spec.name for info in registered.values() for spec in info.evaluators}
    exact |= set(providers().names)
    datasets = {spec.name.lower() for info in registered.values() for spec in info.datasets} - own
    return exact, datasets


def _text_of(path: Path) -> list[tuple[int, str, bool]]:
    """(line, text, is code) of a source file: Python's names are code, its strings and comments
    text; any other file is text."""
    source = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [(number, line, False) for number, line in enumerate(source.splitlines(), 1)]
    kinds = {tokenize.NAME: True, tokenize.STRING: False, tokenize.COMMENT: False}
    return [
        (token.start[0], token.string, kinds[token.type])
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type in kinds
    ]


def test_the_core_source_names_no_first_party_plugin(registered):
    exact, datasets = _first_party_names(registered)
    found = []
    for path in sorted(p for p in CORE.rglob("*") if p.suffix in (".py", ".tmpl")):
        for number, text, code in _text_of(path):
            names = exact if code else exact | datasets
            for name in names:
                flags = re.IGNORECASE if name in datasets else 0
                # a name, not part of a longer one (nor Python's ``math.fsum``)
                if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-]|\.\w)", text, flags):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {name}")
    assert found == []


def test_the_hints_come_from_the_file(monkeypatch):
    """With another file, other hints: the core holds no name of its own to fall back on."""
    fake = Providers(
        evaluators={"Frobnicator": "cbench-frob"},
        datasets={"frob": "cbench-frob"},
        executors={"spark": "cbench-spark"},
        commands={"frobnicate": "cbench-frob"},
        names={"frob_memory": ("cbench_frob", "cbench-frob")},
        scored_by={"frob": "Frobnicator"},
        files=(ForeignFile("Frob", frozenset({"frob_turns"}), "frobnicate"),),
    )
    monkeypatch.setattr(providers_module, "_loaded", fake)
    host = isolated_host()
    with pytest.raises(
        EvaluatorNotFound, match=r"^evaluator 'Frobnicator' is not installed: pip install cbench-frob$"
    ):
        host.find_evaluator("Frobnicator")
    assert "install" not in host.missing_hint("MathEquivalence")
    wirer = Wirer(host)
    wirer.wire("frob_test")  # a split of it is it too
    assert wirer.hints == ["install cbench-frob to score frob_test with Frobnicator"]
    with pytest.raises(UsageError, match=r"no executor named 'spark' \(pip install cbench-spark\)"):
        host.find_executor("spark")
    with pytest.raises(
        ImportError, match=r"cbench-frob plugin, which is not installed \(pip install cbench-frob\)"
    ):
        context_bench.frob_memory  # noqa: B018
    with pytest.raises(AttributeError):
        context_bench.evaluate_memory  # noqa: B018 - not in this file
    from context_bench.cli._inputs import Inputs

    with pytest.raises(
        UsageError,
        match=r"looks like a Frob file \(records with frob_turns\): .* "
        r"`context-bench frobnicate --dataset f.jsonl` \(after pip install cbench-frob\)$",
    ):
        Inputs(host).add("f", iter([{"frob_turns": []}]), "f.jsonl")
