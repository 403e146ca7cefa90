"""The prompts and budgets are THUDM's, Lost in the Middle's and LLMLingua-2's own: the plugin's
tables against the published files, and rows filled as the official scripts fill them."""

from __future__ import annotations

import json

import pytest

from cbench_longbench import longbench, multidoc
from cbench_longbench.tasks import LONGBENCH_E, TASKS


def test_every_template_and_budget_is_thudms(published):
    prompts = json.loads((published / "dataset2prompt.json").read_text("utf-8"))
    budgets = json.loads((published / "dataset2maxlen.json").read_text("utf-8"))
    assert list(TASKS) == list(prompts) == list(budgets)
    assert {name: task.template for name, task in TASKS.items()} == prompts
    assert {name: task.max_tokens for name, task in TASKS.items()} == budgets
    assert set(LONGBENCH_E) < set(TASKS) and len(LONGBENCH_E) == 13


def test_the_first_line_tasks_and_the_chinese_ones():
    assert [name for name, task in TASKS.items() if task.first_line] == ["trec", "triviaqa", "samsum", "lsht"]
    assert [name for name, task in TASKS.items() if task.language == "zh"] == [
        "multifieldqa_zh",
        "dureader",
        "vcsum",
        "lsht",
        "passage_retrieval_zh",
    ]


@pytest.mark.parametrize("name", list(TASKS))
def test_a_prompt_is_filled_as_pred_py_fills_it(name, published):
    """pred.py: ``prompt_format.format(**json_obj)``; braces in the data stay as they are."""
    record = {"context": "Ctx {with} braces\n", "input": "Q {0}?", "answers": ["a"], "_id": "x"}
    official = json.loads((published / "dataset2prompt.json").read_text("utf-8"))[name]
    assert TASKS[name].prompt(record["context"], record["input"]) == official.format(**record)


def test_the_v2_prompt_is_pred_pys_zero_shot_template(published):
    assert longbench.V2_ZERO_SHOT == (published / "v2_0shot.txt").read_text("utf-8")
    record = {
        "context": "  The doc. It names $Q$.\n",
        "question": " Which? ",
        "choice_A": "one",
        "choice_B": " two",
        "choice_C": "three ",
        "choice_D": "four",
    }
    text = longbench.v2_prompt(record)
    assert "<text>\nThe doc. It names Which?.\n</text>" in text  # replaced in pred.py's order
    assert "question: Which?\nChoices:\n(A) one\n(B) two\n(C) three\n(D) four\n\n" in text


def test_the_multidoc_prompt_is_the_papers(published):
    template = (published / "litm_qa.prompt").read_text("utf-8").rstrip("\n")
    documents = [{"title": "T1", "text": "first"}, {"title": "T2", "text": "second"}]
    assert multidoc.prompt("who?", documents) == template.format(
        question="who?", search_results="Document [1](Title: T1) first\nDocument [2](Title: T2) second"
    )
