"""A failed judge is not a bad answer (issue 29): a score field whose evaluator failed on a row is
shown as failed beside its mean in every format, and "-" where it failed on every row, never as a
0.000 mean beside "errors 0"."""

from __future__ import annotations

import json

import pytest

from context_bench.testing import FakeServer, Reply, last_user_message

#: The judge's reply to the questions it fails on (HTTP 500, retried a millisecond later, as asked).
DOWN = Reply("down", status=500, headers={"retry-after-ms": "1"})


@pytest.fixture
def rows(workdir, monkeypatch):
    """Ten answered rows, each right (a judge that answers rates them 5 of 5: judge_score 1.0)."""
    monkeypatch.setenv("COLUMNS", "120")
    rows = [
        {
            "id": f"q{i}",
            "system": "s",
            "dataset": "qa",
            "question": f"Q{i}?",
            "answer": "Paris",
            "response": "Paris",
        }
        for i in range(10)
    ]
    (workdir / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return "rows.jsonl"


def lines(text):
    """``text``'s lines with their runs of spaces made one (a table's cells, whatever the widths)."""
    return [" ".join(line.split()) for line in text.splitlines()]


def judged(cbench, rows, failing, *more):
    """``score`` with a judge that fails on the questions ``failing`` names: each format's output."""

    def reply(body):
        return DOWN if last_user_message(body).split("Q")[-1].split("?")[0] in failing else "RATING: 5"

    found = {}
    with FakeServer(reply) as judge:
        for output in ("table", "markdown", "html", "json"):
            argv = ("score", rows, "--judge-url", judge.url, "--judge-model", "jm", "--output", output)
            code, out, err = cbench(*argv, "--score-field", "judge_score", "--detail", *more)
            assert code == (4 if failing else 0), err  # failures gate the exit (--max-failure-rate)
            found[output] = out
    return found


def test_a_judge_that_failed_on_every_row_shows_no_mean(cbench, rows):
    found = judged(cbench, rows, {str(i) for i in range(10)})
    table = found["table"]
    assert table.splitlines()[0] == "s on qa: judge_score - (failed 10 of 10), 10 rows"
    scores = "s qa 10 0 0.0% 1.000 1.000 1.000 1.000 - (failed 10 of 10)"  # f1 ... then judge_score
    assert scores in lines(table)
    assert "qa judge_score -" in lines(table)  # no interval either
    assert "0.000" not in table
    assert "| - (failed 10 of 10) |" in found["markdown"]
    assert "- (failed 10 of 10)</td>" in found["html"]
    assert "s judge_score:" not in found["html"]  # no chart draws the fallbacks as a mean of 0
    (group,) = json.loads(found["json"])["summary"]["groups"]
    assert group["failed"] == {"judge_score": {"count": 10, "rows": 10, "rate": 1.0}}
    assert group["errors"] == 0 and group["scores"]["judge_score"] == 0.0  # the fallbacks, gated


def test_a_judge_that_failed_on_three_rows_shows_them_beside_the_mean(cbench, rows):
    found = judged(cbench, rows, {"1", "4", "7"})
    table = found["table"]
    assert table.splitlines()[0].startswith("s on qa: judge_score 0.700, 3 failed (30%) [")
    scores = "s qa 10 0 0.0% 1.000 1.000 1.000 1.000 0.700, 3 failed (30%)"
    assert scores in lines(table)
    assert "| 0.700, 3 failed (30%) |" in found["markdown"]
    assert "0.700, 3 failed (30%)</td>" in found["html"]
    (group,) = json.loads(found["json"])["summary"]["groups"]
    assert group["failed"] == {"judge_score": {"count": 3, "rows": 10, "rate": 0.3}}
    assert group["scores"]["judge_score"] == pytest.approx(0.7)


def test_a_judge_that_never_failed_shows_its_mean_alone(cbench, rows):
    found = judged(cbench, rows, set())
    assert "s qa 10 0 0.0% 1.000 1.000 1.000 1.000 1.000" in [
        " ".join(x.split()) for x in found["table"].splitlines()
    ]
    assert "failed" not in found["table"]
    (group,) = json.loads(found["json"])["summary"]["groups"]
    assert group["failed"] == {}
