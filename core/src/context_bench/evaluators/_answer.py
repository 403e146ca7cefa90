"""AnswerQuality: how well a free-text response matches the gold answer."""

from __future__ import annotations

import numbers
from typing import Any

from ..metrics.quality import match_scores
from ..text import as_text, normalize_tokens

_FIELDS = ("f1", "exact_match", "recall", "contains")


class AnswerQuality:
    """SQuAD-style ``f1``, ``exact_match``, ``recall`` and ``contains`` of ``processed["response"]``
    against ``original["answer"]`` (see :mod:`context_bench.text` for the normalization).

    - No ``"answer"`` key, or ``None``: not applicable, ``{}`` (an instruction-following row must
      not get a fake f1 of 1.0).
    - An answer with no tokens after normalization (``""``, ``"."``, ``"the"``) leaves nothing to
      find: 1.0 on all four, whatever the response.  Otherwise an empty response scores 0.0.
    - A list (or tuple) of answers lists several acceptable golds: each field is its best over
      them, as SQuAD's evaluation does (so ``f1`` and ``exact_match`` may come from different
      golds).  An empty list is not applicable.
    - A number reads as its shortest decimal text (``3.0`` as ``"3"``); a response of ``None``
      reads as empty.  Any other answer type is an error naming the field.

    >>> AnswerQuality().score({"answer": "Paris"}, {"response": "The capital is Paris."})
    {'f1': 0.5, 'exact_match': 0.0, 'recall': 1.0, 'contains': 1.0}
    """

    name = "answer_quality"

    def score(self, original: dict, processed: dict) -> dict[str, float]:
        answer = original.get("answer")
        if answer is None:
            return {}
        response = processed.get("response")
        prediction = normalize_tokens(response if type(response) is str else as_text(response))
        if type(answer) is str:
            return _scores(prediction, answer)
        if isinstance(answer, (list, tuple)):
            if not answer:
                return {}
            each = [_scores(prediction, gold) for gold in answer]
            return {field: max(scores[field] for scores in each) for field in _FIELDS}
        return _scores(prediction, _gold_text(answer))

    def __repr__(self) -> str:
        return "AnswerQuality()"


def _scores(prediction: list[str], answer: Any) -> dict[str, float]:
    gold = normalize_tokens(answer if type(answer) is str else _gold_text(answer))
    if not gold:
        return dict.fromkeys(_FIELDS, 1.0)
    f1, em, recall, contained = match_scores(prediction, gold)
    return {"f1": f1, "exact_match": em, "recall": recall, "contains": contained}


def _gold_text(answer: Any) -> str:
    if isinstance(answer, (str, numbers.Real)):
        return as_text(answer)
    raise TypeError(
        f"AnswerQuality: original['answer'] must be a string, a number or a list of them, "
        f"not {type(answer).__name__}"
    )
