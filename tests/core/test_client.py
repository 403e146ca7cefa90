"""The client's rules that need no server: URL normalization, Retry-After, backoff."""

from __future__ import annotations

import email.utils
import time

import httpx
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


# -- issue 13 #1: every wait is capped and counted against the call's deadline ----------------------

MESSAGES = [{"role": "user", "content": "hi"}]


def _call(face: str, url: str, **options):
    """One call through the blocking or the async face: its completion, or the EndpointError it raised."""
    import asyncio

    from context_bench.client import AsyncChatClient, ChatClient, EndpointError

    try:
        if face == "blocking":
            with ChatClient(url, "m", **options) as client:
                return client.complete(MESSAGES)

        async def call():
            async with AsyncChatClient(url, "m", **options) as client:
                return await client.complete(MESSAGES)

        return asyncio.run(call())
    except EndpointError as exc:
        return exc


FACES = ["blocking", "async"]


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize(
    "header",
    [
        {"Retry-After": "1000000000"},
        {"Retry-After": "Thu, 01 Jan 2099 00:00:00 GMT"},
        {"retry-after-ms": "1e15"},
        {"llm_provider-retry-after": "inf"},
    ],
)
def test_a_huge_wait_hint_ends_at_the_calls_deadline_with_the_endpoints_message(face, header):
    from context_bench.client import EndpointError
    from context_bench.testing import FakeServer, Reply

    with FakeServer(lambda body: Reply("slow down, please", status=429, headers=header)) as server:
        started = time.monotonic()
        outcome = _call(face, server.url, deadline=1.0)
        took = time.monotonic() - started
    assert isinstance(outcome, EndpointError) and took < 5
    assert "HTTP 429 (rate limited): slow down, please" in outcome.reason
    assert "deadline of 1s passed" in outcome.reason


@pytest.mark.parametrize("face", FACES)
def test_the_shared_cool_down_is_capped_and_counted_against_the_deadline(face):
    from context_bench.client import RetryPolicy, _cool_down
    from context_bench.testing import FakeServer, Reply

    retry = RetryPolicy(max_retries=4, base_delay=0.01, max_retry_after=0.2)  # it answers only 429 first
    storm = [Reply("quota", status=429, headers={"Retry-After": "1000000000"})] * 4
    with FakeServer(lambda body: storm.pop() if storm else "fine") as server:
        # four 429s in a row start the cool-down; it pauses the URL for the cap, not 10^9 s
        assert _call(face, server.url, retry=retry, deadline=30).content == "fine"
        cool = _cool_down(server.url + "/v1/chat/completions")
        assert cool.until > 0 and cool.remaining() <= 0.2
        # a pause longer than what is left of a call fails that call at once, with the 429's message
        cool.until = time.monotonic() + 1e9
        started = time.monotonic()
        outcome = _call(face, server.url, retry=retry, deadline=0.5)
        assert time.monotonic() - started < 2 and server.count == 5
        cool.until = 0.0
    assert "HTTP 429 (rate limited): quota" in str(outcome) and "deadline of 0.5s passed" in str(outcome)


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("header", [{"Retry-After": "-5"}, {"retry-after-ms": "-1"}, {"Retry-After": "0"}])
def test_a_negative_or_zero_hint_backs_off_instead_of_retrying_at_once(face, header):
    import itertools

    from context_bench.client import RetryPolicy
    from context_bench.testing import FakeServer, Reply

    with FakeServer(lambda body: Reply(status=503, headers=header)) as server:
        _call(face, server.url, retry=RetryPolicy(max_retries=2, base_delay=0.2))
    gaps = [b.time - a.time for a, b in itertools.pairwise(server.seen)]
    assert server.count == 3 and min(gaps) >= 0.09  # base/2 at least, not 0


def test_wait_hints_are_read_from_every_header_real_proxies_send():
    import email.utils

    from context_bench.client import retry_hint

    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    cases = [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"Retry-After": "2"}, 2.0),
        ({"Retry-After": date}, 30.0),
        ({"llm_provider-retry-after": "7"}, 7.0),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),  # the finer one first, like OpenAI's SDK
        ({"Retry-After": "soon", "llm_provider-retry-after": "3"}, 3.0),
        ({"Retry-After": "1e9"}, 60.0),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "-1"}, None),
        ({}, None),
    ]
    for headers, expected in cases:
        found = retry_hint(httpx.Headers(headers), cap=60.0, now=now)
        if expected is None:
            assert found is None, headers
        else:
            assert found is not None and abs(found - expected) <= 1.0, (headers, found)


# -- issue 13 #5: a whole request has a deadline, not only each read --------------------------------


@pytest.mark.parametrize("face", FACES)
def test_a_body_dripping_in_slowly_is_cut_off_at_the_timeout(face):
    from context_bench.client import EndpointError, RetryPolicy
    from context_bench.testing import FakeServer, Reply

    # each byte comes quickly (a per-read timeout never fires); the whole would take ~10 s
    with FakeServer(lambda body: Reply("x" * 60, fault="drip")) as server:
        started = time.monotonic()
        outcome = _call(face, server.url, timeout=0.5, retry=RetryPolicy(max_retries=0))
        took = time.monotonic() - started
    assert isinstance(outcome, EndpointError) and took < 2.5
    assert "no complete answer within 0.5s" in outcome.reason


# -- issue 12 #6, #7, #11, #12: what the endpoint says --------------------------------------------


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_is_not_retried_and_names_its_variable(face, status):
    from context_bench.testing import FakeServer, Reply

    with FakeServer(lambda body: Reply("Authentication Error, invalid key", status=status)) as server:
        outcome = _call(face, server.url, api_key="sk-wrong-key-0000", api_key_env="MY_PROXY_KEY")
        assert server.count == 1
        bare = _call(face, server.url)
    assert outcome.reason == (
        f"HTTP {status}: the endpoint refused the key (from $MY_PROXY_KEY): Authentication Error, invalid key"
    )
    assert bare.reason.startswith(f"HTTP {status}: the endpoint wants a key and none was sent")


def test_the_key_variable_is_named_but_a_key_given_as_its_name_is_not_shown(monkeypatch):
    from context_bench.client import api_key_from, api_key_variable

    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    assert api_key_variable(None, None) == "OPENAI_API_KEY"
    assert api_key_variable("sk-explicit", None) is None
    assert api_key_variable(None, " JUDGE_KEY ") == "JUDGE_KEY"
    with pytest.raises(ValueError) as caught:
        api_key_from(None, "sk-live-SECRET-value")
    assert "SECRET" not in str(caught.value)
    with pytest.raises(ValueError, match="UNSET_VARIABLE_X names a variable that is not set"):
        api_key_from(None, "UNSET_VARIABLE_X")


@pytest.mark.parametrize("face", FACES)
def test_an_error_is_the_endpoints_message_not_its_raw_body(face):
    from context_bench.testing import FakeServer, Reply

    said = "litellm.BadRequestError: OpenAIException - bad thing in your request"
    body = {"error": {"message": said, "type": "invalid_request_error", "param": None, "code": "400"}}
    with FakeServer(lambda body_: Reply(status=400, body=body)) as server:
        outcome = _call(face, server.url)
    assert outcome.reason == f"HTTP 400: {said} (type: invalid_request_error, code: 400)"
    assert '{"error"' not in outcome.reason


@pytest.mark.parametrize("face", FACES)
def test_a_retryable_errors_message_is_kept(face):
    from context_bench.client import RetryPolicy
    from context_bench.testing import FakeServer, Reply

    with FakeServer(lambda body: Reply("upstream is down", status=502)) as server:
        outcome = _call(face, server.url, retry=RetryPolicy(max_retries=0))
    assert outcome.reason == "HTTP 502: upstream is down (gave up after 1 attempt)"


@pytest.mark.parametrize("face", FACES)
def test_the_cost_the_endpoint_reports_is_recorded(face):
    from context_bench.testing import FakeServer, Reply

    replies = iter(
        [
            Reply("a", headers={"x-litellm-response-cost": "0.014"}),
            Reply("b", usage={"prompt_tokens": 3, "completion_tokens": 1, "cost": 0.5}),
            Reply("c", headers={"x-litellm-response-cost": "nan"}),
            Reply("d"),
        ]
    )
    with FakeServer(lambda body: next(replies)) as server:
        costs = [_call(face, server.url).cost for _ in range(4)]
    assert costs == [0.014, 0.5, None, None]


def test_openai_proxy_puts_the_cost_on_the_row_and_omits_unset_parameters():
    from context_bench.systems import OpenAIProxy
    from context_bench.testing import FakeServer, Reply

    with FakeServer(lambda body: Reply("Paris", headers={"x-litellm-response-cost": "0.25"})) as server:
        row = OpenAIProxy(server.url, "m", temperature=None).process({"question": "Capital of France?"})
        plain = OpenAIProxy(server.url, "m", temperature=0.0, max_tokens=5).process({"question": "Again?"})
    assert row == {"response": "Paris", "input_tokens": 10.0, "output_tokens": 2.0, "cost": 0.25}
    assert plain["cost"] == 0.25
    first, second = server.requests
    assert "temperature" not in first and "max_tokens" not in first
    assert second["temperature"] == 0.0 and second["max_tokens"] == 5


# -- issue 13 #7: content parts are text; other content is no answer --------------------------------


@pytest.mark.parametrize("face", FACES)
def test_content_parts_are_joined_and_other_content_is_an_error(face):
    from context_bench.client import EndpointError
    from context_bench.testing import FakeServer, Reply

    def reply_with(content):
        message = {"role": "assistant", "content": content}
        return Reply(body={"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

    parts = [{"type": "text", "text": "Par"}, {"type": "text", "text": "is"}]
    with FakeServer(lambda body: reply_with(parts)) as server:
        assert _call(face, server.url).content == "Paris"
    for content, kind in [
        ({"a": "Paris"}, "dict"),
        (18, "int"),
        (True, "bool"),
        ([{"type": "image_url", "image_url": {"url": "x"}}], "content parts other than text"),
        (["Paris"], "content parts other than text"),
    ]:
        with FakeServer(lambda body, content=content: reply_with(content)) as server:
            outcome = _call(face, server.url)
            assert server.count == 1  # final, not retried
        assert (
            isinstance(outcome, EndpointError) and f"response content is a {kind}, not text" in outcome.reason
        )


# -- issue 13 #3: what an error may show ------------------------------------------------------------


def test_any_run_of_eight_key_characters_is_redacted():
    from context_bench.secrets import redact

    key = "sk-REDTEAMSECRET0123456789abcdef"
    assert redact(f"Bearer {key}", key) == "Bearer ***"
    assert redact(f"head {key[:12]}", key) == "head ***"  # cut by a shortening
    assert redact(f"{key[10:20]} in the middle", key) == "*** in the middle"
    assert redact(f"short {key[:7]}", key) == f"short {key[:7]}"  # fewer than 8: not the key
    assert redact("abc", "k") == "abc" and redact("a k b", "k") == "a *** b"


@pytest.mark.parametrize("face", FACES)
def test_a_key_cut_by_the_shortening_or_echoed_in_part_never_shows(face):
    from context_bench.testing import FakeServer, Reply

    key = "sk-REDTEAMSECRET0123456789abcdef"
    for text in ("x" * 290 + "Bearer " + key, f"your key ends in ...{key[-12:]}"):
        with FakeServer(lambda body, text=text: Reply(text, status=400)) as server:
            outcome = _call(face, server.url, api_key=key)
        assert "HTTP 400" in str(outcome)
        for i in range(len(key) - 7):
            assert key[i : i + 8] not in str(outcome)


@pytest.mark.parametrize("face", FACES)
def test_a_password_in_the_url_never_reaches_an_error_or_the_config(face):
    from context_bench.client import ChatClient
    from context_bench.secrets import redact
    from context_bench.systems import OpenAIProxy
    from context_bench.testing import FakeServer, Reply

    with FakeServer(lambda body: Reply("no such model", status=404)) as server:
        url = server.url.replace("http://", "http://alice:hunter2pass@")
        outcome = _call(face, url)
        assert server.seen[0].headers["authorization"].startswith("Basic ")  # it was used...
    assert "hunter2pass" not in str(outcome) and "alice:***@" in str(outcome)  # ...never shown
    assert "hunter2pass" not in ChatClient(url, "m").url and "hunter2pass" not in repr(ChatClient(url, "m"))
    assert "hunter2pass" not in str(OpenAIProxy(url).config())
    with pytest.raises(ValueError) as caught:
        ChatClient("ftp://bob:s3cr3tpw@host/", "m")
    assert "s3cr3tpw" not in str(caught.value)
    assert (
        redact("see https://u:p%40ss@h.example/x and http://h/")
        == "see https://u:***@h.example/x and http://h/"
    )


@pytest.mark.parametrize("face", FACES)
def test_an_answer_echoing_the_key_does_not_carry_it(face):
    """Issue 13 #3: a reply that echoes the key would put it in results and the judge's cache."""
    from context_bench.testing import FakeServer, Reply

    key = "sk-REDTEAMSECRET0123456789abcdef"
    with FakeServer(lambda body: Reply(f"VERDICT: YES (your key is {key}, or {key[:9]})")) as server:
        echoed = _call(face, server.url, api_key=key).content
        short = _call(face, server.url.replace("127.0.0.1", "localhost"), api_key="EMPTY").content
    assert echoed == "VERDICT: YES (your key is ***, or ***)"
    assert "REDTEAMSECRET" in short  # a placeholder key under 8 characters changes no answer
