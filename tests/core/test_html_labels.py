"""Labelling rows in the HTML report, in a real headless Chromium: "mark correct" and "mark
incorrect" in a row's detail, "export labels" saving them as JSONL through a download, hostile row
text exported as the text it is, and the marks kept in the browser per run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from context_bench import EvalResult, EvalRow
from context_bench.reports import _html as html
from context_bench.reports import render

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

needs_chromium = pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")

HOSTILE_ID = '<script>window.pwned=1</script>"onload=window.pwned=2'
HOSTILE_SYSTEM = 'sys"><img src=x onerror="window.pwned=3">'
METADATA = {"date": "2026-11-27T08:00:00+00:00", "command": "context-bench run --dataset qa.jsonl"}


def _result(metadata: dict = METADATA) -> EvalResult:
    rows = [
        EvalRow(system, "qa", example_id, scores={"f1": 1.0}, response=f"{HOSTILE} {n}", index=n)
        for n, (system, example_id) in enumerate(
            [("baseline", "q1"), ("baseline", "q2"), (HOSTILE_SYSTEM, "q1"), (HOSTILE_SYSTEM, HOSTILE_ID)]
        )
    ]
    return EvalResult(rows=rows, metadata=metadata)


HOSTILE = '</script><script>window.pwned=4</script>"onload=window.pwned=5'


def _page(path: Path, metadata: dict = METADATA) -> Path:
    path.write_text(render(_result(metadata), "html"), encoding="utf-8")
    return path


def _row(system: str, example_id: str) -> str:
    """The table's line of a row, as a JavaScript expression."""
    return (
        "[...document.querySelectorAll('#cb-body tr')].find(tr => tr.children[1].textContent === "
        f"{json.dumps(system)} && tr.children[3].textContent === {json.dumps(example_id)})"
    )


def _show(driver, system: str, example_id: str) -> None:
    driver.run(f"{_row(system, example_id)}.click()")
    driver.wait_for("document.getElementById('cb-labels')")


def _table_marks(driver) -> list[str | None]:
    """Each line's mark in the table, in the table's order (by index)."""
    return driver.run("[...document.querySelectorAll('#cb-body tr')].map(tr => tr.dataset.label || null)")


def _said(driver) -> list[str]:
    return driver.run("['cb-marked', 'cb-count'].map(id => document.getElementById(id).textContent)")


def _click(driver, button: str) -> None:
    driver.run(f"document.getElementById('{button}').click()")


def test_the_run_key_names_a_run_by_its_metadata() -> None:
    assert html.run_key({}) is None
    key = html.run_key(METADATA)
    assert key is not None and len(key) == 16
    assert html.run_key(dict(reversed(METADATA.items()))) == key  # the same run, however ordered
    assert html.run_key({**METADATA, "date": "2026-11-27T08:00:01+00:00"}) != key


@needs_chromium
@pytest.mark.timeout(60)
def test_marked_rows_export_as_the_labels_file(tmp_path) -> None:
    with browser.Browser() as driver:
        driver.open(_page(tmp_path / "report.html"))
        _show(driver, "baseline", "q1")
        assert _said(driver) == ["not marked", "0 rows marked"]
        assert driver.run("document.getElementById('cb-export').disabled")
        _click(driver, "cb-mark-correct")
        assert _said(driver) == ["marked correct", "1 row marked"]
        _show(driver, HOSTILE_SYSTEM, HOSTILE_ID)
        _click(driver, "cb-mark-correct")
        _click(driver, "cb-mark-incorrect")  # a second mark replaces the first
        _show(driver, "baseline", "q2")
        _click(driver, "cb-mark-incorrect")
        _click(driver, "cb-mark-clear")
        assert _said(driver) == ["not marked", "2 rows marked"]
        _show(driver, HOSTILE_SYSTEM, HOSTILE_ID)
        assert _said(driver) == ["marked incorrect", "2 rows marked"]
        assert _table_marks(driver) == ["correct", None, None, "incorrect"]
        driver.run("document.querySelector('#cb-table th[data-column=\"3\"]').click()")  # by example id
        assert _table_marks(driver) == ["incorrect", "correct", None, None]  # the marks move with their rows
        saved = driver.download("document.getElementById('cb-export').click()", tmp_path / "downloads")
        # nothing a row carried ran or became markup, and the export link left no link behind
        assert driver.run("window.pwned === undefined")
        assert driver.run("document.querySelectorAll('script').length") == 2
        assert driver.run("document.querySelectorAll('a[href], img, #cb-rows b').length") == 0
        assert driver.errors == []
    assert saved.name == "labels.jsonl"
    assert [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()] == [
        {"id": "q1", "system": "baseline", "dataset": "qa", "label": "correct"},
        {"id": HOSTILE_ID, "system": HOSTILE_SYSTEM, "dataset": "qa", "label": "incorrect"},
    ]


@needs_chromium
@pytest.mark.timeout(60)
def test_the_marks_outlive_the_page_and_stay_with_their_run(tmp_path) -> None:
    first = _page(tmp_path / "report.html")
    again = _page(tmp_path / "shown-again.html")  # the same run written again, as `show` does
    other = _page(tmp_path / "other.html", {**METADATA, "date": "2026-11-28T08:00:00+00:00"})
    with browser.Browser() as driver:
        driver.open(first)
        _show(driver, "baseline", "q2")
        _click(driver, "cb-mark-correct")
        driver.open(again)
        assert _table_marks(driver) == [None, "correct", None, None]  # before any row is opened
        _show(driver, "baseline", "q2")
        assert _said(driver) == ["marked correct", "1 row marked"]
        driver.open(other)
        assert _table_marks(driver) == [None] * 4
        _show(driver, "baseline", "q2")
        assert _said(driver) == ["not marked", "0 rows marked"]
        # storage a page cannot trust (another file's script may write it) is read as marks only
        # where each entry is one
        key = json.dumps("cbench-labels:" + html.run_key(METADATA))
        junk = json.dumps([{"id": 1, "system": "baseline", "dataset": "qa", "label": "correct"}, "x", None])
        driver.run(f"localStorage.setItem({key}, {json.dumps(junk)})")
        driver.open(first)
        _show(driver, "baseline", "q2")
        assert _said(driver) == ["not marked", "0 rows marked"]
        assert driver.errors == []
