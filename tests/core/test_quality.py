"""The SQuAD-style normalizer of context_bench.text and the token-overlap scores of
context_bench.metrics.quality."""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from context_bench.metrics.quality import contains, exact_match, f1_score, match_scores, recall_score
from context_bench.text import as_text, normalize_answer, normalize_tokens


# The SQuAD v1.1 evaluation algorithm, written from its description, as the oracle for ASCII text.
def squad_normalize(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def squad_f1(prediction: str, truth: str) -> float:
    pred, gold = squad_normalize(prediction).split(), squad_normalize(truth).split()
    if not pred or not gold:
        return float(pred == gold)
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


ascii_text = st.text(
    alphabet=string.ascii_letters + string.digits + string.punctuation + " \t\n", max_size=60
)
# Words that hit the articles, case folding and punctuation often enough to matter.
wordy_text = st.lists(
    st.sampled_from(
        ["the", "The", "a", "A", "an", "An", "Paris", "paris,", "France.", "cat", "it's", "U.S.", "1,000"]
    ),
    max_size=12,
).map(" ".join)
any_text = st.one_of(st.text(max_size=40), ascii_text, wordy_text)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Cat, sat!", "cat sat"),
        ("  a   b \n c  ", "b c"),
        ("An apple a day", "apple day"),
        ("theater anthem", "theater anthem"),  # articles only as whole words
        ("state-of-the-art", "stateoftheart"),  # punctuation is deleted, as SQuAD does
        ("“Paris” — France…", "paris france"),  # Unicode punctuation too
        ("ÉCOLE Normale", "école normale"),
        ("", ""),
    ],
)
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


def test_documented_scores():
    assert f1_score("The capital is Paris.", "Paris") == 0.5
    assert exact_match("The capital is Paris.", "Paris") == 0.0
    assert exact_match("the PARIS!", "Paris") == 1.0
    assert recall_score("The capital is Paris.", "Paris") == 1.0
    assert recall_score("Paris", "Paris France") == 0.5
    assert contains("The capital is Paris.", "Paris") == 1.0
    assert contains("Paris, France", "Paris France") == 1.0
    assert contains("France Paris", "Paris France") == 0.0  # order matters for containment
    assert contains("Parisian", "Paris") == 0.0  # whole tokens only
    assert exact_match("France Paris", "Paris France") == 0.0


def test_empty_texts_follow_squad():
    assert f1_score("", "") == 1.0
    assert f1_score("the", "") == 1.0  # both normalize to nothing
    assert f1_score("Paris", "") == 0.0
    assert f1_score("", "Paris") == 0.0
    assert recall_score("anything", "") == 1.0
    assert contains("anything", "") == 1.0


def test_repeated_tokens_count_at_most_their_overlap():
    assert f1_score("paris paris paris", "paris") == pytest.approx(0.5)
    assert recall_score("paris", "paris paris") == 0.5
    assert f1_score("x b b c", "b b d") == pytest.approx(2 * 2 / 7)


@pytest.mark.parametrize(
    ("value", "text"), [(None, ""), (3, "3"), (3.0, "3"), (2.5, "2.5"), (True, "True"), ("x", "x")]
)
def test_as_text(value, text):
    assert as_text(value) == text


@given(any_text)
def test_normalization_is_idempotent(text):
    once = normalize_answer(text)
    assert normalize_answer(once) == once
    assert normalize_tokens(once) == once.split()


@given(ascii_text, ascii_text)
def test_agrees_with_squad_on_ascii(prediction, truth):
    assert normalize_answer(prediction) == squad_normalize(prediction)
    assert f1_score(prediction, truth) == pytest.approx(squad_f1(prediction, truth))


@given(wordy_text, wordy_text)
def test_agrees_with_squad_on_articles_and_punctuation(prediction, truth):
    assert f1_score(prediction, truth) == pytest.approx(squad_f1(prediction, truth))


@given(any_text, any_text)
def test_scores_are_bounded(prediction, truth):
    for value in (
        f1_score(prediction, truth),
        exact_match(prediction, truth),
        recall_score(prediction, truth),
        contains(prediction, truth),
    ):
        assert 0.0 <= value <= 1.0


@given(any_text, any_text)
def test_f1_counts_tokens_symmetrically(prediction, truth):
    assert f1_score(prediction, truth) == pytest.approx(f1_score(truth, prediction))
    # a bag of words: the order of the prediction's tokens does not matter
    assert f1_score(" ".join(reversed(normalize_tokens(prediction))), truth) == pytest.approx(
        f1_score(prediction, truth)
    )


@given(any_text, any_text)
def test_scores_are_consistent(prediction, truth):
    pred, gold = normalize_tokens(prediction), normalize_tokens(truth)
    f1, em, recall, contained = match_scores(pred, gold)
    assert (f1, em, recall, contained) == (
        f1_score(prediction, truth),
        exact_match(prediction, truth),
        recall_score(prediction, truth),
        contains(prediction, truth),
    )
    if em:
        assert f1 == recall == contained == 1.0
    if contained:
        assert recall == 1.0
    if gold and pred:
        assert (f1 == 1.0) == (Counter(pred) == Counter(gold))
