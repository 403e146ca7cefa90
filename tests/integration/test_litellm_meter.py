"""The metering relay with a real LiteLLM proxy, both ways round (docs/savings.md shows each):

* behind it: LiteLLM's ``metered`` model has the relay as its ``api_base`` and forwards the client's
  ``x-`` headers (``model_group_settings.forward_client_headers_to_llm_api``), so a proxy under test
  sends its upstream calls through the meter with the row's header;
* in front of it: the client talks to the relay, which passes everything to LiteLLM, key included,
  and reads LiteLLM's usage and its ``x-litellm-response-cost``.
"""

from __future__ import annotations

import json

import httpx
import pytest

from context_bench.cli import main
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


def test_the_documented_configuration_is_the_tested_one(proxy):
    """docs/savings.md's LiteLLM configuration is in the suite's proxy as written (the meter's port
    filled in), and forwards the row header for its model."""
    yaml = pytest.importorskip(
        "yaml", reason="PyYAML reads the configuration (LiteLLM's proxy extra brings it)"
    )
    shown = proxy.documented
    (model,) = shown["model_list"]
    assert model["litellm_params"]["api_base"] == "http://127.0.0.1:PORT/v1"
    tested = yaml.safe_load(proxy.config.read_text())
    running = next(m for m in tested["model_list"] if m["model_name"] == model["model_name"])
    params = {**model["litellm_params"], "api_base": f"http://127.0.0.1:{proxy.meter_port}/v1"}
    assert running == {**model, "litellm_params": params}
    forwarded = tested["litellm_settings"]["model_group_settings"]["forward_client_headers_to_llm_api"]
    assert shown["litellm_settings"] == {
        "model_group_settings": {"forward_client_headers_to_llm_api": [model["model_name"]]}
    }
    assert forwarded == ["metered", model["model_name"]]


#: The rows of the run below, their questions' words: what the backend states as prompt tokens.
ROWS = {"What is 2 + 2?": 5, "Capital of France?": 3, "Colour of the sky?": 4}


def test_litellm_under_test_is_metered_row_by_row_through_the_cli(proxy, tmp_path, capsys):
    """LiteLLM as the proxy under test, configured as docs/savings.md says: the run's meter is its
    upstream, it forwards each request's row header, and every row's calls are counted on that row,
    three rows at once, as the baseline's calls straight through the meter are."""
    (model,) = proxy.documented["model_list"]
    data = tmp_path / "qa.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(n), "question": q, "answer": proxy.answers[q]}) + "\n"
            for n, q in enumerate(ROWS)
        )
    )
    flags = [
        "--meter",
        proxy.backend.url,
        "--meter-port",
        str(proxy.meter_port),
        "--model",
        model["model_name"],
    ]
    flags += ["--proxy", proxy.backend.url, "--name", "baseline", "--proxy", proxy.url, "--name", "litellm"]
    code = main(
        ["run", *flags, "--dataset", str(data), "--max-concurrency", "3", "--output", "json", "--no-progress"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    metered = {(row["system"], row["example_id"]): row["metered"] for row in report["rows"]}
    for n, words in enumerate(ROWS.values()):
        for system in ("baseline", "litellm"):
            assert metered[(system, str(n))] == {
                "calls": 1,
                "input_tokens": words,
                "output_tokens": 1,
                "cached_input_tokens": None,
                "cache_write_tokens": None,
                "cost": None,
            }
    summary = report["summary"]
    assert summary["metered"]["unattributed"]["calls"] == 0
    assert "could not be attributed" not in err
    assert {g["system"]: g["tokens_source"] for g in summary["groups"]} == {
        "baseline": "metered",
        "litellm": "metered",
    }
    assert {c["compression_ratio"] for c in summary["comparisons"]} == {1.0}
    assert proxy.upstream_key not in out + err and proxy.key not in out + err
