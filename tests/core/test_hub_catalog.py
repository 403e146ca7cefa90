"""Every QA and multiple-choice name loads from a fixture mirror in its source's schema, through the
real ``datasets`` library, into the rows its evaluators read; auto-wiring picks them with no flag,
and a right answer scores 1.0 where a wrong one scores 0.0."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from context_bench._autowire import Wirer
from context_bench.datasets import load
from context_bench.testing import isolated_host, offline_hub

MIRROR = Path(__file__).resolve().parents[1] / "fixtures" / "hub"


@attrs.frozen
class Case:
    ids: list[str]  # every row's id, in order
    gold: object  # the first row's answer (a list of aliases) or correct letter
    right: str  # a response that earns 1.0 on the first row
    wrong: str  # one that earns 0.0
    wired: tuple[str, ...]  # the evaluators auto-wiring picks
    field: str  # the score that tells them apart
    text: str = ""  # something the first row's prompt shows


QA = ("AnswerQuality",)
MC = ("MultipleChoiceAccuracy",)

CASES = {
    "hotpotqa": Case(
        ["5a8b57f25542995d1e6f1371", "5a8c7595554299585d9e36b6"],
        ["yes"],
        "yes",
        "no",
        QA,
        "exact_match",
        "Scott Derrickson: Scott Derrickson (born July 16, 1966) is an American director. He lives",
    ),
    "natural-questions": Case(
        ["nq-0", "nq-1"],
        ["14 December 1972 UTC", "December 1972"],
        "December 1972",
        "In 1969.",
        QA,
        "exact_match",
        "when was the last time anyone was on the moon",
    ),
    "musique": Case(
        ["2hop__460946_294723", "3hop1__9285_5188_23307"],
        ["Miquette Giraudy", "Miquette"],
        "Miquette",
        "Steve Hillage",
        QA,
        "exact_match",
        "Miquette Giraudy: Miquette Giraudy is a French keyboard player",
    ),
    "narrativeqa": Case(
        ["00fb61fa7bee266ad995e52190ebb73606b60b70-0", "00fb61fa7bee266ad995e52190ebb73606b60b70-1"],
        ["Mark Hunter", "Mark Hunter, a student"],
        "Mark Hunter",
        "The teacher.",
        QA,
        "exact_match",
        "Mark Hunter is a high school student",
    ),
    "triviaqa": Case(
        ["tc_33", "tc_40"],
        ["Sunset Boulevard", "Sunset Blvd"],
        "Sunset Blvd",
        "Cats",
        QA,
        "exact_match",
        "Sunset Boulevard opened on Broadway",
    ),
    "frames": Case(
        ["frames-0", "frames-1"],
        ["Jane Ballou"],
        "Jane Ballou",
        "Mary Smith",
        QA,
        "exact_match",
        "future wife",
    ),
    "qasper": Case(
        [
            "1909.00694-753990d0b621d390ed58f20c4d9e4f065f0dc672",
            "1909.00694-9d578ddccc27dd849244d632dd0f6bf27348ad81",
        ],
        ["a vocabulary of positive and negative predicates"],
        "a vocabulary of positive and negative predicates",
        "BERT",
        QA,
        "exact_match",
        "We train BERT on the ACP corpus.",
    ),
    "quality": Case(
        ["20001_ABCD_1", "20001_ABCD_2"],
        "B",
        "The answer is B.",
        "The answer is A.",
        MC,
        "mc_accuracy",
        "B. Mars",
    ),
    "squad": Case(
        ["56be4db0acb8001400a502ec", "56be4db0acb8001400a502ed"],
        ["Denver Broncos"],
        "Denver Broncos",
        "Carolina Panthers",
        QA,
        "exact_match",
        "The Denver Broncos defeated the Carolina Panthers",
    ),
    "mmlu": Case(
        ["mmlu-abstract_algebra-0", "mmlu-astronomy-0", "mmlu-astronomy-1"],
        "C",
        "C",
        "B",
        MC,
        "mc_accuracy",
        "C. 2",
    ),
    "mmlu-pro": Case(
        ["mmlu-pro-70", "mmlu-pro-71"], "B", "Answer: B", "Answer: J", MC, "mc_accuracy", "J. Be loud"
    ),
    "arc-challenge": Case(
        ["Mercury_7175875", "NYSEDREGENTS_2015_4_8"],
        "C",
        "(C)",
        "(D)",
        MC,
        "mc_accuracy",
        "C. Planetary days will become shorter.",
    ),
    "truthfulqa": Case(
        ["truthfulqa-0", "truthfulqa-1"],
        [
            "The watermelon seeds pass through your digestive system",
            "Nothing happens",
            "You eat watermelon seeds",
        ],
        "Nothing happens",
        "A melon grows.",
        QA,
        "exact_match",
        "What happens to you if you eat watermelon seeds?",
    ),
    "gpqa": Case(["recgI0kG8cJIoi4X0", "rec0yTRmO1oAJOTVj"], "A", "A", "B", MC, "mc_accuracy", "A. 1e-4 eV"),
    "hellaswag": Case(
        ["hellaswag-24", "hellaswag-92"],
        "D",
        "D",
        "A",
        MC,
        "mc_accuracy",
        "D. , the man continues removing the snow on his car.",
    ),
    "winogrande": Case(
        ["winogrande-0", "winogrande-1"], "A", "A", "B", MC, "mc_accuracy", "A. Sarah\nB. Maria"
    ),
}


@pytest.fixture
def host(monkeypatch, tmp_path):
    offline_hub(monkeypatch, MIRROR, tmp_path)
    return isolated_host()


def test_every_qa_and_choice_name_has_a_case():
    from context_bench._catalog import choice, qa

    assert {spec.name for spec in [*qa.SPECS, *choice.SPECS]} == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_name_loads_wires_and_scores(name, host):
    case = CASES[name]
    rows = load(name, host=host).rows
    assert [row["id"] for row in rows] == case.ids
    first = rows[0]
    assert first.get("answer", first.get("correct_letter")) == case.gold
    assert case.text in first["question"] + first.get("context", "")
    (spec,) = [spec for _, spec in host.datasets().values() if spec.name == name]
    assert set(spec.fields) <= set(first)  # what `context-bench datasets` says the rows carry
    evaluators = Wirer(host).wire(name).for_row(first)
    assert tuple(type(e).__name__ for e in evaluators) == case.wired
    (evaluator,) = evaluators
    assert evaluator.score(first, {"response": case.right})[case.field] == 1.0
    assert evaluator.score(first, {"response": case.wrong})[case.field] == 0.0


def test_the_prompt_asks_for_what_is_scored(host):
    assert (
        load("squad", host=host)
        .rows[0]["question"]
        .endswith("Answer with a short phrase taken from the text, nothing else.")
    )
    assert (
        load("natural-questions", host=host)
        .rows[0]["question"]
        .endswith("Answer with a short phrase, nothing else.")
    )
    for name in ("mmlu", "gpqa", "quality"):
        assert (
            load(name, host=host)
            .rows[0]["question"]
            .endswith("Answer with the letter of the correct option.")
        )


def test_hotpotqa_marks_its_supporting_facts_as_the_rows_evidence(host):
    """Each supporting fact (a paragraph's title and a sentence's number) is that sentence, which
    the context holds: what evidence retention checks (docs/savings.md)."""
    first, second = load("hotpotqa", host=host).rows
    assert first["evidence"] == [
        "Scott Derrickson (born July 16, 1966) is an American director.",
        "Edward Davis Wood Jr. was an American filmmaker.",
    ]
    assert second["evidence"] == [
        "Kiss and Tell is a 1945 comedy starring Shirley Temple as Corliss Archer.",
        "She served as Chief of Protocol of the United States.",
    ]
    assert all(fact in row["context"] for row in (first, second) for fact in row["evidence"])


def test_configs_and_splits_of_the_family(host):
    assert [r["id"] for r in load("hotpotqa:distractor", host=host).rows] == ["5a8b57f25542995d1e6f1371"]
    assert [r["id"] for r in load("arc-challenge:ARC-Easy", host=host).rows] == ["NYSEDREGENTS_2015_4_8"]
    assert [r["id"] for r in load("winogrande:winogrande_debiased", host=host).rows] == ["winogrande-0"]
    assert load("mmlu-pro", split="validation", host=host).rows[0]["id"] == "mmlu-pro-70"
    assert load("quality", split="train", host=host).rows[0]["correct_letter"] == "A"


def test_unlabelled_test_splits_still_run_with_nothing_to_score(host):
    for name in ("hellaswag", "winogrande"):
        (row,) = load(name, split="test", host=host).rows
        assert "correct_letter" not in row and "A. " in row["question"]


def test_gpqa_does_not_always_put_the_answer_first(host):
    rows = load("gpqa", host=host).rows + load("gpqa:gpqa_main", host=host).rows
    letters = {row["correct_letter"] for row in rows}
    assert letters != {"A"} and letters <= set("ABCD")
    assert rows[0]["question"] == rows[2]["question"]  # the same record, the same order, every time


def test_qasper_answers_cover_every_annotator(host):
    yes_no = load("qasper", host=host).rows[1]
    assert yes_no["answer"] == ["yes"]
    assert "Experiments\n\nWe train BERT on the ACP corpus." in yes_no["context"]
