"""Where this plugin's data sets live, by the revision they load (records only: nothing loads here)."""

from __future__ import annotations

from context_bench.hub import PARQUET_REVISION, HubSource

from .tasks import LONGBENCH_E, TASKS

#: THUDM/LongBench runs a loading script: its parquet conversion holds a folder per config, the
#: task's name for LongBench and ``<task>_e`` for LongBench-E.
LONGBENCH = HubSource("THUDM/LongBench", configs=tuple(TASKS), revision=PARQUET_REVISION)
LONGBENCH_E_SOURCE = HubSource("THUDM/LongBench", configs=LONGBENCH_E, revision=PARQUET_REVISION)
LONGBENCH_V2 = HubSource("THUDM/LongBench-v2", split="train")
#: ZeroSCROLLS' ten tasks, in its README's order (``tau/zero_scrolls``, a loading script: its parquet
#: conversion holds a folder per task).  Only ``validation`` (a few examples a task) carries the
#: answers; ``test``'s are private, scored by the benchmark's leaderboard.
ZEROSCROLLS_TASKS = (
    "gov_report",
    "summ_screen_fd",
    "qmsum",
    "squality",
    "qasper",
    "narrative_qa",
    "quality",
    "musique",
    "space_digest",
    "book_sum_sort",
)
ZEROSCROLLS = HubSource(
    "tau/zero_scrolls", configs=ZEROSCROLLS_TASKS, split="validation", revision=PARQUET_REVISION
)
#: The MeetingBank QA and summary test set LLMLingua-2 evaluates on (862 meetings, each with a
#: transcript, three QA pairs and a GPT-4 summary).
MEETINGBANK = HubSource("microsoft/MeetingBank-QA-Summary", split="test")

#: Lost in the Middle's multi-document QA files are in its GitHub repository (git LFS), not on the
#: Hugging Face hub: ``qa_data/<k>_total_documents/nq-open-<k>_total_documents_gold_at_<i>.jsonl.gz``.
NQ_MULTIDOC_REPO = "nelson-liu/lost-in-the-middle"
NQ_MULTIDOC_REVISION = "29b8a6d042ce29abccee3db1a73171a107d7e6af"
#: The gold document's published positions (0-based) for each number of documents.
NQ_MULTIDOC_POSITIONS = {
    "10": (0, 4, 9),
    "20": (0, 4, 9, 14, 19),
    "30": (0, 4, 9, 14, 19, 24, 29),
}
