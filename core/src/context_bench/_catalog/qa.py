"""Question answering data sets (specs only; loaders in context_bench.hub._qa)."""

from __future__ import annotations

from ..specs import DatasetSpec
from ._sources import QA

#: The keys of a QA row: AnswerQuality scores ``answer`` (a list of accepted answers).
QA_FIELDS = ("id", "context", "question", "answer")

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        "hotpotqa",
        "context_bench.hub._qa:hotpotqa",
        "HotpotQA multi-hop questions over their Wikipedia paragraphs",
        source=QA["hotpotqa"],
        fields=QA_FIELDS,
    ),
    DatasetSpec(
        "natural-questions",
        "context_bench.hub._qa:natural_questions",
        "Natural Questions (open), closed book: Google queries with short answers",
        source=QA["natural-questions"],
        fields=QA_FIELDS,
    ),
    DatasetSpec(
        "musique",
        "context_bench.hub._qa:musique",
        "MuSiQue 2-4 hop questions over twenty paragraphs (answerable subset)",
        source=QA["musique"],
        fields=QA_FIELDS,
    ),
    DatasetSpec(
        "narrativeqa",
        "context_bench.hub._qa:narrativeqa",
        "NarrativeQA questions about a book or script, over its summary",
        source=QA["narrativeqa"],
        fields=QA_FIELDS,
    ),
    DatasetSpec(
        "triviaqa",
        "context_bench.hub._qa:triviaqa",
        "TriviaQA (reading comprehension) over web search results, every alias accepted",
        source=QA["triviaqa"],
        fields=QA_FIELDS,
    ),
    DatasetSpec(
        "frames",
        "context_bench.hub._qa:frames",
        "FRAMES multi-hop factual questions (closed book)",
        source=QA["frames"],
        fields=QA_FIELDS,
    ),
    DatasetSpec(
        "qasper",
        "context_bench.hub._qa:qasper",
        "Qasper questions about NLP papers over the full paper (parquet branch)",
        source=QA["qasper"],
        fields=QA_FIELDS,
    ),
    DatasetSpec(
        "quality",
        "context_bench.hub._qa:quality",
        "QuALITY long-article questions with four options, answered by letter",
        source=QA["quality"],
        fields=("id", "context", "question", "correct_letter"),
    ),
    DatasetSpec(
        "squad",
        "context_bench.hub._qa:squad",
        "SQuAD v1.1 extractive questions over a Wikipedia paragraph",
        source=QA["squad"],
        fields=QA_FIELDS,
    ),
]
