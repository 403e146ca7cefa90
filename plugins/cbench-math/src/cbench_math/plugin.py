"""Entry point of the cbench-math plugin: registers its evaluator, auto-wire rule and data sets.

Everything here is lazy: listing evaluators, data sets or auto-wiring imports neither sympy, the
evaluator module, the loaders nor ``datasets``.
"""

from __future__ import annotations

from collections.abc import Callable

from context_bench import AutowireRule, DatasetSpec, EvaluatorSpec, hookimpl
from context_bench.bounds import flag_type
from context_bench.hookspecs import OptionGroup

from .sources import GSM8K, MATH, MGSM

CBENCH_PLUGIN_API = 1

_DATASETS = [
    DatasetSpec(
        "gsm8k",
        "cbench_math.benchmarks:gsm8k",
        "GSM8K (openai/gsm8k, main, test): grade-school word problems, a boxed number",
        source=GSM8K,
    ),
    DatasetSpec(
        "math",
        "cbench_math.benchmarks:competition_math",
        "MATH (EleutherAI/hendrycks_math: hendrycks/competition_math's problems), test; math:SUBJECT",
        source=MATH,
    ),
    DatasetSpec(
        "mgsm",
        "cbench_math.benchmarks:mgsm",
        "MGSM (juletxara/mgsm, parquet branch), test: GSM8K translated; mgsm:LANG (default en)",
        source=MGSM,
    ),
]


@hookimpl
def cbench_register_evaluators(register: Callable[[EvaluatorSpec], None]) -> None:
    register(
        EvaluatorSpec(
            "MathEquivalence",
            "cbench_math.evaluator:MathEquivalence",
            fields=["math_equiv"],
            ranges=(0, 1),
            description=(
                "1.0 when the response's final answer (last \\boxed{}, '####', 'the answer is', "
                "...) is mathematically equivalent to original['answer']; sympy in a worker "
                "process under a hard per-case deadline."
            ),
        )
    )


@hookimpl
def cbench_register_autowire(register: Callable[[AutowireRule], None]) -> None:
    register(
        AutowireRule(
            "MathEquivalence",
            datasets=["math", "gsm8k", "mgsm"],
            build="cbench_math.evaluator:from_options",
        )
    )


@hookimpl
def cbench_register_datasets(register: Callable[[DatasetSpec], None]) -> None:
    for spec in _DATASETS:
        register(spec)


@hookimpl
def cbench_add_options(group: OptionGroup) -> None:
    group.add_argument(
        "--math-timeout",
        type=flag_type("--math-timeout"),
        default=None,
        metavar="SECONDS",
        help="MathEquivalence: hard deadline per case (default 5); an overrun scores 0 and is counted",
    )
    group.add_argument(
        "--math-workers",
        type=flag_type("--math-workers"),
        default=None,
        metavar="N",
        help="MathEquivalence: judge processes (default 1)",
    )


@hookimpl
def cbench_plugin_info() -> dict[str, str]:
    return {"deadline": "per case, in a killable worker process", "symbolic": "sympy (in the worker)"}
