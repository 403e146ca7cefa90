"""Fields that belong (issue 29): a data set's Scores tables show the fields of the evaluators wired
to it by name; those of one wired by its rows' fields alone (AnswerQuality on an NLI set) appear
with --detail or when --evaluator names it.  JSON keeps every field, and says which were left out."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("cbench_browser", Path(__file__).parents[1] / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

#: contract-nli is NLILabelMatch's by name; its rows carry ``answer``, so AnswerQuality's by fields.
#: squad is AnswerQuality's by fields alone: with no evaluator by name, its fields stay.
ROWS = [
    {"id": "c1", "dataset": "contract-nli", "answer": "Entailment", "response": "Entailment"},
    {"id": "c2", "dataset": "contract-nli", "answer": "Contradiction", "response": "Entailment."},
    {"id": "s1", "dataset": "squad", "answer": "Paris", "response": "Paris"},
]
AQ = ["f1", "exact_match", "recall", "contains"]


@pytest.fixture
def rows(write_rows):
    return str(write_rows(ROWS))


def _table(markdown: str, title: str) -> list[str]:
    """The lines of the Markdown table headed ``### title``."""
    return markdown.split(f"### {title}\n\n", 1)[1].split("\n\n", 1)[0].splitlines()


NAMED_ONLY = [
    "| system | dataset | rows | errors | error rate | nli_accuracy |",
    "| --- | --- | ---: | ---: | ---: | ---: |",
    "| responses | contract-nli | 2 | 0 | 0.0% | 0.500 |",
]
#: Every field: too wide for the page, so turned on its side.
EVERY = [
    "| figure | responses / contract-nli |",
    "| --- | ---: |",
    "| rows | 2 |",
    "| errors | 0 |",
    "| error rate | 0.0% |",
    "| nli_accuracy | 0.500 |",
    *(f"| {field} | 0.500 |" for field in AQ),
]
SQUAD = [
    "| system | dataset | rows | errors | error rate | f1 | exact_match | recall | contains |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    "| responses | squad | 1 | 0 | 0.0% | 1.000 | 1.000 | 1.000 | 1.000 |",
]


@pytest.mark.parametrize(
    ("asked", "expected"),
    [([], NAMED_ONLY), (["--detail"], EVERY), (["--evaluator", "AnswerQuality"], EVERY)],
)
def test_markdown_shows_the_fields_by_fields_alone_with_detail_or_evaluator(cbench, rows, asked, expected):
    code, out, err = cbench("score", rows, "--output", "markdown", *asked)
    assert code == 0, err
    assert _table(out, "Scores: contract-nli") == expected
    assert _table(out, "Scores: squad") == SQUAD  # nothing by name: its fields by fields stay


@pytest.mark.parametrize("detail", [False, True])
def test_the_interval_table_leaves_out_the_same_fields(cbench, rows, detail):
    """The 95% intervals follow the Scores tables: contract-nli's AnswerQuality fields only with
    --detail (squad's one row has no interval, so "-")."""
    code, out, err = cbench("score", rows, "--output", "markdown", *(["--detail"] * detail))
    assert code == 0, err
    shown = [f"| contract-nli | {field} | \\[0.09, 0.91\\] |" for field in ["nli_accuracy", *AQ * detail]]
    assert _table(out, "95% intervals of the means") == [
        "| dataset | score | responses |",
        "| --- | --- | ---: |",
        *shown,
        *(f"| squad | {field} | - |" for field in AQ),
    ]


def test_json_keeps_every_field_and_show_reads_back_which_were_left_out(cli, cbench, rows, workdir):
    code, out, err = cbench("score", rows, "--output", "json", "--out", "report.json")
    assert code == 0, err
    summary = json.loads((workdir / "report.json").read_text())["summary"]
    assert summary["by_fields"] == {"contract-nli": AQ}
    scores = {g["dataset"]: g["scores"] for g in summary["groups"]}
    assert scores["contract-nli"] == {"nli_accuracy": 0.5, **dict.fromkeys(AQ, 0.5)}
    code, shown, err = cli("show", "report.json", "--output", "markdown")
    assert code == 0, err
    assert _table(shown, "Scores: contract-nli") == NAMED_ONLY
    code, shown, err = cli("show", "report.json", "--output", "markdown", "--detail")
    assert code == 0, err
    assert _table(shown, "Scores: contract-nli") == EVERY
    _, named, _ = cbench("score", rows, "--output", "json", "--evaluator", "AnswerQuality")
    assert json.loads(named)["summary"]["by_fields"] == {}


@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
@pytest.mark.parametrize(
    ("asked", "shown"), [([], False), (["--detail"], True), (["--evaluator", "AnswerQuality"], True)]
)
def test_the_html_scores_tables_in_chromium(cbench, rows, workdir, asked, shown):
    code, _, err = cbench("score", rows, "--output", "html", "--out", "report.html", *asked)
    assert code == 0, err
    dom, errors = browser.dump_dom(workdir / "report.html")
    assert errors == []
    nli = re.search(r"<h2>Scores: contract-nli</h2>.*?</tr>", dom, re.DOTALL)
    assert nli is not None
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", nli.group(0))
    named = ["system", "dataset", "rows", "errors", "error rate", "nli_accuracy"]
    assert headers == [*named, *(AQ if shown else [])]
