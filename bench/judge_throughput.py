"""Judge throughput: MemoryJudge through evaluate() against a local endpoint with 100 ms latency.

Starts the core's fake OpenAI-compatible server answering as a memory judge
(``python -m cbench_judge.testing``) in a separate process (one with no faults, one answering 20% of
requests 429 with ``Retry-After: 1``) and prints, side by side:

* the server's ceiling, measured with a bare asyncio client holding 64 connections;
* 2,000 MemoryJudge rows through ``context_bench.evaluate`` at ``Limits(max_concurrency=64)``, as a fraction
  of the ideal (64 / 0.1 s = 640 req/s, or the ceiling if lower) and against a plain sequential loop
  of ``judge.score`` (how harnesses call judges today);
* the same with 20% 429s: rate against the ideal, rows lost (errors or failures; must be 0);
* a run with the response cache on, then the same run again: requests the second one made (must be 0).

Usage: python bench/judge_throughput.py [--rows 2000] [--sequential-rows 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import context_bench
from cbench_judge import MemoryJudge
from context_bench import Limits, Output, RunConfig, Scope

LATENCY = 0.1
CONCURRENCY = 64


@contextmanager
def server(*extra: str) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "cbench_judge.testing", "--latency", str(LATENCY), *extra],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = process.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError("the judge server did not start")
        yield url
    finally:
        process.terminate()
        process.wait(10)


def stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/stats") as response:
        return json.load(response)


def ceiling(url: str, per_connection: int = 10) -> float:
    """Requests per second a bare asyncio client gets from the server with 64 kept-alive connections."""
    host, port = url.split("//")[1].split(":")
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        for _ in range(per_connection):
            writer.write(head + body)
            raw = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in raw.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
        writer.close()

    async def run() -> float:
        started = time.perf_counter()
        await asyncio.gather(*(connection() for _ in range(CONCURRENCY)))
        return CONCURRENCY * per_connection / (time.perf_counter() - started)

    return asyncio.run(run())


def rows(count: int) -> list[dict]:
    return [
        {
            "id": str(i),
            "question": f"Where did person {i} grow up?",
            "answer": "Paris",
            "response": "They grew up in Paris, France." if i % 2 else "In London.",
        }
        for i in range(count)
    ]


def run_evaluate(
    url: str, data: list[dict], max_concurrency: int = CONCURRENCY, **judge_options
) -> tuple[float, context_bench.EvalResult]:
    judge = MemoryJudge(url, concurrency=CONCURRENCY, **judge_options)
    started = time.perf_counter()
    result = context_bench.evaluate(
        None,
        data,
        RunConfig(
            scope=Scope(evaluators=[judge]),
            limits=Limits(max_concurrency=max_concurrency),
            output=Output(progress=False),
        ),
    )
    return len(data) / (time.perf_counter() - started), result


class SleepingJudge:
    """A judge that takes exactly the server's latency and does nothing else: what the runner alone allows."""

    name = "memory_judge"

    def score(self, original: dict, processed: dict) -> dict[str, float]:
        raise NotImplementedError("only ascore is measured")

    async def ascore(self, original: dict, processed: dict) -> dict[str, float]:
        await asyncio.sleep(LATENCY)
        return {"memory_judge": 1.0 if "Paris" in processed["response"] else 0.0}


def runner_ceiling(data: list[dict]) -> float:
    started = time.perf_counter()
    context_bench.evaluate(
        None,
        data,
        RunConfig(
            scope=Scope(evaluators=[SleepingJudge()]),
            limits=Limits(max_concurrency=CONCURRENCY),
            output=Output(progress=False),
        ),
    )
    return len(data) / (time.perf_counter() - started)


def check(result: context_bench.EvalResult) -> tuple[int, int]:
    """(rows lost: errors or failures, rows with a wrong verdict)."""
    lost = sum(1 for r in result.rows if r.errors or r.failures)
    wrong = sum(
        1
        for r in result.rows
        if not r.failures and r.scores.get("memory_judge") != (1.0 if "Paris" in (r.response or "") else 0.0)
    )
    return lost, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--sequential-rows", type=int, default=40)
    args = parser.parse_args()
    data = rows(args.rows)
    ideal_rate = CONCURRENCY / LATENCY

    with server() as url:
        measured = ceiling(url)
        ideal = min(ideal_rate, measured)
        print(
            f"server ceiling (bare asyncio client, {CONCURRENCY} connections): {measured:.0f} req/s; "
            f"ideal = min({ideal_rate:.0f}, ceiling) = {ideal:.0f} req/s"
        )
        judge = MemoryJudge(url)
        started = time.perf_counter()
        for row in data[: args.sequential_rows]:
            judge.score(row, {"response": row["response"]})
        sequential = args.sequential_rows / (time.perf_counter() - started)
        rate, result = run_evaluate(url, data)
        lost, wrong = check(result)
        print(
            f"evaluate(), {args.rows} rows at concurrency {CONCURRENCY}: {rate:.0f} rows/s = "
            f"{rate / ideal:.0%} of ideal (goal >= 85%); sequential loop {sequential:.1f} rows/s; "
            f"ratio {rate / sequential:.1f}x (goal >= 20x); lost {lost}, wrong {wrong}"
        )
        runner = runner_ceiling(data)
        print(
            f"the runner alone (a judge that only sleeps {LATENCY * 1000:.0f} ms): {runner:.0f} rows/s = "
            f"{runner / ideal:.0%} of ideal; the HTTP judge reaches {rate / runner:.0%} of it"
        )

    with server("--rate-429", "0.2", "--retry-after", "1") as url:
        before = stats(url)["requests"]
        rate, result = run_evaluate(url, data)
        lost, wrong = check(result)
        counts = stats(url)
        print(
            f"with 20% 429 (Retry-After: 1), runner concurrency {CONCURRENCY}: {rate:.0f} rows/s = "
            f"{rate / ideal:.0%} of ideal (goal >= 50%); lost {lost} (goal 0), wrong {wrong}; "
            f"requests {counts['requests'] - before}, statuses {counts['statuses']}"
        )
        wide = CONCURRENCY * 4
        rate, result = run_evaluate(url, data, max_concurrency=wide)
        lost, wrong = check(result)
        print(
            f"with 20% 429, runner concurrency {wide}, judge endpoint concurrency {CONCURRENCY}: "
            f"{rate:.0f} rows/s = {rate / ideal:.0%} of ideal; lost {lost}, wrong {wrong}"
        )

    with server() as url, tempfile.TemporaryDirectory() as cache:
        first = stats(url)["requests"]
        run_evaluate(url, data, cache_dir=cache)
        second = stats(url)["requests"]
        rate, result = run_evaluate(url, data, cache_dir=cache)
        third = stats(url)["requests"]
        lost, wrong = check(result)
        print(
            f"cache: first run {second - first} requests, second run {third - second} requests "
            f"(goal 0), {rate:.0f} rows/s; lost {lost}, wrong {wrong}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
