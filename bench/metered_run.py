"""What counting tokens costs a metered run: the CPU of ``context-bench run --meter URL`` with
``--tokenizer`` against the same run without it, side by side in one process (the meter is a thread
of the run), over rows of 2,000 characters against a loopback fake upstream in a process of its own.

With a tokenizer both sides count each prompt, the harness what it gives the system
(``counted_input_tokens``) and the meter what each call sent on, but the text is encoded once: the
meter counts it first and the harness's count of the same text is remembered (``Tokenizer.count``).
The issue's goals: counting takes at most 10% of the CPU of a metered run of 10,000 rows, at least
2 million tokens counted per CPU-second.  Printed: each run's CPU seconds (this process: the
harness, the client, the meter; a first run of 200 rows warms the code both share), the share
counting adds, the CPU of loading the encoding (part of it), the rows' texts counted alone beside
the run (tokens per CPU-second) and the tokens counted per CPU-second of the difference.

    python bench/metered_run.py [--rows 10000] [--tokenizer o200k_base] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from context_bench.cli import main
from context_bench.testing import loopback_environment
from context_bench.token_count import load_tokenizer

#: Rows of a first run neither side counts: the imports and first calls of the run's code.
WARM_ROWS = 200
PROMPT = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text()[:2000]


def _rows(folder: str, name: str, count: int) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        for n in range(count):
            handle.write(json.dumps({"id": str(n), "question": f"{n} {PROMPT}", "answer": "x"}) + "\n")
    return path


def _run(url: str, data: str, out: str, concurrency: int, tokenizer: str | None) -> float:
    """The CPU seconds of one metered run of ``data`` (every thread of this process)."""
    argv = ["run", "--meter", url, "--proxy", url, "--dataset", data, "--no-progress"]
    argv += ["--output", "jsonl", "--out", out, "--max-concurrency", str(concurrency)]
    argv += ["--tokenizer", tokenizer] if tokenizer else []
    start = time.process_time()
    code = main(argv)
    spent = time.process_time() - start
    if code != 0:
        raise SystemExit(f"the run exited {code}")
    return spent


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--tokenizer", default="o200k_base")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    upstream = subprocess.Popen(
        [sys.executable, "-m", "context_bench.fake_server"],
        stdout=subprocess.PIPE,
        env=loopback_environment(),
        start_new_session=True,
    )
    try:
        url = upstream.stdout.readline().decode().strip()
        with tempfile.TemporaryDirectory() as folder:
            data = _rows(folder, "rows.jsonl", args.rows)
            out = os.path.join(folder, "rows.out.jsonl")
            _run(url, _rows(folder, "warm.jsonl", WARM_ROWS), out, args.concurrency, None)
            plain = _run(url, data, out, args.concurrency, None)
            counted = _run(url, data, out, args.concurrency, args.tokenizer)
            start = time.process_time()
            tokenizer = load_tokenizer(args.tokenizer)
            loading = time.process_time() - start
            start = time.process_time()
            encoded = sum(tokenizer.count(f"{n} {PROMPT}") for n in range(args.rows))
            encoding = time.process_time() - start
            with open(out, encoding="utf-8") as handle:
                rows = [json.loads(line) for line in handle]
    finally:
        upstream.terminate()
        upstream.wait()
    tokens = sum(row["counted_input_tokens"] for row in rows)
    share = (counted - plain) / counted
    print(
        f"{args.rows:,} rows of {len(PROMPT):,} characters, concurrency {args.concurrency}, {args.tokenizer}"
    )
    print(f"metered run without a tokenizer: {plain:.2f} CPU s; with it: {counted:.2f} CPU s")
    print(f"counting's share of the metered run's CPU: {share:.1%} (goal at most 10%)")
    print(
        f"of the difference, loading the encoding: {loading:.2f} CPU s; counting the rows' texts alone "
        f"beside the run: {encoding:.2f} CPU s ({encoded / encoding:,.0f} tokens per CPU-second, "
        "goal 2,000,000)"
    )
    rate = f"{tokens / (counted - plain):,.0f}" if counted > plain else "none (the difference is noise)"
    print(
        f"tokens counted (each prompt encoded once, for the harness and the meter): {tokens:,}; per "
        f"CPU-second of the difference: {rate}"
    )


if __name__ == "__main__":
    main_bench()
