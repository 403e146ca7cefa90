"""The shared client under faults: retries, Retry-After, cool-down, timeouts, bad bodies, the cache."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
import threading
import time

import pytest

import context_bench
from cbench_judge import MemoryJudge
from context_bench import Limits, Output, RunConfig, Scope
from context_bench.client import _cool_down, chat_completions_url
from context_bench.testing import Faults, Reply

ROW = ({"question": "Where did Alice grow up?", "answer": "Paris"}, {"response": "Paris"})
YES = {"memory_judge": 1.0, "memory_judge_raw": 1.0}
NO = {"memory_judge": 0.0, "memory_judge_raw": 0.0}


def _script(*replies):
    """Answers the given replies in order, then YES forever."""
    queue = iter(replies)
    lock = threading.Lock()

    def respond(body):
        with lock:
            return next(queue, "VERDICT: YES")

    return respond


def test_retry_after_is_honoured(judge_server) -> None:
    server = judge_server(_script(Reply(status=429, headers={"Retry-After": "0.4"})))
    judge = MemoryJudge(server.url, retry_base_delay=0.01)
    assert judge.score(*ROW) == YES
    first, second = server.seen
    assert second.time - first.time >= 0.4  # waited what the server asked, not the 10 ms backoff


def test_retry_after_as_an_http_date(judge_server) -> None:
    import email.utils

    when = email.utils.formatdate(time.time() + 1.5, usegmt=True)  # whole seconds: waits 0.5 to 1.5 s
    server = judge_server(_script(Reply(status=503, headers={"Retry-After": when})))
    assert MemoryJudge(server.url, retry_base_delay=0.01).score(*ROW) == YES
    assert server.seen[1].time - server.seen[0].time >= 0.4


def test_5xx_and_resets_are_retried_with_backoff(judge_server) -> None:
    server = judge_server(_script(Reply(status=500), Reply(fault="reset"), Reply(status=502)))
    judge = MemoryJudge(server.url, max_retries=3, retry_base_delay=0.05)
    assert judge.score(*ROW) == YES
    times = [s.time for s in server.seen]
    assert len(times) == 4
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps[0] >= 0.025 and gaps[2] >= 0.1  # base/2 after the first failure, 4*base/2 after the third


def test_client_errors_are_not_retried(judge_server) -> None:
    server = judge_server(lambda body: Reply(status=401))
    result = MemoryJudge(server.url, retry_base_delay=0.01).score(*ROW)
    assert result == NO and result.failure.startswith("call_error: HTTP 401")
    assert server.count == 1


@pytest.mark.parametrize(
    "reply, reason",
    [
        (Reply(text=None), "call_error: response content is null"),
        (Reply(fault="empty_choices"), "call_error: response has no choices"),
        (Reply(fault="error_body"), "call_error: error in a 200 response: upstream overloaded"),
        (Reply(fault="malformed"), "call_error: malformed JSON in a 200 response"),
    ],
)
def test_bad_bodies_are_failures_with_reasons(judge_server, reply, reason) -> None:
    server = judge_server(lambda body: reply)
    result = MemoryJudge(server.url, max_retries=1, retry_base_delay=0.01).score(*ROW)
    assert result == NO
    assert result.failure.startswith(reason)


def test_a_hang_times_out_and_the_retry_succeeds(judge_server) -> None:
    server = judge_server(_script(Reply(fault="hang")))
    judge = MemoryJudge(server.url, timeout=2.0, retry_base_delay=0.01)
    started = time.monotonic()
    assert judge.score(*ROW) == YES
    assert server.count == 2
    assert time.monotonic() - started < 30  # bounded by the timeout, not by the hang (an hour)


def test_a_dead_endpoint_fails_fast_with_a_reason() -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = MemoryJudge(f"http://127.0.0.1:{port}", max_retries=1, retry_base_delay=0.01).score(*ROW)
    assert result == NO
    assert result.failure.startswith("call_error: connection error: ConnectError")


def test_a_429_storm_pauses_the_whole_endpoint(judge_server) -> None:
    limited = Reply(status=429, headers={"Retry-After": "0.6"})
    server = judge_server(_script(*[limited] * 6))
    judge = MemoryJudge(server.url, concurrency=6, retry_base_delay=0.01)

    async def scenario() -> float:
        wave = [asyncio.ensure_future(judge.ascore(*ROW)) for _ in range(6)]
        while sum(1 for s in server.seen if s.outcome == "429") < 6:
            await asyncio.sleep(0.01)
        # the 429s have reached the client once it holds the URL's requests (its cool-down)
        cool = _cool_down(chat_completions_url(server.url))
        deadline = time.monotonic() + 30
        while cool.remaining() <= 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        storm_end = server.seen[5].time
        late = await judge.ascore(*ROW)  # a new row, which never got a 429 itself
        assert late == YES
        assert all(r == YES for r in await asyncio.gather(*wave))
        return storm_end

    storm_end = asyncio.run(scenario())
    after = [s.time - storm_end for s in server.seen[6:]]
    assert len(after) == 7
    assert min(after) >= 0.55  # nobody, not even the new row, was sent during the cool-down


def test_fault_injection_every_row_completes(judge_server) -> None:
    faults = Faults(
        rate_429=0.1,
        retry_after="0.05",
        rate_500=0.08,
        rate_reset=0.05,
        rate_hang=0.03,
        rate_malformed=0.05,
        rate_null=0.04,
        seed=7,
    )
    server = judge_server(latency=0.005, faults=faults, hang_seconds=30)
    rows = [
        {
            "id": str(i),
            "question": "Where?",
            "answer": "Paris",
            "response": "in Paris" if i % 3 else "in Rome",
        }
        for i in range(120)
    ]
    judge = MemoryJudge(server.url, timeout=1.0, max_retries=2, retry_base_delay=0.01)
    result = context_bench.evaluate(
        None,
        rows,
        RunConfig(
            scope=Scope(evaluators=[judge]), limits=Limits(max_concurrency=16), output=Output(progress=False)
        ),
    )
    assert len(result.rows) == 120
    assert not any(r.errors for r in result.rows)
    failed = [r for r in result.rows if r.failures]
    for row in result.rows:
        expected = 1.0 if row.response == "in Paris" else 0.0
        if row.failures:
            assert row.scores["memory_judge"] == 0.0
            assert row.failures["memory_judge"].startswith("call_error:")
        else:
            assert row.scores["memory_judge"] == expected
    # only null content is final on the first try; everything else mostly recovers within two retries
    assert len(failed) < 20
    failures = result.summary.failures.get("memory_judge")
    assert (failures.count if failures else 0) == len(failed)
    assert server.statuses["hang"] > 0 and server.statuses["reset"] > 0 and server.statuses["malformed"] > 0


def test_cache_makes_reruns_free_and_never_stores_keys_or_failures(judge_server, tmp_path) -> None:
    failures = itertools.count()

    def respond(body):
        prompt = body["messages"][-1]["content"]
        if "Rome" in prompt and next(failures) < 100:
            return Reply(status=500)
        return "VERDICT: YES" if "Paris" in prompt.split("System answer:")[1] else "VERDICT: NO"

    server = judge_server(respond)
    rows = [
        {"id": str(i), "question": "Where?", "answer": "Paris", "response": r}
        for i, r in enumerate(["Paris", "London", "Rome"])
    ]

    def run():
        judge = MemoryJudge(server.url, api_key="sk-cache-secret", max_retries=0, cache_dir=tmp_path)
        return context_bench.evaluate(
            None, rows, RunConfig(scope=Scope(evaluators=[judge]), output=Output(progress=False))
        )

    first = run()
    assert server.count == 3
    second = run()
    assert server.count == 4  # London and Paris came from the cache; the failed Rome call was retried
    assert [r.scores for r in second.rows] == [r.scores for r in first.rows]
    assert second.rows[0].usage == {}  # a cached verdict cost nothing
    stored = [p.read_text() for p in tmp_path.rglob("*.json")]
    assert len(stored) == 2
    assert all("sk-cache-secret" not in text for text in stored)
    assert {json.loads(t)["content"] for t in stored} == {"VERDICT: YES", "VERDICT: NO"}


def test_the_key_never_reaches_logs_errors_or_reports(judge_server, caplog) -> None:
    secret = "sk-test-do-not-leak-1234"
    server = judge_server(
        lambda body: (
            Reply(f"Incorrect API key provided: {secret}", status=401)
            if "Rome" in str(body)
            else "VERDICT: YES"
        )
    )
    rows = [
        {"id": "1", "question": "Where?", "answer": "Paris", "response": "Paris"},
        {"id": "2", "question": "Where?", "answer": "Paris", "response": "Rome"},
    ]
    caplog.set_level(logging.DEBUG)
    judge = MemoryJudge(server.url, api_key=secret, retry_base_delay=0.01)
    result = context_bench.evaluate(
        None, rows, RunConfig(scope=Scope(evaluators=[judge]), output=Output(progress=False))
    )
    assert server.seen[0].headers["authorization"] == f"Bearer {secret}"  # it was used...
    failure = result.rows[1].failures["memory_judge"]
    # the endpoint's words, redacted, after what a 401 means (issue 12 #6: it names the refused key)
    assert failure.startswith("call_error: HTTP 401: the endpoint refused the key")
    assert failure.endswith('Incorrect API key provided: ***"}}') or failure.endswith("provided: ***")
    assert secret not in caplog.text  # ...but never logged,
    assert secret not in result.to_json()  # reported, even when the server echoes it,
    assert secret not in repr(judge) and secret not in str(vars(judge))  # or shown


def test_cancelling_a_row_cancels_its_judge_call(judge_server) -> None:
    server = judge_server(lambda body: Reply(fault="hang"), hang_seconds=30)
    judge = MemoryJudge(server.url, timeout=60)

    async def scenario() -> None:
        task = asyncio.ensure_future(judge.ascore(*ROW))
        while server.count == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(scenario())
    assert time.monotonic() - started < 10


#: asyncio debug mode's note of a slow callback: "Executing <Task ...> took 0.113 seconds".
_SLOW_CALLBACK = re.compile(r"Executing <.*> took \d+\.\d+ seconds")


def test_a_process_that_used_a_judge_exits_cleanly(judge_server) -> None:
    import subprocess
    import sys

    server = judge_server()
    code = (
        "import asyncio, warnings; warnings.simplefilter('error');"
        "from cbench_judge import MemoryJudge;"
        f"j = MemoryJudge({server.url!r});"
        "row = ({'question': 'q', 'answer': 'Paris'}, {'response': 'Paris'});"
        "print(j.score(*row)['memory_judge'], asyncio.run(j.ascore(*row))['memory_judge'])"
    )
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-c", code], capture_output=True, text=True, timeout=60
    )
    # -X dev's asyncio debug mode also logs every callback slower than 0.1 s, which a busy machine
    # makes (a timing note, not a fault): every other line of stderr is a fault
    faults = [line for line in done.stderr.splitlines() if not _SLOW_CALLBACK.fullmatch(line)]
    assert (done.returncode, done.stdout.split(), faults) == (0, ["1.0", "1.0"], [])


def test_unreadable_answers_are_not_cached(judge_server, tmp_path) -> None:
    server = judge_server(_script("Let me think about it."))
    judge = MemoryJudge(server.url, cache_dir=tmp_path)
    assert judge.score(*ROW).failure.startswith("parse_error:")
    assert not list(tmp_path.rglob("*.json"))
    assert judge.score(*ROW) == YES  # asked again, answered, stored
    assert judge.score(*ROW) == YES  # from the cache
    assert server.count == 2
    assert (judge.stats.calls, judge.stats.cached, judge.stats.parse_errors) == (2, 1, 1)


@pytest.mark.timeout(30)
def test_a_cache_entry_that_is_not_a_file_is_a_miss_and_stays_as_it_was(judge_server, tmp_path) -> None:
    import os
    import stat

    server = judge_server(_script())
    judge = MemoryJudge(server.url, cache_dir=tmp_path)
    assert judge.score(*ROW) == YES
    (entry,) = tmp_path.rglob("*.json")
    entry.unlink()
    os.mkfifo(entry)  # read, it would hold the judge until a writer came
    assert judge.score(*ROW) == YES and server.count == 2
    assert stat.S_ISFIFO(os.stat(entry).st_mode)
