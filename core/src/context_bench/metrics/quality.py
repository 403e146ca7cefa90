"""SQuAD-style answer matching: the token-overlap scores of normalized texts.

This is the hot path of answer scoring, so overlap is counted on the token lists of
:func:`context_bench.text.normalize_tokens` with a plain dict.  The string functions
(``f1_score`` ...) follow the SQuAD evaluation script; :func:`match_scores` gives all four figures
from one normalization for evaluators that need them together.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..text import normalize_tokens

__all__ = ["contains", "exact_match", "f1_score", "match_scores", "recall_score"]


def _overlap(prediction: Sequence[str], ground_truth: Sequence[str]) -> int:
    """How many tokens the two bags share (each token counted min(times in either) times)."""
    if len(ground_truth) == 1:
        return 1 if ground_truth[0] in prediction else 0
    remaining: dict[str, int] = {}
    for token in ground_truth:
        remaining[token] = remaining.get(token, 0) + 1
    common = 0
    for token in prediction:
        left = remaining.get(token)
        if left:
            remaining[token] = left - 1
            common += 1
    return common


def _f1(common: int, prediction: Sequence[str], ground_truth: Sequence[str]) -> float:
    if not prediction or not ground_truth:
        return float(len(prediction) == len(ground_truth))
    if not common:
        return 0.0
    return 2.0 * common / (len(prediction) + len(ground_truth))


def _recall(common: int, ground_truth: Sequence[str]) -> float:
    return common / len(ground_truth) if ground_truth else 1.0


def _contains(prediction: Sequence[str], ground_truth: Sequence[str]) -> float:
    if len(ground_truth) == 1:
        return 1.0 if ground_truth[0] in prediction else 0.0
    if not ground_truth:
        return 1.0
    return 1.0 if f" {' '.join(ground_truth)} " in f" {' '.join(prediction)} " else 0.0


def f1_score(prediction: str, ground_truth: str) -> float:
    """SQuAD token F1 of the normalized texts; 1.0 when both are empty, 0.0 when only one is."""
    pred, gold = normalize_tokens(prediction), normalize_tokens(ground_truth)
    return _f1(_overlap(pred, gold), pred, gold)


def exact_match(prediction: str, ground_truth: str) -> float:
    """1.0 when the normalized texts are equal."""
    return float(normalize_tokens(prediction) == normalize_tokens(ground_truth))


def recall_score(prediction: str, ground_truth: str) -> float:
    """The share of the ground truth's tokens found in the prediction (1.0 for an empty truth)."""
    pred, gold = normalize_tokens(prediction), normalize_tokens(ground_truth)
    return _recall(_overlap(pred, gold), gold)


def contains(prediction: str, ground_truth: str) -> float:
    """1.0 when the normalized ground truth occurs in the normalized prediction as whole tokens
    (``"par"`` is not contained in ``"Paris"``; an empty truth is contained in anything)."""
    return _contains(normalize_tokens(prediction), normalize_tokens(ground_truth))


def match_scores(prediction: list[str], ground_truth: list[str]) -> tuple[float, float, float, float]:
    """``(f1, exact_match, recall, contains)`` of two already normalized token lists."""
    common = _overlap(prediction, ground_truth)
    return (
        _f1(common, prediction, ground_truth),
        float(prediction == ground_truth),
        _recall(common, ground_truth),
        _contains(prediction, ground_truth),
    )
