"""Reasoning data sets (specs only; loaders in context_bench.hub._reasoning)."""

from __future__ import annotations

from ..specs import DatasetSpec, HubSource

#: The keys of a QA row: AnswerQuality scores ``answer`` (a list of accepted answers).
QA_FIELDS = ("id", "context", "question", "answer")

DROP = HubSource("ucinlp/drop", split="validation")

#: BBH's tasks, one config each.  dyck_languages is left out: its answers are closing brackets,
#: which the core's text normalization erases, so no core evaluator can score them.
BBH_TASKS = (
    "boolean_expressions",
    "causal_judgement",
    "date_understanding",
    "disambiguation_qa",
    "formal_fallacies",
    "geometric_shapes",
    "hyperbaton",
    "logical_deduction_five_objects",
    "logical_deduction_seven_objects",
    "logical_deduction_three_objects",
    "movie_recommendation",
    "multistep_arithmetic_two",
    "navigate",
    "object_counting",
    "penguins_in_a_table",
    "reasoning_about_colored_objects",
    "ruin_names",
    "salient_translation_error_detection",
    "snarks",
    "sports_understanding",
    "temporal_sequences",
    "tracking_shuffled_objects_five_objects",
    "tracking_shuffled_objects_seven_objects",
    "tracking_shuffled_objects_three_objects",
    "web_of_lies",
    "word_sorting",
)
#: lukaemon/bbh runs a loading script: its parquet conversion holds a directory per task.
BBH = HubSource(
    "lukaemon/bbh", config="boolean_expressions", configs=BBH_TASKS, revision="refs/convert/parquet"
)

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        "drop",
        "context_bench.hub._reasoning:drop",
        "DROP, discrete reasoning over paragraphs (ucinlp/drop, validation); AnswerQuality",
        source=DROP,
        fields=QA_FIELDS,
    ),
    DatasetSpec(
        "bbh",
        "context_bench.hub._reasoning:bbh",
        "BIG-Bench Hard, one task per config (lukaemon/bbh, test); MultipleChoiceAccuracy or AnswerQuality",
        source=BBH,
        fields=("id", "question", "answer", "correct_letter"),
    ),
]
