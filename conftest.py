"""What every test of the repository (tests/ and each plugin's tests/) shares."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run, score and memory records itself in the store, by default in the working directory:
    a test records nothing (``CBENCH_STORE=none``) unless it tests recording, with a store of its own."""
    monkeypatch.setenv("CBENCH_STORE", "none")
