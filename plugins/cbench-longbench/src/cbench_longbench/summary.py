"""MeetingBankSummary: LLMLingua-2's MeetingBank summary scores, per row.

LLMLingua-2's ``evaluate_sim`` keeps the first line of the prediction (leading newlines stripped)
and scores it with Hugging Face ``evaluate``'s ROUGE, which is Google's ``rouge-score`` without
stemming.  Its BLEU is a corpus figure and its BERTScore needs a model: neither is per row, so
neither is given here (docs/longbench.md).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

FIELDS = ("rouge1", "rouge2", "rougeL", "rougeLsum")


@functools.cache
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(FIELDS), use_stemmer=False)


class MeetingBankSummary:
    """ROUGE-1, -2, -L and -Lsum F of the response's first line against the row's ``reference``."""

    name = "meetingbank_summary"

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        reference = original.get("reference")
        if not isinstance(reference, str):
            raise ValueError("the row has no reference summary (a string)")
        response = processed.get("response")
        line = ("" if response is None else str(response)).lstrip("\n").split("\n")[0].strip()
        found = _scorer().score(reference, line)
        return {field: float(found[field].fmeasure) for field in FIELDS}
