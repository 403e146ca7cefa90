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


def test_a_key_is_redacted_before_the_error_text_is_shortened():
    from context_bench.client import ChatClient, EndpointError
    from context_bench.testing import FakeServer, Reply

    key = "sk-0123456789abcdef-secret"
    # the error body's text reaches the 200-character cut in the middle of the key
    with FakeServer(lambda body: Reply("x" * 171 + key, status=401)) as server:
        client = ChatClient(server.url, "m", api_key=key)
        with pytest.raises(EndpointError) as caught:
            client.complete([{"role": "user", "content": "hi"}])
    message = str(caught.value)
    assert "HTTP 401" in message and "***" in message and key[:5] not in message


def test_the_blocking_and_async_faces_share_one_cool_down():
    """A 429 storm the async face sees pauses the blocking face's next request to that URL too."""
    import asyncio
    import threading

    from context_bench.client import AsyncChatClient, ChatClient
    from context_bench.testing import FakeServer, Reply

    lock = threading.Lock()
    storm = [Reply(status=429, headers={"Retry-After": "0.5"})] * 4

    def reply(body):
        with lock:
            return storm.pop() if storm else "fine"

    messages = [{"role": "user", "content": "hi"}]
    with FakeServer(reply) as server:

        async def wave() -> list[str]:
            async with AsyncChatClient(server.url, "m", concurrency=4) as client:
                return [
                    c.content for c in await asyncio.gather(*(client.complete(messages) for _ in range(4)))
                ]

        thread = threading.Thread(target=lambda: asyncio.run(wave()))
        thread.start()
        while sum(1 for s in server.seen if s.outcome == "429") < 4:
            time.sleep(0.01)
        time.sleep(0.05)  # the 429s have reached the client
        storm_end = server.seen[3].time
        assert ChatClient(server.url, "m").complete(messages).content == "fine"
        thread.join(10)
    after = [s.time - storm_end for s in server.seen[4:]]
    assert len(after) == 5 and min(after) >= 0.45


def test_retries_are_counted_and_a_final_error_says_how_many():
    from context_bench.client import ChatClient, EndpointError, RetryPolicy
    from context_bench.testing import FakeServer, Reply

    replies = iter([Reply(status=503), Reply(status=500)])
    with FakeServer(lambda body: next(replies, "ok")) as server:
        client = ChatClient(server.url, "m", retry=RetryPolicy(max_retries=2, base_delay=0.01))
        assert client.complete([{"role": "user", "content": "hi"}]).attempts == 3
    with FakeServer(lambda body: Reply(status=502)) as server:
        client = ChatClient(server.url, "m", retry=RetryPolicy(max_retries=1, base_delay=0.01))
        with pytest.raises(EndpointError, match=r"HTTP 502 \(gave up after 2 attempts\)") as caught:
            client.complete([{"role": "user", "content": "hi"}])
    assert caught.value.attempts == 2 and caught.value.url == server.url + "/v1/chat/completions"
