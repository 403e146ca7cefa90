"""Every ``run`` and ``score`` records itself in the store (cli/_recording.py): the bundled sample's
``score`` read back with the same summary as its JSON report, ``--tag``, ``--store none``, a store
that cannot be written a warning with the run's own status, an unreachable PostgreSQL one line
with no password, and a run killed with kill -9 then resumed with ``--cache-dir`` one record with
every row once, against SQLite and a real PostgreSQL server; ``show RUN`` renders a stored run as
the run's own report."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from context_bench.cli import main
from context_bench.store import open_store

PASSWORD = "hunter2-Secret"


@pytest.fixture
def cli(capsys, workdir):
    def run(*argv: str) -> tuple[int, str, str]:
        code = main([*argv, "--no-progress"])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_a_score_of_the_sample_is_recorded_with_the_summary_of_its_json_report(cli, store_url, workdir):
    code, _, err = cli("score", "--output", "json", "--out", "r.json", "--store", store_url, "--tag", "v2")
    assert code == 0, err
    report = json.loads((workdir / "r.json").read_text(encoding="utf-8"))
    with open_store(store_url) as store:
        (info,) = store.runs()
        run = store.run(info.id)
        stored = store.report(info.id)
        ids = [(row.system, row.dataset, row.example_id) for row in store.iter_rows(info.id)]
    assert (run.kind, run.status, run.tags, run.rows) == ("score", "finished", ("v2",), 32)
    assert stored["summary"] == report["summary"]
    assert stored["metadata"]["command"] == report["metadata"]["command"]
    assert run.config == {"command": report["metadata"]["command"]}
    expected = [(row["system"], row["dataset"], row["example_id"]) for row in report["rows"]]
    assert sorted(ids) == sorted(expected) and len(set(ids)) == 32
    password = urlsplit(store_url).password  # the PostgreSQL server's: never printed or kept
    if password:
        kept = json.dumps([run.config, run.metadata, stored["metadata"]])
        assert password not in err + (workdir / "r.json").read_text(encoding="utf-8") + kept


def test_the_store_defaults_to_the_working_directory_and_none_records_nothing(cli, workdir, monkeypatch):
    assert cli("score", "--output", "markdown", "--store", "none")[0] == 0
    assert not (workdir / ".context-bench").exists()
    monkeypatch.delenv("CBENCH_STORE")
    for tag in ("a", "b"):
        assert cli("score", "--output", "markdown", "--tag", tag, "--tag", "both")[0] == 0
    with open_store("sqlite:///.context-bench/runs.sqlite") as store:
        assert [(info.id, info.tags) for info in store.runs()] == [(2, ("b", "both")), (1, ("a", "both"))]


def test_a_store_that_cannot_be_written_is_a_warning_and_the_run_keeps_its_status(cli, workdir):
    (workdir / "file").write_text("not a directory")
    code, out, err = cli("score", "--output", "json", "--store", "sqlite:///file/runs.sqlite")
    assert code == 0
    assert len(json.loads(out)["rows"]) == 32
    warnings = [line for line in err.splitlines() if "file/runs.sqlite" in line]
    assert len(warnings) == 1 and warnings[0].startswith("context-bench: warning: cannot open the store")
    assert warnings[0].endswith(": this run is not recorded")


def test_an_unreachable_postgresql_store_is_one_line_with_its_password_masked(cli, workdir):
    url = f"postgresql://me:{PASSWORD}@127.0.0.1:1/runs"
    code, out, err = cli("score", "--output", "json", "--out", "r.json", "--store", url)
    assert (code, out) == (2, "")
    notice, said = err.splitlines()  # which file it scores, then the store's one line
    assert notice.startswith("context-bench: scoring the bundled sample") and PASSWORD not in err
    assert said.startswith("context-bench: error: cannot open the store postgresql://me:***@127.0.0.1:1/runs")
    assert not (workdir / "r.json").exists()  # before any row ran


def test_an_unreachable_postgresql_store_from_the_environment_is_a_warning(cli, workdir, monkeypatch):
    monkeypatch.setenv("CBENCH_STORE", f"postgresql://me:{PASSWORD}@127.0.0.1:1/runs")
    code, out, err = cli("score", "--output", "json")
    assert code == 0 and len(json.loads(out)["rows"]) == 32
    assert PASSWORD not in err and "context-bench: warning: cannot open the store" in err


#: A --command system that answers "Paris", stalling on the row whose prompt holds "stall" until
#: the file RELEASE exists (it says so by writing STALLED first).
_AGENT = """
import os, sys, time
prompt = sys.stdin.read()
if "stall" in prompt and not os.path.exists(sys.argv[1]):
    open(sys.argv[2], "w").close()
    time.sleep(600)
print("Paris")
"""


def test_a_run_killed_and_resumed_is_one_record_with_every_row_once(store_url, tmp_path):
    agent, data = tmp_path / "agent.py", tmp_path / "qa.jsonl"
    agent.write_text(_AGENT, encoding="utf-8")
    rows = [
        {
            "id": f"q{n}",
            "question": f"capital of France {n}" + (" stall" if n == 5 else ""),
            "answer": "Paris",
        }
        for n in range(8)
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    release, stalled = tmp_path / "release", tmp_path / "stalled"
    command = f"{shlex.quote(sys.executable)} {agent} {release} {stalled}"
    argv = [sys.executable, "-m", "context_bench", "run", "--command", command, "--dataset", str(data)]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--max-concurrency", "1", "--no-progress"]
    argv += ["--store", store_url, "--output", "jsonl", "--out", str(tmp_path / "r.jsonl")]
    env = {**os.environ, "CBENCH_STORE": "none"}
    first = subprocess.Popen(argv, env=env, cwd=tmp_path, start_new_session=True, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # the sixth row is being answered: five are in the cache
            if stalled.exists() or first.poll() is not None:
                break
            time.sleep(0.1)
        assert stalled.exists(), first.stderr.read().decode() if first.poll() is not None else "no stall"
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    with open_store(store_url) as store:
        (killed,) = store.runs()
    assert killed.status == "unfinished"
    release.touch()
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with open_store(store_url) as store:
        (info,) = store.runs()
        ids = [row.example_id for row in store.iter_rows(info.id)]
    assert (info.id, info.status, info.rows) == (killed.id, "finished", 8)
    assert sorted(ids) == [f"q{n}" for n in range(8)]
    assert len((tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()) == 8


def test_two_runs_writing_one_store_at_once_are_two_records(store_url, tmp_path):
    argv = [sys.executable, "-m", "context_bench", "score", "--store", store_url, "--output", "markdown"]
    runs = [
        subprocess.Popen([*argv, "--tag", tag, "--no-progress"], cwd=tmp_path, stdout=subprocess.DEVNULL)
        for tag in ("one", "two")
    ]
    assert [run.wait(timeout=300) for run in runs] == [0, 0]
    with open_store(store_url) as store:
        infos = store.runs()
    assert sorted((info.tags, info.status, info.rows) for info in infos) == [
        (("one",), "finished", 32),
        (("two",), "finished", 32),
    ]


def test_compare_takes_run_ids_as_it_takes_their_reports(cli, store_url, workdir, capsys):
    for name in ("a", "b"):
        assert cli("score", "--output", "json", "--out", f"{name}.json", "--store", store_url)[0] == 0

    def compare(*argv: str) -> tuple[int, str, str]:
        code = main(["compare", *argv])
        return code, *capsys.readouterr()

    code, by_id, err = compare("1", "2", "--output", "json", "--store", store_url)
    assert code == 0, err
    code, by_file, _ = compare("a.json", "b.json", "--output", "json")
    ids, files = json.loads(by_id)["summary"]["systems"], json.loads(by_file)["summary"]["systems"]
    assert sorted(ids) == ["1:baseline", "1:compressed", "2:baseline", "2:compressed"]
    assert ids == {key.replace("a:", "1:").replace("b:", "2:"): value for key, value in files.items()}
    code, out, err = compare("1", "7", "--store", store_url)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith("context-bench: error: no run 7 in the store ")
    assert urlsplit(store_url).password is None or urlsplit(store_url).password not in err


def test_show_renders_a_stored_run_as_its_own_report(cli, store_url, workdir, capsys):
    assert cli("score", "--output", "json", "--out", "a.json", "--store", store_url)[0] == 0
    saved = json.loads((workdir / "a.json").read_text(encoding="utf-8"))

    def show(*argv: str) -> tuple[int, str, str]:
        code = main(["show", *argv, "--store", store_url])
        return code, *capsys.readouterr()

    code, out, err = show("1", "--output", "json")
    assert code == 0, err
    assert json.loads(out)["summary"] == saved["summary"]
    code, table, _ = show("1")
    assert code == 0
    assert table == cli("score", "--store", "none")[1]  # the run's own table, word for word
    assert table.startswith(
        "compressed vs baseline on dialogsum: 0.29x input tokens (-71%), rouge_l_f1 -0.373,\n"
    )
    code, out, err = show("7")
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith("context-bench: error: no run 7 in the store ")
    assert urlsplit(store_url).password is None or urlsplit(store_url).password not in err
