"""drop and bbh load by name from a hub mirror, in the layout their evaluators score."""

from __future__ import annotations

import json

import pytest

from context_bench.cli import main
from context_bench.datasets import load
from context_bench.errors import UsageError
from context_bench.testing import FakeServer, isolated_host, last_user_message, scored_by_name


def test_drop_rows_carry_the_passage_question_and_gold_spans():
    rows = load("drop", host=isolated_host()).rows
    assert [r["id"] for r in rows] == ["q-fg", "q-who", "q-teams"]
    assert [r["answer"] for r in rows] == [["22"], ["Devin Hester"], ["Bears, Lions"]]
    assert rows[0]["context"].startswith("The Bears scored first") and "field goal" in rows[0]["question"]
    assert scored_by_name("drop", rows[1], "Devin Hester") == (
        ["AnswerQuality"],
        {"f1": 1.0, "exact_match": 1.0, "recall": 1.0, "contains": 1.0},
    )
    assert scored_by_name("drop", rows[0], "17")[1]["f1"] == 0.0


def test_bbh_free_answers_go_to_answer_quality():
    rows = load("bbh", host=isolated_host()).rows
    assert [(r["id"], r["answer"]) for r in rows] == [
        ("bbh-boolean_expressions-0", "False"),
        ("bbh-boolean_expressions-1", "True"),
    ]
    assert "not ( True ) and ( True ) is" in rows[0]["question"]
    assert scored_by_name("bbh", rows[0], "False")[1]["exact_match"] == 1.0
    assert scored_by_name("bbh", rows[0], "True")[1]["exact_match"] == 0.0


def test_bbh_lettered_targets_become_multiple_choice():
    rows = load("bbh", host=isolated_host(), config="date_understanding").rows
    assert [r["correct_letter"] for r in rows] == ["B", "A"] and "answer" not in rows[0]
    assert "(B) 12/25/1937" in rows[0]["question"]
    assert scored_by_name("bbh", rows[0], "(B)") == (["MultipleChoiceAccuracy"], {"mc_accuracy": 1.0})
    assert scored_by_name("bbh", rows[0], "(A)")[1] == {"mc_accuracy": 0.0}


def test_an_unknown_bbh_task_lists_the_valid_ones():
    with pytest.raises(
        UsageError, match="unknown config .nope. of lukaemon/bbh: the valid configs are .*word_sorting"
    ):
        load("bbh", host=isolated_host(), config="nope")


@pytest.mark.parametrize("name", ["drop", "bbh"])
def test_the_catalog_names_the_keys_its_rows_carry(name):
    """What ``context-bench datasets`` shows of a set (and the evaluators it wires) without loading it."""
    host = isolated_host()
    (spec,) = [spec for _, spec in host.datasets().values() if spec.name == name]
    rows = load(name, host=host).rows
    if name == "bbh":
        rows += load("bbh", host=host, config="date_understanding").rows
    assert set(spec.fields) <= set().union(*rows)


def test_run_drop_end_to_end_against_a_loopback_server(capsys):
    gold = {"How many yards": "22", "Who caught": "Devin Hester", "Which two teams": "Bears, Lions"}

    def reply(body):
        text = last_user_message(body)
        return next(answer for cue, answer in gold.items() if cue in text)

    with FakeServer(reply) as server:
        code = main(["run", "--proxy", server.url, "--dataset", "drop", "--output", "json", "--no-progress"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and len(server.requests) == 3
    assert {row["example_id"]: row["scores"]["exact_match"] for row in report["rows"]} == {
        "q-fg": 1.0,
        "q-who": 1.0,
        "q-teams": 1.0,
    }
