"""Entry point of the cbench-longbench plugin: registers its evaluators, auto-wire rules and data sets.

Everything here is lazy: listing or auto-wiring imports no loader, no jieba and not ``datasets``.
"""

from __future__ import annotations

from collections.abc import Callable

from context_bench import AutowireRule, DatasetSpec, EvaluatorSpec, hookimpl
from context_bench.hookspecs import OptionGroup

from .sources import (
    LONGBENCH,
    LONGBENCH_E_SOURCE,
    LONGBENCH_V2,
    MEETINGBANK,
    NQ_MULTIDOC_POSITIONS,
    NQ_MULTIDOC_REPO,
    NQ_MULTIDOC_REVISION,
    ZEROSCROLLS,
    ZEROSCROLLS_TASKS,
)
from .tasks import LONGBENCH_E, TASKS

CBENCH_PLUGIN_API = 1

_PACKAGE = "cbench_longbench"
#: The papers each data set follows, as ``context-bench datasets`` shows them.
LONGBENCH_PAPER = "Bai et al. 2024, LongBench (arXiv:2308.14508)"
LONGBENCH_V2_PAPER = "Bai et al. 2025, LongBench v2 (arXiv:2412.15204)"
LITM_PAPER = "Liu et al. 2024, Lost in the Middle (arXiv:2307.03172)"
LLMLINGUA2_PAPER = "Pan et al. 2024, LLMLingua-2 (arXiv:2403.12968)"
ZEROSCROLLS_PAPER = "Shaham et al. 2023, ZeroSCROLLS (arXiv:2305.14196)"

#: The data set names rows are grouped by (``dataset`` of each row), which the rules name.
LONGBENCH_NAMES = (
    "longbench",
    "longbench-e",
    "longbench-v2",
    *(f"longbench:{task}" for task in TASKS),
    *(f"longbench-e:{task}" for task in LONGBENCH_E),
)
ZEROSCROLLS_NAMES = ("zeroscrolls", *(f"zeroscrolls:{task}" for task in ZEROSCROLLS_TASKS))
SUBSPAN_NAMES = ("nq-multidoc", *(f"nq-multidoc:{k}" for k in NQ_MULTIDOC_POSITIONS), "meetingbank-qa")

#: What a LongBench or LongBench-E row carries.
_LONGBENCH_FIELDS = ("id", "prompt", "answers", "all_classes", "length", "language", "max_tokens")

_DATASETS = [
    DatasetSpec(
        "longbench",
        f"{_PACKAGE}.longbench:longbench",
        "LongBench, 21 tasks with THUDM's prompts and max tokens; longbench:TASK one task; "
        f"LongBenchScore. Paper: {LONGBENCH_PAPER}",
        source=LONGBENCH,
        fields=_LONGBENCH_FIELDS,
    ),
    DatasetSpec(
        "longbench-e",
        f"{_PACKAGE}.longbench:longbench_e",
        "LongBench-E, 13 tasks sampled evenly over lengths 0-4k, 4-8k, 8k+ (the <task>_e folders); "
        f"longbench-e:TASK one task; LongBenchScore. Paper: {LONGBENCH_PAPER}",
        source=LONGBENCH_E_SOURCE,
        fields=_LONGBENCH_FIELDS,
    ),
    DatasetSpec(
        "longbench-v2",
        f"{_PACKAGE}.longbench:longbench_v2",
        "LongBench v2, 503 long-context multiple-choice questions, pred.py's zero-shot prompt and "
        f"answer extraction; LongBenchScore. Paper: {LONGBENCH_V2_PAPER}",
        source=LONGBENCH_V2,
        fields=("id", "prompt", "correct_choice", "difficulty", "length", "max_tokens"),
    ),
    DatasetSpec(
        "nq-multidoc",
        f"{_PACKAGE}.multidoc:nq_multidoc",
        "Lost in the Middle multi-document NaturalQuestions, nq-multidoc:K for K = 10, 20 (default) "
        f"or 30 documents, the gold one at each published position; SubspanEM. Source: GitHub "
        f"{NQ_MULTIDOC_REPO} qa_data (git LFS), revision {NQ_MULTIDOC_REVISION}. Paper: {LITM_PAPER}",
        fields=("id", "prompt", "answers", "gold_position", "max_tokens"),
    ),
    DatasetSpec(
        "meetingbank-qa",
        f"{_PACKAGE}.meetingbank:meetingbank_qa",
        "MeetingBank QA as LLMLingua-2 evaluates it: three questions per meeting transcript; "
        f"SubspanEM. Paper: {LLMLINGUA2_PAPER}",
        source=MEETINGBANK,
        fields=("id", "prompt", "answers", "max_tokens"),
    ),
    DatasetSpec(
        "meetingbank-summary",
        f"{_PACKAGE}.meetingbank:meetingbank_summary",
        "MeetingBank summaries as LLMLingua-2 evaluates them, against GPT-4's summary; "
        f"MeetingBankSummary. Paper: {LLMLINGUA2_PAPER}",
        source=MEETINGBANK,
        fields=("id", "prompt", "reference", "max_tokens"),
    ),
    DatasetSpec(
        "zeroscrolls",
        f"{_PACKAGE}.zeroscrolls:zeroscrolls",
        "ZeroSCROLLS, 10 long-text tasks with the paper's chat prompts and generation budgets, split "
        "validation (test's answers are private); zeroscrolls:TASK one task; ZeroScrollsScore "
        "(ROUGE geometric mean, F1, accuracy, exponential similarity, concordance index). "
        f"Paper: {ZEROSCROLLS_PAPER}",
        source=ZEROSCROLLS,
        fields=("id", "prompt", "answers", "max_tokens"),
    ),
]


@hookimpl
def cbench_register_evaluators(register: Callable[[EvaluatorSpec], None]) -> None:
    register(
        EvaluatorSpec(
            "LongBenchScore",
            f"{_PACKAGE}.evaluator:LongBenchScore",
            fields=("longbench_score",),
            ranges=(0, 1),
            description="The official LongBench metric of the row's task (QA F1, ROUGE-L, "
            "classification, retrieval, count, code edit similarity; v2: pred.py's answer "
            "extraction), as THUDM's metrics.py and eval.py compute it.",
        )
    )
    register(
        EvaluatorSpec(
            "SubspanEM",
            f"{_PACKAGE}.subspan:SubspanEM",
            fields=("subspan_em",),
            ranges=(0, 1),
            description="Lost in the Middle's best-subspan exact match: 1.0 when a normalized answer "
            "occurs in the response's normalized first line.",
        )
    )
    register(
        EvaluatorSpec(
            "ZeroScrollsScore",
            f"{_PACKAGE}.zeroscrolls_metrics:ZeroScrollsScore",
            fields=("zeroscrolls_score", "rouge1", "rouge2", "rougeL"),
            ranges=(0, 1),
            description="ZeroSCROLLS' metric of the row's task (Shaham et al. 2023, §3.3): the geometric "
            "mean of ROUGE-1/2/L for the summaries (each given too), F1 for Qasper, NarrativeQA and "
            "MuSiQue, the chosen letter for QuALITY, exponential similarity for SpaceDigest, "
            "concordance index for BookSumSort.",
        )
    )
    register(
        EvaluatorSpec(
            "MeetingBankSummary",
            f"{_PACKAGE}.summary:MeetingBankSummary",
            fields=("rouge1", "rouge2", "rougeL", "rougeLsum"),
            ranges=(0, 1),
            description="LLMLingua-2's MeetingBank summary ROUGE (rouge-score, no stemming) of the "
            "response's first line against original['reference'].",
        )
    )


@hookimpl
def cbench_register_autowire(register: Callable[[AutowireRule], None]) -> None:
    register(AutowireRule("LongBenchScore", datasets=LONGBENCH_NAMES))
    register(AutowireRule("SubspanEM", datasets=SUBSPAN_NAMES))
    register(AutowireRule("MeetingBankSummary", datasets=("meetingbank-summary",)))
    register(AutowireRule("ZeroScrollsScore", datasets=ZEROSCROLLS_NAMES))


@hookimpl
def cbench_register_datasets(register: Callable[[DatasetSpec], None]) -> None:
    for spec in _DATASETS:
        register(spec)


@hookimpl
def cbench_plugin_info() -> dict[str, str]:
    return {
        "Chinese words": "jieba's accurate mode and default dictionary, as LongBench's metrics.py cuts",
        "code edit similarity": "fuzzywuzzy's fuzz.ratio on its pure-Python back end (difflib)",
        "ZeroSCROLLS F1's transliteration": "Unidecode",
    }


@hookimpl
def cbench_add_options(group: OptionGroup) -> None:
    group.add_argument(
        "--longbench-cot",
        action="store_true",
        default=None,
        help="longbench-v2: pred.py's chain of thought (the reasoning first, then the answer asked "
        "for with it quoted, two calls a row) instead of its zero-shot prompt",
    )
