"""``zeroscrolls:<task>`` loads from the fixture mirror (tau/zero_scrolls' parquet conversion, in its
schema) through the real ``datasets`` library, with the paper's chat prompt and budget per task, and
is scored by ``ZeroScrollsScore``: a right response 1.0 and a wrong one 0.0 per task family."""

from __future__ import annotations

import json

import pytest

from cbench_longbench.zeroscrolls import FORMAT_REQUEST, TASKS, chat_prompt
from context_bench import UsageError
from context_bench.cli import main
from context_bench.datasets import load
from context_bench.testing import FakeServer, scored_by_name

#: The paper's "Do not provide any explanation." for chat models, after the instruction.
NO_EXPLANATION = " " + FORMAT_REQUEST + "\n\n"


def _one(name, host, **kwargs):
    (row,) = load(name, host=host, **kwargs).rows
    return row


def test_the_budgets_are_the_papers_api_runs():
    """experiments/api/api.py's dataset_to_leave_tokens_for_generations, task for task."""
    assert {name: task.max_tokens for name, task in TASKS.items()} == {
        "gov_report": 1024,
        "summ_screen_fd": 512,
        "qmsum": 512,
        "squality": 512,
        "qasper": 128,
        "narrative_qa": 64,
        "quality": 10,
        "musique": 32,
        "space_digest": 36,
        "book_sum_sort": 256,
    }


def test_a_summary_prompt_is_the_input_up_to_the_response_header(hub, host):
    row = _one("zeroscrolls:gov_report", host)
    assert row == {
        "id": "zeroscrolls-gov_report-gov-1",
        "dataset": "zeroscrolls:gov_report",
        "prompt": "You are given a report by a government agency. Write a one-page summary of the report."
        "\n\nReport:\nThe Department of Energy reviewed its loan programs. Spending on grid upgrades "
        "rose by {20} percent.\n\n",
        "answers": ["The Department of Energy found that spending on grid upgrades rose by 20 percent."],
        "max_tokens": 1024,
    }
    assert "Summary:" not in row["prompt"]  # a chat model gets no response header


def test_a_question_prompt_asks_for_no_explanation_and_ends_with_the_query(hub, host):
    row = _one("zeroscrolls:quality", host)
    assert row["prompt"] == (
        "You are provided a story and a multiple-choice question with 4 possible answers (marked by A, "
        "B, C, D). Choose the best answer by writing its corresponding letter (either A, B, C, or D)."
        + NO_EXPLANATION
        + "Story:\nThe robot walked to the market and bought seven apples for its owner.\n\n"
        "Question and Possible Answers:\nHow many apples did the robot buy?\n (A) Three\n (B) Seven\n"
        " (C) Ten\n (D) None"
    )
    assert (row["answers"], row["max_tokens"]) == (["B"], 10)


def test_the_prompt_is_cut_where_the_records_offsets_say():
    """Offsets are the record's, moved by the request and its space; the instruction is stripped
    first (openai_api.py's insert_format_request), so a trailing space there moves the cut."""
    text = "Instruction.  \n\nStory:\nS\n\nQuestion:\nQ?\n\nAnswer:\n"
    record = {"input": text, "query_end_index": text.index("\n\nAnswer")}
    assert chat_prompt(record, TASKS["qmsum"]) == "Instruction.  \n\nStory:\nS\n\nQuestion:\nQ?"
    assert chat_prompt(record, TASKS["narrative_qa"]) == (
        "Instruction. Do not provide any explanation.\n\nStory:\nS\n\nQuestion:\nQ?\n\n"
    )


def test_the_references_of_one_input_become_its_answers(hub, host):
    rows = load("zeroscrolls:qasper", host=host).rows
    assert [(row["id"], row["answers"]) for row in rows] == [
        ("zeroscrolls-qasper-qasper-1", ["English, German and French", "English, German, French"]),
        ("zeroscrolls-qasper-qasper-2", ["a BiLSTM encoder"]),
    ]
    assert _one("zeroscrolls:squality", host)["answers"][1] == (
        "Captain Vey discovers water on Mars after the landing."
    )


@pytest.mark.parametrize(
    ("name", "right", "wrong", "best"),
    [
        (
            "zeroscrolls:qmsum",
            "The group agreed the remote would cost twelve euros and rubber buttons were cheaper.",
            "Nothing.",
            {"zeroscrolls_score": 1.0, "rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0},
        ),
        ("zeroscrolls:narrative_qa", "Alesund, across the fjord.", "Bergen", {"zeroscrolls_score": 1.0}),
        ("zeroscrolls:musique", "The Rhône Glacier", "Lyon", {"zeroscrolls_score": 1.0}),
        ("zeroscrolls:quality", "(B) Seven", "A", {"zeroscrolls_score": 1.0}),
        ("zeroscrolls:space_digest", "60%", "Most of them are positive.", {"zeroscrolls_score": 1.0}),
        ("zeroscrolls:book_sum_sort", "Order: 2, 4, 3, 1.", "1, 3, 4, 2", {"zeroscrolls_score": 1.0}),
    ],
)
def test_each_family_scores_a_right_and_a_wrong_response(hub, host, name, right, wrong, best):
    row = _one(name, host)
    assert scored_by_name(name, row, right, host) == (["ZeroScrollsScore"], best)
    assert scored_by_name(name, row, wrong, host)[1]["zeroscrolls_score"] == 0.0


def test_the_test_split_is_sent_and_each_row_says_its_answers_are_private(hub, host):
    row = _one("zeroscrolls:qasper", host, split="test")
    assert row["answers"] == [] and row["prompt"].endswith("Is the model multilingual?")
    with pytest.raises(ValueError, match="ZeroSCROLLS' test answers are private"):
        scored_by_name("zeroscrolls:qasper", row, "yes", host)


def test_an_unknown_task_is_one_line(hub, host):
    with pytest.raises(UsageError, match=r"^unknown ZeroSCROLLS task 'gov': the tasks are gov_report, "):
        load("zeroscrolls:gov", host=host)


def test_run_sends_the_prompt_and_budget_and_scores_as_the_paper(hub, capsys):
    with FakeServer(lambda body: "B") as server:
        argv = ["run", "--proxy", server.url, "--dataset", "zeroscrolls:quality", "--output", "json"]
        assert main([*argv, "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    (body,) = server.requests
    assert body["max_tokens"] == 10
    assert body["messages"][0]["content"].endswith("(C) Ten\n (D) None")
    assert [row["scores"] for row in report["rows"]] == [{"zeroscrolls_score": 1.0}]


def test_an_unknown_task_exits_2_before_any_row(hub, capsys):
    with FakeServer(lambda body: "B") as server:
        code = main(["run", "--proxy", server.url, "--dataset", "zeroscrolls:quality2", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and server.requests == []
    assert err == [
        "context-bench: error: unknown ZeroSCROLLS task 'quality2': the tasks are gov_report, "
        "summ_screen_fd, qmsum, squality, qasper, narrative_qa, quality, musique, space_digest, "
        "book_sum_sort"
    ]
