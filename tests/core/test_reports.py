"""Reports: the terminal table, Markdown, JSON, JSONL and HTML renderings of a hand-built EvalResult."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import pytest

from context_bench import EvalResult, EvalRow, RowError, UsageError
from context_bench.records import (
    BreakdownPart,
    ErrorCounts,
    EvaluatorFailures,
    GroupSummary,
    Summary,
    SystemSummary,
)
from context_bench.reports import View, formats, render
from context_bench.reports._sections import figure, score
from context_bench.testing import isolated_host

#: The core's report formats (a host of the built-ins alone).
FORMATS = formats(isolated_host())

SCRIPT_ID = "<script>alert(1)</script>"
ANSWER_FIELDS = ("f1", "exact_match", "recall", "contains")
# One data set whose rows carry many score fields, to force tables wider than a terminal.
WIDE_FIELDS = tuple(f"criterion_{n:02d}_score" for n in range(12))
#: The terminal table with every table (--detail), at its default width of 100 columns.
DETAIL = View(detail=True)


def _group(system, dataset, rows, scores, **extra):
    return GroupSummary(system, dataset, rows, scores=scores, **extra)


@pytest.fixture
def result():
    rows = [
        EvalRow(
            "proxy|v2",
            "squad",
            SCRIPT_ID,
            scores={"f1": 0.5, "exact_match": 0.0, "recall": 1.0, "contains": 1.0},
            response="The capital is <b>Paris</b>.",
            latency=0.25,
            input_tokens=120,
            output_tokens=8,
            meta={"qa_type": "single-hop", "tags": ("a", "b")},
        ),
        EvalRow(
            "proxy|v2",
            "squad",
            "q2",
            scores={"f1": 1.0, "exact_match": 1.0, "recall": 1.0, "contains": 1.0},
            response="Lyon",
            latency=0.75,
            meta={"qa_type": "multi-hop"},
            index=1,
        ),
        EvalRow(
            "proxy|v2",
            "mmlu",
            "m1",
            scores={"mc_accuracy": 1.0},
            response="B",
            latency=0.5,
            failures={"judge": "timeout: 30 s"},
        ),
        EvalRow(
            "proxy|v2",
            "mmlu",
            "m2",
            scores={},
            response=None,
            errors=[RowError("system", "proxy|v2", "ConnectError", "connection refused")],
            index=1,
        ),
        EvalRow(
            "proxy|v2",
            "rubric",
            "r1",
            scores=dict.fromkeys(WIDE_FIELDS, 0.25),
            response="line one\nline two " + "x" * 300,
        ),
    ]
    summary = Summary(
        groups=[
            _group(
                "proxy|v2",
                "squad",
                2,
                {"f1": 0.75, "exact_match": 0.5, "recall": 1.0, "contains": 1.0},
                metrics={"latency": {"mean": 0.5, "p50": 0.5, "p95": 0.725}},
                breakdown={
                    "qa_type": {
                        "multi-hop": BreakdownPart(1, {"f1": 1.0, "exact_match": 1.0}),
                        "single-hop": BreakdownPart(1, {"f1": 0.5, "exact_match": 0.0}),
                    }
                },
            ),
            _group(
                "proxy|v2",
                "mmlu",
                2,
                {"mc_accuracy": 1.0},
                errors=1,
                metrics={"latency": {"mean": 0.5, "p50": 0.5, "p95": 0.5}},
                failures={"judge": 1},
            ),
            _group("proxy|v2", "rubric", 1, dict.fromkeys(WIDE_FIELDS, 0.25), metrics={"latency": {}}),
        ],
        systems={"proxy|v2": SystemSummary(rows=5, errors=1, scores={"f1": 0.75, "mc_accuracy": 1.0})},
        errors=ErrorCounts(total=1, by_system={"proxy|v2": 1}, by_evaluator={}),
        failures={"judge": EvaluatorFailures(count=1, rows=4, rate=0.25, kinds={"timeout": 1})},
        usage={"judge": {"input_tokens": 1500.0, "output_tokens": 42.0}},
        warnings=["judge failed on 1 of 4 rows (25.0%: timeout 1)"],
    )
    return EvalResult(rows=rows, summary=summary)


def _section(text: str, title: str) -> list[str]:
    """The lines of one titled block of the terminal table."""
    block = text.split(f"\n\n{title}\n", 1)[1]
    return block.split("\n\n", 1)[0].splitlines()


def test_unknown_format_names_the_valid_ones(result):
    assert FORMATS == ("table", "markdown", "json", "jsonl", "html", "csv")
    with pytest.raises(UsageError) as info:
        render(result, "pdf")
    message = str(info.value)
    assert "'pdf'" in message and all(fmt in message for fmt in FORMATS)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_an_empty_result(fmt):
    text = render(EvalResult(rows=[]), fmt)
    counts = "0 rows, 0 systems, 0 data sets, 0 errors"
    if fmt == "jsonl":
        assert text == ""
    elif fmt == "json":
        assert json.loads(text) == {"verdict": [], "summary": {}, "metadata": {}, "rows": []}
        assert text.endswith("\n")
    elif fmt == "html":
        assert text.startswith("<!DOCTYPE html>") and text.endswith("</html>\n")
        assert f"<p>{counts}</p>" in text and "<p>No rows.</p>" in text
    elif fmt == "csv":  # the header alone
        assert text == "system,dataset,example_id,input_tokens,output_tokens,latency,cost,errors,response\n"
    elif fmt == "table":
        assert text == f"{counts}\n"
    else:
        assert text.endswith(f"{counts}\n") and text.count("\n") <= 3


# -- table -------------------------------------------------------------------------------------


def test_table_shows_every_score_field_per_group(result):
    text = render(result, "table", DETAIL)
    # the verdict first: with one system, each data set's primary score with its interval
    assert text.startswith("proxy|v2 on squad: f1 0.750, 2 rows\nproxy|v2 on mmlu: mc_accuracy 1.000")
    squad = _section(text, "Scores: squad")
    assert squad[0].split() == ["system", "dataset", "rows", "errors", "error", "rate", *ANSWER_FIELDS]
    assert squad[2].split() == ["proxy|v2", "squad", "2", "0", "0.0%", "0.750", "0.500", "1.000", "1.000"]
    mmlu = _section(text, "Scores: mmlu")
    assert mmlu[0].split() == ["system", "dataset", "rows", "errors", "error", "rate", "mc_accuracy"]
    assert mmlu[2].split() == ["proxy|v2", "mmlu", "2", "1", "50.0%", "1.000"]


def test_table_fits_a_100_column_terminal(result):
    text = render(result, "table", DETAIL)
    assert max(len(line) for line in text.splitlines()) <= 100
    # the wide data set is not cut into "(1/3)" pieces: its table is turned on its side, one line
    # per figure and one column per group, so every field shows on one screen
    assert "(1/" not in text
    rubric = _section(text, "Scores: rubric")
    assert rubric[0].split() == ["figure", "proxy|v2", "/", "rubric"]
    shown = [line.split()[0] for line in rubric[2:]]
    assert shown == ["rows", "errors", "error", *WIDE_FIELDS]


def test_table_columns_are_aligned(result):
    lines = _section(render(result, "table", DETAIL), "Scores: squad")
    header, rule, row = lines
    # numbers are right-aligned under their header; texts left-aligned
    assert len(header) == len(rule) == len(row)
    assert header.index("f1") + 2 == row.index("0.750") + 5
    assert row.startswith("proxy|v2 ")


def test_table_shows_metrics_breakdown_failures_usage_and_warnings(result):
    text = render(result, "table", DETAIL)
    latency = _section(text, "Metric: latency")
    assert latency[0].split() == ["system", "dataset", "mean", "p50", "p95"]
    assert latency[2].split() == ["proxy|v2", "squad", "0.5000", "0.5000", "0.7250"]
    assert len(latency) == 4  # the rubric group has no latency figures and no line
    breakdown = _section(text, "Breakdown by qa_type: squad")
    assert breakdown[0].split() == ["system", "dataset", "qa_type", "rows", *ANSWER_FIELDS]
    assert breakdown[2].split() == ["proxy|v2", "squad", "multi-hop", "1", "1.000", "1.000", "-", "-"]
    failures = _section(text, "Evaluator failures (scores are fallbacks)")
    assert failures[2].split() == ["judge", "1", "4", "25.0%", "timeout", "1"]
    assert _section(text, "Errors")[2].split() == ["system", "proxy|v2", "1"]
    assert _section(text, "Evaluator token usage")[2].split() == ["judge", "1500", "42"]
    assert text.rstrip().endswith("\n\nwarning: judge failed on 1 of 4 rows (25.0%: timeout 1)")


def test_table_cuts_long_names_and_flattens_newlines():
    long_name = "/data/" + "nested/" * 10 + "questions.jsonl"
    rows = [EvalRow("sys\nname", long_name, "1", scores={"f1": 1.0})]
    summary = Summary(groups=[_group("sys\nname", long_name, 1, {"f1": 1.0})])
    lines = _section(render(EvalResult(rows=rows, summary=summary), "table", DETAIL), "Scores")
    assert lines[2].startswith("sys name  " + long_name[:39] + "…")


def test_report_summarizes_rows_when_the_result_has_no_summary(result):
    calls = []

    def summarize(rows):
        calls.append(len(rows))
        return Summary(groups=[_group("s", "d", len(rows), {"f1": 0.125})])

    text = render(EvalResult(rows=result.rows, summarize=summarize), "table", DETAIL)
    assert calls == [5]
    assert _section(text, "Scores")[2].split() == ["s", "d", "5", "0", "0.0%", "0.125"]


# -- markdown ----------------------------------------------------------------------------------


def test_markdown_tables_are_well_formed(result):
    text = render(result, "markdown")
    assert "### Scores: squad" in text and "### Metric: latency" in text
    tables = [block for block in text.split("\n\n") if block.startswith("|")]
    assert tables
    for table in tables:
        lines = table.splitlines()
        # an escaped pipe (the system is "proxy|v2") does not split a cell
        counts = {len(line.replace("\\|", "").split("|")) for line in lines}
        assert len(counts) == 1
        assert set(lines[1].replace("|", "").split()) <= {"---", "---:"}
    assert "| proxy\\|v2 | squad | 2 | 0 | 0.0% | 0.750 | 0.500 | 1.000 | 1.000 |" in text
    assert "- judge failed on 1 of 4 rows (25.0%: timeout 1)" in text


def test_markdown_escapes_html():
    rows = [EvalRow("s", SCRIPT_ID, "1", scores={"f1": 1.0})]
    text = render(
        EvalResult(rows=rows, summary=Summary(groups=[_group("s", SCRIPT_ID, 1, {"f1": 1.0})])), "markdown"
    )
    assert "<script>" not in text and "\\<script\\>" in text


# -- json / jsonl ------------------------------------------------------------------------------


def test_json_is_the_whole_result(result):
    text = render(result, "json")
    data = json.loads(text)
    assert list(data) == ["verdict", "summary", "metadata", "rows"] and text.endswith("\n")
    assert data["verdict"][0] == "proxy|v2 on squad: f1 0.750, 2 rows"
    assert [r["example_id"] for r in data["rows"]] == [SCRIPT_ID, "q2", "m1", "m2", "r1"]
    first = data["rows"][0]
    assert first["scores"] == {"f1": 0.5, "exact_match": 0.0, "recall": 1.0, "contains": 1.0}
    assert (first["response"], first["latency"], first["input_tokens"], first["output_tokens"]) == (
        "The capital is <b>Paris</b>.",
        0.25,
        120,
        8,
    )
    assert first["meta"]["tags"] == ["a", "b"]
    assert data["rows"][2]["failures"] == {"judge": "timeout: 30 s"}
    assert data["rows"][3]["errors"] == [
        {"stage": "system", "source": "proxy|v2", "type": "ConnectError", "message": "connection refused"}
    ]
    squad = data["summary"]["groups"][0]
    assert (squad["system"], squad["dataset"], squad["rows"]) == ("proxy|v2", "squad", 2)
    assert squad["scores"] == {"f1": 0.75, "exact_match": 0.5, "recall": 1.0, "contains": 1.0}
    assert data["summary"]["failures"]["judge"]["kinds"] == {"timeout": 1}
    assert data["summary"]["usage"] == {"judge": {"input_tokens": 1500.0, "output_tokens": 42.0}}


def test_jsonl_has_one_row_per_line(result):
    lines = render(result, "jsonl").splitlines()
    assert len(lines) == len(result.rows)
    for line, row in zip(lines, result.rows, strict=True):
        data = json.loads(line)
        if "tags" in data["meta"]:
            assert data["meta"]["tags"] == ["a", "b"]
            data["meta"]["tags"] = tuple(data["meta"]["tags"])
        assert EvalRow.from_dict(data) == row


# -- html --------------------------------------------------------------------------------------


class _Page(HTMLParser):
    """Collects the tags (checking they nest), the text, and every attribute of a page."""

    VOID = {"meta", "br", "hr", "img", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.attributes, self.text = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += attrs
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    assert page.stack == []
    return page


def test_html_is_self_contained_and_escapes_every_text(result):
    text = render(result, "html")
    page = _parse(text)
    # the only scripts are the page's own: the rows as JSON and one inline script (no src, below)
    assert page.tags.count("script") == 2
    assert SCRIPT_ID in page.text  # the row id shows as text
    assert "The capital is <b>Paris</b>." in page.text
    assert "b" not in page.tags
    # nothing is loaded: the one link is the empty icon (a data URL), so no /favicon.ico is asked for
    assert [a for a in page.attributes if a[0] in ("src", "href")] == [("href", "data:,")]
    assert not re.search(r"https?://", text, re.I)
    assert text.startswith("<!DOCTYPE html>")


def test_html_has_summary_and_row_tables(result):
    page = _parse(render(result, "html"))
    text = "\n".join(page.text)
    for title in (
        "Scores: squad",
        "Scores: mmlu",
        "Metric: latency",
        "Breakdown by qa_type: squad",
        "Rows",
        "Warnings",
    ):
        assert title in page.text
    # every row, its errors and failures, and every score field appear in the row table
    for row in result.rows:
        assert row.example_id in page.text
    assert "system proxy|v2: ConnectError: connection refused" in page.text
    assert "judge: timeout: 30 s" in page.text
    assert all(field in page.text for field in (*ANSWER_FIELDS, "mc_accuracy", *WIDE_FIELDS))
    assert "latency (s)" in page.text and "input tokens" in page.text and "cost" not in page.text
    # a long or multi-line response folds away but keeps its full text
    assert "details" in page.tags
    assert "line one\nline two " + "x" * 300 in text


def test_html_renders_rows_without_a_summary():
    rows = [EvalRow("s", "d", "only", scores={"f1": 0.5})]
    page = _parse(render(EvalResult(rows=rows), "html"))
    assert "only" in page.text and "0.500" in page.text


# -- number formats ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "-"),
        (3, "3"),
        (3.0, "3"),
        (0.5, "0.5000"),
        (0.123456, "0.1235"),
        (1234.56, "1234.6"),
        (0.00012, "0.0001200"),
        (math.inf, "inf"),
    ],
)
def test_figure_format(value, text):
    assert figure(value) == text


@pytest.mark.parametrize(
    ("value", "text"), [(None, "-"), (1, "1.000"), (0.12345, "0.123"), (math.nan, "nan"), ("n/a", "n/a")]
)
def test_score_format(value, text):
    assert score(value) == text
