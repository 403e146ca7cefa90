"""What only a real model tells: the meter's own count of a chat, with the model's tokenizer and its
chat template, against the usage the model's server reports, streamed and not (SmolLM2-135M-Instruct
on llama-cpp-python's server, conftest.py)."""

from __future__ import annotations

import json

import httpx
import pytest

from context_bench.meter import ROW_HEADER, Meter
from context_bench.token_count import load_tokenizer

pytestmark = pytest.mark.model

CHATS = {
    "one question": [{"role": "user", "content": "What is the capital of France?"}],
    "a system prompt": [
        {"role": "system", "content": "You answer in one word."},
        {"role": "user", "content": "Name a primary colour."},
    ],
    "turns, digits and punctuation": [
        {"role": "user", "content": "Add 1234 and 5678, please."},
        {"role": "assistant", "content": "1234 + 5678 = 6912."},
        {"role": "user", "content": "And times 2? (Show the sum: it's 13824.)"},
    ],
    "text beyond ASCII": [
        {"role": "user", "content": "Traduis « déjà vu » en anglais, s'il te plaît — merci !"}
    ],
}


def _ask(url: str, messages: list[dict], row: str, **extra) -> httpx.Response:
    body = {"model": "smollm2", "messages": messages, "max_tokens": 8, "temperature": 0, **extra}
    with httpx.Client(timeout=120) as client:
        return client.post(f"{url}/chat/completions", json=body, headers={ROW_HEADER: row})


@pytest.mark.parametrize("name", CHATS)
def test_the_meters_count_is_the_servers_count(smollm, name):
    tokenizer = load_tokenizer(str(smollm.tokenizer))
    assert tokenizer.framing == "template"
    with Meter(smollm.url, tokenizer=tokenizer) as meter:
        answer = _ask(meter.url, CHATS[name], name)
        assert answer.status_code == 200, answer.text
        stated = answer.json()["usage"]["prompt_tokens"]
        metered = meter.take(name)
    assert metered.calls == 1 and metered.failed_calls == 0
    assert metered.counted_input_tokens == stated == metered.input_tokens
    assert metered.output_tokens == answer.json()["usage"]["completion_tokens"]


def test_the_chat_template_is_what_the_model_is_sent(smollm):
    """SmolLM2's template frames each message (<|im_start|>role ... <|im_end|>) and, without a
    system message, adds its own default one: a count of the messages' text alone misses all of it."""
    template = load_tokenizer(str(smollm.tokenizer))
    messages = CHATS["one question"]
    with Meter(smollm.url) as meter:
        stated = _ask(meter.url, messages, "t").json()["usage"]["prompt_tokens"]
    text_alone = template.count(messages[0]["content"])
    assert stated == template.count_chat(messages)
    rendered = template.rendered(messages)
    assert rendered.startswith("<|im_start|>system\n") and rendered.endswith("<|im_start|>assistant\n")
    framing = stated - text_alone
    assert framing == template.count(rendered.replace(messages[0]["content"], "")) > 10


def test_a_stream_is_measured_by_the_meters_count_where_the_server_states_no_usage(smollm):
    """llama-cpp-python's server streams no usage (it ignores stream_options), so the meter's own
    count is the stream's only input figure: the one the server states for the same chat unstreamed."""
    tokenizer = load_tokenizer(str(smollm.tokenizer))
    messages = CHATS["a system prompt"]
    with Meter(smollm.url, tokenizer=tokenizer) as meter:
        answer = _ask(meter.url, messages, "s", stream=True, stream_options={"include_usage": True})
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
        events = [
            json.loads(line.removeprefix("data: "))
            for line in answer.text.splitlines()
            if line.startswith("data: {")
        ]
        streamed = meter.take("s")
        unstreamed = _ask(meter.url, messages, "u").json()["usage"]["prompt_tokens"]
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e.get("choices"))
    assert [e for e in events if e.get("usage")] == []
    assert streamed.input_tokens == streamed.counted_input_tokens == unstreamed
    assert streamed.output_tokens is None and streamed.unmeasured_calls == 0
