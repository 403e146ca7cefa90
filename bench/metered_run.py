"""What counting tokens costs a metered run: the CPU of ``context-bench run --meter URL`` with
``--tokenizer`` against the same run without it, side by side in one process (the meter is a thread
of the run), over rows of 2,000 characters against a loopback fake upstream in a process of its own.

With a tokenizer the run counts each prompt twice: the harness counts what it gives the system
(``counted_input_tokens``) and the meter what each call sent on (the same text's second count is
remembered, not encoded: ``Tokenizer.count``).  The issue's goal: counting takes at
most 10% of the CPU of a metered run of 10,000 rows.  Printed: each run's CPU seconds (this
process: the harness, the client, the meter), the share counting adds, and the tokens counted.

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

PROMPT = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text()[:2000]


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
            data = os.path.join(folder, "rows.jsonl")
            with open(data, "w", encoding="utf-8") as handle:
                for n in range(args.rows):
                    handle.write(
                        json.dumps({"id": str(n), "question": f"{n} {PROMPT}", "answer": "x"}) + "\n"
                    )
            out = os.path.join(folder, "rows.out.jsonl")
            plain = _run(url, data, out, args.concurrency, None)
            counted = _run(url, data, out, args.concurrency, args.tokenizer)
            with open(out, encoding="utf-8") as handle:
                rows = [json.loads(line) for line in handle]
    finally:
        upstream.terminate()
        upstream.wait()
    tokens = sum(row["counted_input_tokens"] for row in rows) + sum(
        row["metered"]["input_tokens"] or 0 for row in rows
    )
    share = (counted - plain) / counted
    print(
        f"{args.rows:,} rows of {len(PROMPT):,} characters, concurrency {args.concurrency}, {args.tokenizer}"
    )
    print(f"metered run without a tokenizer: {plain:.2f} CPU s; with it: {counted:.2f} CPU s")
    print(f"counting's share of the metered run's CPU: {share:.1%} (goal at most 10%)")
    print(
        f"tokens counted (harness and meter): {tokens:,}; per CPU-second of the difference: "
        f"{tokens / max(counted - plain, 1e-9):,.0f}"
    )


if __name__ == "__main__":
    main_bench()
