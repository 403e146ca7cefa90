"""What the statistics add to ``context-bench score`` on 100,000 rows (issue 15: at most 20%).

Two systems answer the same 50,000 QA questions (one with shorter prompts), so the summary holds
every figure the issue asks for: intervals per field, costs, latency percentiles, pass rates, the
frontier and the paired comparison of the second system with the first (McNemar for the 0/1
fields, the paired t-test for F1 and recall at this size).  Both sides are fresh interpreters
running the real CLI (``score FILE --output json --out FILE``); "without" replaces the
Summarizer's figures with empty ones, so the difference is exactly what the statistics cost.
Wall and CPU time are printed; CPU time is the figure a busy machine distorts least.

    python bench/stats_overhead.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = "the a of city river paris london capital answer model context memory token north south".split()

RUN = """
import sys
from context_bench.cli import main
if sys.argv[3] == "without":
    from context_bench import figures, _summary as summary
    from context_bench.records import Cost, FrontierPlace, JudgeFigures, LatencyFigures, Passing, Tokens

    def bare(self, groups, *_):
        empty = figures.GroupFigures(
            {}, {}, Tokens(), Cost(), LatencyFigures(), Passing(), JudgeFigures(), []
        )
        return figures.RunFigures(
            {key: empty for key in groups}, {key: FrontierPlace() for key in groups}, [], [], [], None
        )

    summary.Summarizer._figures = bare
sys.exit(main(["score", sys.argv[1], "--output", "json", "--out", sys.argv[2], "--no-progress"]))
"""


def make_rows(path: Path, count: int) -> None:
    rng = random.Random(7)
    with path.open("w") as handle:
        for i in range(count // 2):
            answer = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
            for system, tokens in (("full", rng.randint(300, 900)), ("compressed", rng.randint(100, 300))):
                response = " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))
                row = {
                    "id": f"q{i}",
                    "system": system,
                    "dataset": "squad",
                    "question": f"question {i}?",
                    "answer": answer,
                    "response": response,
                    "input_tokens": tokens,
                    "output_tokens": rng.randint(5, 40),
                    "latency": rng.random(),
                }
                handle.write(json.dumps(row) + "\n")


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each side; the fastest counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        rows = Path(scratch) / "rows.jsonl"
        make_rows(rows, args.rows)
        out = Path(scratch) / "report.json"
        found = {}
        for side in ("without", "with"):
            runs = [timed([sys.executable, "-c", RUN, str(rows), str(out), side]) for _ in range(args.repeat)]
            found[side] = min(runs, key=lambda run: run[1])
            if side == "with":
                summary = json.loads(out.read_text())["summary"]
                assert summary["comparisons"] and summary["groups"][0]["ci"], "the statistics are missing"
    (wall_without, cpu_without), (wall_with, cpu_with) = found["without"], found["with"]
    print(f"score on {args.rows:,} rows, 2 systems")
    print(f"  without statistics: {wall_without:6.2f} s wall, {cpu_without:6.2f} s CPU")
    print(f"  with statistics:    {wall_with:6.2f} s wall, {cpu_with:6.2f} s CPU")
    ratio = cpu_with / cpu_without
    print(f"  ratio (CPU): {ratio:.3f}  (target at most 1.20: {'met' if ratio <= 1.2 else 'NOT met'})")
    print(f"  ratio (wall): {wall_with / wall_without:.3f}")


if __name__ == "__main__":
    main()
