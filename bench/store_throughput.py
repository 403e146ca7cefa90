"""What the store costs: recording a 1,000,000-row run into SQLite beside the JSONL writer, and the
viewer's first page and searches of that run.

Recording: fresh interpreters score the same 1,000,000 QA rows through the real runner
(``Output(stream=...)``, as ``score --output jsonl`` does): one writes the JSONL report alone, the
others write it and record every row in a SQLite store (``Recorder.add``, batches of 1,000, the
search index kept as it goes) and the summary, the recorder given the report's line of each row
(as ``--output jsonl`` records) or encoding it itself, and beside them the floor: the recorder
given the line, writing into a table of rows with no index and no search (``--modes`` picks
which).  Each child's CPU seconds and peak resident set are read after it exits; goal: recording
costs at most 1.20x the CPU of the JSONL writer alone and the run peaks at or under 300 MB.  They
run one after the other, ``--repeat`` times each, alternating, so load on the machine falls on all.

The viewer: ``context-bench view`` is started as a process over that store and asked, as a
browser would, for the run's first page (its summary report and the first 50 rows with the count),
its last page, and a search for a word found in one row and in a third of them; each request is
timed from the wire.  Goals: the first page under 1 s, a search under 2 s.

    python bench/store_throughput.py [--rows 1000000] [--repeat 1] [--modes shared,own,floor] [--keep DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from context_bench.store import open_store

MB = 1024 * 1024
#: The runs measured: the JSONL writer alone; it and the store, the recorder given the writer's
#: line (as run --output jsonl records); the recorder encoding each row itself (any other output);
#: the floor: as shared, into a table of rows with no index and no search index (what SQLite's
#: writes cost the recorder, whatever the schema).
MODES = {
    "alone": "JSONL writer alone",
    "shared": "JSONL writer + SQLite store (the writer's line)",
    "own": "JSONL writer + SQLite store (the store encoding)",
    "floor": "JSONL writer + SQLite rows, no index, no search",
}
CPU_RATIO = 1.20
PEAK = 300 * MB
FIRST_PAGE = 1.0
SEARCH = 2.0

#: One run in a child: score the rows through the runner, writing the JSONL report, and with a
#: store URL recording every row too; prints the run id (or 0).
_CHILD = """
import sys
from context_bench import Output, RunConfig, evaluate
from context_bench.datasets import read_file
from context_bench.records import encode_compact
from context_bench.reports import _jsonl as jsonl

rows, out, mode, url = sys.argv[1:5]
with open(out, "w", encoding="utf-8") as handle:
    if mode == "alone":
        writer = jsonl.Writer(handle)
        evaluate(None, {"qa": read_file(rows)}, RunConfig(output=Output(stream=writer, progress=False)))
        print(0)
        raise SystemExit
    from context_bench.store import open_store
    store = open_store(url)
    recorder = store.recorder("score")
    recorder.begin({"files": [rows]}, {}, ["bench"])
    if mode == "floor":  # the rows' table alone: no key to replace a row by, no index, no search
        db = store.db
        columns = db.one("SELECT sql FROM sqlite_master WHERE name = 'run_rows'")[0]
        for statement in ("DROP TABLE run_rows_text", "DROP TABLE run_rows"):
            db.execute(statement)
        db.execute(columns[: columns.index("UNIQUE")].rstrip().rstrip(",") + ")")
        db.index_new_rows = ""
        recorder._upsert = recorder._upsert.split(" ON CONFLICT")[0]
    if mode in ("shared", "floor"):  # the JSONL writer's line recorded as it is (run --output jsonl)
        def encode(row):
            text = encode_compact(jsonl.line(row))
            recorder.add(row, text)
            return text
        writer = jsonl.Writer(handle, encode)
        stream = writer
    else:  # the recorder encodes each row itself
        writer = jsonl.Writer(handle)
        def stream(row):
            writer(row)
            recorder.add(row)
    result = evaluate(None, {"qa": read_file(rows)}, RunConfig(output=Output(stream=stream, progress=False)))
    recorder.finish(result.summary)
    recorder.close()
    assert recorder.warning is None, recorder.warning
    print(recorder.run_id)
"""


def _rows_generator():
    """The QA rows of bench/memory_scaling.py (one generator for the benches of a run's size)."""
    spec = importlib.util.spec_from_file_location(
        "memory_scaling", Path(__file__).with_name("memory_scaling.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_rows


def child(rows: Path, out: Path, mode: str, url: str = "none") -> tuple[float, int, str]:
    """CPU seconds, peak RSS (bytes) and output of one run in a fresh interpreter."""
    wrapper = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True)\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, done.stdout.strip())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-c", _CHILD, str(rows), str(out), mode, url],
        check=True,
        capture_output=True,
        text=True,
    )
    kilobytes, cpu, said = done.stdout.split()
    return float(cpu), int(kilobytes) * 1024, said


def timed_get(url: str) -> tuple[float, str]:
    import httpx

    start = time.perf_counter()
    answer = httpx.get(url, timeout=120)
    answer.raise_for_status()
    return time.perf_counter() - start, answer.text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--keep", metavar="DIR", help="work in DIR and keep the store (default: a temporary one)"
    )
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help=f"the runs measured, of {', '.join(MODES)} (default: all; alone is always one)",
    )
    parser.add_argument(
        "--view-only",
        action="store_true",
        help="time the viewer over the store in --keep DIR; record nothing",
    )
    args = parser.parse_args()
    modes = ["alone", *(mode for mode in MODES if mode != "alone" and mode in args.modes.split(","))]
    work = Path(args.keep or tempfile.mkdtemp(prefix="cbench-store-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = work / f"qa-{args.rows}.jsonl"
    if not rows.exists():
        _rows_generator()(rows, args.rows)
    print(f"{args.rows:,} rows; load average {_load()} on {os.cpu_count()} cores", flush=True)

    cpu: dict[str, list[float]] = {mode: [] for mode in modes}
    peaks: list[int] = []
    run_id = ""
    store = work / "runs.sqlite"
    for _ in range(0 if args.view_only else args.repeat):
        for mode in modes:
            recorded = work / ("floor.sqlite" if mode == "floor" else "runs.sqlite")  # the viewer's
            for suffix in ("", "-wal", "-shm"):
                Path(f"{recorded}{suffix}").unlink(missing_ok=True)
            seconds, peak, said = child(rows, work / f"{mode}.jsonl", mode, f"sqlite:///{recorded}")
            cpu[mode].append(seconds)
            peaks.append(peak)
            disk = f", {recorded.stat().st_size / MB:,.0f} MB on disk" if mode != "alone" else ""
            print(f"  {MODES[mode]:52s} {seconds:7.1f} s CPU, peak {peak / MB:5.0f} MB{disk}", flush=True)
            (work / f"{mode}.jsonl").unlink()  # the report is not read: its disk is the store's
            run_id = said if mode in ("shared", "own") else run_id
    if args.view_only:
        with open_store(f"sqlite:///{store}", create=False) as opened:
            run_id = str(opened.runs(limit=1)[0].id)
    else:
        for mode in modes[1:]:
            ratio = min(cpu[mode]) / min(cpu["alone"])
            verdict = "met" if ratio <= CPU_RATIO else "NOT MET"
            goal = f"goal <= {CPU_RATIO}: {verdict}" if mode != "floor" else "no store costs less"
            print(f"{MODES[mode]}: {ratio:.3f}x the JSONL writer's CPU ({goal})")
        verdict = "met" if max(peaks) <= PEAK else "NOT MET"
        print(f"peak {max(peaks) / MB:.0f} MB (goal <= {PEAK / MB:.0f} MB: {verdict})")
    if not run_id:  # --modes floor: no store to view
        return

    store_url = f"sqlite:///{store}"  # the last run recorded
    viewer = subprocess.Popen(
        [sys.executable, "-m", "context_bench", "view", "--port", "0", "--store", store_url],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = viewer.stderr.readline().split(" at ", 1)[1].split(" ", 1)[0].rstrip("/")
        last = (args.rows - 1) // 50
        cases = [
            ("first page", f"{base}/runs/{run_id}", FIRST_PAGE),
            ("first page again", f"{base}/runs/{run_id}", FIRST_PAGE),
            ("last page", f"{base}/runs/{run_id}?page={last}", FIRST_PAGE),
            ("search: one row's id", f"{base}/runs/{run_id}?q=q{args.rows // 2 + 7}", SEARCH),
            ("search: a word in a third of the rows", f"{base}/runs/{run_id}?q=paris", SEARCH),
            ("search: two words", f"{base}/runs/{run_id}?q=paris+london", SEARCH),
        ]
        for label, url, goal in cases:
            seconds, text = timed_get(url)
            found = text.split('<p class="pager"><span>', 1)[1].split("</span>", 1)[0]
            verdict = "met" if seconds < goal else "NOT MET"
            print(f"  {label:40s} {seconds:6.3f} s ({found}; goal < {goal:g} s: {verdict})")
    finally:
        viewer.terminate()
        viewer.wait(timeout=30)


def _load() -> str:
    return open("/proc/loadavg").read().split()[0]


if __name__ == "__main__":
    main()
