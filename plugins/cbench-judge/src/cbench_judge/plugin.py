"""Entry point of the cbench-judge plugin: registers its evaluators, options, auto-wire rules, the
judged data sets (alpaca-eval, mt-bench), the ``pairwise`` and ``judge-check`` commands and the
summary's ``pairwise`` section (``--pairwise``) and ``judge_agreement`` section
(``--judge-agreement``).

Everything is named by lazy references, so listing evaluators or data sets imports neither httpx,
the judges, the loaders nor ``datasets``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from context_bench import AutowireRule, CommandSpec, DatasetSpec, EvaluatorSpec, SectionSpec, hookimpl
from context_bench.hookspecs import OptionGroup

from .settings import JudgeSettings
from .sources import ALPACA_EVAL, MT_BENCH

CBENCH_PLUGIN_API = 1

_EVALUATORS = [
    EvaluatorSpec(
        "MemoryJudge",
        "cbench_judge.memory:MemoryJudge",
        fields=("memory_judge", "memory_judge_raw"),
        description="LLM judge: does processed['response'] convey the gold original['answer']? 1.0/0.0.",
    ),
    EvaluatorSpec(
        "FalseMemoryRate",
        "cbench_judge.memory:FalseMemoryRate",
        fields=("false_memory",),
        description="LLM judge: 1.0 when the answer makes specific claims absent from original['context'].",
        ranges=(0, 1),
        lower_is_better=("false_memory",),
    ),
    EvaluatorSpec(
        "LLMJudge",
        "cbench_judge.rating:LLMJudge",
        fields=("judge_score",),
        description="LLM judge rating 1-5 of the response, normalized to 0..1 as judge_score.",
    ),
    EvaluatorSpec(
        "JudgeEvaluator",
        "cbench_judge.template_judge:JudgeEvaluator",
        fields=("judge_score",),
        description="Template judge (binary_qa, binary_qa_partial, likert_5, safety, custom) as judge_score.",
    ),
    EvaluatorSpec(
        "JudgePanel",
        "cbench_judge.template_judge:JudgePanel",
        fields=("judge_panel",),
        description="Several template judges: majority/mean aggregate plus one field per judge.",
    ),
]

_BUILD = "cbench_judge.wiring:"
_MEMORY_DATASETS = ("locomo", "longmemeval")
_MEMORY_FIELDS = ("context", "question", "answer")
#: What a judge needs of a row: a question (``cbench_judge.rating.QUESTION_KEYS``, any one of them),
#: and for a template that grades against one, a reference.
_QUESTION = "question|prompt|instruction|input"
_REFERENCE = "answer|reference|correct_letter"
#: ``--judge-dataset NAME`` (repeatable) limits every judge rule to those data sets.
_LIMIT = JudgeSettings.dest("dataset")
#: A judge is wired only once its endpoint is set (``--judge-url``); in a memory run, a template
#: judge only when one is asked for by name (``--judge-template``).
_URL = JudgeSettings.dest("url")
_TEMPLATE = JudgeSettings.dest("template")


def _judge_rules(runs: tuple[str, ...], requires: tuple[str, ...]) -> list[AutowireRule]:
    """The 1-5 rating (or the ``--judge-template`` judge) wherever a row holds what it needs: a
    question, and a reference too for a template that grades against one (``binary_qa``).  A row
    without them is not judged, rather than failing."""
    return [
        AutowireRule(
            "LLMJudge",
            fields=fields,
            requires=requires,
            build=_BUILD + build,
            runs=runs,
            datasets_option=_LIMIT,
        )
        for fields, build in (
            ((_QUESTION,), "build_open_judge"),
            ((_QUESTION, _REFERENCE), "build_reference_judge"),
        )
    ]


_RULES = [
    # Rows runs get the rating once a judge is configured.  A memory run is judged by MemoryJudge and
    # FalseMemoryRate instead: there, only a template judge asked for by name applies
    # (``--evaluator LLMJudge`` adds the rating anyway).
    *_judge_rules(("rows",), (_URL,)),
    *_judge_rules(("memory",), (_URL, _TEMPLATE)),
    AutowireRule(
        "MemoryJudge",
        datasets=_MEMORY_DATASETS,
        fields=_MEMORY_FIELDS,
        requires=(_URL,),
        build=_BUILD + "build_memory_judge",
        datasets_option=_LIMIT,
    ),
    AutowireRule(
        "FalseMemoryRate",
        datasets=_MEMORY_DATASETS,
        fields=_MEMORY_FIELDS,
        requires=(_URL,),
        build=_BUILD + "build_false_memory_rate",
        datasets_option=_LIMIT,
    ),
]


_DATASETS = [
    DatasetSpec(
        "alpaca-eval",
        "cbench_judge.benchmarks:alpaca_eval",
        "AlpacaEval (tatsu-lab/alpaca_eval, parquet branch): 805 instructions; --judge-url rates them",
        source=ALPACA_EVAL,
    ),
    DatasetSpec(
        "mt-bench",
        "cbench_judge.benchmarks:mt_bench",
        "MT-Bench (HuggingFaceH4/mt_bench_prompts, train): 80 two-turn chats; the judge rates the last",
        source=MT_BENCH,
    ),
]


_COMMANDS = [
    CommandSpec(
        "pairwise",
        "judge every system of a file of several systems against a baseline, answers in both orders",
        configure="cbench_judge.pairwise_command:configure",
        run="cbench_judge.pairwise_command:run",
    ),
    CommandSpec(
        "judge-check",
        "how far a judge agrees with people: Cohen's kappa, accuracy and rates against a labels file",
        configure="cbench_judge.judge_check:configure",
        run="cbench_judge.judge_check:run",
    ),
]


@hookimpl
def cbench_register_commands(register: Callable[[CommandSpec], None]) -> None:
    for spec in _COMMANDS:
        register(spec)


@hookimpl
def cbench_register_evaluators(register: Callable[[EvaluatorSpec], None]) -> None:
    for spec in _EVALUATORS:
        register(spec)


@hookimpl
def cbench_register_autowire(register: Callable[[AutowireRule], None]) -> None:
    for rule in _RULES:
        register(rule)


@hookimpl
def cbench_register_datasets(register: Callable[[DatasetSpec], None]) -> None:
    for spec in _DATASETS:
        register(spec)


@hookimpl
def cbench_register_sections(register: Callable[[SectionSpec], None]) -> None:
    register(
        SectionSpec(
            "pairwise",
            "cbench_judge.pairwise_section:section",
            "--pairwise: each system against --baseline by the judge, answers in both orders",
        )
    )
    register(
        SectionSpec(
            "judge_agreement",
            "cbench_judge.agreement_section:section",
            "--judge-agreement: the judge's kappa against people beside every score it produced",
        )
    )


@hookimpl
def cbench_add_options(group: OptionGroup) -> None:
    from .options import add_options

    add_options(group)


@hookimpl
def cbench_plugin_info() -> dict[str, str]:
    from .defaults import DEFAULT_CONCURRENCY, DEFAULT_MODEL

    return {
        "endpoint": "OpenAI-compatible POST {judge-url}/v1/chat/completions",
        "default model": DEFAULT_MODEL,
        "concurrency per endpoint": str(DEFAULT_CONCURRENCY),
        "OPENAI_API_KEY": "set" if os.environ.get("OPENAI_API_KEY") else "not set",
    }
