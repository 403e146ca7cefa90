"""The usage forms the meter reads: each provider's words for the same four figures, streamed and not.

Each expected figure is worked by hand from the provider's documented meaning: Anthropic's own
``input_tokens`` leaves out the cached and cache-write tokens, everyone else's prompt count holds them.
"""

from __future__ import annotations

import json

import pytest

from context_bench.meter import MeterCall, Metered, Usage, read_usage, usage_of

OPENAI = {"prompt_tokens": 1200, "completion_tokens": 30, "prompt_tokens_details": {"cached_tokens": 1024}}
#: Anthropic's Messages API: 200 fresh + 1000 read from the cache + 50 written to it.
ANTHROPIC = {
    "input_tokens": 200,
    "cache_read_input_tokens": 1000,
    "cache_creation_input_tokens": 50,
    "output_tokens": 40,
}
#: LiteLLM's OpenAI form of that Anthropic answer (its calculate_usage adds the cache back).
LITELLM_ANTHROPIC = {
    "prompt_tokens": 1250,
    "completion_tokens": 40,
    "total_tokens": 1290,
    "prompt_tokens_details": {"cached_tokens": 1000, "cache_creation_tokens": 50, "text_tokens": 200},
    "cache_creation_input_tokens": 50,
    "cache_read_input_tokens": 1000,
}
VLLM = {
    "prompt_tokens": 900,
    "completion_tokens": 9,
    "total_tokens": 909,
    "prompt_tokens_details": {"cached_tokens": 512},
}
RESPONSES = {"input_tokens": 700, "input_tokens_details": {"cached_tokens": 300}, "output_tokens": 12}
DEEPSEEK = {
    "prompt_tokens": 64,
    "prompt_cache_hit_tokens": 48,
    "prompt_cache_miss_tokens": 16,
    "completion_tokens": 5,
}


@pytest.mark.parametrize(
    "usage, expected",
    [
        (OPENAI, Usage(1200, 30, 1024, None)),
        (ANTHROPIC, Usage(1250, 40, 1000, 50)),
        (LITELLM_ANTHROPIC, Usage(1250, 40, 1000, 50)),
        (VLLM, Usage(900, 9, 512, None)),
        (RESPONSES, Usage(700, 12, 300, None)),
        (DEEPSEEK, Usage(64, 5, 48, None)),
        ({"prompt_tokens": 10, "completion_tokens": 2}, Usage(10, 2, None, None)),
        ({"input_tokens": 10}, Usage(10, None, None, None)),
    ],
    ids=["openai", "anthropic", "litellm-anthropic", "vllm", "responses", "deepseek", "plain", "input-only"],
)
def test_each_form_gives_the_same_four_figures(usage, expected):
    assert usage_of(usage) == expected


@pytest.mark.parametrize(
    "usage",
    [None, {}, [], "10", {"prompt_tokens": -1}, {"prompt_tokens": True}, {"prompt_tokens": float("nan")}],
)
def test_no_figure_is_invented_from_a_usage_that_states_none(usage):
    assert usage_of(usage) is None


def _sse(*events) -> bytes:
    return b"".join(
        b"data: " + (e if isinstance(e, bytes) else json.dumps(e).encode()) + b"\n\n" for e in events
    )


def test_an_openai_stream_states_its_usage_in_the_last_chunk():
    body = _sse(
        {"choices": [{"delta": {"content": "Hi"}}], "usage": None},
        {"choices": [], "usage": OPENAI},
        b"[DONE]",
    )
    assert read_usage(body, streamed=True)[0] == Usage(1200, 30, 1024, None)


def test_an_anthropic_stream_is_merged_from_message_start_and_message_delta():
    start = {"type": "message_start", "message": {"usage": {**ANTHROPIC, "output_tokens": 1}}}
    delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 40}}
    body = b"event: message_start\n" + _sse(start) + b"event: message_delta\n" + _sse(delta)
    assert read_usage(body, streamed=True)[0] == Usage(1250, 40, 1000, 50)


def test_a_vllm_stream_with_usage_on_every_chunk_keeps_the_last():
    chunks = [{"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": n}} for n in (1, 2, 3)]
    assert read_usage(_sse(*chunks), streamed=True)[0] == Usage(900, 3, None, None)


def test_a_responses_stream_states_usage_in_response_completed():
    event = {"type": "response.completed", "response": {"usage": RESPONSES}}
    assert read_usage(_sse(event), streamed=True)[0] == Usage(700, 12, 300, None)


def test_a_cost_in_the_usage_is_handed_back_with_it():
    body = json.dumps({"choices": [], "usage": {"prompt_tokens": 3, "cost": 0.25}}).encode()
    usage, raw = read_usage(body, streamed=False)
    assert usage == Usage(3, None, None, None) and raw["cost"] == 0.25


@pytest.mark.parametrize(
    "body, streamed", [(b"not json", False), (b"[1, 2]", False), (b"data: {broken\n\n", True)]
)
def test_an_unreadable_body_has_no_usage(body, streamed):
    assert read_usage(body, streamed=streamed) == (None, None)


def _call(status=200, usage=None, counted=None, cost=None, error=None, prompt=None):
    return MeterCall(
        row="r", model="m", path="/v1/chat/completions", status=status, latency=0.01,
        counted_input_tokens=counted, usage=usage, cost=cost, error=error, prompt=prompt,
    )  # fmt: skip


def test_a_rows_calls_are_summed_stated_usage_first_then_the_count():
    metered = Metered.of(
        [
            _call(usage=Usage(100, 10, 60, 5), counted=98, cost=0.5, prompt="one"),
            _call(counted=40, prompt="two"),  # no usage stated: the meter's own count stands in
            _call(status=429, counted=77, cost=0.0, prompt="three"),  # refused: no tokens reached the model
            _call(usage=Usage(7, 1, None, None), error="the answer was cut off: ..."),
        ]
    )
    assert metered == Metered(
        calls=4,
        input_tokens=140,
        output_tokens=10,
        cached_input_tokens=60,
        cache_write_tokens=5,
        cost=0.5,
        stated_input_tokens=100,
        counted_input_tokens=138,
        failed_calls=2,
        unmeasured_calls=0,
        prompts=["one", "two", "three"],
    )


def test_a_row_s_prompts_are_appended_never_copied():
    """A row of thousands of calls with captured prompts costs each call once: its list of prompts
    is the same list after every call (a copy a call is quadratic in the row's calls)."""
    metered = Metered()
    prompts = metered.prompts
    for n in range(3000):
        metered.add(_call(prompt=f"p{n}"))
        assert metered.prompts is prompts
    assert prompts == [f"p{n}" for n in range(3000)]


def test_an_answered_call_with_no_figure_is_counted_as_unmeasured_not_as_zero():
    metered = Metered.of([_call(), _call(usage=Usage(None, 4, None, None))])
    assert (metered.calls, metered.input_tokens, metered.output_tokens, metered.unmeasured_calls) == (
        2,
        None,
        4,
        2,
    )
