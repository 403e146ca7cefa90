"""Multiple-choice data sets (specs only; loaders in context_bench.hub._choice)."""

from __future__ import annotations

from ..specs import DatasetSpec
from ._sources import CHOICE

#: The keys of a multiple-choice row: MultipleChoiceAccuracy scores ``correct_letter``.
MC_FIELDS = ("id", "question", "correct_letter")

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        "mmlu",
        "context_bench.hub._choice:mmlu",
        "MMLU, 57 subjects (mmlu:SUBJECT for one), four options",
        source=CHOICE["mmlu"],
        fields=MC_FIELDS,
    ),
    DatasetSpec(
        "mmlu-pro",
        "context_bench.hub._choice:mmlu_pro",
        "MMLU-Pro, harder questions with up to ten options",
        source=CHOICE["mmlu-pro"],
        fields=MC_FIELDS,
    ),
    DatasetSpec(
        "arc-challenge",
        "context_bench.hub._choice:arc_challenge",
        "ARC-Challenge grade-school science questions (arc-challenge:ARC-Easy for the easy set)",
        source=CHOICE["arc-challenge"],
        fields=MC_FIELDS,
    ),
    DatasetSpec(
        "truthfulqa",
        "context_bench.hub._choice:truthfulqa",
        "TruthfulQA (generation): questions that invite a common misconception",
        source=CHOICE["truthfulqa"],
        fields=("id", "question", "answer"),
    ),
    DatasetSpec(
        "gpqa",
        "context_bench.hub._choice:gpqa",
        "GPQA Diamond graduate-level science questions (gated: needs HF_TOKEN)",
        source=CHOICE["gpqa"],
        fields=MC_FIELDS,
    ),
    DatasetSpec(
        "hellaswag",
        "context_bench.hub._choice:hellaswag",
        "HellaSwag: the ending that continues a passage, of four",
        source=CHOICE["hellaswag"],
        fields=MC_FIELDS,
    ),
    DatasetSpec(
        "winogrande",
        "context_bench.hub._choice:winogrande",
        "WinoGrande: which of two options fills the blank",
        source=CHOICE["winogrande"],
        fields=MC_FIELDS,
    ),
]
