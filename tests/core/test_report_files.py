"""Reports that always get written whole: lone surrogates, atomic --out, valid JSON, a terminal that
no name can drive, and the run's metadata without a secret."""

from __future__ import annotations

import json
import math
import os

import pytest

from context_bench import EvalResult, EvalRow, Output, RowError, RunConfig, UsageError
from context_bench._encodable import repair_text as encodable
from context_bench._summary import Summarizer
from context_bench.cli import RunOptions, emit, main
from context_bench.files import atomic_write_text
from context_bench.metadata import describe_system, run_metadata
from context_bench.records import GroupSummary, Summary
from context_bench.reports import View, formats, render
from context_bench.secrets import redact, redact_command
from context_bench.systems import OpenAIProxy
from context_bench.testing import isolated_host

#: The core's report formats (a host of the built-ins alone).
FORMATS = formats(isolated_host())

LONE = "\ud800"

#: The terminal table with every table (--detail).
DETAIL = View(detail=True)


def _rows_file(tmp_path, rows):
    path = tmp_path / "qa.jsonl"
    # json.dumps writes a lone surrogate as the escape "\ud800": valid JSON, and loads gives it back
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# -- files.atomic_write_text ---------------------------------------------------------------------


def test_atomic_write_replaces_a_lone_surrogate_and_keeps_the_mode(tmp_path):
    target = tmp_path / "report.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    atomic_write_text(target, f"a{LONE}b")
    assert target.read_text(encoding="utf-8") == "a\ufffdb"
    assert target.stat().st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["report.txt"]
    new = tmp_path / "new.txt"
    atomic_write_text(new, "x")
    assert new.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_failed_write_leaves_the_old_file_whole_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text('{"old": "report"}')

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == '{"old": "report"}'
    assert os.listdir(tmp_path) == ["report.json"]


def test_atomic_write_goes_through_a_symlink(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_encodable_leaves_ordinary_text_alone():
    text = "Paris — 東京 😀"
    assert encodable(text) is text
    assert encodable(LONE + "\udfff") == "\ufffd\ufffd"


# -- lone surrogates through every report ------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lone_surrogate_in_a_row_reaches_stdout_as_a_replacement(tmp_path, capsys, fmt):
    path = _rows_file(tmp_path, [{"id": f"x{LONE}", "answer": "Paris", "response": f"Paris {LONE}"}])
    assert main(["score", str(path), "--output", fmt, "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert LONE not in out and "\ufffd" in out or fmt in ("table", "markdown")
    if fmt == "json":  # repaired where it came in, and the row says so
        row = json.loads(out)["rows"][0]
        assert row["response"] == "Paris \ufffd" and "U+FFFD" in row["meta"]["repaired"]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "html"])
def test_out_with_a_lone_surrogate_writes_the_report_instead_of_truncating_it(tmp_path, capsys, fmt):
    path = _rows_file(tmp_path, [{"id": "1", "answer": "Paris", "response": f"Paris {LONE}"}])
    target = tmp_path / f"report.{fmt}"
    target.write_text("an earlier report")
    assert main(["score", str(path), "--output", fmt, "--out", str(target), "--no-progress"]) == 0
    text = target.read_text(encoding="utf-8")
    assert "Paris \ufffd" in text and LONE not in text
    assert sorted(os.listdir(tmp_path)) == sorted(["qa.jsonl", f"report.{fmt}"])


def test_a_failed_out_write_is_a_usage_error_and_keeps_the_earlier_report(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("an earlier report")
    monkeypatch.setattr(os, "replace", _raise_disk_full)
    result = EvalResult(rows=[EvalRow("s", "d", "1", scores={"f1": 1.0})])
    with pytest.raises(UsageError, match="cannot write .*No space left"):
        emit(result, RunOptions(RunConfig(output=Output(format="json", out=str(target)))))
    assert target.read_text() == "an earlier report"
    assert os.listdir(tmp_path) == ["report.json"]


def _raise_disk_full(*args):
    raise OSError(28, "No space left on device")


# -- JSON stays JSON ---------------------------------------------------------------------------


def _strict(text):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_a_mean_that_overflows_is_null_with_a_warning_and_the_json_stays_valid():
    rows = [EvalRow("s", "d", str(i), scores={"v": -1e308}) for i in range(3)]
    result = EvalResult(rows=rows, summary=Summarizer()(rows))
    group = result.summary.groups[0]
    assert group.scores == {"v": None}
    assert any("mean of v for s on d is not a finite number" in w for w in result.summary.warnings)
    data = _strict(render(result, "json"))
    assert data["summary"]["groups"][0]["scores"] == {"v": None}
    assert data["summary"]["systems"]["s"]["scores"] == {"v": None}


def test_non_finite_numbers_anywhere_become_null_in_json_and_jsonl():
    row = EvalRow("s", "d", "1", scores={"f1": 1.0}, meta={"output": {"x": math.nan, "y": [math.inf]}})
    summary = Summary(groups=[GroupSummary("s", "d", 1, scores={"f1": math.inf})])
    result = EvalResult(rows=[row], summary=summary, metadata={"odd": -math.inf})
    data = _strict(render(result, "json"))
    assert data["rows"][0]["meta"]["output"] == {"x": None, "y": [None]}
    assert data["summary"]["groups"][0]["scores"] == {"f1": None} and data["metadata"] == {"odd": None}
    assert _strict(render(result, "jsonl"))["meta"]["output"]["x"] is None


# -- the terminal ------------------------------------------------------------------------------

ESCAPE = "\x1b[2J\x1b]0;pwned\x07"


def test_escape_sequences_in_names_and_messages_are_shown_escaped_in_the_table():
    rows = [
        EvalRow(f"sys{ESCAPE}", f"data{ESCAPE}\u202e", "1", scores={"f1": 1.0}),
        EvalRow(
            f"sys{ESCAPE}",
            f"data{ESCAPE}\u202e",
            "2",
            errors=[RowError("system", f"sys{ESCAPE}", "HTTPError", f"bad {ESCAPE}\x9b31m")],
        ),
    ]
    result = EvalResult(rows=rows, summary=Summarizer()(rows))
    for fmt in ("table", "markdown"):
        text = render(result, fmt)
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\u202e" not in text
        assert "\\x1b[2J" in text.replace("\\\\", "\\").replace("\\[", "[") and "\\u202e" in text


def test_escape_sequences_never_reach_stderr_warnings(tmp_path, capsys):
    path = _rows_file(tmp_path, [{"answer": "x", "response": "x", "dataset": f"d{ESCAPE}"}])
    main(["score", str(path), "--output", "json", "--no-progress"])
    err = capsys.readouterr().err
    assert "d\\x1b[2J" in err and "\x1b" not in err and "\x07" not in err


# -- run metadata ------------------------------------------------------------------------------

SECRET = "sk-live-SECRET0123456789"


def test_redaction_of_command_lines_and_urls():
    argv = [
        "run",
        "--proxy",
        "http://user:hunter2@127.0.0.1:4000/v1?api_key=abc123",
        "--api-key",
        SECRET,
        "--judge-api-key-env",
        SECRET,
        "--api-key-env",
        "OPENAI_API_KEY",
        f"--token={SECRET}",
        f"--system-prompt=Bearer {SECRET}",
        "data.jsonl",
    ]
    shown = " ".join(redact_command(argv))
    assert "SECRET" not in shown and "hunter2" not in shown and "abc123" not in shown
    assert "http://user:***@127.0.0.1:4000/v1?api_key=***" in shown
    assert "--api-key-env OPENAI_API_KEY" in shown and "data.jsonl" in shown
    assert redact("https://host/v1") == "https://host/v1"


def test_metadata_names_versions_systems_and_the_command_without_secrets():
    proxy = OpenAIProxy("http://me:pw@127.0.0.1:9/v1", model="tiny", api_key=SECRET, name="a")
    assert describe_system(proxy) == {
        "name": "a",
        "type": "OpenAIProxy",
        "model": "tiny",
        "endpoint": "http://me:***@127.0.0.1:9/v1",
    }
    metadata = run_metadata(argv=["run", "--api-key", SECRET], systems=[proxy], versions={"cbench-x": "1.2"})
    assert metadata["versions"]["cbench-x"] == "1.2" and "context-bench" in metadata["versions"]
    assert metadata["date"].endswith("+00:00") and metadata["command"] == "context-bench run --api-key ***"
    assert SECRET not in json.dumps(metadata) and "pw" not in metadata["systems"][0]["endpoint"]


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "html"])
def test_every_report_but_jsonl_carries_the_run_metadata(tmp_path, capsys, fmt):
    path = _rows_file(tmp_path, [{"id": "1", "answer": "Paris", "response": "Paris"}])
    assert main(["score", str(path), "--output", fmt, "--no-progress", "--detail"]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        metadata = json.loads(out)["metadata"]
        assert {"date", "versions", "command"} <= set(metadata)
        assert "cbench-judge" in metadata["versions"]
    else:
        assert "context-bench" in out.split("Run", 1)[1] and "date" in out.split("Run", 1)[1]


def test_latency_has_its_unit(tmp_path, capsys):
    rows = [EvalRow("s", "d", "1", scores={"f1": 1.0}, latency=0.5)]
    result = EvalResult(rows=rows, summary=Summarizer()(rows))
    assert result.summary.units == {"latency": "s"}
    assert "\nMetric: latency (s)\n" in render(result, "table", DETAIL)


def test_the_all_data_sets_row_says_it_pools_unlike_data_sets():
    rows = [EvalRow("s", "qa", "1", scores={"f1": 1.0}), EvalRow("s", "sum", "1", scores={"f1": 0.0})]
    result = EvalResult(rows=rows, summary=Summarizer()(rows))
    assert result.summary.systems["s"].datasets == ["qa", "sum"]
    assert "pools the rows of unlike data sets" in render(result, "table", DETAIL)


def test_emit_completes_the_metadata_a_command_gave(capsys):
    proxy = OpenAIProxy("http://127.0.0.1:9/v1", model="tiny", name="a")
    given = run_metadata(argv=["run", "--proxy", "http://127.0.0.1:9/v1"], systems=[proxy])
    result = EvalResult(rows=[EvalRow("a", "d", "1", scores={"f1": 1.0})], metadata=given)
    assert emit(result, RunOptions(RunConfig(output=Output(format="json")))) == 0
    metadata = json.loads(capsys.readouterr().out)["metadata"]
    assert metadata["command"] == "context-bench run --proxy http://127.0.0.1:9/v1"
    assert metadata["systems"][0]["model"] == "tiny"
    assert {"context-bench", "python", "cbench-judge"} <= set(metadata["versions"])
