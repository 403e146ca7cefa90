"""context-bench against a real LiteLLM proxy (issue 12): the client reads what LiteLLM says (its
retry header, its 401, its error messages, its cost), and ``run``, the judges and ``memory`` work
through it.  The proxy and its deterministic backend are in conftest.py."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

from context_bench.cli import main
from context_bench.client import AsyncChatClient, ChatClient, EndpointError, RetryPolicy, api_key_from

pytestmark = pytest.mark.integration

FAST = RetryPolicy(max_retries=1, base_delay=0.01)
LOCOMO_MINI = Path(__file__).parents[2] / "plugins/cbench-memory/tests/fixtures/locomo_mini.json"


def ask(face: str, url: str, model: str, text: str, **options):
    """One call through the blocking or the async face: its completion, or the EndpointError it raised."""
    messages = [{"role": "user", "content": text}]
    try:
        if face == "blocking":
            with ChatClient(url, model, **options) as client:
                return client.complete(messages)

        async def call():
            async with AsyncChatClient(url, model, **options) as client:
                return await client.complete(messages)

        return asyncio.run(call())
    except EndpointError as exc:
        return exc


def run_json(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main([*argv, "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


@pytest.fixture
def qa_file(proxy, tmp_path):
    """The questions the backend's ``tiny`` answers, one row each."""
    path = tmp_path / "qa.jsonl"
    rows = [{"id": str(i), "question": q, "answer": a} for i, (q, a) in enumerate(proxy.answers.items())]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# -- the client: what LiteLLM says -------------------------------------------------------------------


def test_an_answer_with_the_cost_litellm_reports(proxy):
    done = ask("blocking", proxy.url, "tiny", "Capital of France?", api_key=proxy.key)
    input_price, output_price = proxy.prices
    assert done.content == "Paris" and done.usage == {"input_tokens": 10.0, "output_tokens": 2.0}
    assert done.cost == pytest.approx(10 * input_price + 2 * output_price)  # x-litellm-response-cost


@pytest.mark.parametrize("face", ["blocking", "async"])
def test_the_wait_litellm_passes_on_is_honoured(proxy, face):
    """LiteLLM answers an upstream 429 with its own ``llm_provider-retry-after`` header."""
    marker = f"[429 once:{face}]"
    done = ask(face, proxy.url, "tiny", f"{marker} Capital of France?", api_key=proxy.key, retry=FAST)
    first, second = proxy.seen_with(marker)
    assert done.content == "Paris" and done.attempts == 2
    assert second.time - first.time >= 0.9  # the 1 s the upstream asked for, not the 0.01 s backoff


@pytest.mark.parametrize("face", ["blocking", "async"])
def test_a_refused_key_fails_at_once_and_names_its_variable(proxy, face, monkeypatch):
    monkeypatch.setenv("CBENCH_PROXY_KEY", "sk-not-the-right-key-42")
    key = api_key_from(None, "CBENCH_PROXY_KEY")
    refused = ask(face, proxy.url, "tiny", "Capital of France?", api_key=key, api_key_env="CBENCH_PROXY_KEY")
    assert isinstance(refused, EndpointError) and refused.attempts == 1
    assert refused.reason.startswith(
        "HTTP 401: the endpoint refused the key (from $CBENCH_PROXY_KEY): Authentication Error, invalid key"
    )
    assert "not-the-right" not in str(refused)


def test_errors_say_litellms_message_not_its_raw_body(proxy):
    rejected = ask("blocking", proxy.url, "tiny", "[400] hi", api_key=proxy.key, retry=FAST)
    assert rejected.attempts == 1  # a 400 is final
    assert rejected.reason.startswith("HTTP 400: litellm.BadRequestError")
    assert "upstream rejects this request" in rejected.reason and '{"error"' not in rejected.reason
    broken = ask("async", proxy.url, "tiny", "[500] hi", api_key=proxy.key, retry=FAST)
    assert broken.attempts == 2  # a 500 is tried again
    assert broken.reason.startswith("HTTP 500: litellm.InternalServerError")
    assert "upstream exploded" in broken.reason and broken.reason.endswith("(gave up after 2 attempts)")


def test_litellms_own_timeout_is_reported_with_its_message(proxy):
    timed_out = ask("blocking", proxy.url, "slow", "hi", api_key=proxy.key, retry=RetryPolicy(max_retries=0))
    assert timed_out.reason.startswith("HTTP 408: litellm.Timeout")


# -- the command line through the proxy ----------------------------------------------------------


def test_run_compares_two_models_through_one_proxy(proxy, qa_file, capsys):
    """Issue 12 #1: each ``--model`` binds to the ``--proxy`` it follows."""
    code, report, err = run_json(
        capsys,
        "run",
        *("--proxy", proxy.url, "--name", "a", "--model", "tiny"),
        *("--proxy", proxy.url, "--name", "b", "--model", "fixed"),
        *("--dataset", str(qa_file)),
    )
    assert code == 0, err
    scores = {g["system"]: g["scores"]["exact_match"] for g in report["summary"]["groups"]}
    assert scores == {"a": 1.0, "b": 0.0}


def test_rows_the_endpoint_refused_count_in_the_mean(proxy, qa_file, capsys):
    """Issue 12 #2: a row the system could not answer is a failure in the headline mean."""
    with qa_file.open("a") as rows:
        rows.write(json.dumps({"id": "refused", "question": "[400] What is 2 + 2?", "answer": "4"}) + "\n")
    code, report, err = run_json(
        capsys, "run", "--proxy", proxy.url, "--name", "a", "--model", "tiny", "--dataset", str(qa_file)
    )
    assert code == 4 and "system a could not answer 1 of 4 rows (25.0%" in err, err  # > 0.1 of rows
    (group,) = report["summary"]["groups"]
    assert group["scores"]["exact_match"] == pytest.approx(0.75)  # 3 right of 4, not 3 of 3
    errors = [row["errors"] for row in report["rows"] if row["errors"]]
    assert len(errors) == 1 and "litellm.BadRequestError" in errors[0][0]["message"]


def test_the_judge_grades_through_the_proxy(proxy, qa_file, capsys):
    code, report, err = run_json(
        capsys,
        "run",
        *("--proxy", proxy.url, "--name", "a", "--model", "tiny", "--dataset", str(qa_file)),
        *("--judge-url", proxy.url, "--judge-model", "tiny"),
    )
    assert code == 0, err
    (group,) = report["summary"]["groups"]
    assert group["scores"]["judge_score"] == 1.0  # RATING: 5 on every row
    assert not any(row["failures"] for row in report["rows"])


def test_a_judge_whose_key_is_refused_says_so(proxy, qa_file, capsys, monkeypatch):
    """Issue 12 #6: the judge's own key variable, named in the refusal."""
    monkeypatch.setenv("CBENCH_JUDGE_KEY", "sk-judge-key-the-proxy-refuses")
    code, report, err = run_json(
        capsys,
        "run",
        *("--proxy", proxy.url, "--name", "a", "--model", "tiny", "--dataset", str(qa_file)),
        *("--judge-url", proxy.url, "--judge-model", "tiny", "--judge-api-key-env", "CBENCH_JUDGE_KEY"),
    )
    shown = (json.dumps(report) if report else "") + err  # a dead judge may end the run: then err says
    assert "HTTP 401: the endpoint refused the key (from $CBENCH_JUDGE_KEY)" in shown, shown[-600:]
    assert "judge-key-the-proxy" not in shown


@pytest.mark.skipif(
    importlib.util.find_spec("cbench_memory") is None, reason="cbench-memory is not installed"
)
def test_memory_through_the_relay_judges_with_the_relays_model(proxy, capsys):
    """Issue 12 #3: with ``--relay`` as the judge, the judge asks the relay's model, which it serves."""
    code, report, err = run_json(
        capsys,
        "memory",
        *("--dataset", str(LOCOMO_MINI), "--system", "full-context"),
        *("--relay", proxy.url, "--model", "tiny"),
    )
    assert code == 0, err
    assert not any(row["failures"] for row in report["rows"]), [r["failures"] for r in report["rows"]][:2]
    (group,) = report["summary"]["groups"]
    assert group["scores"]["memory_judge"] == 1.0  # the backend's judge says YES to every answer
