"""``meetingbank-qa`` and ``meetingbank-summary``: the MeetingBank test set of LLMLingua-2 (Pan et
al., 2024), ``microsoft/MeetingBank-QA-Summary``, prompted as its evaluation scripts prompt.

Each record is a meeting: its transcript (``prompt``), three question-answer pairs (``QA_pairs``)
and a GPT-4 summary (``gpt4_summary``).  QA rows are one per pair, answered in at most 100 tokens
and scored by ``subspan_em``; summary rows one per meeting, 400 tokens, ROUGE of the first line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from context_bench.hub import load_rows

from .sources import MEETINGBANK

#: eval_meetingbank_qa.py's prompt and ``--n_max_token_ans``.
QA_TEMPLATE = (
    "Write a high-quality answer for the given question using the provided meeting transcript "
    "(which may be compressed).\n{transcript}\nQuestion:{question}\nAnswer:"
)
QA_MAX_TOKENS = 100
#: eval_meetingbank_summary.py's prompt and ``--n_max_token_ans``.
SUMMARY_TEMPLATE = (
    "Summarize the provided meeting transcript (which may be compressed).\n{transcript}\nSummary:"
)
SUMMARY_MAX_TOKENS = 400


def meetingbank_qa(split: str | None = None) -> Iterator[dict[str, Any]]:
    for record in load_rows(MEETINGBANK, split=split):
        for number, pair in enumerate(record["QA_pairs"]):
            yield {
                "id": f"meetingbank-{record['idx']}-qa{number}",
                "dataset": "meetingbank-qa",
                "prompt": QA_TEMPLATE.format(transcript=record["prompt"], question=pair["question"]),
                "answers": [pair["answer"]],
                "meeting": record["idx"],
                "max_tokens": QA_MAX_TOKENS,
            }


def meetingbank_summary(split: str | None = None) -> Iterator[dict[str, Any]]:
    for record in load_rows(MEETINGBANK, split=split):
        yield {
            "id": f"meetingbank-{record['idx']}",
            "dataset": "meetingbank-summary",
            "prompt": SUMMARY_TEMPLATE.format(transcript=record["prompt"]),
            "reference": record["gpt4_summary"],
            "max_tokens": SUMMARY_MAX_TOKENS,
        }
