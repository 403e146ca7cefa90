"""The metering relay with a real LiteLLM proxy, both ways round (docs/savings.md shows each):

* behind it: LiteLLM's ``metered`` model has the relay as its ``api_base`` and forwards the client's
  ``x-`` headers (``model_group_settings.forward_client_headers_to_llm_api``), so a proxy under test
  sends its upstream calls through the meter with the row's header;
* in front of it: the client talks to the relay, which passes everything to LiteLLM, key included,
  and reads LiteLLM's usage and its ``x-litellm-response-cost``.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from context_bench.meter import ROW_HEADER, Meter, Metered

pytestmark = pytest.mark.integration


def _chat(url: str, key: str, model: str, text: str, **extra) -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": text}], **extra}
    headers = {"Authorization": f"Bearer {key}", ROW_HEADER: f"row:{text}"}
    with httpx.Client(timeout=30) as client:
        return client.post(f"{url}/chat/completions", json=body, headers=headers)


def test_litellm_forwards_the_row_header_to_the_meter_as_its_upstream(proxy):
    answer = _chat(proxy.url, proxy.key, "metered", "Capital of France?")
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "Paris"
    assert proxy.meter.take("row:Capital of France?") == Metered(
        calls=1, input_tokens=10, stated_input_tokens=10, output_tokens=2
    )
    (seen,) = [s for s in proxy.seen_with("Capital of France?") if s.body["model"] == "metered"]
    assert seen.headers["x-context-bench-row"] == "row:Capital of France?"
    assert "authorization" in seen.headers and proxy.key not in seen.headers["authorization"]


def test_the_meter_in_front_of_litellm_reads_its_usage_and_cost(proxy):
    with Meter(proxy.url, tokenizer="cl100k_base") as meter:
        answer = _chat(meter.url, proxy.key, "tiny", "What is 2 + 2?")
        assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"] == "4"
        metered = meter.take("row:What is 2 + 2?")
    input_price, output_price = proxy.prices
    assert metered == Metered(
        calls=1,
        input_tokens=10,
        stated_input_tokens=10,
        output_tokens=2,
        cost=pytest.approx(10 * input_price + 2 * output_price),
        counted_input_tokens=3 + 1 + 8 + 3,  # cl100k: What| is| |2| +| |2|? (a digit never takes a space)
    )


def test_a_stream_through_the_meter_and_litellm_keeps_its_usage(proxy):
    with Meter(proxy.url) as meter:
        answer = _chat(
            meter.url,
            proxy.key,
            "tiny",
            "Colour of the sky?",
            stream=True,
            stream_options={"include_usage": True},
        )
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
        assert b'"content":"blue"' in answer.content.replace(b" ", b"")
        metered = meter.take("row:Colour of the sky?")
    assert (metered.calls, metered.input_tokens, metered.output_tokens) == (1, 10, 2)


@pytest.mark.parametrize(
    "key_ok, cost",
    [(True, 0.0), (False, None)],  # LiteLLM prices a failed upstream call at 0.0; a refused key not at all
    ids=["backend-500", "litellm-401"],
)
def test_litellms_failures_pass_through_the_meter_unchanged(proxy, key_ok, cost):
    key = proxy.key if key_ok else "sk-wrong-" + "0" * 24
    text = "[500] metered failure"
    with Meter(proxy.url) as meter:
        relayed = _chat(meter.url, key, "tiny", text)
        direct = _chat(proxy.url, key, "tiny", text)
        metered = meter.take(f"row:{text}")
    assert relayed.status_code == direct.status_code == (500 if key_ok else 401)
    assert relayed.json()["error"]["message"] == direct.json()["error"]["message"]
    assert metered == Metered(calls=1, failed_calls=1, cost=cost)
    assert key not in repr(metered)


def test_the_documented_forwarding_is_the_tested_one(proxy):
    """docs/savings.md's LiteLLM configuration forwards the row header as the suite's proxy does."""
    yaml = pytest.importorskip(
        "yaml", reason="PyYAML reads the configuration (LiteLLM's proxy extra brings it)"
    )
    text = (Path(__file__).parents[2] / "docs" / "savings.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(.*?)```", text, re.S)
    documented = yaml.safe_load(block)
    (model,) = documented["model_list"]
    assert model["litellm_params"]["api_base"] == "http://127.0.0.1:PORT/v1"
    tested = yaml.safe_load(proxy.config.read_text())
    forwarding = [config["litellm_settings"]["model_group_settings"] for config in (documented, tested)]
    assert forwarding == [
        {"forward_client_headers_to_llm_api": [model["model_name"]]},
        {"forward_client_headers_to_llm_api": ["metered"]},
    ]
