"""SummarizationQuality: ROUGE-L of a summary against its reference, as rouge-score computes it."""

from __future__ import annotations

from typing import Any

from ..text import as_text

#: Where the reference summary is looked up, first found wins.
REFERENCE_KEYS = ("reference", "summary", "answer")


class SummarizationQuality:
    """``rouge_l_f1`` (first: a report's headline for the set), ``rouge_l_precision`` and
    ``rouge_l_recall`` of ``processed["response"]`` against the reference:
    ``original["reference"]``, else ``"summary"``, else ``"answer"``.

    The figures are rouge-score's own ``RougeScorer(["rougeL"], use_stemmer=use_stemmer)``.
    ``use_stemmer`` defaults to True (Porter stemming, as summarization papers report ROUGE);
    pass False for rouge-score's bare default.  A list of references scores against the best one
    (rouge-score's ``score_multi``, by F1).  Note rouge-score's tokenizer keeps only ASCII letters
    and digits, so text in other scripts scores 0.0.  A row with no reference is not applicable
    (``{}``); an empty response or reference scores 0.0.

    rouge-score (with nltk) takes a few hundred milliseconds to import, so it is imported when an
    instance is built, never with this module; a pickled instance carries only its settings.
    """

    name = "summarization_quality"

    def __init__(self, use_stemmer: bool = True) -> None:
        from rouge_score.rouge_scorer import RougeScorer

        self.use_stemmer = use_stemmer
        self._scorer = RougeScorer(["rougeL"], use_stemmer=use_stemmer)

    def score(self, original: dict, processed: dict) -> dict[str, float]:
        reference = _reference(original)
        if reference is None:
            return {}
        prediction = as_text(processed.get("response"))
        if isinstance(reference, (list, tuple)):
            result = self._scorer.score_multi([as_text(r) for r in reference], prediction)["rougeL"]
        else:
            result = self._scorer.score(as_text(reference), prediction)["rougeL"]
        return {
            "rouge_l_f1": float(result.fmeasure),  # first: the headline a report ranks by
            "rouge_l_precision": float(result.precision),
            "rouge_l_recall": float(result.recall),
        }

    def __getstate__(self) -> dict[str, Any]:
        return {"use_stemmer": self.use_stemmer}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)

    def __repr__(self) -> str:
        return f"SummarizationQuality(use_stemmer={self.use_stemmer!r})"


def _reference(original: dict) -> Any:
    for key in REFERENCE_KEYS:
        value = original.get(key)
        if value is not None and not (isinstance(value, (list, tuple)) and not value):
            return value
    return None
