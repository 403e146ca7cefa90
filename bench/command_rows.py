"""What a ``--command`` row's reaper costs, against a bare ``subprocess.run`` per row.

Side by side, in one run, interleaved:

* ours: ``CommandSystem("cat").process(row)``: the row's reaper (an interpreter started with
  ``-I -S``) forks ``cat``, the prompt is written, the output read to its bound, the tree ended;
* peer: ``subprocess.run(["cat"], input=..., start_new_session=True)``: one process per row, the
  whole output read, nothing that the program started ended (what ``--command`` did before).

Then the memory of a program that prints ``--flood`` MB: the peak RSS of a fresh interpreter that
runs it once through each (ours stops at the 10 MiB bound; the peer holds it all).

    python bench/command_rows.py [--rows 200] [--flood 150]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

_PEAK = """
import json, resource, subprocess, sys
from context_bench.command_system import CommandError, CommandSystem
flood = [sys.executable, "-c", f"import sys; sys.stdout.buffer.write(b'x' * {int(sys.argv[2])} * 2**20)"]
if sys.argv[1] == "ours":
    try:
        CommandSystem(flood).process({"question": "q"})
    except CommandError:
        pass
else:
    subprocess.run(flood, capture_output=True, start_new_session=True)
print(json.dumps(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--flood", type=int, default=150, help="MB the flooding program prints")
    args = parser.parse_args()
    from context_bench.command_system import CommandSystem

    system = CommandSystem("cat")
    row = {"question": "What is the capital of France? " * 20}
    prompt = row["question"].encode()
    ours, peer = [], []
    for _ in range(args.rows):
        started = time.perf_counter()
        system.process(row)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run(["cat"], input=prompt, capture_output=True, start_new_session=True, check=True)
        peer.append(time.perf_counter() - started)
    ms = {name: statistics.median(times) * 1000 for name, times in (("ours", ours), ("peer", peer))}
    print(f"rows: {args.rows}, median ms per row: ours {ms['ours']:.1f}, subprocess.run {ms['peer']:.1f}")
    extra = ms["ours"] - ms["peer"]
    print(f"ratio ours / subprocess.run: {ms['ours'] / ms['peer']:.2f}x (+{extra:.1f} ms a row)")
    peaks = {}
    for side in ("ours", "peer"):
        measured = [sys.executable, "-c", _PEAK, side, str(args.flood)]
        peaks[side] = json.loads(subprocess.run(measured, capture_output=True, text=True, check=True).stdout)
    print(
        f"peak RSS with a program printing {args.flood} MB: ours {peaks['ours']} MB, "
        f"subprocess.run {peaks['peer']} MB"
    )


if __name__ == "__main__":
    main()
