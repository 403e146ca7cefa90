"""Fixtures the command-line tests share: the CLI run in this process, a working directory with a
data set in it, a loopback endpoint, and an empty store (SQLite, then a real PostgreSQL)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from context_bench.cli import main
from context_bench.testing import FakeServer


@pytest.fixture
def cli(capsys):
    """``cli(*argv)``: ``context-bench ARGV`` run in this process; its exit status, stdout and stderr."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def cbench(cli):
    """``cbench(*argv)``: ``context-bench ARGV --no-progress`` in this process, as (status, stdout,
    stderr)."""
    return lambda *argv: cli(*argv, "--no-progress")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A temporary working directory; ``write_rows`` puts a data set in it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def write_rows(workdir):
    """``write_rows(rows, name="qa.jsonl")``: the rows as a JSONL file in the working directory."""

    def write(rows: list[dict], name: str = "qa.jsonl"):
        path = workdir / name
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        return path

    return write


@pytest.fixture
def paris():
    """An endpoint that answers "Paris" to everything."""
    with FakeServer(lambda body: "Paris") as server:
        yield server


_spec = importlib.util.spec_from_file_location("cbench_postgres", Path(__file__).parents[1] / "postgres.py")
postgres = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(postgres)

#: A throwaway PostgreSQL server for the session (tests/postgres.py), or a skip saying why.
postgres_server = postgres.postgres_server


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """The URL of a new, empty store: a SQLite file in a temporary directory, then a database of
    a real PostgreSQL server; a test taking it runs against both."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return request.getfixturevalue("postgres_server").database()
