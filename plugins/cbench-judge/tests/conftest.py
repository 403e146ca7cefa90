"""Fixtures: a real OpenAI-compatible server on 127.0.0.1 per test, with scripted verdicts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cbench_judge.testing import memory_verdict
from context_bench.testing import FakeServer, Reply


@pytest.fixture
def judge_server() -> Iterator[Callable[..., FakeServer]]:
    """``judge_server(responder, **options)`` starts a server; every one is stopped after the test.

    Its replies state a judge-sized usage (100 tokens in, 10 out) unless a reply says otherwise."""
    started: list[FakeServer] = []

    def start(responder: Callable[[Any], Reply | str] = memory_verdict, **options: Any) -> FakeServer:
        options.setdefault("usage", {"prompt_tokens": 100, "completion_tokens": 10})
        server = FakeServer(responder, **options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their keys; a developer's real OPENAI_API_KEY must never leak into a request."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
