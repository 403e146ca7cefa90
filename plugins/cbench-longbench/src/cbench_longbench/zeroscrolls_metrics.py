"""ZeroSCROLLS' metrics per row, from the paper's §3.3 (Shaham et al., 2023) and the SCROLLS metric
it extends (``tau/scrolls``, ``metrics/scrolls.py``), and ``ZeroScrollsScore``, which applies them.

- ROUGE (GovReport, SummScreenFD, QMSum, SQuALITY): Google's rouge-score without stemming, the
  F of ROUGE-1, -2 and -L, each the best over the references, and their geometric mean.  SCROLLS
  splits sentences with NLTK first, which changes only ROUGE-Lsum: not used here.
- F1 (Qasper, NarrativeQA, MuSiQue): SQuAD's token F1 after transliterating to ASCII, lower
  case, punctuation and articles out; the best over the references.
- Accuracy (QuALITY): the first letter A-D standing alone (``\\b[A-D]\\b``) against the answer's.
- Exponential similarity (SpaceDigest): ``2 ** (-10 * |p - p̂|)`` of the first percentage in the
  response, p and p̂ as fractions; no percentage scores 0.
- Concordance index (BookSumSort): all but digits, commas and whitespace dropped, the rest read as
  comma-separated IDs; the share of the C(n, 2) pairs in the reference's order, 0 unless the IDs
  are a permutation of the reference's.
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

from .zeroscrolls import TASKS

FIELD = "zeroscrolls_score"
#: The ROUGE types the summary tasks report beside their geometric mean (the paper's R_geo).
ROUGE_FIELDS = ("rouge1", "rouge2", "rougeL")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
_LETTER = re.compile(r"\b[A-D]\b")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")
_NOT_ID = re.compile(r"[^\d,\s]")


@functools.cache
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_FIELDS), use_stemmer=False)


def rouge(prediction: str, references: Sequence[str]) -> dict[str, float]:
    """ROUGE-1, -2 and -L F, each the maximum over the references, and their geometric mean."""
    best = dict.fromkeys(ROUGE_FIELDS, 0.0)
    for reference in references:
        found = _scorer().score(reference, prediction)
        for field in ROUGE_FIELDS:
            best[field] = max(best[field], found[field].fmeasure)
    return {FIELD: math.prod(best.values()) ** (1 / 3), **best}


@functools.cache
def _unidecode() -> Callable[[str], str]:
    from unidecode import unidecode

    return unidecode


def normalize(text: str) -> str:
    """ASCII transliteration, then SQuAD's normalization (lower case, punctuation, articles, spaces)."""
    text = "".join(ch for ch in _unidecode()(text).lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, reference: str) -> float:
    predicted, truth = normalize(prediction).split(), normalize(reference).split()
    same = sum((Counter(predicted) & Counter(truth)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def f1(prediction: str, references: Sequence[str]) -> dict[str, float]:
    return {FIELD: max(token_f1(prediction, reference) for reference in references)}


def chosen_letter(text: str) -> str | None:
    found = _LETTER.search(text)
    return found.group(0) if found else None


def accuracy(prediction: str, references: Sequence[str]) -> dict[str, float]:
    letter = chosen_letter(prediction)
    right = letter is not None and any(letter == chosen_letter(answer) for answer in references)
    return {FIELD: 1.0 if right else 0.0}


def percentage(text: str) -> float | None:
    """The first percentage in ``text`` ("40%"), or None."""
    found = _PERCENT.search(text)
    return float(found.group(1)) if found else None


def exp_similarity(prediction: str, references: Sequence[str]) -> dict[str, float]:
    predicted = percentage(prediction)
    if predicted is None:
        return {FIELD: 0.0}
    best = 0.0
    for reference in references:
        gold = percentage(reference)
        if gold is None:
            gold = _number(reference)
        best = max(best, 2.0 ** (-10 * abs(gold - predicted) / 100))
    return {FIELD: best}


def _number(reference: str) -> float:
    """A reference percentage written without its sign ("60")."""
    try:
        return float(reference.strip())
    except ValueError:
        raise ValueError(f"the reference {reference!r} holds no percentage") from None


def summary_ids(text: str) -> list[str]:
    """The comma-separated IDs left once every character but digits, commas and whitespace is gone."""
    pieces = (piece.strip() for piece in _NOT_ID.sub("", text).split(","))
    return [piece for piece in pieces if piece]


def concordance(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """The share of pairs ordered as in ``gold``; 0.0 unless ``predicted`` is a permutation of it."""
    if sorted(predicted) != sorted(gold) or len(set(gold)) != len(gold):
        return 0.0
    if len(gold) < 2:
        return 1.0
    place = {identifier: number for number, identifier in enumerate(predicted)}
    pairs = list(combinations(gold, 2))
    return sum(place[first] < place[second] for first, second in pairs) / len(pairs)


def concordance_index(prediction: str, references: Sequence[str]) -> dict[str, float]:
    predicted = summary_ids(prediction)
    return {FIELD: max(concordance(predicted, summary_ids(reference)) for reference in references)}


Metric = Callable[[str, Sequence[str]], dict[str, float]]

#: The paper's metric of each task (``ZeroScrollsTask.metric``).
METRICS: dict[str, Metric] = {
    "rouge": rouge,
    "f1": f1,
    "accuracy": accuracy,
    "exp_similarity": exp_similarity,
    "concordance_index": concordance_index,
}


class ZeroScrollsScore:
    """``zeroscrolls_score``: the metric of the row's task (its ``dataset``, ``zeroscrolls:<task>``)
    against its ``answers``; the summaries also give ``rouge1``, ``rouge2`` and ``rougeL``.

    A row of no ZeroSCROLLS task, or without answers (the test split's are private), is the row's
    error, never a quiet 0.
    """

    name = "zeroscrolls"

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        dataset = str(original.get("dataset") or "")
        family, _, name = dataset.partition(":")
        task = TASKS.get(name) if family == "zeroscrolls" else None
        if task is None:
            raise ValueError(f"the row's dataset {dataset!r} names no ZeroSCROLLS task (zeroscrolls:<task>)")
        answers = original.get("answers", original.get("answer"))
        answers = [answers] if isinstance(answers, str) else [str(answer) for answer in answers or ()]
        if not answers:
            raise ValueError(
                "the row has no answers: ZeroSCROLLS' test answers are private (its leaderboard "
                "scores them); the validation split has them"
            )
        response = processed.get("response")
        return METRICS[task.metric]("" if response is None else str(response), answers)
