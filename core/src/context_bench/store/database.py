"""One connection to a store, SQLite or PostgreSQL, behind the few operations the store uses.

The SQL is written once with ``?`` placeholders; what differs between the two (column types, the
placeholder, the full-text search, the lock that serializes migrations, how a connection fails)
is said here.  Every operation holds the connection's lock, so a viewer's threads share one.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..errors import UsageError
from ..secrets import redact
from .urls import StoreURL

#: Seconds a writer waits for another writer's transaction (SQLite) or a connection (PostgreSQL).
WAIT = 30
#: Seconds to reach a PostgreSQL server before saying it cannot be reached.
CONNECT_TIMEOUT = 5


class Database:
    """A store's connection: ``execute``/``rows``/``one`` run a statement, ``many`` one per parameter
    tuple, ``transaction`` groups writes (every statement outside one commits on its own)."""

    #: Column types by role, formatted into the schema's DDL.
    types: dict[str, str] = {}
    #: The statement limiting rows to those whose search text matches the parameter.
    match = ""
    #: The statement indexing the rows a batch added for search (the largest id before it given),
    #: where the index is not kept by the database itself.
    index_new_rows = ""

    def __init__(self, url: StoreURL, connection: Any) -> None:
        self.url = url
        self._connection = connection
        self._lock = threading.RLock()

    def sql(self, text: str) -> str:
        return text

    def execute(self, text: str, params: Sequence[Any] = ()) -> Any:
        with self._lock, self.failures():
            return self._connection.execute(self.sql(text), tuple(params))

    def rows(self, text: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock, self.failures():
            return self._connection.execute(self.sql(text), tuple(params)).fetchall()

    def one(self, text: str, params: Sequence[Any] = ()) -> tuple | None:
        with self._lock, self.failures():
            return self._connection.execute(self.sql(text), tuple(params)).fetchone()

    def many(self, text: str, params: Iterable[Sequence[Any]]) -> None:
        with self._lock, self.failures():
            cursor = self._connection.cursor()
            cursor.executemany(self.sql(text), list(params))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        raise NotImplementedError

    def lock_schema(self) -> None:
        """Inside a transaction: wait until no other process is migrating this store."""

    def search_text(self, words: str) -> str:
        """What ``match`` takes for the words a user typed (every word must occur)."""
        return words

    @contextlib.contextmanager
    def failures(self) -> Iterator[None]:
        yield

    def close(self) -> None:
        with self._lock, contextlib.suppress(Exception):
            self._connection.close()


class SQLite(Database):
    types = {
        "run_id": "INTEGER PRIMARY KEY AUTOINCREMENT",
        "row_id": "INTEGER PRIMARY KEY",
        "int": "INTEGER",
        "float": "REAL",
    }
    match = "id IN (SELECT rowid FROM run_rows_text WHERE run_rows_text MATCH ?)"
    index_new_rows = "INSERT INTO run_rows_text (rowid, search) SELECT id, search FROM run_rows WHERE id > ?"

    @classmethod
    def open(cls, url: StoreURL, create: bool) -> SQLite:
        assert url.path is not None
        path = url.path
        if not create and not path.exists():
            raise UsageError(f"no store at {url.shown} (nothing has been recorded there)")
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, timeout=WAIT, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
            connection.execute("PRAGMA synchronous=NORMAL")  # a killed process loses nothing committed
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"cannot open the store {url.shown}: {_reason(exc)}") from None
        return cls(url, connection)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            self.execute("BEGIN IMMEDIATE")  # the write lock now, not at the first write
            try:
                yield
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    self._connection.execute("ROLLBACK")
                raise
            self.execute("COMMIT")

    def search_text(self, words: str) -> str:
        # each word a quoted FTS5 string, so an operator or a quote a user types is a word
        return " ".join('"' + word.replace('"', '""') + '"' for word in words.split())

    @contextlib.contextmanager
    def failures(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise UsageError(f"store {self.url.shown}: {_reason(exc)}") from None


class PostgreSQL(Database):
    types = {
        "run_id": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        "row_id": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        "int": "BIGINT",
        "float": "DOUBLE PRECISION",
    }
    match = "to_tsvector('simple', search) @@ plainto_tsquery('simple', ?)"

    @classmethod
    def open(cls, url: StoreURL, create: bool) -> PostgreSQL:
        try:
            import psycopg
        except ImportError:
            raise UsageError(
                f"store {url.shown}: PostgreSQL needs psycopg: pip install 'context-bench[postgres]'"
            ) from None
        try:
            connection = psycopg.connect(url.given, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
        except (psycopg.Error, ValueError) as exc:
            raise UsageError(f"cannot open the store {url.shown}: {_reason(exc, url)}") from None
        return cls(url, connection)

    def sql(self, text: str) -> str:
        return text.replace("?", "%s")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock, self.failures(), self._connection.transaction():
            yield

    def lock_schema(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(7236101)")  # any fixed number: this store's migrations

    @contextlib.contextmanager
    def failures(self) -> Iterator[None]:
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            raise UsageError(f"store {self.url.shown}: {_reason(exc, self.url)}") from None


def connect(url: StoreURL, create: bool = True) -> Database:
    """The store's database, opened (a SQLite file and its folder made when ``create``)."""
    if url.kind == "postgresql":
        return PostgreSQL.open(url, create)
    return SQLite.open(url, create)


def _reason(exc: BaseException, url: StoreURL | None = None) -> str:
    """An exception as one line, the URL's password and any other secret masked."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return redact(text, url.password if url else None)
