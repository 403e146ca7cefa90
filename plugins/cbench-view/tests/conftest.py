"""A store with the runs the viewer's tests look at, and the viewer serving it as a real process
(``context-bench view --port 0``) on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from context_bench._summary import Summarizer
from context_bench.records import EvalRow, RowError
from context_bench.store import open_store

_spec = importlib.util.spec_from_file_location(
    "cbench_browser", Path(__file__).parents[3] / "tests" / "browser.py"
)
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

#: Text that would run or make markup if a page embedded it unescaped.
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
#: Rows of the large run.
LARGE = 5000


def _row(n: int, f1: float, system: str = "compressor", dataset: str = "qa", **kwargs) -> EvalRow:
    kwargs.setdefault("response", f"row number {n}" + (" needle" if n % 100 == 7 else ""))
    return EvalRow(system, dataset, f"q{n}", scores={"f1": f1}, index=n, example={"id": f"q{n}"}, **kwargs)


def _record(store, rows, date, tags=(), commit=None, finish=True) -> int:
    metadata = {"date": date, "git": {"commit": commit, "branch": "main", "dirty": False}}
    recorder = store.recorder("run")
    run_id = recorder.begin({"date": date}, metadata, tags)
    summarize = Summarizer()
    for row in rows:
        recorder.add(row)
        summarize.add(row)
    if finish:
        recorder.finish(summarize.finish())
    recorder.close()
    return run_id


def build_store(url: str) -> dict[str, int]:
    """The runs: ``base`` (q0-q8 right, q9 wrong), ``next`` (q0-q2 lost, q9 gained), a hostile one,
    a large one and an unfinished one; their ids by name."""
    with open_store(url) as store:
        return {
            "base": _record(
                store,
                [_row(n, 0.0 if n == 9 else 1.0) for n in range(10)],
                "2026-11-01T10:00:00+00:00",
                ["v1"],
                "a" * 40,
            ),
            "next": _record(
                store,
                [_row(n, 0.0 if n < 3 else 1.0) for n in range(10)],
                "2026-11-02T10:00:00+00:00",
                ["v2"],
                "b" * 40,
            ),
            "hostile": _record(
                store,
                [
                    _row(0, 0.5, system=HOSTILE, dataset=HOSTILE, response=HOSTILE),
                    EvalRow(
                        HOSTILE,
                        HOSTILE,
                        HOSTILE,
                        errors=[RowError("system", HOSTILE, "ValueError", HOSTILE)],
                        index=1,
                    ),
                ],
                "2026-11-03T10:00:00+00:00",
                [HOSTILE],
                "c" * 40,
            ),
            "large": _record(
                store,
                [_row(n, float(n % 2)) for n in range(LARGE)],
                "2026-11-04T10:00:00+00:00",
                ["nightly"],
                "c" * 40,
            ),
            "unfinished": _record(
                store, [_row(n, 1.0) for n in range(3)], "2026-11-05T10:00:00+00:00", ["killed"], finish=False
            ),
        }


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[str, dict[str, int]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'runs.sqlite'}"
    return url, build_store(url)


def serve(url: str, *flags: str) -> tuple[subprocess.Popen, str]:
    """``context-bench view --port 0`` over the store at ``url``: the process and the page's URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "context_bench", "view", "--port", "0", "--store", url, *flags],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stderr.readline()
    if " at http://" not in line:
        process.kill()
        raise AssertionError(f"the viewer did not start: {line}{process.stderr.read()}")
    return process, line.split(" at ", 1)[1].split(" ", 1)[0].rstrip("/")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def viewer(stored) -> Iterator[str]:
    """The read-only viewer's base URL."""
    process, base = serve(stored[0])
    yield base
    stop(process)


@pytest.fixture(scope="module")
def page():
    """One headless Chromium for the module, or a skip saying why."""
    why = browser.missing()
    if why is not None:
        pytest.skip(why)
    with browser.Browser(1300, 900) as driver:
        yield driver


def wait_until(check, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


_pg = importlib.util.spec_from_file_location(
    "cbench_postgres", Path(__file__).parents[3] / "tests" / "postgres.py"
)
postgres = importlib.util.module_from_spec(_pg)
_pg.loader.exec_module(postgres)

#: A throwaway PostgreSQL server for the session, or a skip saying why.
postgres_server = postgres.postgres_server


@pytest.fixture
def viewer_process():
    """``viewer_process(url, *flags)``: ``context-bench view`` over ``url``, stopped after the test;
    the page's URL."""
    started = []

    def start(url: str, *flags: str) -> str:
        process, base = serve(url, *flags)
        started.append(process)
        return base

    yield start
    for process in started:
        stop(process)


@pytest.fixture
def make_store():
    """``make_store(url)``: the test runs recorded at ``url`` (:func:`build_store`), their ids."""
    return build_store
