"""The client's rules that need no server: URL normalization, Retry-After, backoff."""

from __future__ import annotations

import email.utils
import time

import pytest

from context_bench.client import RetryPolicy, chat_completions_url
from context_bench.client import retry_after_seconds as parse_retry_after


@pytest.mark.parametrize(
    "base, expected",
    [
        ("http://localhost:8080", "http://localhost:8080/v1/chat/completions"),
        ("http://localhost:8080/", "http://localhost:8080/v1/chat/completions"),
        ("http://localhost:8080/v1", "http://localhost:8080/v1/chat/completions"),
        ("http://localhost:8080/v1/", "http://localhost:8080/v1/chat/completions"),
        ("http://localhost:8080/v1/chat/completions", "http://localhost:8080/v1/chat/completions"),
        ("https://relay.example/openai", "https://relay.example/openai/v1/chat/completions"),
    ],
)
def test_url_normalization(base: str, expected: str) -> None:
    assert chat_completions_url(base) == expected


@pytest.mark.parametrize("bad", ["", "localhost:8080", "ftp://x", "http://x/?a=1"])
def test_bad_urls_are_value_errors(bad: str) -> None:
    with pytest.raises(ValueError):
        chat_completions_url(bad)


def test_retry_after_seconds_dates_and_caps() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= parse_retry_after(date, now=now) <= 31
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0
    policy = RetryPolicy(max_retry_after=5.0)
    assert 5.0 <= policy.honour(3600) <= 5.5
    assert 2.0 <= policy.honour(2.0) <= 2.2


def test_backoff_is_exponential_with_jitter() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    for attempt, ceiling in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)):
        delays = {policy.backoff(attempt) for _ in range(20)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1  # jittered, not in lock step
