"""Peak memory of ``context-bench score`` as a run grows: 10,000, 100,000 and 1,000,000 QA rows.

Each run is a fresh interpreter; its peak resident set (``ru_maxrss`` of the child) is read after
it exits.  ``--output jsonl`` streams (rows are read, scored and written one at a time), so its
peak should barely grow with the rows: goal at most 300 MB at 1,000,000 rows and within 1.5x of
its peak at 100,000.  ``--output json`` writes every row into one document after the summary; the
goal is under 1 GB at 1,000,000 rows.  ``--output html --out`` streams its rows too (past 100,000
they go to a file beside the page): printed against the JSONL limit.  Wall time is printed beside
each peak.

Beside them, the floor: the peak of a process that imports what ``score`` imports and holds only
what the paired statistics need per row (one group's ``Columns``: an id, the four answer scores,
tokens, latency, cost).  No run that can compare systems row by row goes below it, so the 1.5x
growth goal is measured against it in the same run.

    python bench/memory_scaling.py [--sizes 10000,100000,1000000] [--outputs jsonl,json,html]
        [--before SRC]

``--before SRC`` runs every case a second time with ``PYTHONPATH=SRC`` (an earlier release's
``core/src``, e.g. from ``git archive``) and prints the peaks and CPU seconds side by side: the
streaming run must not be slower per row.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = "the a of city river paris london capital answer model context memory token north south".split()
MB = 1024 * 1024
LIMIT_JSONL = 300 * MB
LIMIT_JSON = 1024 * MB
GROWTH = 1.5


def make_rows(path: Path, count: int) -> None:
    """QA rows with a response to score (the same generator as bench/score_throughput.py)."""
    rng = random.Random(7)
    with path.open("w") as handle:
        for i in range(count):
            answer = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
            response = " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))
            line = {"id": f"q{i}", "question": f"question {i}?", "answer": answer, "response": response}
            handle.write(json.dumps(line) + "\n")


def peak(path: Path, output: str, src: str | None = None) -> tuple[int, float, float]:
    """Peak RSS in bytes, wall and CPU seconds of ``score PATH --output OUTPUT`` in a child process
    (with ``src`` first on its path: the code measured)."""
    out = path.with_suffix(f".out.{output}")
    command = [sys.executable, "-m", "context_bench", "score", str(path), "--output", output]
    command += ["--out", str(out), "--no-progress"]
    start = time.perf_counter()
    # A fresh child per run: RUSAGE_CHILDREN's ru_maxrss is the largest of all children waited for,
    # so each run is measured by a python that runs it and reports its own peak.
    wrapper = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n"
    )
    env = {**os.environ, "PYTHONPATH": src} if src else None
    done = subprocess.run(
        [sys.executable, "-c", wrapper, *command], check=True, capture_output=True, text=True, env=env
    )
    wall = time.perf_counter() - start
    rows = _rows_in(out, output)
    out.unlink()
    if rows != int(path.stem.split("-")[1]):
        raise SystemExit(f"{output} report of {path.name} has {rows} rows")
    kilobytes, cpu = done.stdout.split()[-2:]
    return int(kilobytes) * 1024 if sys.platform != "darwin" else int(kilobytes), wall, float(cpu)


def _rows_in(out: Path, output: str) -> int:
    """The rows a report holds (the HTML report's are in its rows file, removed here, past
    ``--html-inline-rows``)."""
    if output == "jsonl":
        return sum(1 for _ in out.open())
    if output == "json":
        return len(json.loads(out.read_text())["rows"])
    beside = out.with_suffix(".rows.jsonl")
    if beside.exists():
        count = sum(1 for _ in beside.open())
        beside.unlink()
        return count
    page = out.read_text()
    return int(re.search(r'"count":(\d+)', page).group(1))


FLOOR = """
import math, random, resource, sys
import context_bench.cli._commands, context_bench._summary, context_bench.evaluators._answer
from context_bench.columns import Columns
from context_bench.records import EvalRow
rng, columns = random.Random(7), Columns()
for i in range(int(sys.argv[1])):
    row = EvalRow("responses", "qa", f"q{i}")
    columns.add(row, {f: rng.random() for f in ("f1", "exact_match", "recall", "contains")})
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def floor(size: int) -> int:
    """Peak RSS in bytes of the floor process (see the module's docstring) at ``size`` rows."""
    done = subprocess.run(
        [sys.executable, "-c", FLOOR, str(size)], check=True, capture_output=True, text=True
    )
    kilobytes = int(done.stdout.split()[-1])
    return kilobytes * 1024 if sys.platform != "darwin" else kilobytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--outputs", default="jsonl,json,html")
    parser.add_argument("--before", metavar="SRC", help="also run each case with PYTHONPATH=SRC")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    outputs = args.outputs.split(",")
    found: dict[tuple[str, int], int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            found[("floor", size)] = floor(size)
            print(f"floor  {size:>10,} rows  peak {found[('floor', size)] / MB:8.1f} MB", flush=True)
            path = Path(tmp) / f"qa-{size}.jsonl"
            make_rows(path, size)
            for output in outputs:
                rss, wall, cpu = peak(path, output)
                found[(output, size)] = rss
                line = f"{output:<6} {size:>10,} rows  peak {rss / MB:8.1f} MB  wall {wall:6.1f} s"
                line += f"  cpu {cpu:6.1f} s"
                if args.before:
                    old_rss, _, old_cpu = peak(path, output, args.before)
                    line += f"  | before: peak {old_rss / MB:8.1f} MB  cpu {old_cpu:6.1f} s"
                    line += f"  (cpu now/before {cpu / old_cpu:.2f})"
                print(line, flush=True)
            os.unlink(path)
    print()
    for output in outputs:
        limit = LIMIT_JSON if output == "json" else LIMIT_JSONL
        largest = max(s for o, s in found if o == output)
        top = found[(output, largest)]
        print(
            f"{output:<6} peak at {largest:,} rows: {top / MB:.1f} MB = {top / limit:.2f}x the "
            f"{limit // MB} MB limit ({'ok' if top <= limit else 'OVER'})"
        )
        if output == "jsonl" and (output, 100_000) in found and largest > 100_000:
            ratio = top / found[(output, 100_000)]
            least = found[("floor", largest)] / found[("floor", 100_000)]
            print(
                f"{output:<6} {largest:,} rows / 100,000 rows: {ratio:.2f}x "
                f"(goal <= {GROWTH}x: {'ok' if ratio <= GROWTH else 'OVER'}; "
                f"the floor's own growth: {least:.2f}x)"
            )


if __name__ == "__main__":
    main()
