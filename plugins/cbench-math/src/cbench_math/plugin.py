"""Entry point of the cbench-math plugin: registers its evaluator and auto-wire rule.

Everything here is lazy: listing evaluators or auto-wiring imports neither sympy nor the
evaluator module.
"""

from __future__ import annotations

import argparse
import math

from context_bench import AutowireRule, EvaluatorSpec, hookimpl

CBENCH_PLUGIN_API = 1


@hookimpl
def cbench_register_evaluators(register):
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
def cbench_register_autowire(register):
    register(
        AutowireRule(
            "MathEquivalence",
            datasets=["math", "gsm8k", "mgsm"],
            build="cbench_math.evaluator:from_options",
        )
    )


@hookimpl
def cbench_add_options(group):
    group.add_argument(
        "--math-timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="MathEquivalence: hard deadline per case (default 5); an overrun scores 0 and is counted",
    )
    group.add_argument(
        "--math-workers",
        type=positive_count,
        default=None,
        metavar="N",
        help="MathEquivalence: judge processes (default 1)",
    )


def positive_seconds(text: str) -> float:
    """``--math-timeout``: a finite number of seconds above 0 (argparse exits 2 on anything else)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def positive_count(text: str) -> int:
    """``--math-workers``: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


@hookimpl
def cbench_plugin_info():
    return {"deadline": "per case, in a killable worker process", "symbolic": "sympy (in the worker)"}
