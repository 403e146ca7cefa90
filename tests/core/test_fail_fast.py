"""Fail fast on a broken configuration (issue 24): a system whose first K rows all fail with the same
error is stopped (its report written with what ran), and an endpoint that answers only 429 stops at
--max-retries instead of holding each row to its deadline."""

from __future__ import annotations

import json

import pytest

from context_bench.testing import FakeServer, Reply, last_user_message

ROWS = 40


@pytest.fixture
def qa(workdir, write_rows):
    write_rows([{"id": str(n), "question": f"question {n}", "answer": "yes"} for n in range(ROWS)])
    return workdir


def refused(body):
    return Reply("invalid key", status=401)


def test_a_refused_key_stops_the_system_after_its_first_k_rows(cbench, qa):
    with FakeServer(refused) as server:
        code, out, err = cbench(
            "run", "--proxy", server.url, "--dataset", "qa.jsonl", "--max-concurrency", "1",
            "--output", "json",
        )  # fmt: skip
        sent = len(server.requests)
    assert sent == 10  # the default K, one row at a time: not 40
    report = json.loads(out)
    assert len(report["rows"]) == 10 and all(row["errors"] for row in report["rows"])
    why = (
        "proxy was stopped: its first 10 rows all failed with the same error (EndpointError: POST "
        f"{server.url}/v1/chat/completions: HTTP 401: the endpoint wants a key and none was sent: "
        "invalid key); the rest of its rows were not run (--fail-fast 10; 0 never stops)"
    )
    assert report["summary"]["warnings"][0] == why
    assert err.count("was stopped") == 1 and code == 1  # every row that ran errored


def test_fail_fast_k_and_0(cbench, qa):
    with FakeServer(refused) as server:
        argv = ["run", "--proxy", server.url, "--dataset", "qa.jsonl", "--max-concurrency", "1"]
        assert cbench(*argv, "--fail-fast", "3")[0] == 1
        assert len(server.requests) == 3
        assert cbench(*argv, "--fail-fast", "0")[0] == 1
        assert len(server.requests) == 3 + ROWS


def test_with_rows_in_flight_the_stop_comes_once_k_have_finished(cbench, qa):
    with FakeServer(refused) as server:
        code, out, _ = cbench("run", "--proxy", server.url, "--dataset", "qa.jsonl", "--output", "json")
        sent = len(server.requests)
    # the 10th row finished with up to 7 others in flight (--max-concurrency 8): they finish too
    assert code == 1 and 10 <= sent <= 17 and len(json.loads(out)["rows"]) == sent


def test_a_broken_system_beside_a_healthy_one(cbench, qa):
    with FakeServer(refused) as broken, FakeServer(lambda body: "yes") as healthy:
        code, out, err = cbench(
            "run", "--proxy", broken.url, "--name", "broken", "--proxy", healthy.url,
            "--name", "healthy", "--dataset", "qa.jsonl", "--max-concurrency", "1", "--output", "json",
        )  # fmt: skip
        assert len(broken.requests) == 10 and len(healthy.requests) == ROWS
    rows = json.loads(out)["rows"]
    assert [row["system"] for row in rows] == ["broken"] * 10 + ["healthy"] * ROWS
    assert code == 4 and "broken" in err.splitlines()[-1], err  # all its rows failed: over the rate


def test_a_row_answered_among_the_first_k_keeps_the_system_running(cbench, qa):
    def mostly_refused(body):
        return "yes" if last_user_message(body).endswith("question 4") else refused(body)

    with FakeServer(mostly_refused) as server:
        code, _, err = cbench(
            "run", "--proxy", server.url, "--dataset", "qa.jsonl", "--max-concurrency", "1",
            "--fail-fast", "5",
        )  # fmt: skip
        assert len(server.requests) == ROWS and "was stopped" not in err
    assert code == 4


def test_different_errors_among_the_first_k_keep_the_system_running(cbench, qa):
    def status(body):
        return Reply("nope", status=400 + int(last_user_message(body).rsplit(" ", 1)[1]) % 2)

    with FakeServer(status) as server:
        cbench("run", "--proxy", server.url, "--dataset", "qa.jsonl", "--max-concurrency", "1")
        assert len(server.requests) == ROWS


def test_scoring_never_stops(cbench, qa):
    code, out, err = cbench("score", "qa.jsonl", "--output", "json")
    rows = json.loads(out)["rows"]  # none has a response: each the same error, every one reported
    assert len(rows) == ROWS and "was stopped" not in err and code == 1


def test_a_command_that_always_fails_is_stopped(cbench, qa, tmp_path):
    code, out, _ = cbench(
        "run", "--command", "python3 -c 'import sys; sys.exit(3)'", "--dataset", "qa.jsonl",
        "--fail-fast", "2", "--max-concurrency", "1", "--output", "json",
    )  # fmt: skip
    assert code == 1 and len(json.loads(out)["rows"]) == 2


# -- 429 and nothing else --------------------------------------------------------------------------


def test_an_endpoint_that_only_answers_429_stops_at_max_retries(cbench, qa):
    busy = Reply("quota exceeded", status=429, headers={"retry-after-ms": "10"})
    with FakeServer(lambda body: busy) as server:
        code, out, _ = cbench(
            "run", "--proxy", server.url, "--max-retries", "1", "--dataset", "qa.jsonl", "-n", "3",
            "--max-concurrency", "1", "--output", "json",
        )  # fmt: skip
        assert len(server.requests) == 3 * 2  # each row: a request and one retry, not three
    errors = [row["errors"][0]["message"] for row in json.loads(out)["rows"]]
    assert (
        errors
        == [
            f"POST {server.url}/v1/chat/completions: HTTP 429 (rate limited): quota exceeded "
            "(gave up after 2 attempts)"
        ]
        * 3
    )
    assert code == 1


@pytest.mark.timeout(30)
def test_a_long_retry_after_is_not_waited_out_when_no_retry_is_left(cbench, qa):
    busy = Reply("quota exceeded", status=429, headers={"Retry-After": "60"})
    with FakeServer(lambda body: busy) as server:
        code, _, _ = cbench(
            "run", "--proxy", server.url, "--max-retries", "0", "--dataset", "qa.jsonl", "-n", "2",
            "--max-concurrency", "1",
        )  # fmt: skip
        assert len(server.requests) == 2 and code == 1  # one request a row; no 60 s wait


@pytest.mark.parametrize("face", ["blocking", "async"])
def test_rate_limits_among_answers_keep_their_larger_budget(face):
    import asyncio

    from context_bench.client import AsyncChatClient, ChatClient, RetryPolicy

    script = ["fine", *[Reply("busy", status=429, headers={"retry-after-ms": "1"})] * 3, "fine"]
    messages = [{"role": "user", "content": "hi"}]
    with FakeServer(lambda body: script.pop(0)) as server:
        retry = RetryPolicy(max_retries=1, base_delay=0.001)
        if face == "blocking":
            with ChatClient(server.url, "m", retry=retry) as client:
                answers = [client.complete(messages).content, client.complete(messages).attempts]
        else:

            async def both():
                async with AsyncChatClient(server.url, "m", retry=retry) as client:
                    return [
                        (await client.complete(messages)).content,
                        (await client.complete(messages)).attempts,
                    ]

            answers = asyncio.run(both())
    assert answers == ["fine", 4]  # three 429s after an answer: within 3x --max-retries
