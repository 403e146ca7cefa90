"""The contract type that keeps plugins off the core's private modules by their names alone
(import_contracts.py at the repository's root, `lint-imports` in .ci/run), on a graph built here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import grimp
import pytest
from importlinter import configuration

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cbench_import_contracts", ROOT / "import_contracts.py")
assert _spec is not None and _spec.loader is not None
contracts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(contracts)
configuration.configure()  # what lint-imports does first: the timer a contract's check reads

MODULES = [
    "context_bench",
    "context_bench.execution",
    "context_bench._executor",
    "context_bench.cli",
    "context_bench.cli._app",
    "context_bench._catalog",
    "context_bench._catalog.qa",
    "context_bench.__main__",
    "cbench_x",
    "cbench_x.plugin",
]


def broken(*imported: str) -> list[tuple[str, str]]:
    """The (plugin, private module) pairs the contract refuses when cbench_x.plugin imports these."""
    graph = grimp.ImportGraph()
    for module in MODULES:
        graph.add_module(module)
    for name in imported:
        graph.add_import(importer="cbench_x.plugin", imported=name, line_number=1, line_contents="")
    contract = contracts.PrivateByName(
        name="private",
        session_options={"root_packages": ["context_bench", "cbench_x"]},
        contract_options={
            "source_modules": ["cbench_x"],
            "forbidden_modules": ["context_bench"],
            "allow_indirect_imports": "true",
        },
    )
    check = contract.check(graph, verbose=False)
    pairs = [(c["downstream_module"], c["upstream_module"]) for c in check.metadata["invalid_chains"]]
    assert check.kept == (not pairs)
    return pairs


@pytest.mark.parametrize(
    ("module", "private"),
    [
        ("context_bench", False),
        ("context_bench.cli", False),
        ("context_bench.__main__", False),
        ("context_bench._executor", True),
        ("context_bench.cli._app", True),
        ("context_bench._catalog.qa", True),
    ],
)
def test_a_module_is_private_by_its_name_or_a_parents(module, private):
    assert contracts.private(module) is private


def test_public_modules_may_be_imported():
    public = ("context_bench", "context_bench.execution", "context_bench.cli", "context_bench.__main__")
    assert broken(*public) == []


def test_a_private_module_at_any_depth_is_refused_and_a_private_package_once():
    assert broken("context_bench.execution", "context_bench.cli._app", "context_bench._catalog.qa") == [
        ("cbench_x", "context_bench._catalog"),
        ("cbench_x", "context_bench.cli._app"),
    ]
    assert broken("context_bench._executor") == [("cbench_x", "context_bench._executor")]


def test_the_repository_checks_plugins_with_it():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    name = "Plugins import only the core's public modules"
    (contract,) = [c for c in config["contracts"] if c["name"] == name]
    assert contract["type"] == "private_by_name"
    assert contract["forbidden_modules"] == ["context_bench"]
    assert "private_by_name: import_contracts.PrivateByName" in config["contract_types"]
