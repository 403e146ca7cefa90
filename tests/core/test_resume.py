"""Kill a run mid-way, run it again: no finished row is lost and none is recomputed."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from context_bench import Output, RunConfig, Scope, Scores, evaluate
from context_bench.cache import RunCache
from context_bench.cli import main
from context_bench.testing import FakeServer, Reply, isolated_host, last_user_message


def _instant(body):
    return "answer " + last_user_message(body).rsplit(" ", 1)[1]


def _questions(tmp_path, count):
    data = tmp_path / "qa.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": f"question {i}", "answer": f"answer {i}"}) + "\n"
            for i in range(count)
        )
    )
    return data


def _cached_rows(cache_dir) -> int:
    return sum(len(p.read_text().splitlines()) for p in cache_dir.rglob("*.jsonl"))


def _command(url, data, cache_dir):
    return [
        sys.executable,
        "-m",
        "context_bench",
        "run",
        "--proxy",
        url,
        "--dataset",
        str(data),
        "--cache-dir",
        str(cache_dir),
        "--max-concurrency",
        "2",
        "--output",
        "json",
        "--no-progress",
    ]


def test_killed_run_resumes_without_loss(tmp_path):
    data = _questions(tmp_path, 40)
    cache_dir = tmp_path / "cache"
    holding = [True]

    def reply(body):
        """Questions 12 on are held (60 s) while the first run lives: it cannot finish before the
        kill, however slow the machine is to notice eight cached rows."""
        number = int(last_user_message(body).rsplit(" ", 1)[1])
        return Reply(text=_instant(body), delay=60 if holding[0] and number >= 12 else 0.05)

    with FakeServer(reply) as server:
        process = subprocess.Popen(
            _command(server.url, data, cache_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while _cached_rows(cache_dir) < 8 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
        holding[0] = False
        finished = _cached_rows(cache_dir)
        assert 8 <= finished <= 12, "the run was not interrupted mid-way"
        before = len(server.requests)

        resumed = subprocess.run(
            _command(server.url, data, cache_dir), capture_output=True, text=True, timeout=120, check=True
        )
        fresh_requests = len(server.requests) - before
    result = json.loads(resumed.stdout)
    assert [r["example_id"] for r in result["rows"]] == [f"q{i}" for i in range(40)]
    assert all(r["scores"]["exact_match"] == 1.0 and not r["errors"] for r in result["rows"])
    assert fresh_requests == 40 - finished


def _complete_records(cache_dir) -> int:
    def complete(line):
        try:
            return isinstance(json.loads(line), dict)
        except ValueError:
            return False

    return sum(complete(line) for p in cache_dir.rglob("*.jsonl") for line in p.read_bytes().splitlines())


def test_a_full_disk_stops_caching_not_the_run_and_the_next_runs_resume(tmp_path, capsys):
    data = _questions(tmp_path, 20)
    cache_dir = tmp_path / "cache"
    limit = 2000  # bytes any file of the first run may grow to: the cache fills up after a few rows

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    with FakeServer(_instant) as server:
        command = _command(server.url, data, cache_dir)
        full = subprocess.run(command, capture_output=True, text=True, timeout=60, preexec_fn=small_disk)
        assert full.returncode == 0, full.stderr
        rows = json.loads(full.stdout)["rows"]
        assert len(rows) == 20 and all(r["scores"]["exact_match"] == 1.0 and not r["errors"] for r in rows)
        [warning] = [line for line in full.stderr.splitlines() if "caching stopped" in line]
        assert "File too large" in warning
        stored = _complete_records(cache_dir)
        assert 0 < stored < 20

        def requests_of_a_rerun():
            before = len(server.requests)
            assert main(command[3:]) == 0
            assert "caching stopped" not in capsys.readouterr().err
            return len(server.requests) - before

        assert requests_of_a_rerun() == 20 - stored  # the torn record's row is computed again
        assert requests_of_a_rerun() == 0


class _DiskFull:
    """A cache file whose disk fills up after ``room`` records: later writes fail, and so does close."""

    def __init__(self, handle, room):
        self._handle = handle
        self._room = room

    def write(self, text):
        if self._room == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room -= 1
        return self._handle.write(text)

    def flush(self):
        self._handle.flush()

    def fileno(self):
        return self._handle.fileno()

    def close(self):
        self._handle.close()
        if self._room == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _Counting:
    name = "counting"

    def __init__(self, calls):
        self._calls = calls  # private: not part of the evaluator's identity

    def score(self, original, processed):
        self._calls.append(original["id"])
        return {"seen": 1.0}


def _scoring_run(tmp_path, calls, count=6):
    rows = [{"id": f"r{i}", "response": "x"} for i in range(count)]
    calls.clear()
    return evaluate(
        None,
        rows,
        RunConfig(
            scope=Scope(evaluators=[_Counting(calls)]), output=Output(cache_dir=tmp_path, progress=False)
        ),
        host=isolated_host(),
    )


def test_a_failing_cache_write_warns_once_and_every_row_is_still_reported(tmp_path, monkeypatch):
    real_open = RunCache._open
    monkeypatch.setattr(RunCache, "_open", staticmethod(lambda path: _DiskFull(real_open(path), room=2)))
    calls: list[str] = []
    result = _scoring_run(tmp_path, calls)
    assert len(calls) == 6 and all(r.scores == {"seen": 1.0} and not r.errors for r in result.rows)
    [warning] = [w for w in result.summary.warnings if "caching stopped" in w]
    assert "No space left on device" in warning

    monkeypatch.undo()
    _scoring_run(tmp_path, calls)
    assert len(calls) == 4


def test_a_torn_last_record_costs_only_its_own_row(tmp_path):
    calls: list[str] = []
    _scoring_run(tmp_path, calls)
    [cache_file] = tmp_path.rglob("*.jsonl")
    content = cache_file.read_bytes()
    torn = json.loads(content.splitlines()[-1])["id"]
    cache_file.write_bytes(content[:-10])  # killed mid-write

    _scoring_run(tmp_path, calls)
    assert calls == [torn]
    _scoring_run(tmp_path, calls)
    assert calls == []


@pytest.mark.parametrize("where, message", [("afile", "is a file"), ("afile/sub", "Not a directory")])
def test_a_cache_dir_that_is_not_a_directory_is_refused_before_any_row_runs(tmp_path, capsys, where, message):
    (tmp_path / "afile").write_text("")
    data = _questions(tmp_path, 3)
    with FakeServer(_instant) as server:
        code = main(_command(server.url, data, tmp_path / where)[3:])
        assert not server.requests
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


class _Echo:
    """A system whose reply holds a lone surrogate (what a broken endpoint decodes to)."""

    name = "echo"

    def __init__(self, calls):
        self._calls = calls

    def process(self, example):
        self._calls.append(example["id"])
        return {"response": example["text"] + "\ud800"}


def test_a_lone_surrogate_in_a_reply_is_cached_and_the_re_run_resumes(tmp_path):
    calls: list[str] = []
    rows = [{"id": f"r{i}", "text": f"t{i}", "answer": f"t{i}"} for i in range(3)]
    rows[1]["text"] = "\udc80 in the row"  # an API caller's row: hashed and cached all the same
    for expected in (["r0", "r1", "r2"], []):
        calls.clear()
        result = evaluate(
            _Echo(calls),
            rows,
            RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
            host=isolated_host(),
        )
        assert calls == expected and not any(r.errors for r in result.rows)
        assert result.rows[0].response == "t0\ufffd" and "f1" in result.rows[0].scores
        assert not result.summary.warnings
    assert (
        "lone surrogates"
        in evaluate(_Echo(calls), rows[:1], RunConfig(output=Output(progress=False)), host=isolated_host())
        .rows[0]
        .meta["repaired"]
    )


class _Copying:
    name = "copying"

    def __init__(self, calls):
        self._calls = calls

    def process(self, example):
        self._calls.append(example["id"])
        return {"response": example["text"]}


def test_a_changed_example_is_computed_again_then_resumed_as_changed(tmp_path):
    calls: list[str] = []
    rows = [{"id": f"r{i}", "text": f"t{i}"} for i in range(2)]

    def responses():
        calls.clear()
        result = evaluate(
            _Copying(calls),
            rows,
            RunConfig(output=Output(cache_dir=tmp_path, progress=False)),
            host=isolated_host(),
        )
        return [r.response for r in result.rows]

    assert responses() == ["t0", "t1"] and calls == ["r0", "r1"]
    rows[1]["text"] = "edited"  # same id, other content: the cached answer is to another question
    assert responses() == ["t0", "edited"] and calls == ["r1"]
    assert responses() == ["t0", "edited"] and calls == []


class _CountingToo(_Counting):
    name = "counting_too"


def test_an_added_evaluator_keeps_the_scores_cached_before_it(tmp_path):
    first: list[str] = []
    second: list[str] = []
    rows = [{"id": "r0", "response": "x"}]

    def run(*evaluators):
        first.clear()
        second.clear()
        evaluate(
            None,
            rows,
            RunConfig(
                scope=Scope(evaluators=list(evaluators)), output=Output(cache_dir=tmp_path, progress=False)
            ),
            host=isolated_host(),
        )
        return first, second

    assert run(_Counting(first)) == (["r0"], [])
    assert run(_Counting(first), _CountingToo(second)) == ([], ["r0"])
    assert run(_Counting(first), _CountingToo(second)) == ([], [])


class _JudgeDownOnce:
    """A judge that cannot answer r1 on its first run only: a soft failure, retried by the next run."""

    name = "judge_down_once"

    def __init__(self, calls, down):
        self._calls, self._down = calls, down

    def score(self, original, processed):
        self._calls.append(original["id"])
        if original["id"] in self._down:
            return Scores({"verdict": 0.0}, failure="call_error: HTTP 503")
        return {"verdict": 1.0}


def test_a_soft_failure_is_not_cached_so_the_next_run_retries_it(tmp_path):
    calls: list[str] = []
    rows = [{"id": f"r{i}", "response": "x"} for i in range(3)]

    def verdicts(down):
        calls.clear()
        judge = _JudgeDownOnce(calls, down)
        result = evaluate(
            None,
            rows,
            RunConfig(scope=Scope(evaluators=[judge]), output=Output(cache_dir=tmp_path, progress=False)),
            host=isolated_host(),
        )
        return [r.scores["verdict"] for r in result.rows]

    assert verdicts({"r1"}) == [1.0, 0.0, 1.0] and calls == ["r0", "r1", "r2"]
    assert verdicts(set()) == [1.0, 1.0, 1.0] and calls == ["r1"]
    assert verdicts(set()) == [1.0, 1.0, 1.0] and calls == []


@pytest.mark.parametrize(
    "record",
    [
        {"output": "not a dict"},
        {"output": {"no": "response"}},
        {"scores": ["no"]},
        {"scores": {"k": {"scores": {"seen": "1"}}}},
        {"scores": {"k": {"scores": {"seen": 1.0}, "usage": "lots"}}},
        {"id": 7},
        [1, 2],
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_a_cache_record_of_the_wrong_shape_is_skipped_with_a_warning(tmp_path, record):
    calls: list[str] = []
    _scoring_run(tmp_path, calls)
    [cache_file] = tmp_path.rglob("*.jsonl")
    lines = cache_file.read_text().splitlines()
    if isinstance(record, dict):  # r0's good record, then one of the wrong shape for the same row
        record = {**json.loads(lines[0]), **record}
    forged = record if isinstance(record, str) else json.dumps(record)
    cache_file.write_text("\n".join([lines[0], forged, *lines[1:]]) + "\n")
    result = _scoring_run(tmp_path, calls)
    assert calls == [] and not any(r.errors for r in result.rows)
    wrong_shape = [w for w in result.summary.warnings if "not of the cache's shape" in w]
    assert len(wrong_shape) == (0 if isinstance(record, str) else 1)


def test_a_cached_score_outside_its_declared_range_is_recomputed(tmp_path):
    rows = [{"id": "a", "answer": "Paris", "response": "Paris"}]
    host = isolated_host()
    assert (
        evaluate(None, rows, RunConfig(output=Output(cache_dir=tmp_path, progress=False)), host=host)
        .rows[0]
        .scores["f1"]
        == 1.0
    )
    [cache_file] = tmp_path.rglob("*.jsonl")
    record = json.loads(cache_file.read_text())
    [hit] = record["scores"].values()
    hit["scores"]["f1"] = 7.5
    cache_file.write_text(json.dumps(record) + "\n")
    result = evaluate(None, rows, RunConfig(output=Output(cache_dir=tmp_path, progress=False)), host=host)
    assert result.rows[0].scores["f1"] == 1.0
    assert any("outside their evaluator's declared range" in w for w in result.summary.warnings)
    assert (
        evaluate(None, rows, RunConfig(output=Output(cache_dir=tmp_path, progress=False)), host=host)
        .rows[0]
        .scores["f1"]
        == 1.0
    )


def test_run_with_a_cache_survives_a_reply_with_a_lone_surrogate(tmp_path, capsys):
    data = _questions(tmp_path, 3)
    with FakeServer(lambda body: Reply(text=_instant(body) + "\ud800")) as server:
        for _ in range(2):  # the second run reads the first one's cache
            command = _command(server.url, data, tmp_path / "cache")[3:]
            code = main([*command[:-2], "jsonl", "--no-progress"])
            out, err = capsys.readouterr()
            assert code == 0 and "Traceback" not in err
            rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
            assert len(rows) == 3 and all(r["response"].endswith("\ufffd") for r in rows)
            assert all("lone surrogates" in r["meta"]["repaired"] for r in rows)
        assert len(server.requests) == 3


@pytest.mark.parametrize("cached", [True, False])
def test_ctrl_c_says_how_many_rows_are_kept_and_where(tmp_path, cached):
    """Ctrl-C (SIGINT) once eight rows are cached: the line counts the rows the cache holds, or
    says that none is kept without --cache-dir."""
    data = _questions(tmp_path, 40)
    cache_dir = tmp_path / "cache"

    def reply(body):  # questions 12 on are held until the run is interrupted
        number = int(last_user_message(body).rsplit(" ", 1)[1])
        return Reply(text=_instant(body), delay=60 if number >= 12 else 0.05)

    command = _command("URL", data, cache_dir)
    if not cached:
        at = command.index("--cache-dir")
        del command[at : at + 2]
    with FakeServer(reply) as server:
        command[command.index("URL")] = server.url
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(server.requests) < 14 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)  # twelve answered, two held: every answered row finished
        while cached and _cached_rows(cache_dir) < 12 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    last = err.splitlines()[-1]
    if cached:
        assert last == (
            f"context-bench: interrupted: 12 finished rows of this run kept in {cache_dir}; "
            "the same command resumes from them"
        )
        assert _cached_rows(cache_dir) == 12
    else:
        assert last == (
            "context-bench: interrupted: no row is kept (with --cache-dir DIR, finished rows are kept "
            "and the same command resumes)"
        )
