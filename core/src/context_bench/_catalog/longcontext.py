"""Long-context data sets (specs only; loaders in context_bench.hub._longcontext).

A benchmark whose published scores need their own metrics is a plugin's, not listed here."""

from __future__ import annotations

from ..specs import DatasetSpec, HubSource

#: InfiniteBench's tasks: each is a JSON-lines file (and a split) of the repository.
INFINITEBENCH_TASKS = (
    "passkey",
    "kv_retrieval",
    "number_string",
    "code_run",
    "code_debug",
    "math_find",
    "math_calc",
    "longdialogue_qa_eng",
    "longbook_qa_eng",
    "longbook_sum_eng",
    "longbook_choice_eng",
    "longbook_qa_chn",
)
INFINITEBENCH = HubSource(
    "xinrongzhang2022/InfiniteBench", config="longbook_qa_eng", configs=INFINITEBENCH_TASKS
)
#: NoLiMa's needle sets, ``needlesets/<config>.json`` (the multiple-choice set is left out: its
#: questions carry options this mapping does not ask for).
NOLIMA_SETS = (
    "needle_set",
    "needle_set_hard",
    "needle_set_ONLYDirect",
    "needle_set_w_CoT",
    "needle_set_w_Distractor",
)
NOLIMA = HubSource("amodaresi/NoLiMa", config="needle_set", configs=NOLIMA_SETS)

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        "infinitebench",
        "context_bench.hub._longcontext:infinitebench",
        "InfiniteBench 100K+ token tasks, one per config (xinrongzhang2022/InfiniteBench); "
        "AnswerQuality or MultipleChoiceAccuracy",
        source=INFINITEBENCH,
        fields=("id", "context", "question", "answer", "correct_letter"),
    ),
    DatasetSpec(
        "nolima",
        "context_bench.hub._longcontext:nolima",
        "NoLiMa needles without literal matches, placed in a haystack book (amodaresi/NoLiMa); AnswerQuality",
        source=NOLIMA,
        fields=("id", "context", "question", "answer"),
    ),
]
