"""The local executor against cbench-ray (a local Ray with 2 CPUs), side by side in one run.

Each workload runs through ``context_bench.evaluate`` on each side in turn, local then on Ray, same
rows, equal evaluators, same ``max_concurrency``.  Each side keeps its evaluator objects from run to
run, as a notebook or a service would: its first run is cold (a sandbox server, a sympy worker, a
Ray worker's copy of the evaluators start), the next ones warm.  The table prints the first run's
times and the best later run's, the speed-ups (local / Ray; the goals are read on the warm runs,
the steady state of a cluster that outlives its runs) and whether the scores are the same row for
row:

* rows whose evaluators hold the GIL in one process: SummarizationQuality on 20,000 rows and
  MathEquivalence (its default single worker) on 2,000 rows (goal: Ray at least 1.6x faster);
* CodeExecution on the 164 HumanEval canonical solutions, already parallel locally through its
  sandbox workers (goal: within 10% of local, the same verdicts);
* an I/O-bound judge: MemoryJudge on 2,000 rows against a loopback endpoint answering in 100 ms
  (goal: within 15% of local).

Then the costs docs/scale.md builds its per-node rates and its 100-node estimate from: the CPU
seconds a row of each workload costs, and what Ray adds (driver CPU per row, and per Ray task).
Ray's start (once per process, seconds) is printed apart: a cluster outlives its runs.

    python bench/ray_scaling.py [--cpus 2] [--repeat 3] [--only math] [--shared ../shared]
        [--nodes 100]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import context_bench
from cbench_ray.executor import RayExecutor
from context_bench import Limits, Output, RunConfig, Scope

CONCURRENCY = 8
#: Runs of each workload on each executor (--repeat): the first is cold, the best of the rest counts.
REPEAT = 3
JUDGE_CONCURRENCY = 64
WORKLOAD_NAMES = ("summaries", "math", "code", "judge")
JUDGE_LATENCY = 0.1

WORDS = (
    "the committee met on tuesday to review the budget and agreed to postpone the vote until "
    "members had read the auditor report which found several errors in the spending figures"
).split()


def summaries(count: int) -> list[dict]:
    def text(i: int, n: int) -> str:
        return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))

    return [
        {"id": str(i), "dataset": "dialogsum", "reference": text(i, 60), "response": text(i + 1, 50)}
        for i in range(count)
    ]


def math_rows(shared: Path, count: int) -> list[dict]:
    cases = [json.loads(line) for line in (shared / "math" / "cases_public.jsonl").read_text().splitlines()]
    cases = [c for c in cases if isinstance(c.get("gold"), str) and isinstance(c.get("response"), str)]
    return [
        {"id": str(i), "answer": case["gold"], "response": case["response"]}
        for i, case in zip(range(count), itertools.cycle(cases))
    ]


def code_rows(shared: Path) -> list[dict]:
    problems = [json.loads(line) for line in (shared / "code" / "HumanEval.jsonl").read_text().splitlines()]
    return [
        {**p, "id": p["task_id"], "dataset": "humaneval", "response": p["canonical_solution"]}
        for p in problems
    ]


def judge_rows(count: int) -> list[dict]:
    return [
        {
            "id": str(i),
            "question": f"Where did person {i} grow up?",
            "answer": "Paris",
            "response": "They grew up in Paris, France." if i % 2 else "In London.",
        }
        for i in range(count)
    ]


def timed(run: Callable[[], context_bench.EvalResult]) -> tuple[float, float, context_bench.EvalResult]:
    """Wall seconds, this process's CPU seconds, and the result."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def scores(result: context_bench.EvalResult) -> list[Any]:
    return [(row.example_id, row.scores, [str(e) for e in row.errors]) for row in result.rows]


def compare(
    label: str,
    rows: list[dict],
    make: Callable[[], list[Any]],
    executor: RayExecutor,
    goal: str,
    met: Callable[[float], bool],
    concurrency: int = CONCURRENCY,
    repeat: int = REPEAT,
) -> dict[str, float]:
    kept = {False: make(), True: make()}  # each side's evaluators, kept from run to run

    def run(on_ray: bool) -> context_bench.EvalResult:
        return context_bench.evaluate(
            None,
            rows,
            RunConfig(
                scope=Scope(evaluators=kept[on_ray]),
                limits=Limits(max_concurrency=concurrency),
                output=Output(progress=False),
            ),
            executor=executor if on_ray else None,
        )

    cold_local, _, local = timed(lambda: run(False))
    cold_ray, driver_cpu, remote = timed(lambda: run(True))
    local_s = ray_s = float("inf")
    for _ in range(repeat - 1):  # alternating, the best of each: a shared machine's load comes and goes
        seconds, _, local = timed(lambda: run(False))
        local_s = min(local_s, seconds)
        seconds, driver_cpu, remote = timed(lambda: run(True))
        ray_s = min(ray_s, seconds)
    same = scores(local) == scores(remote)
    ratio = local_s / ray_s
    print(
        f"{label:<34} {len(rows):>6} | {cold_local:>6.2f} {cold_ray:>6.2f} {cold_local / cold_ray:>5.2f}x | "
        f"{local_s:>6.2f} {ray_s:>6.2f} {ratio:>5.2f}x  {goal:<11} {'met' if met(ratio) else 'MISSED':<6} "
        f"| same scores: {'yes' if same else 'NO'}",
        flush=True,
    )
    return {
        "rows": len(rows),
        "local_s": local_s,
        "ray_s": ray_s,
        "worker_row_s": executor.stats.worker_seconds / max(1, executor.stats.rows),
        "driver_cpu_per_row": driver_cpu / len(rows),
    }


def judge_server() -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "cbench_judge.testing", "--latency", str(JUDGE_LATENCY)],
        stdout=subprocess.PIPE,
        text=True,
    )
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        raise RuntimeError("the judge server did not start")
    return process, url


def overheads(executor: RayExecutor, count: int = 20_000) -> dict[str, float]:
    """What Ray adds: rows that cost nothing (scored by no evaluator), in sized batches and one per task."""
    rows = [{"id": str(i), "response": "x"} for i in range(count)]

    def run(on: Any, data: list[dict]) -> tuple[float, float, Any]:
        return timed(
            lambda: context_bench.evaluate(
                None,
                data,
                RunConfig(
                    scope=Scope(evaluators=[]),
                    limits=Limits(max_concurrency=CONCURRENCY),
                    output=Output(progress=False),
                ),
                executor=on,
            )
        )

    local_s, _, _ = run(None, rows)
    batched_s, driver_cpu, _ = run(executor, rows)
    worker_row_s = executor.stats.worker_seconds / count
    single = RayExecutor(CONCURRENCY, ray_batch_size=1)
    few = rows[:500]
    single_s, _, _ = run(single, few)
    return {
        "local_row_s": local_s / count,
        "ray_row_s": batched_s / count,
        "worker_row_s": worker_row_s,
        "driver_cpu_per_row": driver_cpu / count,
        "task_s": single_s / len(few) * min(2, os.cpu_count() or 1),  # two in flight at a time
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray (default 2)")
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    parser.add_argument("--nodes", type=int, default=100, help="nodes of the simulated cluster")
    parser.add_argument("--cpus-per-node", type=int, default=16, help="CPUs of a simulated node")
    parser.add_argument(
        "--repeat", type=int, default=REPEAT, help="runs of each side (at least 2): the first cold"
    )
    parser.add_argument(
        "--only", action="append", choices=WORKLOAD_NAMES, help="run only this workload (repeatable)"
    )
    args = parser.parse_args()
    if args.repeat < 2:
        parser.error("--repeat must be at least 2: the first run is cold")
    shared = Path(os.environ.get("CBENCH_SHARED_DIR", args.shared))

    started = time.perf_counter()
    executor = RayExecutor(CONCURRENCY, num_cpus=args.cpus)  # starts Ray as the CLI would
    executor.connect()
    context_bench.evaluate(
        None,
        summaries(200),
        RunConfig(scope=Scope(evaluators=["SummarizationQuality"]), output=Output(progress=False)),
        executor=executor,
    )
    print(f"Ray with {args.cpus} CPUs started and warm in {time.perf_counter() - started:.1f} s")
    print(
        f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
        f"{args.repeat} runs each: the first cold, the best of the rest warm\n"
    )

    from cbench_code import CodeExecution
    from cbench_judge import MemoryJudge
    from cbench_math.evaluator import MathEquivalence

    print(f"{'':<41} | {'cold: first run':<20} | {'warm: best of the next':<34} |")
    print(
        f"{'workload':<34} {'rows':>6} | {'local':>6} {'ray':>6} {'':>6} | {'local':>6} {'ray':>6} "
        f"{'ratio':>6}  {'goal':<11} {'':<6} | check"
    )

    def judge() -> dict[str, float]:
        process, url = judge_server()
        try:
            return compare(
                f"MemoryJudge ({JUDGE_LATENCY * 1000:.0f} ms endpoint)",
                judge_rows(2_000),
                lambda: [MemoryJudge(url, concurrency=JUDGE_CONCURRENCY)],
                RayExecutor(JUDGE_CONCURRENCY),
                "within 15%",
                lambda r: r >= 1 / 1.15,
                concurrency=JUDGE_CONCURRENCY,
                repeat=args.repeat,
            )
        finally:
            process.terminate()
            process.wait(10)

    workloads: dict[str, Callable[[], dict[str, float]]] = {
        "summaries": lambda: compare(
            "SummarizationQuality",
            summaries(20_000),
            lambda: ["SummarizationQuality"],
            executor,
            ">= 1.6x",
            lambda r: r >= 1.6,
            repeat=args.repeat,
        ),
        "math": lambda: compare(
            "MathEquivalence (1 worker)",
            math_rows(shared, 2_000),
            lambda: [MathEquivalence()],
            executor,
            ">= 1.6x",
            lambda r: r >= 1.6,
            repeat=args.repeat,
        ),
        "code": lambda: compare(
            "CodeExecution (HumanEval canonical)",
            code_rows(shared),
            lambda: [CodeExecution(timeout=10.0)],
            executor,
            "within 10%",
            lambda r: r >= 1 / 1.1,
            repeat=args.repeat,
        ),
        "judge": judge,
    }
    costs = {name: workloads[name]() for name in args.only or workloads}
    extra = overheads(executor)
    executor.close()
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")

    print("\nper-row costs (seconds a Ray worker spends on one row, Ray's share included) and Ray's own:")
    for name, cost in costs.items():
        print(f"  {name:<10} {cost['worker_row_s'] * 1e3:8.3f} ms/row on a worker")
    print(
        f"  empty row  {extra['worker_row_s'] * 1e6:8.0f} us/row on a worker; the driver "
        f"{extra['driver_cpu_per_row'] * 1e6:.0f} us CPU/row "
        f"(wall {extra['ray_row_s'] * 1e6:.0f} us/row on Ray, {extra['local_row_s'] * 1e6:.0f} us "
        f"locally); one Ray task {extra['task_s'] * 1e3:.1f} ms"
    )
    simulate(costs, extra, args.nodes, args.cpus_per_node)
    return 0


def simulate(costs: dict[str, dict[str, float]], extra: dict[str, float], nodes: int, cpus: int) -> None:
    """A cluster of ``nodes`` x ``cpus``: a node's rate from a row's cost on a worker plus its share
    of the Ray task it rides in (one task per TARGET_SECONDS of rows), and the cluster's rate,
    capped by the one driver that receives, caches and counts every row."""
    from cbench_ray.executor import TARGET_SECONDS

    driver_cap = 1 / extra["driver_cpu_per_row"]
    task_share = 1 + extra["task_s"] / TARGET_SECONDS
    print(
        f"\nsimulated: {nodes} nodes x {cpus} CPUs, one driver (its cap: {driver_cap:,.0f} rows/s; "
        f"a Ray task adds {extra['task_s'] / TARGET_SECONDS:.1%} to the {TARGET_SECONDS:g} s of rows "
        "it carries):"
    )
    for name, cost in costs.items():
        if name == "judge":
            continue  # I/O-bound: set by the endpoint and --max-concurrency, not by CPUs
        node = cpus / (cost["worker_row_s"] * task_share)
        cluster = min(nodes * node, driver_cap)
        bound = "driver-bound" if nodes * node > driver_cap else "CPU-bound"
        print(
            f"  {name:<10} {node:>10,.0f} rows/s per node, {cluster:>12,.0f} rows/s for the cluster ({bound})"
        )
    judge = costs.get("judge")
    if judge is None:
        return
    print(
        f"  judge      {judge['rows'] / judge['ray_s']:>10,.0f} rows/s at {JUDGE_CONCURRENCY} in flight "
        f"({JUDGE_LATENCY * 1000:.0f} ms a call), wherever they run: rows in flight / latency"
    )


if __name__ == "__main__":
    sys.exit(main())
