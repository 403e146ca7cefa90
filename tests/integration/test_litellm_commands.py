"""The command line through a real LiteLLM proxy, for the items of issue 12 that
test_litellm_proxy.py does not cover: a judge that sees a row's options (#4), keys never printed
(#5), data sets named from split files (#8), files of another command and rows without ids (#9),
one prefix per error line (#10), the progress line (#13), a run scored again (#14), docs/memory.md's
custom system (#15) and the report's metadata (#16).  The proxy (one per session) is conftest.py's."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from context_bench.cli import main
from context_bench.testing import last_user_message

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
LOCOMO_MINI = ROOT / "plugins/cbench-memory/tests/fixtures/locomo_mini.json"
HAS_MEMORY = importlib.util.find_spec("cbench_memory") is not None
HAS_MATH = importlib.util.find_spec("cbench_math") is not None
HAS_JUDGE = importlib.util.find_spec("cbench_judge") is not None


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def tiny(proxy, *more: str) -> tuple[str, ...]:
    """``run`` with one system: the proxy's ``tiny`` model, named ``a``."""
    return ("run", "--proxy", proxy.url, "--name", "a", "--model", "tiny", "--max-retries", "0", *more)


@pytest.fixture
def qa_rows(proxy) -> list[dict]:
    return [{"id": str(i), "question": q, "answer": a} for i, (q, a) in enumerate(proxy.answers.items())]


# -- #4: a judge sees a multiple-choice row's options, and --judge-dataset limits it -----------------


@pytest.mark.skipif(not HAS_JUDGE, reason="cbench-judge is not installed")
def test_the_judge_sees_the_options_and_judges_only_the_data_sets_named(proxy, qa_rows, tmp_path, capsys):
    qa = write_rows(tmp_path / "qa.jsonl", qa_rows)
    question = "Which of these is a colour? [judge-options]"
    mc = write_rows(
        tmp_path / "mc.jsonl", [{"id": "m", "question": question, "choices": ["dog", "blue"], "answer": "B"}]
    )
    judge = ("--judge-url", proxy.url, "--judge-model", "tiny", "--output", "json")
    code, out, err = cli(capsys, *tiny(proxy, "--dataset", str(mc), *judge))
    assert code == 0, err
    assert json.loads(out)["rows"][0]["scores"]["judge_score"] == 1.0
    prompts = [last_user_message(s.body) for s in proxy.seen_with("[judge-options]")]
    judged = [p for p in prompts if "RATING" in p.upper()]
    assert len(judged) == 1 and "A. dog" in judged[0] and "B. blue" in judged[0]

    before = len(proxy.seen_with("[judge-options]"))
    code, out, err = cli(
        capsys, *tiny(proxy, "--dataset", str(qa), "--dataset", str(mc), *judge, "--judge-dataset", "qa")
    )
    assert code == 0, err
    judged = {row["dataset"] for row in json.loads(out)["rows"] if "judge_score" in row["scores"]}
    assert judged == {"qa"}
    asked = [last_user_message(s.body) for s in proxy.seen_with("[judge-options]")[before:]]
    assert len(asked) == 1 and "RATING" not in asked[0].upper()  # the system's question, not the judge's


# -- #5: a key pasted where a variable's name goes is never printed -------------------------------


@pytest.mark.parametrize("flag", ["--api-key-env", "--judge-api-key-env"])
def test_a_key_given_as_a_variable_name_is_never_printed(proxy, qa_rows, tmp_path, capsys, flag):
    qa = write_rows(tmp_path / "qa.jsonl", qa_rows)
    judge = ("--judge-url", proxy.url, "--judge-model", "tiny") if flag.startswith("--judge") else ()
    code, out, err = cli(
        capsys, *tiny(proxy, "--dataset", str(qa), *judge, flag, proxy.key, "--output", "json")
    )
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()  # said before anything runs
    assert line.startswith("context-bench: error: ") and "not shown" in line
    assert proxy.key not in err and proxy.key[4:12] not in err


def test_the_key_reaches_no_report_and_no_cache(proxy, qa_rows, tmp_path, capsys):
    qa = write_rows(tmp_path / "qa.jsonl", qa_rows)
    cache = tmp_path / "cache"
    judge = ("--judge-url", proxy.url, "--judge-model", "tiny") if HAS_JUDGE else ()
    for fmt in ("json", "jsonl", "html", "markdown"):
        code, out, err = cli(
            capsys, *tiny(proxy, "--dataset", str(qa), *judge, "--cache-dir", str(cache), "--output", fmt)
        )
        assert code == 0, err
        assert proxy.key not in out + err and proxy.key[4:12] not in out + err
    stored = [p.read_bytes() for p in cache.rglob("*") if p.is_file()]
    assert stored and not any(
        proxy.key.encode() in blob or proxy.key[4:12].encode() in blob for blob in stored
    )


# -- #8: a data set named by its file, split and all ---------------------------------------------


@pytest.mark.skipif(not HAS_MATH, reason="cbench-math is not installed")
def test_gsm8k_test_jsonl_gets_math_equivalence_and_says_so(proxy, tmp_path, capsys):
    rows = [{"id": "1", "question": "What is 2 + 2?", "answer": "2 + 2 = 4\n#### 4"}]
    data = write_rows(tmp_path / "gsm8k_test.jsonl", rows)
    code, out, err = cli(capsys, *tiny(proxy, "--dataset", str(data), "--output", "json"))
    assert code == 0, err
    wiring = [line for line in err.splitlines() if line.startswith("context-bench: evaluators:")]
    assert len(wiring) == 1 and "MathEquivalence (name gsm8k)" in wiring[0]
    (row,) = json.loads(out)["rows"]
    assert row["response"] == "4" and row["scores"]["math_equiv"] == 1.0


# -- #9: another command's file, rows without ids --------------------------------------------------


def test_a_locomo_file_given_to_run_is_refused_with_the_memory_hint(proxy, capsys):
    code, out, err = cli(capsys, *tiny(proxy, "--dataset", str(LOCOMO_MINI)))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"context-bench: error: {LOCOMO_MINI} looks like a LoCoMo file (records with conversation, qa): "
        f"score memory systems on it with `context-bench memory --dataset {LOCOMO_MINI}`"
        + ("" if HAS_MEMORY else " (after pip install cbench-memory)")
    ]
    assert not proxy.seen_with("Caroline")  # nothing was asked


def test_rows_without_ids_are_numbered_once_and_answered(proxy, qa_rows, tmp_path, capsys):
    data = write_rows(
        tmp_path / "noids.jsonl", [{k: v for k, v in row.items() if k != "id"} for row in qa_rows]
    )
    code, out, err = cli(capsys, *tiny(proxy, "--dataset", str(data), "--output", "json"))
    assert code == 0, err
    assert sum("numbered by their position" in line for line in err.splitlines()) == 1
    rows = json.loads(out)["rows"]
    assert [row["example_id"] for row in rows] == ["1", "2", "3"]
    assert all(row["scores"]["exact_match"] == 1.0 and not row["errors"] for row in rows)


# -- #10: one prefix per error line -----------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, said",
    [
        (("--bogus",), "context-bench: error: unrecognized arguments: --bogus"),
        (("--model", "other"), "context-bench: error: "),  # two --model after one --proxy: ambiguous
    ],
)
def test_an_error_line_says_its_prefix_once(proxy, qa_rows, tmp_path, capsys, extra, said):
    qa = write_rows(tmp_path / "qa.jsonl", qa_rows)
    code, _, err = cli(capsys, *tiny(proxy, "--dataset", str(qa), *extra))
    (line,) = err.strip().splitlines()
    assert (
        code == 2
        and line.startswith(said)
        and line.count("context-bench:") == 1
        and "error: error" not in line
    )


def test_every_line_of_a_failing_run_has_one_prefix(proxy, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-proxy-refuses-this-one")
    qa = write_rows(tmp_path / "qa.jsonl", [{"id": "1", "question": "Capital of France?", "answer": "Paris"}])
    code, _, err = cli(capsys, *tiny(proxy, "--dataset", str(qa)))
    lines = [line for line in err.splitlines() if line.startswith("context-bench")]
    assert code == 1 and lines and all(line.count("context-bench:") == 1 for line in lines), err
    assert "none of the 1 rows could be scored" in lines[-1]


# -- #13: the progress line through a real run ---------------------------------------------------


class TTY(io.StringIO):
    def isatty(self):
        return True


def redraws(written: str) -> list[tuple[str, str]]:
    """Each progress line drawn and what the terminal shows right after it (``\\r`` goes back to
    the start of the line; characters after it overwrite, the rest of the old line stays)."""
    shown: list[tuple[str, str]] = []
    for line in written.split("\n"):
        screen = ""
        for drawn in line.split("\r")[1:]:
            screen = drawn + screen[len(drawn) :]
            shown.append((drawn.rstrip(), screen.rstrip()))
    return shown


def test_the_progress_line_names_its_phase_and_leaves_no_stale_digits(proxy, qa_rows, tmp_path, monkeypatch):
    rows = [*qa_rows * 4, {"question": "[429 once:progress] Capital of France?", "answer": "Paris"}]
    data = write_rows(tmp_path / "qa.jsonl", [{**row, "id": str(i)} for i, row in enumerate(rows)])
    tty = TTY()
    monkeypatch.setenv("COLUMNS", "100")  # room for the whole bar
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert main([*tiny(proxy, "--dataset", str(data), "--max-concurrency", "1")]) == 0
    drawn = redraws(tty.getvalue())
    assert drawn and all(line == screen for line, screen in drawn), drawn
    assert all(
        re.match(r"running \[[#-]{20}\] \d+/13 rows  [\d.,]+ rows/s  (ETA|took) \d+:\d\d  errors 0$", line)
        for line, _ in drawn
    )
    assert "ETA" in drawn[0][0] and drawn[-1][0].startswith("running [####################] 13/13 rows")


@pytest.mark.skipif(not HAS_MEMORY, reason="cbench-memory is not installed")
def test_the_memory_command_labels_its_two_passes(proxy, monkeypatch):
    tty = TTY()
    monkeypatch.setenv("COLUMNS", "100")  # room for the whole bar
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    argv = ["memory", "--dataset", str(LOCOMO_MINI), "--relay", proxy.url, "--model", "tiny", "-n", "3"]
    assert main(argv) == 0
    drawn = redraws(tty.getvalue())
    assert all(line == screen for line, screen in drawn)
    phases = list(dict.fromkeys(line.split(" [", 1)[0] for line, _ in drawn))
    assert phases == ["answering", "scoring"] and drawn[-1][0].startswith(
        "scoring [####################] 3/3 rows"
    )


# -- #14: a run's JSONL scored again ----------------------------------------------------------------


def test_a_runs_jsonl_scores_again_to_the_same_scores(proxy, qa_rows, tmp_path, capsys):
    data = write_rows(
        tmp_path / "qa.jsonl",
        [*qa_rows, {"id": "x", "question": "[400] Capital of France?", "answer": "Paris"}],
    )
    report = tmp_path / "run.jsonl"
    allowed = ("--max-failure-rate", "0.25")  # the one refused row of four is allowed
    code, _, err = cli(
        capsys, *tiny(proxy, "--dataset", str(data), "--output", "jsonl", "--out", str(report), *allowed)
    )
    assert code == 0, err
    lines = {line["id"]: line for line in map(json.loads, report.read_text().splitlines())}
    assert lines["0"]["answer"] == qa_rows[0]["answer"] and lines["x"]["errors"]
    code, out, err = cli(capsys, "score", str(report), "--output", "json", *allowed)
    assert code == 0, err
    again = {row["example_id"]: row for row in json.loads(out)["rows"]}
    assert {i: again[i]["scores"] for i in lines} == {i: line["scores"] for i, line in lines.items()}
    assert again["x"]["errors"] and all(row["system"] == "a" for row in again.values())
    (group,) = json.loads(out)["summary"]["groups"]
    assert group["errors"] == 1 and group["scores"]["exact_match"] == pytest.approx(0.75)


# -- #15: docs/memory.md's custom memory system, as the docs say ---------------------------------


@pytest.mark.skipif(not HAS_MEMORY, reason="cbench-memory is not installed")
def test_the_docs_custom_memory_system_runs_through_the_proxy(proxy, tmp_path):
    docs = (ROOT / "docs" / "memory.md").read_text()
    module = re.search(r"```python\n(# my_memory\.py\n.*?)```", docs, re.S)[1]
    console = re.search(r"```console\n\$ (context-bench memory .*?--system my_memory.*?)```", docs, re.S)[1]
    command = shlex.split(console.replace("\\\n", " "))
    (tmp_path / "my_memory.py").write_text(module)
    command[0] = Path(sys.executable).with_name("context-bench").as_posix()
    command[command.index("--data-file") + 1] = str(LOCOMO_MINI)
    command[command.index("--relay") + 1] = proxy.url
    command[command.index("--model") + 1] = "tiny"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.lower().endswith("_proxy")}
    env.update(MEMORY_LLM_URL=proxy.url, MEMORY_LLM_MODEL="tiny", OPENAI_API_KEY=proxy.key)
    done = subprocess.run(
        [*command, "--output", "json", "--no-progress"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert {row["system"] for row in rows} == {"notes", "full-context"} and len(rows) == 14
    assert not any(row["errors"] for row in rows), [row["errors"] for row in rows][:2]
    assert len(proxy.seen_with("Notes:")) >= 7  # the module's own requests passed the proxy's key check
    assert proxy.key not in done.stdout + done.stderr


# -- #16: the report's metadata ------------------------------------------------------------------


def test_the_report_names_the_models_and_the_proxy_without_the_key(proxy, qa_rows, tmp_path, capsys):
    qa = write_rows(tmp_path / "qa.jsonl", qa_rows)
    argv = ["run", "--proxy", proxy.url, "--name", "a", "--model", "tiny"]
    argv += [
        "--proxy",
        proxy.url,
        "--name",
        "b",
        "--model",
        "fixed",
        "--dataset",
        str(qa),
        "--output",
        "json",
    ]
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    metadata = json.loads(out)["metadata"]
    assert [(s["name"], s["model"], s["endpoint"]) for s in metadata["systems"]] == [
        ("a", "tiny", proxy.url),
        ("b", "fixed", proxy.url),
    ]
    assert metadata["command"] == "context-bench " + " ".join([*argv, "--no-progress"])
    assert {"context-bench", "python", "date"} <= set(metadata["versions"]) | set(metadata)
    assert proxy.key not in out and proxy.key[4:12] not in out
