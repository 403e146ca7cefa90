"""The hub data sets of one family each, loaded by name through the real `datasets` library from
the fixture mirror under tests/fixtures/hub (in each source's schema), with the network off."""

from __future__ import annotations

from pathlib import Path

import pytest

from context_bench.testing import offline_hub

MIRROR = Path(__file__).parents[2] / "fixtures" / "hub"


@pytest.fixture(autouse=True)
def hub(monkeypatch, tmp_path):
    offline_hub(monkeypatch, MIRROR, tmp_path)
