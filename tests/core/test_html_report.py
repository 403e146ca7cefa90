"""The HTML report: charts drawn from the summary's figures, the rows as escaped JSON for the page's
script, and, in a real headless Chromium, that it renders, pages, sorts and filters, shows a row's
detail and the loss audit, logs no script error, and keeps hostile row text as text."""

from __future__ import annotations

import importlib.util
import io
import json
import re
from pathlib import Path

import attrs
import pytest

from context_bench import EvalResult, EvalRow, RowError
from context_bench._summary import Summarizer
from context_bench.records import Summary
from context_bench.reports import _html as html
from context_bench.reports import render
from context_bench.reports._html import headline_field
from context_bench.reports._html_rows import PAGE, TEXT_LIMIT, RowEncoder

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

HOSTILE_ID = "<script>window.pwned=1</script>"
HOSTILE = (
    "</textarea></script><script>window.pwned=2</script>"
    '<img src=x onerror="window.pwned=3"><a href="javascript:window.pwned=4">click</a>'
    "\u2028line\u2029para & <b>bold</b>"
)
SYSTEMS = ("baseline", "compressed")
ROWS_PER_SYSTEM = 60  # more than a page


class FiguredSummary(Summary):
    """A summary whose JSON form carries the figures of issue 15 (intervals, tokens, dollars,
    latency, pass, judge, frontier, comparisons, judges), by the JSON report's names."""

    def __init__(self, base: Summary, groups: dict, extra: dict) -> None:
        super().__init__(**{field.name: getattr(base, field.name) for field in attrs.fields(Summary)})
        object.__setattr__(self, "_figures", (groups, extra))

    def to_dict(self):
        found = super().to_dict()
        groups, extra = self._figures
        for group in found["groups"]:
            group.update(groups.get((group["system"], group["dataset"]), {}))
        found.update(extra)
        return found


def _rows(n: int = ROWS_PER_SYSTEM) -> list[EvalRow]:
    rows = []
    for s, system in enumerate(SYSTEMS):
        for i in range(n):
            example_id = HOSTILE_ID if i == 0 else f"q{i:03d}"
            passed = (i + s) % 3 != 0
            row = EvalRow(
                system,
                "squad",
                example_id,
                scores={"f1": 1.0 if passed else 0.25, "exact_match": float(passed)},
                response=HOSTILE if i == 0 else f"answer {i} from {system}",
                latency=0.1 + 0.01 * i + 0.2 * s,
                input_tokens=400.0 / (1 + s),
                output_tokens=10.0,
                index=s * n + i,
                meta={"explanation": f"judge says {HOSTILE}"} if i == 0 else {},
            )
            row.example = {"question": f"prompt {i} {HOSTILE if i == 0 else ''}", "answer": f"ref {i}"}
            if i == 5:
                row.errors = [RowError("system", system, "ConnectError", "connection refused <b>x</b>")]
                row.scores = {}
            if i == 7:
                row.failures = {"judge": "parse_error: no verdict"}
            rows.append(row)
    return rows


def _figured(rows: list[EvalRow]) -> EvalResult:
    base = Summarizer()(rows)
    groups = {}
    for s, system in enumerate(SYSTEMS):
        groups[(system, "squad")] = {
            "ci": {"f1": [0.6, 0.85], "exact_match": [0.55, 0.8]},
            "stderr": {"f1": 0.05, "exact_match": 0.06},
            "tokens": {"input_mean": 400.0 / (1 + s), "output_mean": 10.0, "total": 410.0 * ROWS_PER_SYSTEM},
            "cost": {"dollars": 0.02 / (1 + s), "priced": True},
            "latency": {
                "mean": 0.4 + 0.2 * s,
                "p50": 0.4 + 0.2 * s,
                "p95": 0.69 + 0.2 * s,
                "p99": 0.7 + 0.2 * s,
            },
            "pass": {"field": "f1", "threshold": 0.7, "pass_rate": 0.66, "cost_of_pass": 0.0005},
            "judge": {
                "calls": 60,
                "failures": 1,
                "parse_errors": 1,
                "input_tokens": 9000.0,
                "output_tokens": 600.0,
                "dollars": 0.004,
            },
            "frontier": {"rank": 2 - s, "dominated": not s},  # compressed: cheaper and better
        }
    lost = [HOSTILE_ID, "q003"]
    extra = {
        "primary": {"field": "f1", "threshold": 0.7},
        "baseline": "baseline",
        "comparisons": [
            {
                "system": "compressed",
                "baseline": "baseline",
                "dataset": "squad",
                "field": field,
                "delta": -0.02,
                "ci": [-0.1, 0.06],
                "p_value": 0.61,
                "n": ROWS_PER_SYSTEM,
                "test": "mcnemar",
                "compression_ratio": 0.5,
                "tokens_saved": 200.0,
                "cost_saved": 0.01,
                "lost": lost,
                "gained": ["q002"],
            }
            for field in ("f1", "exact_match")
        ],
        "judges": [
            {
                "name": "judge",
                "calls": 120,
                "failures": 2,
                "parse_errors": 2,
                "input_tokens": 18000.0,
                "output_tokens": 1200.0,
                "dollars": 0.008,
                "alpha": 0.72,
            }
        ],
        "prices": {"missing": []},
    }
    return EvalResult(
        rows=rows, summary=FiguredSummary(base, groups, extra), metadata={"command": "context-bench run"}
    )


@pytest.fixture
def page(tmp_path) -> Path:
    target = tmp_path / "report.html"
    target.write_text(render(_figured(_rows()), "html"), encoding="utf-8")
    return target


# -- the file ----------------------------------------------------------------------------------


def _data(text: str) -> dict:
    raw = re.search(r'<script type="application/json" id="cb-data">(.*?)</script>', text, re.S).group(1)
    assert (
        "<" not in raw and ">" not in raw and "&" not in raw and "\u2028" not in raw and "\u2029" not in raw
    )
    return json.loads(raw)


def test_the_page_is_one_offline_file_with_every_chart(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"https?://", text, re.I) and " src=" not in text.replace("img src=x", "")
    assert text.count("<script") == 2 and text.count("</script>") == 2  # the data and the page's own
    assert text.count("<svg") == 5  # the overview; per data set quality against tokens and dollars,
    # intervals, latency
    for title in ("Overview", "Charts per data set", "Loss audit, row by row", "Rows", "Run"):
        assert f"<h2>{title}" in text
    assert 'class="frontier"' in text and 'class="ci"' in text and 'class="box"' in text


def test_the_row_data_is_escaped_json_that_keeps_every_text(page):
    data = _data(page.read_text(encoding="utf-8"))
    assert data["systems"] == list(SYSTEMS) and data["fields"] == ["f1", "exact_match"]
    assert len(data["rows"]) == 2 * ROWS_PER_SYSTEM and data["page"] == PAGE
    first = data["rows"][0]
    assert first[3] == HOSTILE_ID and first[8] == HOSTILE
    prompt, reference, explanation, _ = first[9:]
    assert reference == "ref 0" and HOSTILE in prompt and HOSTILE in explanation
    assert data["audit"][0]["lost"] == [HOSTILE_ID, "q003"] and data["audit"][0]["gained"] == ["q002"]


class BareSummary(Summary):
    """A summary whose JSON form has none of the figures of issue 15 (as an earlier core wrote it)."""

    def to_dict(self):
        found = super().to_dict()
        for key in ("comparisons", "primary", "baseline", "judges", "prices"):
            found.pop(key, None)
        for group in found["groups"]:
            for key in ("ci", "stderr", "tokens", "cost", "latency", "pass", "judge", "frontier"):
                group.pop(key, None)
        return found


def test_a_summary_without_the_new_figures_leaves_their_blocks_out():
    rows = _rows(4)
    base = Summarizer()(rows)
    summary = BareSummary(**{field.name: getattr(base, field.name) for field in attrs.fields(Summary)})
    text = render(EvalResult(rows=rows, summary=summary), "html")
    assert "Loss audit, row by row" not in text and "against dollars" not in text
    assert text.count("<svg") == 2  # the intervals (no interval bars yet) and the latency metric's spread
    assert _data(text)["audit"] == []


def test_each_data_set_is_charted_by_its_own_headline_as_its_figures_are():
    """gsm8k's rows carry AnswerQuality's f1 beside math_equiv; its chart ranks by math_equiv, the
    field its pass rate and frontier use, unless --score-field names one it has."""
    unnamed = {"primary": {"field": None, "threshold": 0.7}}
    assert headline_field(unnamed, ["math_equiv", "f1", "exact_match"]) == "math_equiv"
    assert headline_field(unnamed, ["f1", "exact_match"]) == "f1"
    named = {"primary": {"field": "f1", "threshold": 0.7}}
    assert headline_field(named, ["math_equiv", "f1"]) == "f1"
    assert headline_field(named, ["rouge_l_f1", "rouge_1_f1"]) == "rouge_l_f1"
    assert headline_field({}, []) is None


HOSTILE_NAME = '<img src=x onerror="window.pwned=5">'
ESCAPED_NAME = "&lt;img src=x onerror=&quot;window.pwned=5&quot;&gt;"


def test_a_hostile_name_message_command_and_rows_file_are_text_wherever_the_page_shows_them():
    """Outside the row data (escaped JSON, tested above), the page is HTML: a system's name in the
    legend, the charts and the tables, an error message in the warnings, the command in the run's
    lines and the rows file's name are all escaped, so none of them becomes an element."""
    rows = [
        EvalRow(
            system,
            "squad",
            f"q{i}",
            scores={"f1": float((i + s) % 2)},
            latency=0.1 * (i + 1),
            input_tokens=100.0 * (s + 1),
            output_tokens=10.0,
            index=4 * s + i,
        )
        for s, system in enumerate(("baseline", HOSTILE_NAME))
        for i in range(4)
    ]
    rows[-1].scores = {}
    rows[-1].errors = [RowError("system", HOSTILE_NAME, "ConnectError", f"refused {HOSTILE_NAME}")]
    result = EvalResult(rows=rows, summary=Summarizer()(rows), metadata={"command": ["run", HOSTILE_NAME]})
    encoder = RowEncoder()
    lines = [encoder(row) for row in rows]
    page = io.StringIO()
    html.write(result, page, encoder, lines, rows_file=f"{HOSTILE_NAME}.rows.jsonl")
    shown = re.sub(
        r'<script type="application/json" id="cb-data">.*?</script>', "", page.getvalue(), flags=re.S
    )
    assert "<img" not in shown
    for where in (
        f"ConnectError: refused {ESCAPED_NAME}</li>",  # the warnings
        f'<i style="background:#d95f02"></i>{ESCAPED_NAME}</span>',  # the charts' legend
        f'text-anchor="end">{ESCAPED_NAME}</text>',  # a chart's label of a point
        f"<li>command: run {ESCAPED_NAME}</li>",  # the run
        f"all from {ESCAPED_NAME}.rows.jsonl, the file beside this page",  # the rows file
    ):
        assert where in shown, where


def test_the_size_grows_linearly_with_a_bounded_cost_per_row():
    def size(n):
        rows = _rows(n)
        for row in rows:
            row.response = "x" * (TEXT_LIMIT * 5)
        return len(render(EvalResult(rows=rows, summary=Summarizer()(rows)), "html").encode())

    small, large = size(100), size(200)
    per_row = (large - small) / 200
    assert per_row < TEXT_LIMIT + 600


# -- in Chromium -------------------------------------------------------------------------------

needs_chromium = pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")


@needs_chromium
@pytest.mark.timeout(30)
def test_chromium_renders_the_charts_and_the_table_without_a_script_error(page):
    dom, errors = browser.dump_dom(page)
    assert errors == []
    assert dom.count("<svg") == 5 and 'id="cb-table"' in dom and 'id="cb-static"' not in dom
    assert len(re.findall(r"<tr data-index=", dom)) == PAGE
    assert 'data-ready="1"' in dom
    assert "pwned" not in dom.split("</h1>", 1)[0]


@pytest.fixture
def chromium(page):
    with browser.Browser() as driver:
        driver.open(page)
        yield driver
        assert driver.errors == []


def _shown(driver) -> list[str]:
    return driver.run("[...document.querySelectorAll('#cb-body tr')].map(tr => tr.children[3].textContent)")


@needs_chromium
@pytest.mark.timeout(30)
def test_paging_sorting_and_filtering(chromium):
    run = chromium.run
    info = "document.getElementById('cb-info').textContent"
    assert f"rows 1–{PAGE} of {2 * ROWS_PER_SYSTEM}" in run(info)
    run("document.getElementById('cb-next').click()")
    assert f"rows {PAGE + 1}–{2 * PAGE} of" in run(info)
    # sort by example id, twice for descending
    run("document.querySelector('#cb-table th[data-column=\"3\"]').click()")
    assert _shown(chromium)[:2] == [HOSTILE_ID, HOSTILE_ID] and run(info).startswith(" rows 1–")
    run("document.querySelector('#cb-table th[data-column=\"3\"]').click()")
    assert _shown(chromium)[:2] == ["q059", "q059"]

    def choose(box, value):
        run(
            f"(b => {{ b.value = {json.dumps(value)}; b.dispatchEvent(new Event('change')); }})"
            f"(document.getElementById('{box}'))"
        )

    def type_in(box, value):
        run(
            f"(b => {{ b.value = {json.dumps(value)}; b.dispatchEvent(new Event('input')); }})"
            f"(document.getElementById('{box}'))"
        )

    choose("cb-system", "1")
    assert f"of {ROWS_PER_SYSTEM} (filtered from {2 * ROWS_PER_SYSTEM})" in run(info)
    assert set(
        run("[...document.querySelectorAll('#cb-body tr')].map(tr => tr.children[1].textContent)")
    ) == {"compressed"}
    choose("cb-errors", "1")
    assert _shown(chromium) == ["q005"]
    choose("cb-errors", "0")
    choose("cb-failures", "1")
    assert _shown(chromium) == ["q007"]
    choose("cb-failures", "")
    choose("cb-field", "0")
    type_in("cb-max", "0.5")
    scores = run("[...document.querySelectorAll('#cb-body tr')].map(tr => tr.children[4].textContent)")
    assert scores and set(scores) == {"0.250"}
    type_in("cb-search", "q00")
    assert all(s.startswith("q00") for s in _shown(chromium))


@needs_chromium
@pytest.mark.timeout(30)
def test_a_rows_detail_and_the_loss_audit_show_hostile_text_as_text(chromium):
    run = chromium.run
    run("document.querySelector('#cb-body tr').click()")
    detail = run("document.getElementById('cb-detail').textContent")
    assert "prompt sent" in detail and "ref 0" in detail and "judge says" in detail
    assert run(
        f"[...document.querySelectorAll('#cb-detail pre')].some(p => p.textContent === {json.dumps(HOSTILE)})"
    )
    # the audit: open a comparison, click a lost id, both sides' rows show
    run("document.getElementById('cb-audit-0').open = true")
    run("new Promise(r => setTimeout(r, 50))")
    run("document.querySelector('#cb-audit-0 button.id').click()")
    sides = run("[...document.querySelectorAll('#cb-audit-0 .side h4')].map(h => h.textContent)")
    assert sides == ["baseline", "compressed"]
    assert "ref 0" in run("document.querySelector('#cb-audit-0 .pair').textContent")
    # nothing a row carried ran or became markup
    assert run("window.pwned === undefined")
    assert run("document.querySelectorAll('script').length") == 2
    assert run("document.querySelectorAll('a[href], img, textarea, #cb-rows b, #cb-audit b').length") == 0


@needs_chromium
@pytest.mark.timeout(30)
def test_a_row_without_script_text_still_reads_as_a_plain_table(tmp_path):
    """The first page is plain HTML too: with script off, Chromium shows it."""
    target = tmp_path / "report.html"
    target.write_text(render(_figured(_rows()), "html"), encoding="utf-8")
    with browser.Browser() as driver:
        driver.send("Emulation.setScriptExecutionDisabled", value=True)
        driver.open(target)
        assert driver.run("document.querySelectorAll('#cb-static tr').length") == PAGE + 1
        assert driver.errors == []


@needs_chromium
@pytest.mark.timeout(60)
@pytest.mark.parametrize(("width", "height"), [(1400, 900), (400, 800)])
def test_the_page_leads_with_the_verdict_on_a_desk_and_a_phone(tmp_path, capsys, width, height):
    """The bundled sample (8 data sets): at 1400 and at 400 pixels its verdict is in the first
    screen, then the key figures, one overview chart with a panel per data set on one row, the data
    sets' own charts closed until clicked, then the rows and the loss audit; no script error."""
    from context_bench.cli import main

    page = tmp_path / "sample.html"
    assert main(["score", "--no-progress", "--output", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    with browser.Browser(width, height) as driver:
        driver.open(page)
        first = driver.run(
            "(() => { const li = document.querySelector('ul.verdict li'), r = li.getBoundingClientRect();"
            " return [li.textContent, r.top, r.bottom, window.innerHeight]; })()"
        )
        order = driver.run(
            "[...document.querySelectorAll('h2')].map(h => h.textContent)"
            ".filter(t => /^(Key|Overview|Charts|Rows|Loss)/.test(t)).map(t => t.split(' ')[0])"
        )
        datasets = driver.run("JSON.parse(document.getElementById('cb-data').textContent).datasets")
        panels = driver.run(
            "[...document.querySelectorAll('svg.chart')].filter(s => s.querySelector('g.panel'))"
            ".map(s => [...s.querySelectorAll('g.panel')].map(g => ["
            "g.getBoundingClientRect().top, g.querySelector('text.dataset').textContent]))"
        )
        sections = driver.run(
            "[...document.querySelectorAll('details.dataset')].map(d => [d.querySelector('summary')"
            ".textContent, d.open, d.querySelector('svg').checkVisibility()])"
        )
        driver.run("document.querySelector('details.dataset summary').click()")
        opened = driver.run(
            "(() => { const d = document.querySelector('details.dataset');"
            " return [d.open, d.querySelector('svg').checkVisibility()]; })()"
        )
        assert driver.errors == []
    text, top, bottom, screen = first
    assert text.startswith("compressed vs baseline on ") and "input tokens" in text
    assert 0 <= top < bottom <= screen
    assert order == ["Key", "Overview", "Charts", "Rows", "Loss"]
    assert len(datasets) == 8 and len(panels) == 1  # one overview chart
    assert (
        sorted(name for _, name in panels[0]) == sorted(datasets) and len({at for at, _ in panels[0]}) == 1
    )  # one row
    assert sorted(sections) == [[name, False, False] for name in sorted(datasets)]
    assert opened == [True, True]
