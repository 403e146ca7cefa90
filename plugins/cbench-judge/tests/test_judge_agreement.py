"""--judge-agreement: judge-check --out's agreement carried beside the judge's scores in every report."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from context_bench.cli import main
from context_bench.testing import Reply, last_user_message

_spec = importlib.util.spec_from_file_location(
    "cbench_browser", Path(__file__).parents[3] / "tests" / "browser.py"
)
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

_ROWS = [
    {"id": "a", "question": "Capital of France?", "answer": "Paris", "response": "Paris."},
    {"id": "b", "question": "Capital of France?", "answer": "Paris", "response": "Lyon."},
    {"id": "c", "question": "Capital of France?", "answer": "Paris", "response": "Not Paris: Lyon."},
]
#: People pass a, fail b and c; the judge below passes a and c: the n = 3 table of
#: test_judge_check (p_o = 2/3, p_e = 4/9, kappa 0.4), true-positive rate 1, true-negative 1/2.
_LABELS = [{"id": "a", "label": True}, {"id": "b", "label": False}, {"id": "c", "label": False}]


def _grader(body: Any) -> Reply | str:
    return "GRADE: C" if "Paris" in last_user_message(body).split("Response to grade:")[-1] else "GRADE: I"


def _write(path: Any, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


@pytest.fixture
def checked(judge_server, tmp_path, capsys) -> tuple[str, str, str]:
    """The judge's url, the rows, and the agreement judge-check --out wrote of judge m, binary_qa."""
    server = judge_server(_grader)
    rows = _write(tmp_path / "qa.jsonl", _ROWS)
    labels = _write(tmp_path / "labels.jsonl", _LABELS)
    out = str(tmp_path / "agreement.json")
    argv = ["judge-check", rows, "--labels", labels, "--judge-url", server.url, "--judge-model", "m"]
    assert main([*argv, "--out", out]) == 0
    assert capsys.readouterr().out.startswith("judge-check: judge_score (binary_qa, judge m)")  # table too
    return server.url, rows, out


def _score(url: str, rows: str, agreement: str, *extra: str) -> list[str]:
    argv = ["score", rows, "--judge-url", url, "--judge-template", "binary_qa"]
    return [*argv, "--judge-agreement", agreement, "--store", "none", "--no-progress", *extra]


def test_judge_check_out_writes_the_agreement(checked) -> None:
    _, _, out = checked
    with open(out, encoding="utf-8") as handle:
        found = json.load(handle)["summary"]["judge_check"]
    assert (found["field"], found["judge_model"], found["template"], found["kind"]) == (
        "judge_score",
        "m",
        "binary_qa",
        "pass/fail",
    )
    assert (found["n"], found["accuracy"], found["tpr"], found["tnr"]) == (3, 2 / 3, 1.0, 0.5)
    assert found["kappa"] == pytest.approx(0.4, abs=1e-15)


def test_score_carries_the_agreement_beside_the_judges_score(checked, capsys, monkeypatch) -> None:
    url, rows, out = checked
    assert main(_score(url, rows, out, "--judge-model", "m", "--output", "json")) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["groups"][0]["scores"]["judge_score"] == 2 / 3  # the judge passed a and c
    (found,) = summary["judge_agreement"]
    with open(out, encoding="utf-8") as handle:
        measured = json.load(handle)["summary"]["judge_check"]
    assert (found.pop("kappa"), found.pop("ci")) == (measured["kappa"], measured["kappa_ci"])
    assert found == {
        "system": "responses",
        "dataset": "qa",
        "field": "judge_score",
        "judge_model": "m",
        "template": "binary_qa",
        "accuracy": 2 / 3,
        "n": 3,
        "labels": "pass/fail",
    }
    monkeypatch.setenv("COLUMNS", "60")  # the table turned on its side: a line per figure
    for output in ("table", "markdown"):
        assert main(_score(url, rows, out, "--judge-model", "m", "--output", output)) == 0
        shown = capsys.readouterr().out
        assert "Judge agreement with people" in shown
        assert re.search(r"^\|? *kappa[ |]+0\.400 *\|?$", shown, re.M)  # a row per figure
        assert re.search(r"^\|? *n[ |]+3 *\|?$", shown, re.M)


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
def test_the_html_report_shows_the_agreement_in_chromium(checked, tmp_path, capsys) -> None:
    url, rows, out = checked
    page = tmp_path / "report.html"
    assert main(_score(url, rows, out, "--judge-model", "m", "--output", "html", "--out", str(page))) == 0
    dom, errors = browser.dump_dom(page)
    assert errors == []
    assert "Judge agreement with people" in dom
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", dom.split("Judge agreement with people", 1)[1])
    assert cells[:10] == [
        *("responses", "qa", "judge_score", "m", "binary_qa", "0.400", "[-0.37, 1.17]", "0.667", "3"),
        "pass/fail",
    ]


def test_an_agreement_of_another_judge_is_a_warning_naming_both_and_not_applied(checked, capsys) -> None:
    url, rows, out = checked
    assert main(_score(url, rows, out, "--judge-model", "other", "--output", "json")) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["judge_agreement"] == []
    assert (
        f"--judge-agreement {out}: not applied: it checked judge m with template binary_qa, this run's "
        "judge is other with template binary_qa"
    ) in summary["warnings"]


def _record(**changed: object) -> str:
    """A judge-check --out file whose one record is well formed but for ``changed``."""
    record = {"field": "judge_score", "kind": "pass/fail", "template": "binary_qa", "judge_model": "m"}
    record.update(n=3, kappa=0.4, kappa_ci=[-0.37, 1.17], accuracy=0.667)
    return json.dumps({"summary": {"judge_check": {**record, **changed}}})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("not json", "cannot read it: Expecting value"),
        ('{"summary": {}}', "no summary.judge_check (write it with judge-check --out)"),
        ('{"summary": {"judge_check": []}}', "summary.judge_check holds no agreement record"),
        ('{"summary": {"judge_check": {"field": "judge_score", "n": 3}}}', "an agreement record lacks kind,"),
        (_record(kappa=7), "record's kappa is not a number from -1 to 1"),
        (_record(kappa="0.9"), "record's kappa is not a number from -1 to 1"),
        (_record(accuracy=1.5), "record's accuracy is not a number from 0 to 1"),
        (_record(n=-1), "record's n is not a whole number of rows"),
        (_record(kappa_ci=[0.9, 0.1]), "record's kappa_ci is not an interval [low, high]"),
        (_record(judge_model=["m"]), "record's judge_model is not a text"),
    ],
)
def test_a_malformed_agreement_file_is_one_line_and_status_2_before_any_row(
    judge_server, tmp_path, capsys, text, said
) -> None:
    server = judge_server(_grader)
    bad = tmp_path / "agreement.json"
    bad.write_text(text)
    assert main(_score(server.url, _write(tmp_path / "qa.jsonl", _ROWS), str(bad))) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"context-bench: error: --judge-agreement {bad}: ") and said in last
    assert server.requests == []  # no row was judged


def test_an_agreement_read_from_a_saved_report_is_applied_with_a_warning(checked, tmp_path, capsys) -> None:
    url, rows, _ = checked
    saved = [
        {"system": "s", "dataset": "qa", "id": key, "scores": {"judge_score": score}, "failures": {}}
        for key, score in (("a", 1.0), ("b", 0.0), ("c", 1.0))
    ]
    report = tmp_path / "run.json"
    report.write_text(json.dumps({"summary": {}, "rows": saved}))
    out = str(tmp_path / "from_report.json")
    labels = _write(tmp_path / "labels.jsonl", _LABELS)
    assert main(["judge-check", "--labels", labels, "--report", str(report), "--out", out]) == 0
    capsys.readouterr()
    assert main(_score(url, rows, out, "--judge-model", "m", "--output", "json")) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    (found,) = summary["judge_agreement"]
    assert (found["template"], found["judge_model"], found["n"]) == ("report", None, 3)
    assert found["kappa"] == pytest.approx(0.4, abs=1e-15)  # the same table as the judge's own run
    assert (
        f"--judge-agreement {out}: judge_score's agreement was read from a saved report that names no "
        "judge model or template: check they are this run's (m, binary_qa)"
    ) in summary["warnings"]


def test_an_agreement_of_a_field_no_row_scored_is_a_warning(checked, tmp_path, capsys) -> None:
    url, rows, out = checked
    data = json.loads(Path(out).read_text(encoding="utf-8"))
    data["summary"]["judge_check"]["field"] = "judge_panel"
    other = tmp_path / "panel.json"
    other.write_text(json.dumps(data))
    assert main(_score(url, rows, str(other), "--judge-model", "m", "--output", "json")) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["judge_agreement"] == []
    assert "--judge-agreement: no row of this run has a score of judge_panel" in summary["warnings"]
