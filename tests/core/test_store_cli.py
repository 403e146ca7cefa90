"""``runs``, ``export`` and ``import`` through the command line: a saved report goes in and comes
back out as the same report; the run list shows what is stored; every mistake is one line, exit 2,
and no password of a store URL is ever printed."""

from __future__ import annotations

import json

import pytest

from context_bench.cli import main
from context_bench.store import open_store


@pytest.fixture(autouse=True)
def _default_store(monkeypatch):
    """The store these commands read by default: the working directory's."""
    monkeypatch.delenv("CBENCH_STORE")


@pytest.fixture
def cli(capsys, workdir):
    """``cli(*argv)``: ``context-bench ARGV`` in this process (in a temporary working directory), as
    (status, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _report(cli, output: str, name: str) -> str:
    code, _, err = cli("score", "--output", output, "--out", name, "--no-progress", "--store", "none")
    assert code == 0, err
    return name


def test_a_json_report_imported_and_exported_is_the_same_report(cli, workdir):
    original = (workdir / _report(cli, "json", "sample.json")).read_text(encoding="utf-8")
    code, out, _ = cli("import", "sample.json", "--tag", "baseline")
    assert (code, out) == (0, "sample.json: imported as run 1 (32 rows)\n")
    assert (workdir / ".context-bench" / "runs.sqlite").exists()
    code, exported, _ = cli("export", "1")
    assert code == 0
    summary, _, rows = original.partition('\n"metadata": ')
    assert exported.startswith(summary + '\n"metadata": ')  # the summary, byte for byte
    assert exported.endswith(rows[rows.index('\n"rows": [') :])  # and every row
    back, saved = json.loads(exported), json.loads(original)
    assert back["metadata"] == {**saved["metadata"], "imported": "sample.json", "tags": ["baseline"]}


def test_a_jsonl_report_comes_back_line_for_line(cli, workdir):
    original = (workdir / _report(cli, "jsonl", "sample.jsonl")).read_text(encoding="utf-8")
    assert cli("import", "sample.jsonl")[0] == 0
    code, _, err = cli("export", "1", "--output", "jsonl", "--out", "back.jsonl")
    assert (code, err) == (0, "context-bench: run 1 (32 rows) written to back.jsonl\n")
    assert (workdir / "back.jsonl").read_text(encoding="utf-8") == original
    # its summary was made as a run makes one
    with open_store("sqlite:///.context-bench/runs.sqlite") as store:
        info = store.run(1)
    assert info.rows == 32 and info.summary["groups"]


def test_a_file_imported_twice_is_one_run(cli, workdir):
    _report(cli, "json", "sample.json")
    cli("import", "sample.json")
    code, out, _ = cli("import", "sample.json")
    assert (code, out) == (0, "sample.json: already in the store as run 1 (32 rows)\n")
    code, out, _ = cli("runs", "--json")
    assert [run["id"] for run in json.loads(out)] == [1]


def test_runs_lists_the_runs_with_their_verdict_and_filters(cli, workdir):
    _report(cli, "json", "sample.json")
    _report(cli, "jsonl", "sample.jsonl")
    cli("import", "sample.json", "--tag", "v1")
    cli("import", "sample.jsonl", "--tag", "v2")
    with open_store("sqlite:///.context-bench/runs.sqlite") as store:
        recorder = store.recorder("score")  # a run that never finished
        recorder.begin({}, {"date": "2020-01-01T00:00:00+00:00"}, ["broken"])
        recorder.close()
    code, out, _ = cli("runs")
    assert code == 0
    header, *lines = out.splitlines()
    assert header.split() == [
        "id",
        "started",
        "(UTC)",
        "status",
        "tags",
        "systems",
        "data",
        "sets",
        "rows",
        "verdict",
    ]
    assert [line.split()[0] for line in lines] == ["2", "1", "3"]
    assert lines[0].split()[3:5] == ["finished", "v2"] and lines[2].split()[3:5] == ["unfinished", "broken"]
    assert lines[2].endswith("unfinished: no summary")
    assert lines[1].split("  ")[-1].startswith("compressed vs baseline on ")
    code, out, _ = cli("runs", "--tag", "v1", "--json")
    assert [run["id"] for run in json.loads(out)] == [1]
    code, out, _ = cli("runs", "--system", "compressed", "--json")
    assert [run["id"] for run in json.loads(out)] == [2, 1]
    code, out, _ = cli("runs", "--dataset", "nothing")
    assert (code, out) == (0, "no runs in sqlite:///.context-bench/runs.sqlite match\n")
    code, out, _ = cli("runs", "--since", "2021-01-01", "--json")
    assert [run["id"] for run in json.loads(out)] == [2, 1]


def test_runs_in_a_directory_without_a_store_says_so_and_makes_none(cli, workdir):
    code, out, err = cli("runs")
    assert (code, out, err) == (0, "no runs recorded yet in sqlite:///.context-bench/runs.sqlite\n", "")
    assert not (workdir / ".context-bench").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["export", "7"],
            "no run 7 in the store sqlite:///.context-bench/runs.sqlite (`context-bench runs` lists them)",
        ),
        (["export", "abc"], "'abc' is not a run id (a number, as `context-bench runs` lists them)"),
        (["export", "0"], "'0' is not a run id (a number, as `context-bench runs` lists them)"),
        (
            ["runs", "--since", "yesterday"],
            "--since yesterday: expected a date (2026-11-01), a time (2026-11-01T09:30) "
            "or an age (3d, 12h, 2w)",
        ),
        (["runs", "--store", "none"], "--store none: there is no store to read"),
        (
            ["runs", "--store", "mysql://u:hunter2-Secret@db/x"],
            "store mysql://u:***@db/x: unknown scheme 'mysql' "
            "(expected sqlite:///PATH, postgresql://... or none)",
        ),
        (["import", "missing.json"], "missing.json: No such file or directory"),
    ],
)
def test_a_mistake_is_one_line_and_exit_2(cli, workdir, argv, message):
    _report(cli, "json", "sample.json")
    cli("import", "sample.json")
    code, out, err = cli(*argv)
    assert (code, out, err) == (2, "", f"context-bench: error: {message}\n")


def test_an_unknown_run_leaves_the_out_file_alone(cli, workdir):
    _report(cli, "json", "sample.json")
    cli("import", "sample.json")
    (workdir / "keep.json").write_text("mine")
    assert cli("export", "9", "--out", "keep.json")[0] == 2
    assert (workdir / "keep.json").read_text() == "mine"


def test_a_file_that_is_no_report_is_refused_and_leaves_no_run(cli, workdir):
    (workdir / "notes.json").write_text('{"hello": 1}')
    lines = [
        {"system": "s", "dataset": "d", "example_id": "a", "scores": {"f1": 1.0}},
        {"system": "s", "dataset": "d", "example_id": "b"},
        ["not", "a", "row"],
    ]
    (workdir / "bad.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, _, err = cli("import", "notes.json")
    assert (code, err) == (
        2,
        "context-bench: error: notes.json: not a JSON report of context-bench (no 'rows')\n",
    )
    code, _, err = cli("import", "bad.jsonl")
    assert (code, err) == (
        2,
        "context-bench: error: bad.jsonl line 3: "
        "not a row of a context-bench report (a list, not an object)\n",
    )
    code, out, _ = cli("runs", "--json")
    assert json.loads(out) == []


def test_an_unreachable_postgresql_is_one_line_without_its_password(cli, workdir):
    code, out, err = cli("runs", "--store", "postgresql://team:hunter2-Secret@127.0.0.1:1/runs")
    assert (code, out) == (2, "")
    assert err.startswith(
        "context-bench: error: cannot open the store postgresql://team:***@127.0.0.1:1/runs: "
    )
    assert err.count("\n") == 1 and "hunter2" not in err


def test_a_wrong_password_or_database_is_one_line_without_the_password(cli, workdir, postgres_server):
    for url in (postgres_server.url(password="hunter2-Wrong"), postgres_server.url("no_such_db")):
        for argv in (
            ["runs", "--store", url],
            ["import", "x.json", "--store", url],
            ["export", "1", "--store", url],
        ):
            code, out, err = cli(*argv)
            assert (code, out) == (2, "")
            assert err.startswith(
                "context-bench: error: cannot open the store postgresql://cbench:***@127.0.0.1:"
            )
            assert err.count("\n") == 1
            assert "hunter2" not in err and "pg-Secret" not in err


def test_the_commands_work_against_postgresql(cli, workdir, postgres_server):
    url = postgres_server.database()
    _report(cli, "json", "sample.json")
    assert cli("import", "sample.json", "--store", url)[0] == 0
    code, out, _ = cli("runs", "--store", url, "--json")
    assert [run["rows"] for run in json.loads(out)] == [32]
    code, exported, _ = cli("export", "1", "--store", url)
    assert json.loads(exported)["rows"] == json.loads((workdir / "sample.json").read_text())["rows"]
