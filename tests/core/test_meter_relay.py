"""The metering relay against a real server on 127.0.0.1: what passes through is unchanged, what it
records is right, and what it must never record (a key) it does not."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import httpx
import pytest

from context_bench.meter import ROW_HEADER, Meter, Metered
from context_bench.testing import FakeServer, Reply

KEY = "sk-meter-test-" + "0123456789abcdef" * 2
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "Capital of France?"}]}


def _post(url: str, body: dict, **headers: str) -> httpx.Response:
    with httpx.Client(timeout=10) as client:
        return client.post(
            f"{url}/chat/completions", json=body, headers={"Authorization": f"Bearer {KEY}", **headers}
        )


@pytest.fixture
def upstream():
    with FakeServer(lambda body: "Paris") as server:
        yield server


def test_a_call_reaches_the_upstream_as_sent_and_its_answer_comes_back_as_given(upstream):
    with Meter(upstream.url) as meter:
        assert meter.url == f"http://127.0.0.1:{meter.port}/v1"
        relayed = _post(meter.url, CHAT, **{ROW_HEADER: "row-1", "X-Custom": "kept"})
    direct = _post(f"{upstream.url}/v1", CHAT)
    assert relayed.status_code == 200
    assert relayed.content == direct.content
    assert relayed.headers["content-type"] == direct.headers["content-type"]
    first, second = upstream.seen
    assert first.body == second.body == CHAT
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.headers["x-custom"] == "kept"
    assert first.headers["x-context-bench-row"] == "row-1"
    assert first.headers["host"] == upstream.url.removeprefix("http://")
    assert meter.take("row-1") == Metered(calls=1, input_tokens=10, stated_input_tokens=10, output_tokens=2)
    assert meter.take("row-1") == Metered()  # handed over once


def test_every_call_of_a_row_is_summed_on_it(upstream):
    with Meter(upstream.url) as meter:
        for _ in range(3):
            _post(meter.url, CHAT, **{ROW_HEADER: "agent-row"})
        _post(meter.url, CHAT, **{ROW_HEADER: "other-row"})
        assert meter.take("agent-row") == Metered(
            calls=3, input_tokens=30, stated_input_tokens=30, output_tokens=6
        )
        assert meter.totals.calls == 4 and meter.unattributed == Metered()


@pytest.mark.parametrize("upstream_path", ["", "/v1", "/v1/chat/completions"])
def test_the_upstream_may_be_named_as_any_client_takes_it(upstream, upstream_path):
    with Meter(upstream.url + upstream_path) as meter:
        assert _post(meter.url, CHAT).json()["choices"][0]["message"]["content"] == "Paris"


@pytest.mark.parametrize(
    "reply",
    [
        Reply("slow down", status=429, headers={"Retry-After": "7", "X-RateLimit-Remaining": "0"}),
        Reply("upstream exploded", status=500),
    ],
    ids=["429", "500"],
)
def test_an_upstream_failure_passes_through_unchanged_and_counts_as_a_failed_call(reply):
    with FakeServer(lambda body: reply) as server, Meter(server.url, tokenizer="cl100k_base") as meter:
        relayed = _post(meter.url, CHAT, **{ROW_HEADER: "r"})
        direct = _post(f"{server.url}/v1", CHAT)
        assert (
            (relayed.status_code, relayed.content)
            == (direct.status_code, direct.content)
            == (
                reply.status,
                json.dumps({"error": {"message": reply.text}}).encode(),
            )
        )
        for name, value in reply.headers.items():
            assert relayed.headers[name] == value
        assert meter.take("r") == Metered(calls=1, failed_calls=1)


def test_an_unreachable_upstream_is_a_502_saying_so_and_a_failed_call():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once closed
    with Meter(f"http://127.0.0.1:{port}/v1") as meter:
        answer = _post(meter.url, CHAT, **{ROW_HEADER: "r"})
        assert answer.status_code == 502
        assert answer.json()["error"]["message"].startswith(
            f"context-bench meter: cannot reach http://127.0.0.1:{port}/v1"
        )
        assert meter.take("r") == Metered(calls=1, failed_calls=1)


def _stream_body(**extra):
    return {**CHAT, "stream": True, **extra}


def test_a_stream_comes_through_event_by_event_with_its_usage_read(upstream):
    usage = {"prompt_tokens": 14, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 8}}
    with (
        FakeServer(lambda body: Reply("the capital is Paris", usage=usage)) as server,
        Meter(server.url) as meter,
    ):
        body = _stream_body(stream_options={"include_usage": True})
        relayed = _post(meter.url, body, **{ROW_HEADER: "s"})
        direct = _post(f"{server.url}/v1", body)
        assert relayed.headers["content-type"] == "text/event-stream"
        assert relayed.content == direct.content
        assert relayed.content.count(b"data: ") == 8  # role, 4 words, stop, usage, [DONE]
        assert meter.take("s") == Metered(
            calls=1, input_tokens=14, stated_input_tokens=14, output_tokens=3, cached_input_tokens=8
        )


def test_a_streams_first_event_is_not_held_until_the_stream_ends():
    """The upstream waits 5 s between events; a relay that buffered the answer would show nothing
    before 15 s, past this test's 4 s read timeout."""
    with FakeServer(lambda body: Reply("one two", chunk_delay=5.0)) as server, Meter(server.url) as meter:
        with httpx.Client(timeout=httpx.Timeout(4.0)) as client:
            with client.stream("POST", f"{meter.url}/chat/completions", json=_stream_body()) as answer:
                first = next(answer.iter_lines())
    assert json.loads(first.removeprefix("data: "))["choices"][0]["delta"]["role"] == "assistant"


def test_calls_without_the_header_at_concurrency_above_one_are_unattributed_not_guessed():
    """Four calls in flight at once (the upstream holds each until all four arrived), two rows
    declaring themselves sole: nobody's calls, all counted in the totals."""
    with FakeServer(lambda body: Reply("ok", hold_until=4)) as server, Meter(server.url) as meter:
        with meter.sole_row("a"), meter.sole_row("b"):
            threads = [threading.Thread(target=_post, args=(meter.url, CHAT)) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert server.expired_holds == 0
        assert meter.unattributed == Metered(
            calls=4, input_tokens=40, stated_input_tokens=40, output_tokens=8
        )
        assert meter.totals == meter.unattributed
        assert meter.take("a") == meter.take("b") == Metered()


def test_the_only_row_in_flight_gets_calls_without_the_header(upstream):
    with Meter(upstream.url) as meter:
        with meter.sole_row("solo"):
            _post(meter.url, CHAT)
            _post(meter.url, CHAT, **{ROW_HEADER: "tagged"})  # a header still wins
        _post(meter.url, CHAT)  # after the block: nobody's
        assert meter.take("solo") == Metered(
            calls=1, input_tokens=10, stated_input_tokens=10, output_tokens=2
        )
        assert meter.take("tagged").calls == 1
        assert meter.unattributed.calls == 1


def test_take_waits_for_a_call_of_the_row_still_being_relayed():
    with FakeServer(lambda body: Reply("late", delay=1.0)) as server, Meter(server.url) as meter:
        thread = threading.Thread(target=_post, args=(meter.url, CHAT), kwargs={ROW_HEADER: "w"})
        thread.start()
        while server.in_flight == 0:  # the call has reached the upstream, so the meter has begun it
            threading.Event().wait(0.01)
        assert meter.take("w").calls == 1
        thread.join()


def test_keys_and_headers_are_never_recorded(upstream):
    secrets = (KEY, "anthropic-key-" + "9" * 32, "Basic dXNlcjpodW50ZXIy")
    with Meter(upstream.url, capture_prompts=True) as meter:
        _post(
            meter.url,
            CHAT,
            **{ROW_HEADER: "k", "x-api-key": secrets[1], "Proxy-Authorization": secrets[2]},
        )
        taken = meter.take("k")
        recorded = repr((taken, meter.totals, meter.unattributed, meter._ledger.__dict__))
    assert taken.prompts == ["Capital of France?"]
    assert upstream.seen[0].headers["x-api-key"] == secrets[1]
    for secret in secrets:
        assert secret not in recorded


def test_a_tokenizer_counts_each_calls_input_as_the_model_frames_it(upstream):
    """cl100k_base: "Capital of France?" is 4 tokens and "user" 1; OpenAI's framing adds 3 for the
    message and 3 priming the reply: 11.  The upstream's stated usage (10) stays the input figure."""
    with Meter(upstream.url, tokenizer="cl100k_base") as meter:
        _post(meter.url, CHAT, **{ROW_HEADER: "c"})
        assert meter.take("c") == Metered(
            calls=1, input_tokens=10, stated_input_tokens=10, output_tokens=2, counted_input_tokens=11
        )


def test_a_call_whose_answer_states_no_usage_is_measured_by_the_count():
    with FakeServer(lambda body: Reply(body={"choices": [{"message": {"content": "x"}}]})) as server:
        with Meter(server.url, tokenizer="cl100k_base") as meter:
            _post(meter.url, CHAT, **{ROW_HEADER: "n"})
            assert meter.take("n") == Metered(calls=1, input_tokens=11, counted_input_tokens=11)


@pytest.mark.parametrize(
    "usage, expected",
    [
        (
            {
                "prompt_tokens": 1200,
                "completion_tokens": 30,
                "prompt_tokens_details": {"cached_tokens": 1024},
            },
            Metered(
                calls=1,
                input_tokens=1200,
                stated_input_tokens=1200,
                output_tokens=30,
                cached_input_tokens=1024,
            ),
        ),
        (
            {
                "input_tokens": 200,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 50,
                "output_tokens": 40,
            },
            Metered(
                calls=1,
                input_tokens=1250,
                stated_input_tokens=1250,
                output_tokens=40,
                cached_input_tokens=1000,
                cache_write_tokens=50,
            ),
        ),
    ],
    ids=["openai", "anthropic"],
)
def test_cached_tokens_are_read_through_the_relay(usage, expected):
    with FakeServer(lambda body: Reply("ok", usage=usage)) as server, Meter(server.url) as meter:
        _post(meter.url, CHAT, **{ROW_HEADER: "u"})
        assert meter.take("u") == expected


def test_litellms_cost_header_is_the_calls_cost():
    reply = Reply("ok", headers={"x-litellm-response-cost": "0.0125"})
    with FakeServer(lambda body: reply) as server, Meter(server.url) as meter:
        _post(meter.url, CHAT, **{ROW_HEADER: "$"})
        assert meter.take("$").cost == 0.0125


def test_many_calls_at_once_over_kept_alive_connections_are_each_counted_once(upstream):
    async def burst(url: str) -> list[int]:
        async with httpx.AsyncClient(timeout=20) as client:
            answers = await asyncio.gather(
                *(
                    client.post(f"{url}/chat/completions", json=CHAT, headers={ROW_HEADER: f"row-{i % 8}"})
                    for i in range(64)
                )
            )
        return [a.status_code for a in answers]

    with Meter(upstream.url) as meter:
        assert asyncio.run(burst(meter.url)) == [200] * 64
        assert [meter.take(f"row-{i}").calls for i in range(8)] == [8] * 8
        assert meter.totals.calls == len(upstream.seen) == 64


def test_a_request_the_tokenizer_cannot_count_is_still_relayed_and_left_uncounted(upstream, tmp_path):
    """A chat template that raises on these messages (many refuse a role order) costs the count,
    never the call."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    refusing = "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": refusing}))
    with Meter(upstream.url, tokenizer=str(tmp_path / "tokenizer.json")) as meter:
        assert _post(meter.url, CHAT, **{ROW_HEADER: "x"}).status_code == 200
        assert meter.take("x") == Metered(calls=1, input_tokens=10, stated_input_tokens=10, output_tokens=2)


def test_a_rows_prompts_are_captured_and_the_runs_totals_keep_none(upstream):
    """The totals count every call of a run: holding its prompts too would keep a whole run's text."""
    with Meter(upstream.url, capture_prompts=True) as meter:
        for _ in range(3):
            _post(meter.url, CHAT, **{ROW_HEADER: "r"})
        _post(meter.url, CHAT)
        assert meter.take("r").prompts == ["Capital of France?"] * 3
        assert (meter.totals.calls, meter.totals.prompts, meter.unattributed.prompts) == (4, [], [])
