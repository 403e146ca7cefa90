"""What a sweep costs the harness, against the separate runs it replaces (issue 28: at most 5% more
CPU).

Side by side, in one run, alternating, each ``context-bench run`` a process of its own against one
FakeServer in this process (so the endpoint's CPU is not counted, only the harness's):

* ours: ``--proxy URL --name baseline --proxy URL --name compressed --sweep rate=0.2,0.4,0.6,0.8``
  over ``--rows`` rows: five systems, the baseline run once;
* peer: the same five systems as five separate runs (the baseline alone, then ``compressed`` with
  ``--extra-body '{"rate": R}'`` for each rate): the same requests.

    python bench/sweep_overhead.py [--rows 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RATES = ("0.2", "0.4", "0.6", "0.8")


def _cpu(argv: list[str]) -> float:
    """The CPU seconds (user and system) one ``context-bench`` process spends."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "context_bench", *argv], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from context_bench.testing import FakeServer

    with tempfile.TemporaryDirectory() as folder, FakeServer(lambda body: "Paris") as server:
        data = Path(folder) / "qa.jsonl"
        rows = ({"id": str(n), "question": f"capital {n}", "answer": "Paris"} for n in range(args.rows))
        data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        common = ["--dataset", str(data), "--no-progress", "--store", "none", "--max-concurrency", "16"]
        base = ["--proxy", server.url, "--name", "baseline"]
        comp = ["--proxy", server.url, "--name", "compressed"]
        ours, peer = [], []
        for _ in range(args.rounds):
            ours.append(_cpu(["run", *base, *comp, "--sweep", f"rate={','.join(RATES)}", *common]))
            separate = [["run", *base, *common]]
            for rate in RATES:
                separate.append(["run", *comp, "--extra-body", json.dumps({"rate": float(rate)}), *common])
            peer.append(sum(_cpu(argv) for argv in separate))
    ours_s, peer_s = statistics.median(ours), statistics.median(peer)
    print(f"rows: {args.rows}, 5 systems, median CPU s over {args.rounds} rounds:")
    print(f"  one sweep {ours_s:.2f}, five separate runs {peer_s:.2f}, ratio {ours_s / peer_s:.3f}")


if __name__ == "__main__":
    main()
