"""Agent-trace data sets (specs only; loaders in context_bench.hub._agents)."""

from __future__ import annotations

from ..specs import DatasetSpec, HubSource

#: The keys of a function-calling row (``answer``: the gold calls as JSON) and of a SWE-bench row.
CALL_FIELDS = ("id", "context", "question", "tools", "answer")
PATCH_FIELDS = ("id", "context", "question", "answer", "repo", "base_commit")

#: BFCL's single-turn categories that have a possible answer: ``BFCL_v3_<config>.json`` with
#: ``possible_answer/BFCL_v3_<config>.json``.
BFCL_CATEGORIES = (
    "simple",
    "multiple",
    "parallel",
    "parallel_multiple",
    "java",
    "javascript",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
BFCL = HubSource(
    "gorilla-llm/Berkeley-Function-Calling-Leaderboard", config="simple", configs=BFCL_CATEGORIES
)
APIGEN = HubSource("Salesforce/xlam-function-calling-60k", split="train", gated=True)
SWEBENCH = HubSource("princeton-nlp/SWE-bench", split="test")
SWEBENCH_VERIFIED = HubSource("princeton-nlp/SWE-bench_Verified", split="test")
SWEBENCH_LITE = HubSource("princeton-nlp/SWE-bench_Lite", split="test")

_SWE = "the issue and the gold patch; AnswerQuality compares patches (resolving needs the SWE-bench harness)"

SPECS: list[DatasetSpec] = [
    DatasetSpec(
        "bfcl",
        "context_bench.hub._agents:bfcl",
        "Berkeley Function Calling Leaderboard, one category per config (gorilla-llm/"
        "Berkeley-Function-Calling-Leaderboard, v3 files); AnswerQuality on the calls as JSON",
        source=BFCL,
        fields=CALL_FIELDS,
    ),
    DatasetSpec(
        "apigen",
        "context_bench.hub._agents:apigen",
        "APIGen function calling (Salesforce/xlam-function-calling-60k, train, gated: HF_TOKEN); "
        "AnswerQuality on the calls as JSON",
        source=APIGEN,
        fields=CALL_FIELDS,
    ),
    DatasetSpec(
        "swebench",
        "context_bench.hub._agents:swebench",
        f"SWE-bench (test): {_SWE}",
        source=SWEBENCH,
        fields=PATCH_FIELDS,
    ),
    DatasetSpec(
        "swebench-verified",
        "context_bench.hub._agents:swebench_verified",
        f"SWE-bench Verified (test, 500 human-validated): {_SWE}",
        source=SWEBENCH_VERIFIED,
        fields=PATCH_FIELDS,
    ),
    DatasetSpec(
        "swebench-lite",
        "context_bench.hub._agents:swebench_lite",
        f"SWE-bench Lite (test, 300): {_SWE}",
        source=SWEBENCH_LITE,
        fields=PATCH_FIELDS,
    ),
]
