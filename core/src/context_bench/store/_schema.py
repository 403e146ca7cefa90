"""The store's schema, versioned: each migration takes a store from one version to the next.

A store records its version in ``store_info``.  Opening one applies, in one transaction each, the
migrations it lacks (so a store written by an older release is upgraded, and a migration that
fails leaves it as it was); a store of a newer version than :data:`SCHEMA` is refused in one line,
before anything is read or written.  Migrations are never edited once released: a change is a
new one at the end.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UsageError
from ._database import Database, PostgreSQL

#: Version 1: runs, their tags, (system, data set) groups, figures and rows.
_RUNS = [
    """CREATE TABLE runs (
        id {run_id},
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        started TEXT NOT NULL,
        finished TEXT,
        updated TEXT NOT NULL,
        config_digest TEXT,
        config TEXT,
        metadata TEXT,
        summary TEXT,
        verdict TEXT,
        git_commit TEXT,
        git_branch TEXT,
        row_count {int},
        error_count {int},
        pid {int},
        host TEXT,
        source TEXT
    )""",
    "CREATE INDEX runs_started ON runs (started)",
    "CREATE INDEX runs_resume ON runs (config_digest, status)",
    "CREATE TABLE run_tags (run_id {int} NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (run_id, tag))",
    "CREATE INDEX run_tags_tag ON run_tags (tag)",
    """CREATE TABLE run_groups (
        run_id {int} NOT NULL, system TEXT NOT NULL, dataset TEXT NOT NULL,
        PRIMARY KEY (run_id, system, dataset)
    )""",
    """CREATE TABLE figures (
        run_id {int} NOT NULL, system TEXT NOT NULL, dataset TEXT NOT NULL, field TEXT NOT NULL,
        mean {float}, low {float}, high {float}, n {int},
        PRIMARY KEY (run_id, system, dataset, field)
    )""",
    "CREATE INDEX figures_series ON figures (system, dataset, field)",
    """CREATE TABLE run_rows (
        id {row_id},
        run_id {int} NOT NULL,
        seq {int} NOT NULL,
        system TEXT NOT NULL,
        dataset TEXT NOT NULL,
        example_id TEXT NOT NULL,
        slot {int} NOT NULL,
        failed {int} NOT NULL,
        data TEXT NOT NULL,
        search TEXT NOT NULL,
        UNIQUE (run_id, system, dataset, example_id, slot)
    )""",
    "CREATE INDEX run_rows_order ON run_rows (run_id, seq, id)",
]

#: Version 2: full-text search over each row's id, response and error messages (SQLite FTS5: new
#: rows indexed a batch at a time by the recorder (``Database.index_new_rows``: a fifth of what a
#: trigger per row costs); replaced and deleted rows by triggers; PostgreSQL: its text search through
#: an index).
_SEARCH_SQLITE = [
    "CREATE VIRTUAL TABLE run_rows_text USING fts5(search, content='run_rows', content_rowid='id')",
    """CREATE TRIGGER run_rows_text_delete AFTER DELETE ON run_rows BEGIN
        INSERT INTO run_rows_text (run_rows_text, rowid, search) VALUES ('delete', old.id, old.search);
    END""",
    """CREATE TRIGGER run_rows_text_update AFTER UPDATE OF search ON run_rows BEGIN
        INSERT INTO run_rows_text (run_rows_text, rowid, search) VALUES ('delete', old.id, old.search);
        INSERT INTO run_rows_text (rowid, search) VALUES (new.id, new.search);
    END""",
    "INSERT INTO run_rows_text (run_rows_text) VALUES ('rebuild')",  # the rows an older store holds
]
_SEARCH_POSTGRES = ["CREATE INDEX run_rows_text ON run_rows USING GIN (to_tsvector('simple', search))"]

#: Version 3 (SQLite): the search index without the length of each row's text (``columnsize=0``),
#: which only ranking reads and the store never ranks: a fifth less CPU per indexed row.
_SEARCH_SLIM_SQLITE = [
    "DROP TRIGGER run_rows_text_delete",
    "DROP TRIGGER run_rows_text_update",
    "DROP TABLE run_rows_text",
    "CREATE VIRTUAL TABLE run_rows_text USING fts5(search, content='run_rows', content_rowid='id', "
    "columnsize=0)",
    *_SEARCH_SQLITE[1:],  # version 2's triggers, and the rows indexed again
]


def _statements(*by_dialect: list[str]) -> Callable[[Database], list[str]]:
    sqlite, postgres = by_dialect if len(by_dialect) == 2 else (by_dialect[0], by_dialect[0])

    def statements(db: Database) -> list[str]:
        chosen = postgres if isinstance(db, PostgreSQL) else sqlite
        return [text.format(**db.types) for text in chosen]

    return statements


#: The migrations, in order: ``MIGRATIONS[n]`` takes a store from version n to n + 1.
MIGRATIONS: list[Callable[[Database], list[str]]] = [
    _statements(_RUNS),
    _statements(_SEARCH_SQLITE, _SEARCH_POSTGRES),
    _statements(_SEARCH_SLIM_SQLITE, []),
]
#: The version this release writes.
SCHEMA = len(MIGRATIONS)


def version(db: Database) -> int:
    """The store's schema version (0: a new, empty store)."""
    if isinstance(db, PostgreSQL):
        exists = db.one("SELECT to_regclass('store_info') IS NOT NULL")
        present = bool(exists and exists[0])
    else:
        present = (
            db.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_info'") is not None
        )
    if not present:
        return 0
    found = db.one("SELECT value FROM store_info WHERE key = 'schema'")
    return int(found[0]) if found else 0


def migrate(db: Database, upto: int = SCHEMA) -> int:
    """Bring the store to version ``upto`` (the current one by default), one migration per
    transaction; the version it was at.  A newer store is refused before anything changes."""
    was = version(db)
    _refuse_newer(db, was)
    for step in range(was, upto):
        with db.transaction():
            db.lock_schema()
            db.execute("CREATE TABLE IF NOT EXISTS store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            now = version(db)  # another process may have migrated while this one waited
            if now > step:
                _refuse_newer(db, now)
                continue
            for statement in MIGRATIONS[step](db):
                db.execute(statement)
            db.execute(
                "INSERT INTO store_info (key, value) VALUES ('schema', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(step + 1),),
            )
    return was


def _refuse_newer(db: Database, found: int) -> None:
    if found > SCHEMA:
        raise UsageError(
            f"the store {db.url.shown} has schema version {found}, newer than this context-bench "
            f"reads (up to {SCHEMA}): upgrade context-bench (pip install -U context-bench)"
        )
