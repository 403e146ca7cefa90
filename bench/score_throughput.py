"""Throughput of ``context-bench score`` on 100,000 QA rows against a bare scoring loop.

All sides are fresh interpreters reading the same JSONL file; the bare loop parses each line and
calls ``AnswerQuality().score`` and nothing else, so the difference is what the runner adds (plugin
discovery, row records, auto-wiring, error isolation, the summary, the JSON report).  Two more sides
show what any runner must add: the floor (plugin discovery and one ``EvalRow`` per row) and a
minimal runner written for this bench that does only the duties the core issue names.  Wall and CPU
time are both printed; CPU time is the figure a busy machine distorts least.  Goals: overhead under
25% of the bare loop, at least 20,000 rows/s end to end.

    python bench/score_throughput.py [--rows 100000]

``--against REV`` times ``score`` here and at commit REV instead, side by side: REV's core (from
``git archive``, under the temporary directory) and this tree's each on ``PYTHONPATH``, without the
installed plugins (which are this tree's), in a scratch directory (the store of runs lands there),
alternating, ``--repeat`` (5) times a side, and prints the medians and their ratio, per run and per
row (a 1,000-row run a side gives the fixed cost), with the load average seen:

    python bench/score_throughput.py --against 3898799 [--repeat 7] [--features]

``--features`` adds two sides of this tree: ``--store none`` (the run not recorded), and that with
``--output table`` (no row encoded, spooled or written either), so the store's and the JSON
report's shares of the CPU are measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORDS = "the a of city river paris london capital answer model context memory token north south".split()


def make_rows(path: Path, count: int) -> None:
    rng = random.Random(7)
    with path.open("w") as handle:
        for i in range(count):
            answer = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
            response = " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))
            handle.write(
                json.dumps(
                    {"id": f"q{i}", "question": f"question {i}?", "answer": answer, "response": response}
                )
                + "\n"
            )


BARE_LOOP = """
import json, sys
from context_bench.evaluators._answer import AnswerQuality
evaluator = AnswerQuality()
with open(sys.argv[1]) as handle:
    for line in handle:
        row = json.loads(line)
        evaluator.score(row, {"response": row["response"]})
"""

# The least a runner can add under the core's contract, in two steps.  FLOOR: it discovers plugins
# (auto-wiring needs them) and returns one EvalRow per row.  MINIMAL: a runner cut to the duties
# the core issue names and nothing else: a malformed line or an id-less/duplicate row becomes an
# errored row, the system's latency is timed, an evaluator's exception stays on its row, and the
# summary's sums are kept.  Both space collections as the runner does.
FLOOR_LOOP = """
import gc, json, sys
from context_bench.evaluators._answer import AnswerQuality
from context_bench.plugins import get_host
from context_bench.records import EvalRow
get_host()
gc.set_threshold(70_000)
evaluator = AnswerQuality()
rows = []
with open(sys.argv[1]) as handle:
    for index, line in enumerate(handle):
        row = json.loads(line)
        output = {"response": row["response"]}
        scores = evaluator.score(row, output)
        rows.append(EvalRow("responses", "qa", row["id"], scores, output["response"], index=index))
"""

MINIMAL_RUNNER = """
import gc, json, sys, time
from context_bench.evaluators._answer import AnswerQuality
from context_bench.plugins import get_host
from context_bench.records import EvalRow, RowError
get_host()
gc.set_threshold(70_000)
evaluator, clock = AnswerQuality(), time.perf_counter
rows, seen, sums, counts = [], set(), {}, {}
with open(sys.argv[1]) as handle:
    for index, line in enumerate(handle):
        try:
            row = json.loads(line)
            example_id = row.get("id")
            if example_id is None or example_id in seen:
                raise ValueError("missing or duplicate id")
        except ValueError as exc:
            rows.append(EvalRow("responses", "qa", f"#{index}", errors=[RowError("input", "", "", str(exc))]))
            continue
        seen.add(example_id)
        start = clock()
        output = {"response": row["response"]}
        record = EvalRow("responses", "qa", example_id, response=output["response"],
                         latency=clock() - start, index=index)
        try:
            record.scores = scores = evaluator.score(row, output)
        except Exception as exc:
            record.errors.append(RowError.from_exception("evaluator", "AnswerQuality", exc))
        else:
            for field, value in scores.items():
                sums[field] = sums.get(field, 0.0) + value
                counts[field] = counts.get(field, 0) + 1
        rows.append(record)
"""


def timed(command: list[str], **kwargs) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of a child process: CPU time is what a busy machine
    distorts least."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, **kwargs)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bare_loop(path: Path) -> tuple[float, float]:
    return timed([sys.executable, "-c", BARE_LOOP, str(path)])


def floor_loop(path: Path) -> tuple[float, float]:
    return timed([sys.executable, "-c", FLOOR_LOOP, str(path)])


def minimal_runner(path: Path) -> tuple[float, float]:
    return timed([sys.executable, "-c", MINIMAL_RUNNER, str(path)])


def score_command(path: Path, out: Path) -> list[str]:
    """``score`` on ``path`` as a user runs it, its JSON report to ``out``."""
    return [
        sys.executable,
        "-m",
        "context_bench",
        "score",
        str(path),
        "--output",
        "json",
        "--out",
        str(out),
        "--no-progress",
    ]


def end_to_end(path: Path) -> tuple[float, float]:
    return timed(score_command(path, path.with_suffix(".out.json")))


def tree_of(rev: str) -> Path:
    """REV's files under the temporary directory (kept for the next run of this bench)."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    tree = Path(tempfile.gettempdir()) / f"cbench-tree-{commit}"
    if not (tree / "core" / "src" / "context_bench").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "core"], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def score_at(tree: Path, path: Path, scratch: Path, extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """``score`` on ``path`` with ``tree``'s core and no plugin, as a user runs it (JSON report),
    with ``extra`` flags (``--store none``: nothing recorded)."""
    return timed(
        [*score_command(path, scratch / f"{path.stem}.out.json"), *extra], env=_env(tree), cwd=scratch
    )


def _env(tree: Path) -> dict[str, str]:
    """``tree``'s core on the path, no plugin, and its bytecode cached (under the temporary
    directory) as an installed package's is: with PYTHONDONTWRITEBYTECODE set, as on this
    project's machine, every run compiled every module it imported (127 of them here, 0.5 s of a
    profiled run of 10,000 rows; 3898799 has 44 in all)."""
    env = {**os.environ, "PYTHONPATH": str(tree / "core" / "src"), "CBENCH_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "cbench-bench-pycache")
    return env


def compiled(tree: Path) -> None:
    """``tree``'s core compiled once before it is timed (its bytecode cache, :func:`_env`'s)."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(tree / "core" / "src")], env=_env(tree), check=True
    )


#: With ``--features``, this tree's ``score`` again without what 3898799 did not do: recording the
#: run in the store, then writing the JSON report (the rows encoded and spooled) too.
FEATURES = {
    "--store none": ("--store", "none"),
    "--store none, table": ("--store", "none", "--output", "table"),
}


def against(rev: str, rows: int, repeat: int, features: bool = False) -> None:
    sides: dict[str, tuple[Path, tuple[str, ...]]] = {"here": (ROOT, ())}
    if features:
        sides.update({f"here {label}": (ROOT, extra) for label, extra in FEATURES.items()})
    sides[rev] = (tree_of(rev), ())
    for tree in {tree for tree, _ in sides.values()}:
        compiled(tree)
    sizes = (rows, 1_000)
    cpu: dict[tuple[str, int], list[float]] = {(side, n): [] for side in sides for n in sizes}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {n: Path(tmp) / f"qa{n}.jsonl" for n in sizes}
        for n, path in paths.items():
            make_rows(path, n)
        for turn in range(repeat):  # alternating, and each side first in turn
            order = list(sides) if turn % 2 == 0 else list(reversed(sides))
            for side in order:
                for n in sizes:
                    scratch = Path(tempfile.mkdtemp(dir=tmp))
                    cpu[(side, n)].append(score_at(sides[side][0], paths[n], scratch, sides[side][1])[1])
                    shutil.rmtree(scratch)  # a 100,000-row store and report: a few hundred MB a side
            loads.append(os.getloadavg()[0])
    median = {key: statistics.median(values) for key, values in cpu.items()}
    print(
        f"score on {rows:,} QA rows, here against {rev}: median of {repeat} a side, alternating, CPU seconds"
    )
    print(f"load average (1 min) seen: {min(loads):.1f} to {max(loads):.1f}")
    per_row = {}
    for side in sides:
        total, small = median[(side, rows)], median[(side, 1_000)]
        per_row[side] = (total - small) / (rows - 1_000)
        runs = ", ".join(f"{value:.2f}" for value in cpu[(side, rows)])
        print(
            f"{side:>26}: {total:6.2f} s ({runs}); {per_row[side] * 1e6:5.1f} us a row, "
            f"{small:.2f} s for 1,000 rows"
        )
    for side in sides:
        if side != rev:
            print(
                f"ratio {side}/{rev}: {median[(side, rows)] / median[(rev, rows)]:.3f} per run, "
                f"{per_row[side] / per_row[rev]:.3f} per row (below 1: faster here)"
            )
    if features:
        (store, table), run = (median[(f"here {label}", rows)] for label in FEATURES), median[("here", rows)]
        print(
            f"the store's share: {run - store:.2f} s; the JSON report's (rows encoded, spooled, written): "
            f"{store - table:.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--repeat", type=int, default=None, help="runs a side (best of 3, median of 5 with --against)"
    )
    parser.add_argument("--against", metavar="REV", help="time score here and at this commit, side by side")
    parser.add_argument(
        "--features",
        action="store_true",
        help="with --against: time here also without the store, and without it and the JSON report",
    )
    args = parser.parse_args()
    if args.against:
        against(args.against, args.rows, args.repeat or 5, args.features)
        return
    args.repeat = args.repeat or 3
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qa.jsonl"
        make_rows(path, args.rows)
        bare, floor, minimal, full = [], [], [], []
        for _ in range(args.repeat):  # interleaved, so all sides see the same machine load
            bare.append(bare_loop(path))
            floor.append(floor_loop(path))
            minimal.append(minimal_runner(path))
            full.append(end_to_end(path))
        result = json.loads(path.with_suffix(".out.json").read_text())
        assert len(result["rows"]) == args.rows and not result["summary"]["errors"]["total"]
    (bare_wall, bare_cpu), (full_wall, full_cpu) = min(bare), min(full)
    n = args.rows
    print(f"rows                 {n:,} (best of {args.repeat}; every side starts a fresh interpreter)")
    sides = (
        ("bare loop", min(bare), "parse + AnswerQuality().score"),
        ("floor", min(floor), "+ plugin discovery + one EvalRow per row"),
        ("minimal runner", min(minimal), "+ input and id checks, latency, error isolation, sums"),
        ("context-bench score", min(full), "end to end, JSON report written"),
    )
    for label, (wall, cpu), what in sides:
        over = "" if label == "bare loop" else f"  overhead cpu {(cpu - bare_cpu) / bare_cpu:6.1%}"
        print(f"{label:<20} wall {wall:6.2f} s  cpu {cpu:6.2f} s{over}  ({what})")
    print(
        f"runner overhead      cpu {(full_cpu - bare_cpu) / bare_cpu:.1%}, "
        f"wall {(full_wall - bare_wall) / bare_wall:.1%} of the bare loop (goal < 25%)"
    )
    print(
        f"end-to-end rate      {n / full_wall:,.0f} rows/s wall, {n / full_cpu:,.0f} rows per cpu-second"
        " (goal >= 20,000)"
    )


if __name__ == "__main__":
    main()
