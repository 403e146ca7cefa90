"""``--by FIELD[:BINS]`` (issue 30): every group's figures and comparisons again per part of its
rows, by a field of the input rows.  Hand-worked: two systems over five questions of lengths 1000,
3999, 4000, 7999 and 8000, binned 0-4000, 4000-8000, 8000- (LOW <= length < HIGH); system a's
exact match is 1, 0 | 1, 1 | errored, so 0.5, 1.0 and 0.0 (its errored row counts 0), b's 1, 1 |
0, 1 | 1, so 1.0, 0.5 and 1.0; b minus a is +0.5, -0.5 and +1.0, each over one discordant pair
(McNemar's exact p = 1).  The JSON names (``summary.groups[].by``), the tables of the terminal,
Markdown and HTML (in Chromium), ``show`` of the stored run, and the bad input: a field no row has,
bins that overlap, an empty or unreadable bin, a field given twice, one line and exit 2 before any
row."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from context_bench._by import By, by_options
from context_bench.errors import UsageError

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

LENGTHS = [1000, 3999, 4000, 7999, 8000]
RIGHT = {"a": [1, 0, 1, 1, None], "b": [1, 1, 0, 1, 1]}  # None: no response, an errored row
BINS = "length:0-4000,4000-8000,8000-"


@pytest.fixture
def rows(write_rows):
    lines = []
    for system, right in RIGHT.items():
        for number, (length, ok) in enumerate(zip(LENGTHS, right, strict=True), start=1):
            row = {
                "system": system,
                "dataset": "qa",
                "id": f"q{number}",
                "question": "Capital?",
                "answer": "Paris",
                "length": length,
                "difficulty": "hard" if number % 2 else "easy",
            }
            if ok is not None:
                row["response"] = "Paris" if ok else "Lima"
            lines.append(row)
    return write_rows(lines)


def _score(cbench, *argv):
    return cbench(
        "score",
        "qa.jsonl",
        "--evaluator",
        "AnswerQuality",
        "--store",
        "none",
        "--max-failure-rate",
        "1",
        *argv,
    )


def _parts(summary, system, field="length"):
    (group,) = [g for g in summary["groups"] if g["system"] == system]
    return group["by"][field]


def test_each_bin_has_the_hand_worked_means_errors_and_comparisons(cbench, rows):
    code, out, err = _score(cbench, "--by", BINS, "--output", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    a, b = _parts(summary, "a"), _parts(summary, "b")
    assert [p["value"] for p in a] == ["0-4000", "4000-8000", "8000-"]
    assert [(p["group"]["rows"], p["group"]["errors"], p["group"]["scores"]["exact_match"]) for p in a] == [
        (2, 0, 0.5),
        (2, 0, 1.0),
        (1, 1, 0.0),
    ]
    assert [(p["group"]["rows"], p["group"]["errors"], p["group"]["scores"]["exact_match"]) for p in b] == [
        (2, 0, 1.0),
        (2, 0, 0.5),
        (1, 0, 1.0),
    ]
    assert all(p["comparisons"] == [] for p in a)  # the baseline is compared with nothing
    compared = [[c for c in p["comparisons"] if c["field"] == "exact_match"] for p in b]
    assert [(c["baseline"], c["delta"], c["n"], c["test"], c["p_value"]) for (c,) in compared] == [
        ("a", 0.5, 2, "mcnemar", 1.0),
        ("a", -0.5, 2, "mcnemar", 1.0),
        ("a", 1.0, 1, None, None),  # one pair: nothing to test
    ]
    assert [c["lost"] for (c,) in compared] == [[], ["q3"], []]
    first = a[0]["group"]  # the part's whole group summary: every figure
    assert (first["system"], first["pass"]["pass_rate"], first["by"]) == ("a", 0.5, {})
    assert first["ci"]["exact_match"] is not None
    # the parts add up to the group: the whole run's figures are unchanged by --by
    (whole,) = [g for g in summary["groups"] if g["system"] == "a"]
    assert (whole["rows"], whole["scores"]["exact_match"]) == (5, 0.6)


def test_values_are_parts_as_they_are_and_rows_without_one_are_said(cbench, write_rows):
    own = [{"difficulty": "hard", "length": "12"}, {"difficulty": "easy", "length": "n/a"}, {"length": 9}]
    write_rows(
        [
            {"id": str(n), "question": "?", "answer": "x", "response": said, **fields}
            for n, (said, fields) in enumerate(zip(["x", "y", "x"], own, strict=True), start=1)
        ]
    )
    code, out, err = _score(cbench, "--by", "difficulty", "--by", "length:10-20", "--output", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    shown = {
        f: [
            (p["value"], p["group"]["rows"], p["group"]["scores"]["exact_match"])
            for p in _parts(summary, "responses", f)
        ]
        for f in ("difficulty", "length")
    }
    assert shown == {
        "difficulty": [("easy", 1, 0.0), ("hard", 1, 1.0), ("(none)", 1, 1.0)],
        "length": [("10-20", 1, 1.0), ("(other)", 2, 0.5)],  # "n/a" and 9 are in no bin
    }


def test_every_format_shows_the_parts(cbench, cli, rows, workdir, store_url):
    code, table, err = _score(cbench, "--by", BINS)
    assert code == 0, err
    assert "By length: the primary score's mean in each part (rows)" in table
    line = next(line for line in table.splitlines() if line.startswith("b ") and "(2)" in line)
    assert line.split()[3:] == ["1.000", "(2)", "0.500", "(2)", "1.000", "(1)", "0.800", "(5)"]
    code, markdown, _ = _score(cbench, "--by", BINS, "--output", "markdown")
    assert "\n| a | qa | f1 | 0.500 (2) | 1.000 (2) | 0.000 (1) | 0.600 (5) |\n" in markdown
    assert "\n| b | qa | 4000-8000 | f1 | -0.500 worse | \\[-1.00, 0.00\\] | 1 | 2 |\n" in markdown
    code, out, err = cbench(
        "score",
        "qa.jsonl",
        "--evaluator",
        "AnswerQuality",
        "--by",
        BINS,
        "--output",
        "json",
        "--store",
        store_url,
        "--max-failure-rate",
        "1",
    )
    assert code == 0, err
    code, shown, _ = cli("show", "1", "--output", "json", "--store", store_url)
    assert json.loads(shown)["summary"] == json.loads(out)["summary"]  # the parts stored and read back


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
def test_the_html_report_shows_the_parts_in_chromium(cbench, rows, workdir):
    code, _, err = _score(cbench, "--by", BINS, "--output", "html", "--out", "report.html")
    assert code == 0, err
    dom, errors = browser.dump_dom(workdir / "report.html")
    assert errors == []
    assert "By length: the primary score's mean in each part (rows)" in dom
    assert "<td>4000-8000</td>" in dom and "0.500 (2)" in dom


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (
            "size",
            "--by size: no row has a field 'size' (the rows have answer, dataset, difficulty, id, "
            "length, question, response, system)",
        ),
        ("length:0-4000,3000-", "--by length:0-4000,3000-: the bins 0-4000 and 3000- overlap"),
        ("length:10-5", "--by length:10-5: the bin 10-5 holds no value (LOW-HIGH, LOW < HIGH)"),
        ("length:4k-8k", "--by length:4k-8k: '4k-8k' is not a bin"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_any_row(cbench, rows, given, said):
    code, out, err = _score(cbench, "--by", given, "--output", "json")
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"context-bench: error: {said}")


def test_bins_are_read_in_order_and_a_field_twice_is_refused():
    by = By.parse("length:8000-,0-4000,4000-8000")
    assert [(b.label, b.low, b.high) for b in by.bins] == [
        ("0-4000", 0.0, 4000.0),
        ("4000-8000", 4000.0, 8000.0),
        ("8000-", 8000.0, None),
    ]
    with pytest.raises(UsageError, match="^--by length is given twice"):
        by_options(["length", "length:0-10"])


def test_a_part_the_baseline_has_no_row_in_compares_nothing_and_misses_nothing(cbench, write_rows):
    """b and c answer q2 and b q3, which the baseline a lacks: in their part neither stands in for
    a, so c's q3 is not missing against b's, as it is not in the whole run."""
    said = "a q1 x 1, b q1 x 1, c q1 y 1, b q2 y 9, c q2 x 9, b q3 x 9"  # system, id, response, length
    lines = [
        {"system": s, "id": q, "question": "?", "answer": "x", "response": r, "length": int(n)}
        for s, q, r, n in (row.split() for row in said.split(", "))
    ]
    write_rows(lines)
    code, out, err = _score(cbench, "--by", "length:0-5,5-", "--baseline", "a", "--output", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    for system, (first, second) in {"b": (1.0, 0.5), "c": (0.0, 1.0)}.items():
        low, high = _parts(summary, system)
        assert (low["value"], low["group"]["scores"]["exact_match"], low["group"]["errors"]) == (
            "0-5",
            first,
            0,
        )
        assert (high["value"], high["group"]["scores"]["exact_match"], high["group"]["errors"]) == (
            "5-",
            second,
            0,
        )
        assert [c["baseline"] for c in low["comparisons"]][:1] == ["a"] and high["comparisons"] == []
