"""The store with real processes: a run killed with kill -9 mid-way and then resumed is one record
with every row once; two runs recording into one store at once both land whole.  SQLite and a real
PostgreSQL server alike (``store_url``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from context_bench.store import open_store

#: A run of 300 rows through the real runner with a cache, each row recorded as it is handed on;
#: ``slow`` rows take 20 ms each on the first try (the killed run), cached rows none.
_RUN = """
import sys, time
from context_bench import Limits, Output, RunConfig, evaluate
from context_bench.store import open_store

url, cache, resume = sys.argv[1], sys.argv[2], sys.argv[3] == "resume"

class Slow:
    name = "slow"
    def process(self, example):
        time.sleep(0.02)
        return {"response": "Paris" if int(example["id"][1:]) % 3 else "Lyon"}

rows = [{"id": f"q{n}", "question": "capital?", "answer": "Paris"} for n in range(300)]
store = open_store(url)
with store.recorder("run", interval=0.05) as recorder:
    recorder.begin({"datasets": ["qa"], "rows": 300}, {}, ["killed"], resume=resume)
    output = Output(cache_dir=cache, stream=recorder.add, progress=False)
    result = evaluate(Slow(), {"qa": rows}, RunConfig(limits=Limits(max_concurrency=2), output=output))
    recorder.finish(result.summary)
print(recorder.run_id)
"""

#: One run of N rows recorded in batches of 50, as fast as it can.
_WRITER = """
import sys
from context_bench.records import EvalRow
from context_bench.store import open_store

url, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_store(url)
with store.recorder("score", batch=50) as recorder:
    recorder.begin({"writer": name}, {}, [name])
    for i in range(n):
        recorder.add(EvalRow(name, "qa", f"q{i}", scores={"f1": 1.0}, response=f"{name} {i}", index=i))
    recorder.finish({"groups": [{"system": name, "dataset": "qa", "rows": n, "scores": {"f1": 1.0}}]})
"""


def _stored(url: str) -> int:
    with open_store(url) as store:
        found = store.db.one("SELECT count(*) FROM run_rows")
        return int(found[0])


def test_a_run_killed_mid_way_and_resumed_is_one_record_with_every_row_once(store_url, tmp_path):
    cache = str(tmp_path / "cache")
    child = subprocess.Popen([sys.executable, "-c", _RUN, store_url, cache, "first"], stdout=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while _stored(store_url) < 60:  # recorded in batches as the rows finish
        assert child.poll() is None, "the run ended before it was killed"
        assert time.monotonic() < deadline, "no rows were recorded"
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with open_store(store_url) as store:
        [killed] = store.runs()
        assert killed.status == "unfinished"
        assert 60 <= killed.rows < 300
    resumed = subprocess.run(
        [sys.executable, "-c", _RUN, store_url, cache, "resume"], capture_output=True, text=True, check=True
    )
    assert int(resumed.stdout) == killed.id
    with open_store(store_url) as store:
        [run] = store.runs()
        assert (run.id, run.status, run.rows, run.errors, run.tags) == (
            killed.id,
            "finished",
            300,
            0,
            ("killed",),
        )
        ids = [row.example_id for row in store.iter_rows(run.id)]
        assert ids == [f"q{n}" for n in range(300)]  # none lost, none doubled, in run order
        assert store.count(run.id, search="Lyon") == 100
        assert store.run(run.id).summary["groups"][0]["rows"] == 300


def test_two_runs_recording_into_one_store_at_once_both_land_whole(store_url):
    open_store(store_url).close()  # the schema made first, as the first run of a store would
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, store_url, name, "3000"], stderr=subprocess.PIPE, text=True
        )
        for name in ("left", "right")
    ]
    for writer in writers:
        assert writer.wait(timeout=120) == 0, writer.stderr.read()
    with open_store(store_url) as store:
        runs = {run.tags[0]: run for run in store.runs()}
        assert sorted(runs) == ["left", "right"]
        for name, run in runs.items():
            assert (run.status, run.rows, run.systems) == ("finished", 3000, (name,))
            assert store.count(run.id) == 3000
            assert store.count(run.id, search=f"{name} 2999") == 1


def test_two_processes_opening_a_new_store_at_once_migrate_it_once(store_url):
    opening = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, store_url, name, "10"], stderr=subprocess.PIPE, text=True
        )
        for name in ("one", "two", "three")
    ]
    for process in opening:
        assert process.wait(timeout=120) == 0, process.stderr.read()
    with open_store(store_url) as store:
        assert sorted(run.tags[0] for run in store.runs()) == ["one", "three", "two"]
