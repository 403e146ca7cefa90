"""The store's schema versions: a store written by an older release is upgraded with its runs
intact, a migration that fails leaves the store as it was, and a store of a newer release is
refused in one line before anything changes.  SQLite and PostgreSQL alike."""

from __future__ import annotations

import pytest

import context_bench.store._schema as schema
from context_bench.cli import main
from context_bench.errors import UsageError
from context_bench.records import EvalRow
from context_bench.store import SCHEMA, open_store, store_url
from context_bench.store._database import connect


def _rows(n: int) -> list[EvalRow]:
    return [
        EvalRow("sys", "qa", f"q{i}", scores={"f1": 1.0}, response=f"old answer {i}", index=i)
        for i in range(n)
    ]


def test_a_store_of_the_first_schema_is_upgraded_with_its_runs_intact(store_url):
    db = connect(_url(store_url))
    assert schema.migrate(db, upto=1) == 0
    assert schema.version(db) == 1
    from context_bench.store import Store

    db.index_new_rows = ""  # release 1 had no search index to keep
    old = Store(db)  # what release 1 wrote: runs and rows
    with old.recorder() as recorder:
        run_id = recorder.begin({}, {"date": "2026-10-01T00:00:00+00:00"}, ["old"])
        for row in _rows(5):
            recorder.add(row)
        recorder.finish({"groups": [{"system": "sys", "dataset": "qa", "rows": 5, "scores": {"f1": 1.0}}]})
    db.close()
    with open_store(store_url) as store:
        assert schema.version(store.db) == SCHEMA == 3
        [info] = store.runs()
        assert (info.id, info.rows, info.tags, info.status) == (run_id, 5, ("old",), "finished")
        assert store.count(run_id, search="answer 3") == 1  # the old rows are searchable
        assert [r.example_id for r in store.iter_rows(run_id)] == [f"q{i}" for i in range(5)]


def test_a_migration_that_fails_leaves_the_store_as_it_was(store_url, monkeypatch):
    with open_store(store_url) as store:
        with store.recorder() as recorder:
            recorder.begin({}, {})
            recorder.add(_rows(1)[0])
            recorder.finish(
                {"groups": [{"system": "sys", "dataset": "qa", "rows": 1, "scores": {"f1": 1.0}}]}
            )
    broken = lambda db: ["CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL"]  # noqa: E731
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, broken])
    db = connect(_url(store_url))
    with pytest.raises(UsageError):
        schema.migrate(db, upto=SCHEMA + 1)
    assert schema.version(db) == SCHEMA
    db.close()
    monkeypatch.undo()
    with open_store(store_url) as store:
        assert [run.rows for run in store.runs()] == [1]
        with pytest.raises(UsageError):
            store.db.one("SELECT * FROM half_done")


def test_a_store_of_the_second_schema_keeps_its_search_slimmed(store_url):
    """Version 3 makes SQLite's search index again without each row's text length: the rows a
    version-2 store holds stay searchable, and a row replaced or deleted after the upgrade leaves
    the index with it (PostgreSQL's index is unchanged)."""
    db = connect(_url(store_url))
    schema.migrate(db, upto=2)
    from context_bench.store import Store

    with Store(db).recorder() as recorder:
        run_id = recorder.begin({}, {})
        for row in _rows(3):
            recorder.add(row)
    db.close()
    with open_store(store_url) as store:
        assert schema.version(store.db) == 3
        if store.url.kind == "sqlite":
            [(text,)] = store.db.rows("SELECT sql FROM sqlite_master WHERE name = 'run_rows_text'")
            assert "columnsize=0" in text
        assert store.count(run_id, search="answer") == 3
        with store.recorder() as recorder:
            assert recorder.begin({}, {}, resume=run_id) == run_id
            recorder.add(EvalRow("sys", "qa", "q1", scores={"f1": 1.0}, response="new reply", index=1))
        assert store.count(run_id, search="answer") == 2
        assert [r.example_id for r in store.rows(run_id, search="new reply")] == ["q1"]
        store.delete(run_id)
        assert store.db.one("SELECT count(*) FROM run_rows") == (0,)
        if store.url.kind == "sqlite":
            indexed = "SELECT count(*) FROM run_rows_text WHERE run_rows_text MATCH 'answer'"
            assert store.db.one(indexed) == (0,)


def test_a_store_of_a_newer_release_is_refused_in_one_line(store_url, capsys):
    open_store(store_url).close()
    db = connect(_url(store_url))
    db.execute("UPDATE store_info SET value = '9' WHERE key = 'schema'")
    db.close()
    with pytest.raises(UsageError) as refused:
        open_store(store_url)
    assert str(refused.value).endswith(
        f"has schema version 9, newer than this context-bench reads (up to {SCHEMA}): "
        "upgrade context-bench (pip install -U context-bench)"
    )
    assert main(["runs", "--store", store_url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "schema version 9" in err
    db = connect(_url(store_url))
    assert schema.version(db) == 9  # untouched
    db.close()


def _url(given: str):
    return store_url(given)
