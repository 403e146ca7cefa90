"""Memory benchmark throughput: evaluate_memory against the sequential loop today's memory runners use.

20 conversations x 20 questions against an OpenAI-compatible server in a separate process that
answers every request after a fixed latency (100 ms), as the memory system's model and as the judge.
Both runners use the same memory system (the full-context baseline), the same evaluators
(AnswerQuality, and MemoryJudge + FalseMemoryRate when cbench-judge is installed) and the same
server; the ratio of their wall times is printed.  Goal: evaluate_memory at concurrency 32 at least
10x faster than the sequential loop.

    .venv/bin/python bench/memory_throughput.py [--conversations 20] [--questions 20]
        [--latency 0.1] [--concurrency 32] [--sequential-sample N]

``--sequential-sample N`` times the sequential loop on the first N conversations only and scales
its time up (say so when quoting the figure); by default it runs them all (about 2 minutes).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MEMORY_MODEL = "memory-model"


def serve(latency: float) -> None:
    """The endpoint: answers a question from the conversation in its prompt, or a judge's verdict."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one reply is two writes: without this, each waits for a delayed ACK

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            prompt = body["messages"][-1]["content"]
            if body.get("model") == MEMORY_MODEL:
                asked = re.search(r"Question: What is item (\d+) of (\w+)\?", prompt)
                found = asked and re.search(rf"item {asked[1]} of {asked[2]} is (\S+)\.", prompt)
                text = found[1] if found else "Not mentioned in the conversation."
            else:
                verdict = "NO" if "false memor" in prompt.lower() else "YES"
                text = f"Checked.\nVERDICT: {verdict}"
            time.sleep(latency)
            data = json.dumps(
                {
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 4},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.request_queue_size = 256
    print(server.server_address[1], flush=True)
    server.serve_forever()


def conversations(count: int, questions: int) -> list[dict[str, Any]]:
    data = []
    for c in range(count):
        turns = []
        for k in range(questions):
            turns.append(
                {
                    "speaker": "Ann",
                    "text": f"Note this: item {k} of conv{c} is v{c}x{k}.",
                    "session": 1 + k // 5,
                    "date": f"{1 + k // 5} May 2024",
                }
            )
            turns.append(
                {
                    "speaker": "Bo",
                    "text": "Noted, thanks.",
                    "session": 1 + k // 5,
                    "date": f"{1 + k // 5} May 2024",
                }
            )
        qa = [
            {
                "question": f"What is item {k} of conv{c}?",
                "answer": f"v{c}x{k}",
                "qa_type": ("single-hop", "temporal")[k % 2],
            }
            for k in range(questions)
        ]
        data.append({"id": f"conv{c}", "turns": turns, "qa_pairs": qa})
    return data


def evaluators(url: str) -> list[Any]:
    from context_bench.evaluators._answer import AnswerQuality

    found: list[Any] = [AnswerQuality()]
    try:
        from cbench_judge.memory import FalseMemoryRate, MemoryJudge
    except ImportError:
        print("cbench-judge is not installed: timing without the judges", file=sys.stderr)
        return found
    return [*found, MemoryJudge(url, max_retries=0), FalseMemoryRate(url, max_retries=0)]


def sequential(make_system: Any, data: list[dict[str, Any]], judges: list[Any]) -> list[dict[str, float]]:
    """Today's memory runner: one conversation, one question, one score at a time."""
    from cbench_memory.layout import memory_rows

    scores = []
    for conv in memory_rows(data, "bench"):
        system = make_system()
        system.reset()
        system.ingest(list(conv.turns))
        for row in conv.rows:
            answer = system.query(row["question"])
            row_scores: dict[str, float] = {}
            for judge in judges:
                row_scores.update(judge.score(row, answer))
            scores.append(row_scores)
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--sequential-sample", type=int, metavar="N")
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return 0

    from cbench_memory.baselines import FullContextMemory
    from context_bench import Limits, Output, RunConfig, Scope, evaluate_memory
    from context_bench.systems import OpenAIProxy

    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        data = conversations(args.conversations, args.questions)
        client = OpenAIProxy(url, model=MEMORY_MODEL, max_connections=max(64, args.concurrency))
        judges = evaluators(url)
        make_system = partial(FullContextMemory, client)
        rows = args.conversations * args.questions

        start = time.perf_counter()
        result = evaluate_memory(
            make_system,
            data,
            RunConfig(
                scope=Scope(evaluators=judges),
                limits=Limits(max_concurrency=args.concurrency),
                output=Output(progress=False),
            ),
        )
        concurrent = time.perf_counter() - start
        errors = sum(1 for r in result.rows if r.errors)
        failures = sum(len(r.failures) for r in result.rows)

        sample = data[: args.sequential_sample] if args.sequential_sample else data
        start = time.perf_counter()
        seq_scores = sequential(make_system, sample, judges)
        seq_time = (time.perf_counter() - start) * len(data) / len(sample)
        same = [r.scores for r in result.rows[: len(seq_scores)]] == seq_scores
    finally:
        server.terminate()
        server.wait()

    calls = 1 + sum(1 for j in judges if hasattr(j, "ascore"))
    print(
        f"{args.conversations} conversations x {args.questions} questions, "
        f"{args.latency * 1000:.0f} ms per request, "
        f"{calls} endpoint calls per row ({', '.join(getattr(j, 'name', '?') for j in judges)})"
    )
    print(
        f"evaluate_memory (concurrency {args.concurrency}): {concurrent:7.2f} s  "
        f"{rows / concurrent:7.1f} rows/s  "
        f"errors {errors}  judge failures {failures}"
    )
    scaled = f" (scaled from {len(sample)} conversations)" if len(sample) < len(data) else ""
    print(f"sequential loop:                   {seq_time:7.2f} s  {rows / seq_time:7.1f} rows/s{scaled}")
    print(f"speed-up: {seq_time / concurrent:.1f}x (goal >= 10x); same scores as the sequential loop: {same}")
    return 0 if errors == 0 and same else 1


if __name__ == "__main__":
    sys.exit(main())
