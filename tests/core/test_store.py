"""The store, the same suite against SQLite in a temporary directory and a real PostgreSQL server
(``store_url``): recording a run and reading it back, resuming one, the keys that keep a row from
being lost or doubled, filters, search, trends, tags, deletion, and a store that fails mid-run."""

from __future__ import annotations

import subprocess

import pytest

from context_bench._summary import Summarizer
from context_bench.errors import UsageError
from context_bench.records import EvalRow, RowError
from context_bench.reports._jsonl import line
from context_bench.store import open_store

DATE = "2026-11-20T09:00:00+00:00"


def row(n: int, f1: float = 1.0, system: str = "sys", dataset: str = "qa", **kwargs) -> EvalRow:
    return EvalRow(
        system,
        dataset,
        f"q{n}",
        scores={"f1": f1},
        response=kwargs.pop("response", f"answer number {n}"),
        example={"id": f"q{n}", "question": f"question {n}?", "answer": "Paris"},
        index=n,
        **kwargs,
    )


def record(store, rows, tags=(), date=DATE, config=None, kind="run", resume=False, **options):
    """A finished run of ``rows``, summarized as a run is; its id."""
    with store.recorder(kind, **options) as recorder:
        run_id = recorder.begin(config or {"datasets": ["qa"]}, {"date": date}, tags, resume=resume)
        summarize = Summarizer()
        for one in rows:
            recorder.add(one)
            summarize.add(one)
        recorder.finish(summarize.finish())
    return run_id


def test_the_run_lists_verdict_is_the_reports_first_line_with_the_rest_counted():
    """Two systems on two data sets, one row of new's errored: the line is the report's first
    verdict line word for word, then the other data set's line counted, then the errored rows."""
    from context_bench.reports._verdict import verdicts
    from context_bench.store._figures import verdict

    down = [RowError("system", "new", "ConnectionError", "down")]
    rows = [row(n, system=s, dataset=d) for s in ("base", "new") for d in ("qa", "nq") for n in range(3)]
    rows[6] = EvalRow("new", "qa", "q0", errors=down)
    summary = Summarizer()(rows)
    first = str(verdicts(summary)[0])
    assert first.startswith("new vs base on qa: f1 -0.333 ")
    assert verdict(summary.to_dict()) == f"{first} (+1 more); 1 of 12 rows errored"


@pytest.fixture
def store(store_url):
    opened = open_store(store_url)
    yield opened
    opened.close()


def test_a_run_is_read_back_as_it_was_recorded(store):
    rows = [row(n, f1=n % 2) for n in range(5)]
    run_id = record(store, rows, tags=["v2", "nightly"], config={"model": "m", "api_key": "sk-abcdefghijkl"})
    [info] = store.runs()
    assert (info.id, info.kind, info.status, info.started) == (run_id, "run", "finished", DATE)
    assert (info.tags, info.systems, info.datasets, info.rows, info.errors) == (
        ("nightly", "v2"),
        ("sys",),
        ("qa",),
        5,
        0,
    )
    # the report's first line, word for word (reports/_verdict.py): 2 of 5, Wilson's interval
    assert info.verdict == "sys on qa: f1 0.400 [0.12, 0.77], 5 rows"
    full = store.run(run_id)
    assert full.config == {"model": "m"}  # the key never reaches the store
    assert full.metadata["tags"] == ["nightly", "v2"]
    assert full.summary["groups"][0]["scores"]["f1"] == pytest.approx(0.4)
    back = store.rows(run_id, limit=10)
    assert [r.to_dict() for r in back] == [r.to_dict() for r in rows]
    assert line(back[2]) == line(rows[2])  # with its input row: the same line of the JSONL report
    assert [r.example_id for r in store.iter_rows(run_id)] == [f"q{n}" for n in range(5)]


def test_rows_are_paged_in_run_order(store):
    run_id = record(store, [row(n) for n in range(23)], batch=7)
    assert store.count(run_id) == 23
    assert [r.example_id for r in store.rows(run_id, offset=20, limit=10)] == ["q20", "q21", "q22"]
    assert [r.index for r in store.rows(run_id, offset=5, limit=3)] == [5, 6, 7]


def test_streaming_reads_every_row_in_chunks(store, monkeypatch):
    import context_bench.store._reading as reading

    monkeypatch.setattr(reading, "CHUNK", 4)
    run_id = record(store, [row(n) for n in range(10)])
    assert [r.index for r in store.iter_rows(run_id)] == list(range(10))


def test_search_finds_every_word_in_ids_responses_and_errors(store):
    rows = [
        row(0, response="The capital is Paris."),
        row(1, response="paris, probably; or LYON"),
        row(2, response="Berlin"),
        row(3, response=None, errors=[RowError("system", "sys", "TimeoutError", "the call timed out")]),
    ]
    run_id = record(store, rows)
    found = lambda words: [r.example_id for r in store.rows(run_id, search=words)]  # noqa: E731
    assert found("PARIS") == ["q0", "q1"]
    assert found("paris lyon") == ["q1"]
    assert found("timed out") == ["q3"]
    assert found("q2") == ["q2"]
    assert store.count(run_id, search="paris") == 2
    # operators and quotes a user types are words, never query syntax
    for typed in ('"', "OR", "NOT paris", "paris*", "a AND (", "-", "'; DROP TABLE runs; --"):
        store.rows(run_id, search=typed)
    assert store.count(run_id) == 4


def test_search_and_filters_combine(store):
    rows = [row(0, system="a"), row(1, system="b"), row(2, system="a", dataset="other")]
    run_id = record(store, rows)
    assert [r.example_id for r in store.rows(run_id, system="a")] == ["q0", "q2"]
    assert [r.example_id for r in store.rows(run_id, system="a", dataset="qa", search="answer")] == ["q0"]


def test_a_resumed_run_is_one_record_with_no_row_lost_or_doubled(store):
    config = {"datasets": ["qa"], "model": "m"}
    first = store.recorder("run")
    run_id = first.begin(config, {"date": DATE})
    for n in range(3):
        first.add(row(n, f1=0.0))
    first.close()  # interrupted: no finish
    assert store.run(run_id).status == "unfinished"
    assert store.runs()[0].rows == 3
    again = record(store, [row(n) for n in range(5)], config=config, resume=True)
    assert again == run_id
    assert len(store.runs()) == 1
    info = store.runs()[0]
    assert (info.status, info.rows) == ("finished", 5)
    # each row once, the resumed run's version of it
    assert [(r.example_id, r.scores["f1"]) for r in store.iter_rows(run_id)] == [
        (f"q{n}", 1.0) for n in range(5)
    ]


def test_resume_continues_only_the_same_configuration(store):
    first = store.recorder("run")
    run_id = first.begin({"model": "m"}, {"date": DATE})
    first.close()
    other = record(store, [row(0)], config={"model": "other"}, resume=True)
    assert other != run_id
    same_but_score = record(store, [row(0)], config={"model": "m"}, kind="score", resume=True)
    assert same_but_score != run_id
    finished = record(store, [row(0)], config={"model": "m"}, resume=True)
    assert finished == run_id
    assert record(store, [row(0)], config={"model": "m"}, resume=True) not in (run_id, other, same_but_score)


def test_resuming_a_finished_or_unknown_run_by_id_is_refused(store):
    run_id = record(store, [row(0)])
    with pytest.raises(UsageError, match=f"run {run_id} is finished"):
        store.recorder().begin({}, {}, resume=run_id)
    with pytest.raises(UsageError, match="no run 99 in the store"):
        store.recorder().begin({}, {}, resume=99)


def test_a_duplicate_id_error_row_never_replaces_the_row_it_repeats(store):
    duplicate = EvalRow(
        "sys",
        "qa",
        "q1",
        errors=[RowError("input", "row 3", "DuplicateId", "id 'q1' appears twice")],
        index=2,
    )
    first = store.recorder()
    run_id = first.begin({"datasets": ["qa"]}, {"date": DATE})
    for one in (row(0), row(1), duplicate):
        first.add(one)
    first.close()
    back = list(store.iter_rows(run_id))
    assert [(r.example_id, bool(r.errors)) for r in back] == [("q0", False), ("q1", False), ("q1", True)]
    assert store.runs()[0].errors == 1
    # the run resumed hands all three on again: still three rows
    assert record(store, [row(0), row(1), duplicate], resume=run_id) == run_id
    assert store.count(run_id) == 3
    assert store.runs()[0].errors == 1


def test_runs_are_filtered_by_tag_system_data_set_and_date(store):
    a = record(store, [row(0, system="base")], tags=["v1"], date="2026-11-01T10:00:00+00:00")
    b = record(
        store, [row(0, system="comp", dataset="hotpotqa")], tags=["v2"], date="2026-11-10T10:00:00+00:00"
    )
    c = record(store, [row(0, system="base"), row(1, system="comp")], date="2026-11-20T10:00:00+00:00")
    ids = lambda **kw: [info.id for info in store.runs(**kw)]  # noqa: E731
    assert ids() == [c, b, a]
    assert ids(tag="v1") == [a]
    assert ids(system="comp") == [c, b]
    assert ids(dataset="hotpotqa") == [b]
    assert ids(since="2026-11-10T10:00:00+00:00") == [c, b]
    assert ids(system="base", since="2026-11-05T00:00:00+00:00") == [c]
    assert ids(limit=1) == [c]
    assert ids(tag="nothing") == []


def test_a_killed_run_reads_as_unfinished(store):
    recorder = store.recorder()
    run_id = recorder.begin({}, {"date": DATE})
    recorder.add(row(0))
    recorder.flush()
    assert store.run(run_id).status == "running"  # this process records it
    gone = subprocess.run(["true"], check=True)  # a process id that no longer lives
    del gone
    dead = subprocess.Popen(["true"])
    dead.wait()
    store.db.execute("UPDATE runs SET pid = ? WHERE id = ?", (dead.pid, run_id))
    info = store.runs()[0]
    assert (info.status, info.rows, info.verdict) == ("unfinished", 1, None)


def test_the_trend_lists_finished_runs_oldest_first_with_intervals_tags_and_commits(store):
    first = record(store, [row(n, f1=1.0) for n in range(4)], tags=["v1"], date="2026-11-01T10:00:00+00:00")
    second = record(store, [row(n, f1=float(n % 2)) for n in range(4)], date="2026-11-02T10:00:00+00:00")
    unfinished = store.recorder()
    unfinished.begin({}, {"date": "2026-11-03T10:00:00+00:00"})
    unfinished.add(row(0))
    unfinished.close()
    points = store.trend("sys", "qa", "f1")
    assert [(p.run_id, p.mean, p.rows, p.tags) for p in points] == [
        (first, 1.0, 4, ("v1",)),
        (second, 0.5, 4, ()),
    ]
    summary = store.run(second).summary["groups"][0]
    assert [points[1].low, points[1].high] == summary["ci"]["f1"]
    assert ("sys", "qa", "f1") in store.series()
    assert store.trend("sys", "qa", "nothing") == []


def test_git_commit_and_branch_of_the_working_directory_are_recorded(store, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "feature"], check=True)
    (repo / "f").write_text("x")
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "m"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    monkeypatch.chdir(repo)
    run_id = record(store, [row(0)])
    info = store.run(run_id)
    assert (info.commit, info.branch) == (commit, "feature")
    assert info.metadata["git"] == {"commit": commit, "branch": "feature", "dirty": False}
    monkeypatch.chdir(tmp_path)  # no repository: nothing said
    assert store.run(record(store, [row(0)])).commit is None


def test_tags_are_edited_and_runs_deleted(store):
    keep = record(store, [row(0)], tags=["a"])
    gone = record(store, [row(n) for n in range(3)], tags=["b"])
    store.set_tags(keep, ["x", "y", "x"])
    assert store.run(keep).tags == ("x", "y")
    store.delete(gone)
    assert [info.id for info in store.runs()] == [keep]
    assert store.runs(tag="b") == []
    assert store.db.one("SELECT count(*) FROM run_rows WHERE run_id = ?", (gone,))[0] == 0
    assert store.count(keep, search="answer") == 1
    with pytest.raises(UsageError, match=f"no run {gone} in the store"):
        store.run(gone)


def test_a_store_that_fails_mid_run_stops_recording_not_the_run(store, store_url):
    recorder = store.recorder(batch=2)
    recorder.begin({}, {"date": DATE})
    for n in range(4):
        recorder.add(row(n))
    store.db.close()  # the connection is lost
    for n in range(4, 7):
        recorder.add(row(n))
    recorder.finish({"groups": []})
    recorder.close()
    assert recorder.warning.startswith(
        f"recording to {open_store(store_url).url.shown} stopped after 4 rows: "
    )
    with open_store(store_url) as again:
        info = again.runs()[0]
        assert (info.rows, info.status) == (4, "running")  # its process still lives


def test_a_report_read_back_has_the_shape_compare_reads(store):
    run_id = record(store, [row(0), row(1, f1=0.0)])
    report = store.report(run_id)
    assert set(report) == {"summary", "metadata", "rows"}
    assert [EvalRow.from_dict(r).to_dict() for r in report["rows"]] == report["rows"]
    assert report["summary"]["groups"][0]["rows"] == 2
