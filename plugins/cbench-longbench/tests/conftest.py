from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

import cbench_longbench.plugin as plugin
from context_bench.testing import isolated_host, offline_hub

HERE = Path(__file__).parent
#: The fixture mirror: a few rows of each source, in its own schema.
MIRROR = HERE / "fixtures" / "hub"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    offline_hub(monkeypatch, MIRROR, tmp_path)


@pytest.fixture(scope="module")
def host():
    """A plugin host holding this plugin alone."""
    return isolated_host(plugin)


@pytest.fixture(scope="session")
def published() -> Path:
    """THUDM's and Lost in the Middle's files as published: the templates and budgets carried over."""
    return HERE / "fixtures" / "official"


@pytest.fixture(scope="session")
def reference() -> ModuleType:
    """The official definitions (tests/reference.py), loaded by path: tests are no package here."""
    spec = importlib.util.spec_from_file_location("cbench_longbench_reference", HERE / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
