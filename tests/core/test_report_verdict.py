"""The report answers first (issue 29): the verdict on line one of every format, one screen by
default at the terminal's width, no table cut into numbered pieces, and numbers that read plainly."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from context_bench.records import Comparison
from context_bench.reports._verdict import Verdict, significance
from context_bench.reports.numbers import interval, money, p_value, ratio


def write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def qa(system, example, response, dataset="qa", tokens=100):
    return {"id": example, "system": system, "dataset": dataset, "question": f"Q {example}?",
            "answer": "Paris", "response": response, "input_tokens": tokens}  # fmt: skip


def pairs(tmp_path, lost, total, dataset="qa"):
    """``total`` questions the baseline answers right at 200 input tokens a row and the candidate,
    at 100, gets wrong on the first ``lost``."""
    rows = [qa("base", f"q{i}", "Paris", dataset, 200) for i in range(total)]
    rows += [qa("cand", f"q{i}", "Rome" if i < lost else "Paris", dataset, 100) for i in range(total)]
    return write(tmp_path / f"{dataset}.jsonl", rows)


def lines(text):
    return text.rstrip("\n").split("\n")


def unwrapped(text):
    """The verdict's lines as one line each (a continuation line starts with two spaces)."""
    return re.sub(r"\n  (?=\S)", " ", text)


@pytest.fixture
def wide(monkeypatch):
    """A terminal wide enough that no verdict wraps."""
    monkeypatch.setenv("COLUMNS", "300")


# -- the verdict -------------------------------------------------------------------------------


def test_the_verdict_is_the_first_line_with_the_summary_figures(cli, tmp_path, wide):
    """3 of 10 lost: McNemar's exact p = 2 * (1/2)^3 = 0.25; half the input tokens; priced at $1 per
    million input tokens, the baseline's 2,000 tokens cost $0.0020 and the candidate's $0.0010."""
    data = pairs(tmp_path, 3, 10)
    prices = ("--price", "base=1,0", "--price", "cand=1,0")
    code, out, err = cli("score", data, "--no-progress", *prices, "--output", "json")
    report = json.loads(out)
    (c,) = [c for c in report["summary"]["comparisons"] if c["field"] == "f1"]
    assert (c["delta"], c["p_value"], c["test"]) == (-0.3, 0.25, "mcnemar")
    assert c["cost_saved"] == pytest.approx(0.001)
    low, high = c["ci"]
    said = (
        f"cand vs base on qa: 0.50x input tokens (-50%), $0.0010 saved, f1 -0.300 [{low:.2f}, {high:.2f}], "
        "not significant (p=0.25), 3 of 10 rows lost, 0 gained"
    )
    assert report["verdict"] == [said]
    code, out, err = cli("score", data, "--no-progress", *prices)
    assert code == 0 and lines(out)[0] == said
    # the run's counts went to standard error, not above the verdict
    assert "context-bench: 20 rows, 2 systems, 1 data set, 0 errors" in err.splitlines()
    code, out, _ = cli("score", data, "--no-progress", *prices, "--output", "markdown")
    assert lines(out)[2] == "- " + said.replace("[", r"\[").replace("]", r"\]")
    code, out, _ = cli("score", data, "--no-progress", *prices, "--output", "html")
    assert out.index('<ul class="verdict"><li>cand vs base on qa: 0.50x input tokens') < out.index("<table")


@pytest.mark.parametrize(
    ("lost", "total", "said"),
    [
        (10, 30, "significant (p=0.00195)"),  # McNemar: 2 / 2^10
        (12, 12, "significant (p<0.001)"),  # 2 / 2^12 = 0.000488: below the resolution shown
        (0, 1, "too few rows to tell"),  # one pair: nothing to test
    ],
)
def test_the_verdict_says_whether_the_change_is_significant(cli, tmp_path, lost, total, said):
    code, out, _ = cli("score", pairs(tmp_path, lost, total), "--no-progress")
    assert lines(unwrapped(out))[0].endswith(f", {said}, {lost} of {total} rows lost, 0 gained")


def test_one_system_gives_each_data_set_its_headline_with_its_interval(cli, tmp_path, wide):
    rows = [qa("only", f"q{i}", "Paris" if i % 2 else "Rome") for i in range(4)]
    code, out, _ = cli("score", write(tmp_path / "qa.jsonl", rows), "--no-progress", "--output", "json")
    low, high = json.loads(out)["summary"]["groups"][0]["ci"]["f1"]
    code, out, _ = cli("score", write(tmp_path / "qa.jsonl", rows), "--no-progress")
    assert lines(out)[0] == f"only on qa: f1 0.500 [{low:.2f}, {high:.2f}], 4 rows"


def test_a_verdict_wraps_between_its_figures_with_continuation_lines_indented():
    verdict = Verdict(
        "compressed vs baseline on hotpotqa",
        (
            "0.54x input tokens (-46%)",
            "f1 -0.525 [-0.62, -0.44]",
            "significant (p=0.002)",
            "20 of 80 rows lost",
        ),
    )
    assert str(verdict) == (
        "compressed vs baseline on hotpotqa: 0.54x input tokens (-46%), f1 -0.525 [-0.62, -0.44], "
        "significant (p=0.002), 20 of 80 rows lost"
    )
    assert verdict.wrapped(80) == [
        "compressed vs baseline on hotpotqa: 0.54x input tokens (-46%), f1 -0.525",
        "  [-0.62, -0.44], significant (p=0.002), 20 of 80 rows lost",
    ]
    assert verdict.wrapped(40) == [
        "compressed vs baseline on hotpotqa:",
        "  0.54x input tokens (-46%), f1 -0.525",
        "  [-0.62, -0.44], significant (p=0.002),",
        "  20 of 80 rows lost",
    ]


def test_the_documented_verdict_is_a_wrapped_verdict():
    shown = _plain_blocks("docs/reports.md")[0]
    verdict = Verdict(
        "compressed vs baseline on hotpotqa",
        (
            "0.54x input tokens (-46%)",
            "$0.0123 saved",
            "f1 -0.525 [-0.62, -0.44]",
            "significant (p=0.002)",
            "20 of 80 rows lost, 0 gained",
        ),
    )
    assert shown == verdict.wrapped(100)


def _plain_blocks(doc):
    """The code blocks of ``doc`` that name no language, as lists of lines."""
    found, block, lang = [], None, None
    for line in (Path(__file__).resolve().parents[2] / doc).read_text(encoding="utf-8").splitlines():
        if line.startswith("```") and block is None:
            block, lang = [], line[3:]
        elif line.startswith("```"):
            found += [block] if not lang else []
            block = None
        elif block is not None:
            block.append(line)
    return found


def test_significance_reads_every_case():
    def compared(p, significant):
        return Comparison(
            "s", "b", "d", "f1", -0.1, [-0.2, 0.0], p, 10, "t", None, None, None, [], [], significant
        )

    assert significance(compared(0.002, True), 0.05) == "significant (p=0.002)"
    assert significance(compared(0.31, False), 0.05) == "not significant (p=0.31)"
    assert significance(compared(0.0009, True), 0.05) == "significant (p<0.001)"
    assert significance(compared(0.04996, True), 0.05) == "significant (p=0.04996)"  # not "0.05"
    assert significance(compared(None, None), 0.05) == "too few rows to tell"


# -- readable numbers ----------------------------------------------------------------------------


def test_numbers_read_plainly():
    assert [money(x) for x in (-0.0123, 0.0123, -0.00004, 0.0, -0.0, 1234.5, -1234.5, None)] == [
        "-$0.0123",
        "$0.0123",
        "$0.00",  # zero at the precision shown: no sign, no "$-0.0000"
        "$0.00",
        "$0.00",
        "$1,234.50",
        "-$1,234.50",
        "-",
    ]
    assert money(float("nan")) == "-" and money(2e15) == "$2e+15"
    assert interval([-0.617, -0.437]) == "[-0.62, -0.44]" and interval(None) == "-"
    assert interval([-0.6174, 0.5], 3) == "[-0.617, 0.500]"
    assert ratio(0.54) == "0.54x" and ratio(None) == "-"
    assert [p_value(p, 0.05) for p in (0.25, 0.00195, 0.000488, None)] == ["0.25", "0.00195", "<0.001", "-"]
    assert p_value(0.0005, 0.0001) == "0.0005"  # under an alpha below 0.001 the digits decide


def test_lost_and_gained_are_counts_with_their_ids(cli, tmp_path):
    code, out, _ = cli("score", pairs(tmp_path, 5, 10), "--no-progress", "--detail")
    audit = out.split("Savings and loss audit")[1].split("\n\n")[0]
    assert audit.splitlines()[3].split()[-7:] == ["f1", "5", "(q0,", "q1,", "q2,", "…)", "0"]


# -- one screen ----------------------------------------------------------------------------------


@pytest.mark.parametrize("columns", [80, 120])
def test_the_bundled_sample_fits_one_screen(cli, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, err = cli("score", "--no-progress")
    shown = lines(out)
    assert code == 0 and len(shown) <= 40 and max(map(len, shown)) <= columns
    assert shown[0].startswith("compressed vs baseline on ")
    assert "Key figures" in out and "Compared with" not in out and "(1/" not in out
    # each notice on standard error is one line at the width, the evaluators line included
    said = err.splitlines()
    assert said[1].startswith("context-bench: evaluators: squad: AnswerQuality (fields answer); ")
    assert max(map(len, said)) <= columns and said[1].endswith("…")
    code, detail, err = cli("score", "--no-progress", "--detail")
    (whole,) = [line for line in err.splitlines() if line.startswith("context-bench: evaluators: ")]
    assert len(whole) > 300 and whole.endswith(")")  # --detail says it whole
    # --detail keeps every table there is
    for title in ("Scores", "95% intervals", "Compared with baseline", "Savings and loss audit", "Run"):
        assert f"\n{title}" in detail, title
    assert max(map(len, lines(detail))) <= columns and "(1/" not in detail


def test_the_readme_shows_what_score_prints(cli, monkeypatch):
    """README's output of `context-bench score` at 80 columns, its "..." standing for lines left out."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli("score", "--no-progress")
    (shown,) = _plain_blocks("README.md")
    printed = iter(lines(out))
    for line in shown:
        if line != "...":
            assert line in printed, line  # in order: the iterator moves past each line found


def test_eight_data_sets_at_80_columns_are_never_cut_into_numbered_pieces(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    files = [pairs(tmp_path, n % 3, 6, f"a_rather_long_data_set_name_{n}") for n in range(8)]
    for extra in ((), ("--detail",)):
        code, out, _ = cli("score", *files, "--no-progress", *extra)
        assert code == 0 and "(1/" not in out and max(map(len, lines(out))) <= 80, extra
    assert len(re.findall(r"^cand vs base on ", out, re.M)) == 8
    # more than a few data sets: the worst first (two lost of six, then one, then none)
    firsts = re.findall(r"^cand vs base on a_rather_long_data_set_name_(\d)", out, re.M)
    assert firsts == ["2", "5", "1", "4", "7", "0", "3", "6"]
    code, out, _ = cli("score", *files, "--no-progress", "--output", "markdown")
    assert "(1/" not in out


# -- show ----------------------------------------------------------------------------------------


def test_show_renders_a_saved_report_as_the_run_did(cli, tmp_path, wide):
    data = pairs(tmp_path, 3, 10)
    report = tmp_path / "report.json"
    assert cli("score", data, "--no-progress", "--output", "json", "--out", str(report))[0] == 0
    for fmt in ("table", "markdown"):
        code, live, _ = cli("score", data, "--no-progress", "--output", fmt, "--detail")
        code, shown, err = cli("show", str(report), "--output", fmt, "--detail")
        # the same report but for the run's date and command line
        assert code == 0 and shown.split("Run\n")[0] == live.split("Run\n")[0], fmt
    code, shown, _ = cli("show", str(report), "--output", "json")
    saved = json.loads(report.read_text())
    assert json.loads(shown)["summary"] == saved["summary"] and json.loads(shown)["rows"] == saved["rows"]
    code, shown, _ = cli("show", str(report), "--output", "csv")
    assert code == 0 and len(shown.splitlines()) == 21  # a header and the 20 rows
    missing, not_a_report = tmp_path / "missing.json", write(tmp_path / "rows.json", [{"a": 1}])
    assert cli("show", str(missing))[0] == 2
    code, out, err = cli("show", not_a_report)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "not a JSON report" in err


# -- warnings where they apply --------------------------------------------------------------------


def test_a_plugin_whose_evaluator_gets_no_row_starts_nothing(cli, tmp_path, monkeypatch):
    """cbench-code's CodeExecution is wired to every data set by fields (test, entry_point): a QA
    run never gives it a row, so its sandbox server is not started to ask for its notices; a run
    with code rows starts it and its summary says what the sandbox lacks here, if anything."""
    pool = pytest.importorskip("cbench_code.pool")
    started = []
    ensure = pool.SandboxPool._ensure

    def counted(self):
        started.append(self)
        return ensure(self)

    monkeypatch.setattr(pool.SandboxPool, "_ensure", counted)
    code, out, err = cli("score", pairs(tmp_path, 1, 4), "--no-progress")
    assert code == 0 and not started and "sandbox" not in out + err
    code, out, err = cli("score", "--no-progress", "--output", "json")  # the sample's humaneval rows
    said = pool.missing_layers(pool.SandboxPool(1).layers)
    assert code == 0 and started
    assert [w for w in json.loads(out)["summary"]["warnings"] if "sandbox" in w] == ([said] if said else [])


@pytest.mark.parametrize("output", ["table", "json"])
def test_a_run_with_code_rows_says_the_sandbox_warning_once_after_the_progress_line(cli, monkeypatch, output):
    """The sample's humaneval rows start cbench-code's sandbox; where its layers are off, the
    plugin's Python warning and the summary's warning are the same text, said once per run: in the
    table's warnings, or on standard error for a format that does not show them (the JSON report
    holds it as data), after the run; an API user starting the sandbox still gets the Python warning."""
    pool = pytest.importorskip("cbench_code.pool")
    monkeypatch.setattr(pool, "_warned", set())  # as in a fresh process: the plugin warns again
    with warnings.catch_warnings(record=True) as caught:  # outside the CLI, the Python warning stays
        warnings.simplefilter("always")
        said = pool.missing_layers(pool.SandboxPool(1).layers)
    assert [str(w.message) for w in caught if w.category is pool.SandboxWarning] == ([said] if said else [])
    monkeypatch.setattr(pool, "_warned", set())
    code, out, err = cli("score", "--output", output)
    assert code == 0, err
    head = "cbench-code: sandbox layers unavailable"
    expected = 1 if said else 0
    if output == "json":
        assert json.loads(out)["summary"]["warnings"].count(said) == expected
        assert err.count(head) == expected
    else:
        assert (out + err).count(head) == expected
    if said and output == "json":  # with the report's own warnings, after the run
        assert f"context-bench: warning: {head}" in err and err.index(head) > err.index("evaluators:")
