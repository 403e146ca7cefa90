"""Labels made by hand in the HTML report, checked against the judge: a run scored by a judge on
127.0.0.1, its report shown as HTML in headless Chromium, rows marked correct and incorrect there,
the labels exported through the page's download, and judge-check reading them against the run's
saved JSON report."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from context_bench.cli import main
from context_bench.testing import Reply, last_user_message

_spec = importlib.util.spec_from_file_location(
    "cbench_browser", Path(__file__).parents[3] / "tests/browser.py"
)
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

HOSTILE = '<script>window.pwned=1</script>"onload=window.pwned=2'
#: id -> (the response, what a person marks it; None: left unmarked)
ROWS = {
    "q1": ("Paris.", "correct"),
    "q2": ("It is Paris.", "correct"),
    "q3": (f"Lyon {HOSTILE}", "incorrect"),
    "q4": ("Paris!", None),
}


def _grader(body: Any) -> Reply | str:
    """binary_qa's grade of a response that starts with Paris: q1 and q4 pass, q2 and q3 fail."""
    response = last_user_message(body).split("Response to grade:")[-1].strip()
    return "GRADE: C" if response.startswith("Paris") else "GRADE: I"


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
@pytest.mark.timeout(90)
def test_labels_marked_in_the_report_are_checked_against_the_judge(judge_server, tmp_path, capsys) -> None:
    server = judge_server(_grader)
    rows = tmp_path / "rows.jsonl"
    question = {"dataset": "qa", "question": "Capital of France?", "answer": "Paris"}
    rows.write_text(
        "".join(
            json.dumps({"id": key, **question, "response": said}) + "\n" for key, (said, _) in ROWS.items()
        )
    )
    run, page = tmp_path / "run.json", tmp_path / "run.html"
    argv = ["score", str(rows), "--judge-url", server.url, "--judge-template", "binary_qa", "--no-progress"]
    assert main([*argv, "--output", "json", "--out", str(run)]) == 0
    assert main(["show", str(run), "--output", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    with browser.Browser() as driver:
        driver.open(page)
        for key, (_, label) in ROWS.items():
            if label is None:
                continue
            driver.run(
                "[...document.querySelectorAll('#cb-body tr')]"
                f".find(tr => tr.children[3].textContent === {json.dumps(key)}).click()"
            )
            driver.wait_for("document.getElementById('cb-mark-correct')")
            driver.run(f"document.getElementById('cb-mark-{label}').click()")
        # the hostile response shows in the detail as the text it is
        assert driver.run(f"document.getElementById('cb-detail').textContent.includes({json.dumps(HOSTILE)})")
        labels = driver.download("document.getElementById('cb-export').click()", tmp_path / "downloads")
        assert driver.run("window.pwned === undefined")
        assert driver.errors == []
    system = json.loads(run.read_text())["rows"][0]["system"]
    assert [json.loads(line) for line in labels.read_text().splitlines()] == [
        {"id": key, "system": system, "dataset": "qa", "label": label}
        for key, (_, label) in ROWS.items()
        if label is not None
    ]
    code = main(["judge-check", "--labels", str(labels), "--report", str(run), "--output", "json"])
    found = json.loads(capsys.readouterr().out)["summary"]["judge_check"]
    assert code == 0
    # people pass q1 and q2 and fail q3; the judge passes q1 only: p_o = 2/3, p_e = 2/3 * 1/3 +
    # 1/3 * 2/3 = 4/9, kappa = (2/9) / (5/9) = 0.4
    assert (found["kind"], found["n"], found["failed"]) == ("pass/fail", 3, 0)
    assert found["kappa"] == pytest.approx(0.4, abs=1e-15)
    assert (found["accuracy"], found["tpr"], found["tnr"]) == (2 / 3, 0.5, 1.0)
