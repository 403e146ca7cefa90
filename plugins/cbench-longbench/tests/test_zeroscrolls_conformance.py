"""ZeroScrollsScore against the paper's definitions (Shaham et al., 2023, §3.3): hand-worked cases,
and 2,000 seeded (prediction, references) pairs per metric family compared with tests/reference.py,
which computes each metric afresh from its formula (ROUGE also with the rouge-score package)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from cbench_longbench.zeroscrolls_metrics import ZeroScrollsScore

PAIRS = 2000
_WORDS = (
    "the a an The report agency spent funds rose fell by 20 percent Ålesund Alesund café naïve "
    "Straße crew Mars water ice captain found it is was not Rhône Glacier yes no unanswerable"
).split()
_MARKS = list(".,;:!?'\"()-—…") + ["...", " .", "\n"]


def _score(task: str, response: str, answers: list[str]) -> dict[str, float]:
    row = {"dataset": f"zeroscrolls:{task}", "answers": answers}
    return ZeroScrollsScore().score(row, {"response": response})


def _text(rng: random.Random, low: int, high: int) -> str:
    parts = []
    for _ in range(rng.randint(low, high)):
        parts.append(rng.choice(_WORDS))
        if rng.random() < 0.25:
            parts.append(rng.choice(_MARKS))
    return " ".join(parts)


def _quoting(rng: random.Random, answers: list[str], low: int, high: int) -> str:
    """A prediction that often quotes an answer among other words."""
    if rng.random() < 0.4:
        return _text(rng, low, high)
    quoted = rng.choice(answers)
    return rng.choice([quoted, _text(rng, 0, 4) + " " + quoted + rng.choice(_MARKS)])


# Hand-worked cases.


def test_rouge_is_the_geometric_mean_of_each_types_best_reference():
    """ "the cat sat" against "the cat ran": ROUGE-1 2/3, ROUGE-2 ("the cat") 1/2, ROUGE-L 2/3;
    against "cat sat": 4/5, 2/3 and 4/5. Each type's best is 4/5, 2/3, 4/5, their mean's cube root
    (4/5 * 2/3 * 4/5) ** (1/3) = (32/75) ** (1/3)."""
    scores = _score("squality", "the cat sat", ["the cat ran", "cat sat"])
    assert scores == pytest.approx(
        {"zeroscrolls_score": (32 / 75) ** (1 / 3), "rouge1": 4 / 5, "rouge2": 2 / 3, "rougeL": 4 / 5},
        abs=1e-12,
    )
    # no shared bigram: the geometric mean is 0 whatever ROUGE-1 says
    assert _score("gov_report", "cat the", ["the cat"])["zeroscrolls_score"] == 0.0


@pytest.mark.parametrize(
    ("response", "answers", "expected"),
    [
        ("English, German and French", ["English, German, French"], 6 / 7),  # p = 3/4, r = 1
        ("To Ålesund.", ["Alesund"], 2 * 1 / 2 * 1 / (1 / 2 + 1)),  # "to alesund" vs "alesund": 2/3
        ("The café", ["cafe"], 1.0),  # transliterated, the article dropped
        ("Straße", ["strasse"], 1.0),
        ("", ["anything"], 0.0),
        ("a an the", ["the"], 0.0),  # nothing left to share
        ("yes", ["no", "Yes."], 1.0),  # the best reference
    ],
)
def test_f1_transliterates_then_normalizes_as_squad(response, answers, expected):
    assert _score("qasper", response, answers) == {"zeroscrolls_score": pytest.approx(expected, abs=1e-12)}


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("B", 1.0),
        ("(B) Seven", 1.0),
        ("The answer is B.", 1.0),
        ("A bird? No: B", 0.0),  # the first letter standing alone is the article "A"
        ("Bob says C", 0.0),
        ("b", 0.0),
        ("", 0.0),
    ],
)
def test_quality_reads_the_first_letter_standing_alone(response, expected):
    assert _score("quality", response, ["B"]) == {"zeroscrolls_score": expected}


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("60%", 1.0),
        ("50%", 0.5),  # halved for every 10 points off
        ("80%", 0.25),
        ("65.5%", 2.0**-0.55),
        (
            "Out of 50 reviews, 20 are positive and 30 are negative, so 40% of the reviews are "
            "positive 60% are negative.",
            0.25,
        ),  # the paper's example: the first percentage, 40%
        ("60", 0.0),  # not a percentage
        ("60 %", 0.0),
        ("sixty percent", 0.0),
    ],
)
def test_space_digest_is_the_exponential_similarity_of_the_first_percentage(response, expected):
    scores = _score("space_digest", response, ["60%"])
    assert scores == {"zeroscrolls_score": pytest.approx(expected, abs=1e-15)}


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("1, 2, 3", 1.0),
        ("3, 2, 1", 0.0),
        ("2, 1, 3", 2 / 3),
        ("Order: 1, 3, 2.", 2 / 3),  # "Order:" and the dot dropped
        ("1, 2", 0.0),  # not a permutation
        ("1, 2, 3, 3", 0.0),
        ("1 2 3", 0.0),  # IDs are comma-separated
        ("1, 2, 3,", 1.0),  # a trailing comma adds no ID
    ],
)
def test_book_sum_sort_is_the_concordance_index(response, expected):
    assert _score("book_sum_sort", response, ["1, 2, 3"]) == {"zeroscrolls_score": pytest.approx(expected)}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_a_random_permutation_scores_one_half_on_average(n, reference):
    """The paper: "The average random permutation scores 50%", exactly, over every permutation
    (n = 1 has one pair-free permutation, the gold, and scores 1)."""
    gold = [str(i) for i in range(1, n + 1)]
    scores = [
        _score("book_sum_sort", ", ".join(order), [", ".join(gold)])["zeroscrolls_score"]
        for order in itertools.permutations(gold)
    ]
    orders = itertools.permutations(gold)
    assert scores == [reference.concordance_index(list(order), gold) for order in orders]
    assert math.fsum(scores) / len(scores) == (1.0 if n == 1 else 0.5)


def test_a_row_of_no_task_or_without_answers_is_its_error():
    evaluator = ZeroScrollsScore()
    with pytest.raises(ValueError, match="names no ZeroSCROLLS task"):
        evaluator.score({"dataset": "zeroscrolls:nope", "answers": ["x"]}, {"response": "x"})
    with pytest.raises(ValueError, match="test answers are private"):
        evaluator.score({"dataset": "zeroscrolls:qasper", "answers": []}, {"response": "x"})
    with pytest.raises(ValueError, match="holds no percentage"):
        evaluator.score({"dataset": "zeroscrolls:space_digest", "answers": ["most"]}, {"response": "5%"})


# Generated pairs against the independent definitions.


def test_rouge_agrees_with_the_formula_and_rouge_score_on_every_pair(reference):
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    rng = random.Random("zeroscrolls rouge")
    values = set()
    for _ in range(PAIRS):
        answers = [_text(rng, 0, 25) for _ in range(rng.randint(1, 4))]
        prediction = _quoting(rng, answers, 0, 25)
        ours = _score("squality", prediction, answers)
        assert ours == pytest.approx(reference.zeroscrolls_rouge(prediction, answers), abs=1e-9)
        package = {
            kind: max(scorer.score(answer, prediction)[kind].fmeasure for answer in answers)
            for kind in ("rouge1", "rouge2", "rougeL")
        }
        assert {kind: ours[kind] for kind in package} == pytest.approx(package, abs=1e-12)
        values.add(round(ours["zeroscrolls_score"], 6))
    assert len(values) > 100 and 0.0 in values and 1.0 in values


def test_f1_agrees_with_the_formula_on_every_pair(reference):
    rng = random.Random("zeroscrolls f1")
    values = set()
    for _ in range(PAIRS):
        answers = [_text(rng, 1, 6) for _ in range(rng.randint(1, 3))]
        prediction = _quoting(rng, answers, 0, 8)
        ours = _score("narrative_qa", prediction, answers)["zeroscrolls_score"]
        assert ours == pytest.approx(reference.zeroscrolls_f1(prediction, answers), abs=1e-9)
        values.add(round(ours, 6))
    assert len(values) > 20 and 0.0 in values and 1.0 in values


def test_exponential_similarity_agrees_with_the_formula_on_every_pair(reference):
    rng = random.Random("zeroscrolls es")
    for _ in range(PAIRS):
        gold = rng.randint(0, 100)
        guess = rng.choice([rng.randint(0, 100), round(rng.uniform(0, 100), 2)])
        response = f"{_text(rng, 0, 3)} {guess}% {_text(rng, 0, 3)} {rng.randint(0, 100)}%"
        ours = _score("space_digest", response, [f"{gold}%"])["zeroscrolls_score"]
        assert ours == pytest.approx(reference.exponential_similarity(gold, guess), abs=1e-12)


def test_concordance_index_agrees_with_the_formula_on_every_pair(reference):
    rng = random.Random("zeroscrolls cidx")
    for _ in range(PAIRS):
        gold = [str(i) for i in rng.sample(range(1, 90), rng.randint(3, 20))]
        predicted = rng.sample(gold, len(gold))
        if rng.random() < 0.1:
            predicted[0] = "99"  # not a permutation
        response = rng.choice(["", "Order: ", "IDs: "]) + ", ".join(predicted) + rng.choice(["", ".", "\n"])
        ours = _score("book_sum_sort", response, [", ".join(gold)])["zeroscrolls_score"]
        assert ours == pytest.approx(reference.concordance_index(predicted, gold), abs=1e-12)
