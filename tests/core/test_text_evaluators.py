"""The core's text evaluators: AnswerQuality, MultipleChoiceAccuracy, NLILabelMatch, SummarizationQuality."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from context_bench import Evaluator
from context_bench.evaluators._answer import AnswerQuality
from context_bench.evaluators._choice import MultipleChoiceAccuracy, extract_choice
from context_bench.evaluators._nli import NLILabelMatch, extract_label, gold_label
from context_bench.evaluators._summarization import SummarizationQuality

ALL_ZERO = {"f1": 0.0, "exact_match": 0.0, "recall": 0.0, "contains": 0.0}
ALL_ONE = {"f1": 1.0, "exact_match": 1.0, "recall": 1.0, "contains": 1.0}


@pytest.fixture(scope="module")
def summarizer():
    return SummarizationQuality()


def evaluators(summarizer):
    return [AnswerQuality(), MultipleChoiceAccuracy(), NLILabelMatch(), summarizer]


# -- common contract ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "name", "original", "processed"),
    [
        (0, "answer_quality", {"answer": "Paris"}, {"response": "paris"}),
        (1, "multiple_choice_accuracy", {"correct_letter": "B"}, {"response": "B"}),
        (2, "nli_label_match", {"answer": "neutral"}, {"response": "maybe"}),
        (3, "summarization_quality", {"reference": "a cat sat"}, {"response": "a cat sat"}),
    ],
)
def test_evaluators_share_the_contract(summarizer, index, name, original, processed):
    evaluator = evaluators(summarizer)[index]
    assert isinstance(evaluator, Evaluator)
    assert evaluator.name == name
    scores = evaluator.score(original, processed)
    assert scores and all(type(v) is float and v == 1.0 for v in scores.values())
    # picklable, and the copy scores the same
    clone = pickle.loads(pickle.dumps(evaluator))
    assert clone.score(original, processed) == scores
    # a None response reads as empty: scored, not raised
    assert all(v == 0.0 for v in evaluator.score(original, {"response": None}).values())
    assert all(v == 0.0 for v in evaluator.score(original, {}).values())
    # rows without the evaluator's key are not applicable
    assert evaluator.score({"question": "?"}, processed) == {}


# -- AnswerQuality -----------------------------------------------------------------------------


def test_answer_quality_documented_example():
    assert AnswerQuality().score({"answer": "Paris"}, {"response": "The capital is Paris."}) == {
        "f1": 0.5,
        "exact_match": 0.0,
        "recall": 1.0,
        "contains": 1.0,
    }


@pytest.mark.parametrize("answer", ["", "   ", ".", "The"])
def test_answer_quality_empty_answer_scores_one(answer):
    assert AnswerQuality().score({"answer": answer}, {"response": "The capital is Paris."}) == ALL_ONE
    assert AnswerQuality().score({"answer": answer}, {"response": ""}) == ALL_ONE


@pytest.mark.parametrize("response", ["", None, "  ", "!?"])
def test_answer_quality_empty_response_scores_zero(response):
    assert AnswerQuality().score({"answer": "Paris"}, {"response": response}) == ALL_ZERO


def test_answer_quality_not_applicable_without_answer():
    assert AnswerQuality().score({"instruction_id_list": ["x"]}, {"response": "text"}) == {}
    assert AnswerQuality().score({"answer": None}, {"response": "text"}) == {}
    assert AnswerQuality().score({"answer": []}, {"response": "text"}) == {}


def test_answer_quality_several_golds_take_the_best_per_field():
    scores = AnswerQuality().score(
        {"answer": ["Paris France", "the city of Paris"]}, {"response": "Paris, France is the city"}
    )
    # f1 is best against the first gold (2 of 4 response tokens), recall too (2 of 2)
    assert scores == {"f1": pytest.approx(2 / 3), "exact_match": 0.0, "recall": 1.0, "contains": 1.0}
    assert AnswerQuality().score({"answer": ("Lyon", "Paris")}, {"response": "Paris"}) == ALL_ONE


def test_answer_quality_numbers_compare_as_text():
    assert AnswerQuality().score({"answer": 42}, {"response": "42"}) == ALL_ONE
    assert AnswerQuality().score({"answer": 3.0}, {"response": "It is 3."}) == {
        "f1": 0.5,
        "exact_match": 0.0,
        "recall": 1.0,
        "contains": 1.0,
    }
    assert (
        AnswerQuality().score({"answer": [2.5, "two and a half"]}, {"response": "2.5"})["exact_match"] == 1.0
    )
    assert AnswerQuality().score({"answer": "7"}, {"response": 7})["exact_match"] == 1.0


def test_answer_quality_rejects_other_answer_types():
    with pytest.raises(TypeError, match=r"original\['answer'\].*dict"):
        AnswerQuality().score({"answer": {"text": "Paris"}}, {"response": "Paris"})


# -- MultipleChoiceAccuracy --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "letter"),
    [
        ("definitely C", "C"),
        ("I think B", "B"),
        ("I think it's B.", "B"),
        ("A good guess would be D", "D"),
        ("A is correct", "A"),
        ("The answer is A because it fits.", "A"),
        ("The answer is B", "B"),
        ("Answer: (C)", "C"),
        ("Answer: I think it's B", "B"),
        ("**B**", "B"),
        ("b", "B"),
        ("(d)", "D"),
        ("B. Paris", "B"),
        ("B) 42\nbecause A is too small", "B"),
        ("I'm sure the correct option is E.", "E"),
        ("Let's check (A) and (C). So the answer is (B).", "B"),
        ("Looking at A and C, I pick J", "J"),
        ("After ruling out A and B, the choice is clearly:\nC", "C"),
        ("Reasoning about A, B...\nFinal answer: \\boxed{G}", "G"),
        ("The correct answer is: **C. Paris**", "C"),
        ("Vitamin C deficiency; answer: H", "H"),
        ("It is a tough one, but I'd go with J", "J"),
        ("Option B seems right", "B"),
        ("The answer is b.", "B"),
        ("the answer is a", "A"),
        ("The answer is a fruit, so C", "C"),
        ("The answer is (A) a fruit", "A"),
        ("A cat sat on a mat.", None),
        ("I don't know", None),
        ("The D-Day landings", None),
        ("no letters here", None),
    ],
)
def test_extract_choice(response, letter):
    assert extract_choice(response) == letter


@pytest.mark.parametrize("correct", ["B", "b", "(B)", " B. "])
def test_mc_accuracy_reads_correct_letter_forms(correct):
    evaluator = MultipleChoiceAccuracy()
    assert evaluator.score({"correct_letter": correct}, {"response": "The answer is B."}) == {
        "mc_accuracy": 1.0
    }
    assert evaluator.score({"correct_letter": correct}, {"response": "The answer is C."}) == {
        "mc_accuracy": 0.0
    }


def test_mc_accuracy_no_letter_scores_zero():
    assert MultipleChoiceAccuracy().score({"correct_letter": "A"}, {"response": "A cat."}) == {
        "mc_accuracy": 0.0
    }


@pytest.mark.parametrize("correct", ["K", "AB", "", 2])
def test_mc_accuracy_rejects_bad_correct_letter(correct):
    with pytest.raises(ValueError, match=r"original\['correct_letter'\]"):
        MultipleChoiceAccuracy().score({"correct_letter": correct}, {"response": "A"})


# -- NLILabelMatch -----------------------------------------------------------------------------


def test_nli_documented_example():
    assert NLILabelMatch().score({"answer": "Entailment"}, {"response": "Yes, this is true."}) == {
        "nli_accuracy": 1.0
    }


@pytest.mark.parametrize(
    ("response", "label"),
    [
        ("Yes, this is true.", "entailment"),
        ("No.", "contradiction"),
        ("Maybe", "neutral"),
        ("Unknown - the passage is silent", "neutral"),
        ("**Contradiction** - the text says otherwise", "contradiction"),
        ("Based on the passage, the claim is supported.", "entailment"),
        ("The evidence refutes the claim.", "contradiction"),
        ("There is not enough information to decide.", "neutral"),
        ("The premise does not entail the hypothesis; the relation is neutral.", "neutral"),
        ("It doesn't necessarily contradict it, so I'd say neutral", "neutral"),
        ("The label is: entailment", "entailment"),
        ("Answer: NotMentioned", "neutral"),
        ("Entailment, because no other reading works", "entailment"),
        ("After weighing it, the answer is no", "contradiction"),
        ("Hmm, hard to say", None),
    ],
)
def test_extract_label(response, label):
    assert extract_label(response) == label


@pytest.mark.parametrize(
    ("gold", "label"),
    [
        ("Entailment", "entailment"),
        ("SUPPORTS", "entailment"),
        ("SUPPORT", "entailment"),
        ("REFUTES", "contradiction"),
        ("CONTRADICT", "contradiction"),
        ("NOT ENOUGH INFO", "neutral"),
        ("NotMentioned", "neutral"),
        ("not_mentioned", "neutral"),
        ("neutral", "neutral"),
    ],
)
def test_gold_label_aliases(gold, label):
    assert gold_label(gold) == label


def test_nli_compares_labels_not_words():
    evaluator = NLILabelMatch()
    assert evaluator.score({"answer": "SUPPORTS"}, {"response": "Entailment."}) == {"nli_accuracy": 1.0}
    assert evaluator.score({"answer": "NotMentioned"}, {"response": "maybe"}) == {"nli_accuracy": 1.0}
    assert evaluator.score({"answer": "contradiction"}, {"response": "Yes"}) == {"nli_accuracy": 0.0}
    assert evaluator.score({"answer": "neutral"}, {"response": "I cannot tell"}) == {"nli_accuracy": 0.0}


@pytest.mark.parametrize("gold", ["Paris", 0, ""])
def test_nli_rejects_a_gold_that_is_no_label(gold):
    with pytest.raises(ValueError, match=r"original\['answer'\]"):
        NLILabelMatch().score({"answer": gold}, {"response": "yes"})


# -- SummarizationQuality ----------------------------------------------------------------------

# ROUGE-L by hand: rouge-score's tokens (lowercased, split on anything not a letter or digit, Porter
# stems for tokens longer than three letters when stemming), the longest common subsequence (LCS),
# precision LCS/len(response), recall LCS/len(reference).  Cases: (reference, response, LCS with
# stemming, LCS without, reference length, response length).
SUMMARY_CASES = [
    # the cat sat on the mat / a cat was sitting on the mat: "cat on the mat"
    ("The cat sat on the mat.", "A cat was sitting on the mat.", 4, 4, 6, 7),
    # police arrested three men after the robbery on monday / three men were arrested by police
    # on monday: "three men on monday"
    (
        "Police arrested three men after the robbery on Monday.",
        "Three men were arrested by police on Monday.",
        4,
        4,
        9,
        8,
    ),
    # the company s profits rose 12 in 2023 driven by cloud sales / driven by cloud sales profits
    # rose in 2023 at the company: "profits rose in 2023" (or "driven by cloud sales")
    (
        "The company's profits rose 12% in 2023, driven by cloud sales.",
        "Driven by cloud sales, profits rose in 2023 at the company.",
        4,
        4,
        12,
        11,
    ),
    # stemmed: run runner ran / the runner run: "runner"; unstemmed nothing is shared
    ("running runners ran", "the runner runs", 1, 0, 3, 3),
    ("identical text", "identical text", 2, 2, 2, 2),
    ("nothing in common", "completely different words", 0, 0, 3, 3),
    ("", "some response", 0, 0, 0, 2),
    ("some reference", "", 0, 0, 2, 0),
]


def _rouge_l(lcs: int, reference: int, response: int) -> dict[str, float]:
    precision = lcs / response if response else 0.0
    recall = lcs / reference if reference else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"rouge_l_precision": precision, "rouge_l_recall": recall, "rouge_l_f1": f1}


@pytest.mark.parametrize("use_stemmer", [True, False])
@pytest.mark.parametrize(("reference", "response", "stemmed", "plain", "ref_len", "resp_len"), SUMMARY_CASES)
def test_summarization_equals_rouge_l_by_hand(
    use_stemmer, reference, response, stemmed, plain, ref_len, resp_len
):
    expected = _rouge_l(stemmed if use_stemmer else plain, ref_len, resp_len)
    scores = SummarizationQuality(use_stemmer=use_stemmer).score(
        {"reference": reference}, {"response": response}
    )
    assert scores == pytest.approx(expected, abs=1e-12)


def test_summarization_stems_by_default(summarizer):
    assert summarizer.use_stemmer is True
    stemmed = summarizer.score({"reference": "running runners"}, {"response": "run runner"})
    bare = SummarizationQuality(use_stemmer=False).score(
        {"reference": "running runners"}, {"response": "run runner"}
    )
    assert stemmed["rouge_l_f1"] == 1.0 and bare["rouge_l_f1"] == 0.0


def test_summarization_reference_order(summarizer):
    response = {"response": "alpha beta"}
    assert (
        summarizer.score({"reference": "alpha beta", "summary": "x", "answer": "y"}, response)["rouge_l_f1"]
        == 1.0
    )
    assert summarizer.score({"summary": "alpha beta", "answer": "y"}, response)["rouge_l_f1"] == 1.0
    assert summarizer.score({"answer": "alpha beta"}, response)["rouge_l_f1"] == 1.0
    assert summarizer.score({"reference": None, "summary": "alpha beta"}, response)["rouge_l_f1"] == 1.0


def test_summarization_several_references_the_best_one_counts(summarizer):
    references = ["the cat sat on the mat", "a dog barked loudly at night"]
    scores = summarizer.score({"reference": references}, {"response": "the dog barked at night"})
    # the best reference is the second: "dog barked at night" is 4 of its 6 tokens and 4 of the 5
    assert scores == pytest.approx(_rouge_l(4, 6, 5), abs=1e-12)


def test_summarization_pickle_keeps_the_setting():
    clone = pickle.loads(pickle.dumps(SummarizationQuality(use_stemmer=False)))
    assert clone.use_stemmer is False
    assert clone.score({"reference": "running"}, {"response": "run"})["rouge_l_f1"] == 0.0


def test_rouge_score_is_not_imported_with_the_module():
    code = (
        "import sys, context_bench, context_bench.evaluators._summarization as s;"
        "assert 'rouge_score' not in sys.modules and 'nltk' not in sys.modules;"
        "s.SummarizationQuality(); assert 'rouge_score' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
