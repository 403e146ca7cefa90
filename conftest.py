"""What every test of the repository (tests/ and each plugin's tests/) shares."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run, score and memory records itself in the store, by default in the working directory:
    a test records nothing (``CBENCH_STORE=none``) unless it tests recording, with a store of its own."""
    monkeypatch.setenv("CBENCH_STORE", "none")


@pytest.fixture(autouse=True)
def _no_earlier_answers() -> None:
    """A URL's recent answers live for the process (a 429 storm pauses every request to it): a test's
    server on a port an earlier test's server had must not inherit that server's answers, which once
    gave a 429-only endpoint the larger budget of one that also answers (12 requests, not 6)."""
    from context_bench.client import _forget_cool_downs

    _forget_cool_downs()
