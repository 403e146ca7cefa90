"""A run's JSONL report can be scored again (issue 12 #14): each line carries the input row's fields
(its id, its references) beside the row's results, and ``score`` reads it back to the same scores."""

from __future__ import annotations

import json

from context_bench import EvalRow
from context_bench.cli import main
from context_bench.testing import FakeServer, Reply, last_user_message

ROWS = [
    {"id": "fr", "question": "Capital of France?", "answer": "Paris"},
    {"id": "de", "question": "Capital of Germany?", "answer": "Berlin"},
    {"question": "Capital of Spain?", "answer": "Madrid"},  # no id: numbered
    {"id": "mc", "question": "Which is a colour?", "choices": ["dog", "blue"], "answer": "B"},
    {"id": "down", "question": "[500] Capital of Italy?", "answer": "Rome"},
]


def reply(body):
    prompt = last_user_message(body)
    if "[500]" in prompt:
        return Reply("upstream exploded", status=500)
    return {"France": "Paris", "Germany": "Bonn", "Spain": "Madrid", "colour": "The answer is B."}.get(
        next((word for word in ("France", "Germany", "Spain", "colour") if word in prompt), ""), "?"
    )


def cli(capsys, *argv):
    code = main([*argv, "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def test_run_then_score_gives_the_same_scores(capsys, tmp_path):
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    report = tmp_path / "report.jsonl"
    # one row of five is down: 20%, over the default --max-failure-rate; at 0.2 the run passes
    run = ("run", "--proxy", None, "--name", "mine", "--max-retries", "0", "--dataset", str(data))
    run = (*run, "--max-failure-rate", "0.2")
    with FakeServer(reply) as server:
        run = tuple(server.url if arg is None else arg for arg in run)
        code, _, err = cli(capsys, *run, "--output", "jsonl", "--out", str(report))
        assert code == 0, err
        code, out, err = cli(capsys, *run, "--output", "json")
        assert code == 0, err
    first = json.loads(out)
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    by_id = {line["id"]: line for line in lines}
    assert set(by_id) == {"fr", "de", "3", "mc", "down"}
    assert by_id["fr"]["answer"] == "Paris" and by_id["mc"]["choices"] == ["dog", "blue"]
    assert by_id["fr"]["response"] == "Paris" and by_id["fr"]["system"] == "mine"
    assert by_id["down"]["errors"] and by_id["down"]["response"] is None

    code, out, err = cli(capsys, "score", str(report), "--output", "json")
    assert code == 4 and "could not answer 1 of 5 rows (20.0%" in err, err
    again = json.loads(out)
    rescored = {row["example_id"]: row for row in again["rows"]}
    for ex_id, line in by_id.items():
        assert rescored[ex_id]["system"] == "mine" and rescored[ex_id]["dataset"] == "qa"
        if ex_id == "down":  # the system gave no answer: an error again, not a score of None
            assert rescored[ex_id]["errors"] and not rescored[ex_id]["scores"]
        else:
            assert line["scores"] and rescored[ex_id]["scores"] == line["scores"], ex_id
    (group,) = again["summary"]["groups"]
    assert group["rows"] == 5 and group["errors"] == 1
    assert group["scores"] == first["summary"]["groups"][0]["scores"]


def test_the_json_report_and_to_dict_keep_the_input_out(capsys, tmp_path):
    data = tmp_path / "responses.jsonl"
    data.write_text(json.dumps({"id": "1", "answer": "Paris", "response": "Paris", "note": "x"}) + "\n")
    code, out, err = cli(capsys, "score", str(data), "--output", "json")
    (row,) = json.loads(out)["rows"]
    assert code == 0, err
    assert "note" not in row and "answer" not in row and "id" not in row
    assert EvalRow.from_dict(row).to_dict() == row
    code, out, _ = cli(capsys, "score", str(data), "--output", "jsonl")
    line = json.loads(out)
    assert line["note"] == "x" and line["id"] == "1" and line["example_id"] == "1"
    assert EvalRow.from_dict(line).to_dict() == row  # a JSONL line reads back as its row
