"""The HTML report of a big run: past ``--html-inline-rows`` the page holds no row and reads them
from the rows file beside it, over http(s) by itself, or, opened from disk, from the file a reader
picks; checked in a real headless Chromium, served by a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import json
import re
import stat
import threading
from pathlib import Path

import pytest

from context_bench import EvalResult, EvalRow
from context_bench._summary import Summarizer
from context_bench.cli import main
from context_bench.reports import _html as html
from context_bench.reports._html_rows import PAGE, RowEncoder

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

needs_chromium = pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")

HOSTILE = '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
ROWS = 120  # two systems, more than two pages


def _data(text: str) -> dict:
    return json.loads(
        re.search(r'<script type="application/json" id="cb-data">(.*?)</script>', text, re.S).group(1)
    )


@pytest.fixture
def scored(tmp_path) -> Path:
    """A file of rows to score: two systems, one hostile response, one over several lines."""
    lines = []
    for system in ("baseline", "compressed"):
        for i in range(ROWS // 2):
            response = HOSTILE if i == 1 else ("Paris\nand more" if i == 2 else f"answer {i}")
            if system == "compressed" and i % 4 == 0:
                response = "wrong"  # lost: the baseline answered these
            lines.append(
                {
                    "system": system,
                    "dataset": "qa",
                    "id": f"q{i:03d}",
                    "question": f"question {i}?",
                    "answer": "Paris" if i % 2 else f"answer {i}",
                    "response": response,
                }
            )
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _score(scored: Path, page: Path, *flags: str) -> int:
    return main(["score", str(scored), "--output", "html", "--out", str(page), "--no-progress", *flags])


def test_a_run_past_the_limit_writes_its_rows_beside_the_page(scored, tmp_path, capsys):
    page = tmp_path / "report.html"
    assert _score(scored, page, "--html-inline-rows", "50") == 0
    beside = tmp_path / "report.rows.jsonl"
    assert f"and its {ROWS} rows to {beside}" in capsys.readouterr().err
    data = _data(page.read_text(encoding="utf-8"))
    assert data["rows_file"] == "report.rows.jsonl" and data["count"] == ROWS and "rows" not in data
    lines = beside.read_text(encoding="utf-8").splitlines()
    assert len(lines) == ROWS
    first = json.loads(lines[0])
    assert first[3] == "q000" and data["systems"][first[1]] == "baseline"
    assert {json.loads(line)[8] for line in lines} >= {HOSTILE, "Paris\nand more"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.rows.jsonl", "rows.jsonl"]
    assert stat.S_IMODE(beside.stat().st_mode) == stat.S_IMODE(page.stat().st_mode)  # readable as the page is


def test_through_a_symlink_the_rows_land_beside_the_page(scored, tmp_path):
    real, links = tmp_path / "real", tmp_path / "links"
    real.mkdir()
    links.mkdir()
    (links / "report.html").symlink_to(real / "report.html")
    assert _score(scored, links / "report.html", "--html-inline-rows", "0") == 0
    assert sorted(p.name for p in real.iterdir()) == ["report.html", "report.rows.jsonl"]
    assert sorted(p.name for p in links.iterdir()) == ["report.html"]


def test_a_run_within_the_limit_keeps_its_rows_in_the_page(scored, tmp_path):
    page = tmp_path / "report.html"
    assert _score(scored, page) == 0
    data = _data(page.read_text(encoding="utf-8"))
    assert len(data["rows"]) == data["count"] == ROWS and "rows_file" not in data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "rows.jsonl"]  # no spool left
    assert data["rows"][1][8] == HOSTILE


def test_the_page_the_rows_file_and_the_inline_page_hold_the_same_rows(scored, tmp_path):
    inline, paged = tmp_path / "inline.html", tmp_path / "paged.html"
    assert _score(scored, inline) == 0 and _score(scored, paged, "--html-inline-rows", "0") == 0
    kept = [
        json.loads(line) for line in (tmp_path / "paged.rows.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert kept == _data(inline.read_text(encoding="utf-8"))["rows"]


def test_a_negative_limit_is_a_one_line_error(scored, tmp_path, capsys):
    assert _score(scored, tmp_path / "r.html", "--html-inline-rows", "-1") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "context-bench: error: score: argument --html-inline-rows: must be a whole number of rows "
        "from 0 to 1,000,000,000 (got '-1')"
    ]


def test_fields_keep_their_positions_when_a_later_row_brings_a_new_one():
    encoder = RowEncoder()
    early = json.loads(encoder(EvalRow("s", "d", "a", scores={"f1": 0.5})))
    late = json.loads(encoder(EvalRow("s", "d", "b", scores={"judge": 1.0, "f1": 0.25}, latency=0.2)))
    assert early[4] == [0.5] and late[4] == [0.25, 1.0]
    head = json.loads(encoder.head() + "}")
    assert head["fields"] == ["f1", "judge"] and head["figures"] == [["latency (s)", 0]]
    assert head["count"] == 2 and early[5] == [None] * 6


# -- in Chromium -------------------------------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _served(directory: Path):
    """A real HTTP server on 127.0.0.1 serving ``directory``; yields its base URL."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


LOADED = "document.body.dataset.rows === 'loaded'"
INFO = "document.getElementById('cb-info').textContent"


BY_ID = "document.querySelector('#cb-table th[data-column=\"3\"]').click()"


def _set(driver, box: str, value: str, event: str) -> None:
    """Set a control's value as a reader does, with the event the page listens for."""
    driver.run(
        f"(b => {{ b.value = {json.dumps(value)}; b.dispatchEvent(new Event('{event}')); }})"
        f"(document.getElementById('{box}'))"
    )


def _ids(driver) -> list[str]:
    return driver.run("[...document.querySelectorAll('#cb-body tr')].map(tr => tr.children[3].textContent)")


@needs_chromium
@pytest.mark.timeout(60)
def test_served_over_http_the_page_reads_its_rows_by_itself(scored, tmp_path):
    page = tmp_path / "run #1.html"  # a name that is not a URL as it stands
    assert _score(scored, page, "--html-inline-rows", "50") == 0
    with _served(tmp_path) as base, browser.Browser() as driver:
        driver.open(f"{base}/run%20%231.html")
        driver.wait_for(LOADED)
        assert f"rows 1–{PAGE} of {ROWS}" in driver.run(INFO)
        assert driver.run("document.getElementById('cb-static')") is None
        driver.run("document.getElementById('cb-next').click()")
        assert f"rows {PAGE + 1}–{2 * PAGE} of {ROWS}" in driver.run(INFO)
        driver.run(BY_ID)
        driver.run(BY_ID)  # again: descending
        assert _ids(driver)[:2] == ["q059", "q059"]
        _set(driver, "cb-system", "1", "change")
        assert f"of {ROWS // 2} (filtered from {ROWS})" in driver.run(INFO)
        # a row's detail is read from its line: the whole response, kept as text
        _set(driver, "cb-search", "q001", "input")
        driver.run("document.querySelector('#cb-body tr').click()")
        driver.wait_for("document.getElementById('cb-detail').dataset.row")
        pres = driver.run("[...document.querySelectorAll('#cb-detail pre')].map(p => p.textContent)")
        assert HOSTILE in pres
        assert "question 1?" in driver.run("document.getElementById('cb-detail').textContent")
        # a row read from its line is labelled as an inline one is (html_labels.js)
        driver.run("document.getElementById('cb-mark-incorrect').click()")
        assert driver.run("document.querySelector('#cb-body tr').dataset.label") == "incorrect"
        assert driver.run(
            "window.pwned === undefined && document.querySelectorAll('script, img').length === 2"
        )
        assert driver.errors == []


def _paged_page(tmp_path: Path, rows: list[EvalRow], result: EvalResult) -> Path:
    """The page of ``result`` with ``rows`` in report.rows.jsonl beside it, as the CLI writes them."""
    encoder = RowEncoder()
    (tmp_path / "report.rows.jsonl").write_text("".join(encoder(r) + "\n" for r in rows), encoding="utf-8")
    page = tmp_path / "report.html"
    with page.open("w", encoding="utf-8") as handle:
        html.write(result, handle, encoder, rows_file="report.rows.jsonl")
    return page


@needs_chromium
@pytest.mark.timeout(60)
def test_opened_from_disk_the_page_reads_the_file_a_reader_picks(scored, tmp_path):
    page = tmp_path / "report.html"
    assert _score(scored, page, "--html-inline-rows", "0", "--baseline", "baseline") == 0
    with browser.Browser() as driver:
        driver.open(page)
        assert "Choose report.rows.jsonl" in driver.run("document.getElementById('cb-load').textContent")
        assert driver.run("document.querySelectorAll('#cb-static tr').length") == PAGE + 1  # until then
        driver.run("document.getElementById('cb-audit-0').open = true")
        driver.wait_for("document.querySelector('#cb-audit-0 button.id')")
        driver.run("document.querySelector('#cb-audit-0 button.id').click()")  # before the rows are read
        driver.wait_for("document.querySelectorAll('#cb-audit-0 .side').length === 2")
        assert "not loaded yet" in driver.run("document.querySelector('#cb-audit-0 .pair').textContent")
        driver.choose_file("#cb-file", tmp_path / "report.rows.jsonl")
        driver.wait_for(LOADED)
        assert f"rows 1–{PAGE} of {ROWS}" in driver.run(INFO)
        # the loss audit reads both sides' rows from the file
        driver.run("document.querySelector('#cb-audit-0 button.id').click()")
        driver.wait_for("document.querySelector('#cb-audit-0 .pair').textContent.includes('question')")
        sides = driver.run("[...document.querySelectorAll('#cb-audit-0 .side h4')].map(h => h.textContent)")
        assert sides == ["baseline", "compressed"]
        pair = driver.run("document.querySelector('#cb-audit-0 .pair').textContent")
        assert "question 0?" in pair and "wrong" in pair
        assert driver.errors == []


def _paged_page(tmp_path: Path, rows: list[EvalRow]) -> Path:
    """The page of ``rows`` with them in report.rows.jsonl beside it, as the CLI writes them."""
    encoder = RowEncoder()
    (tmp_path / "report.rows.jsonl").write_text("".join(encoder(r) + "\n" for r in rows), encoding="utf-8")
    page = tmp_path / "report.html"
    with page.open("w", encoding="utf-8") as handle:
        html.write(
            EvalResult(rows=rows, summary=Summarizer()(rows)), handle, encoder, rows_file="report.rows.jsonl"
        )
    return page


@needs_chromium
@pytest.mark.timeout(60)
def test_a_wrong_file_is_said_and_another_can_be_picked(tmp_path):
    rows = [EvalRow("s", "d", f"q{i}", scores={"f1": 1.0}, index=i) for i in range(80)]
    rows[-1].scores["late"] = 0.5  # a field the first rows did not have
    page = _paged_page(tmp_path, rows)
    (tmp_path / "other.jsonl").write_text('{"not": "a row"}\n', encoding="utf-8")
    (tmp_path / "short.jsonl").write_text(
        "".join(line + "\n" for line in (tmp_path / "report.rows.jsonl").read_text().splitlines()[:10])
    )
    load = "document.getElementById('cb-load').textContent"
    with browser.Browser() as driver:
        driver.open(page)
        driver.choose_file("#cb-file", tmp_path / "other.jsonl")
        driver.wait_for("document.body.dataset.rows === 'failed'")
        assert "not one of this report's rows" in driver.run(load)
        driver.choose_file("#cb-file", tmp_path / "short.jsonl")
        driver.wait_for(LOADED)
        assert "The file holds 10 rows; this report was written with 80" in driver.run(load)
        driver.run("document.body.dataset.rows = ''")
        driver.choose_file("#cb-file", tmp_path / "report.rows.jsonl")
        driver.wait_for(LOADED)
        assert driver.run(load) == "" and "rows 1–50 of 80" in driver.run(INFO)
        _set(driver, "cb-field", "1", "change")
        assert "of 1 (filtered from 80)" in driver.run(INFO)
        assert driver.errors == []
