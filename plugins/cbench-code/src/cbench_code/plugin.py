"""Entry point of the cbench-code plugin: registers its evaluator, auto-wire rules and data sets.

Nothing heavy is imported here: the evaluator is named by a lazy reference, and the sandbox layer
report behind ``context-bench plugins`` is a cheap forecast (:mod:`cbench_code.layers`).
"""

from __future__ import annotations

from collections.abc import Callable

from context_bench import AutowireRule, DatasetSpec, EvaluatorSpec, hookimpl

from .sources import HUMANEVAL, MBPP

CBENCH_PLUGIN_API = 1

_DATASETS = [
    DatasetSpec(
        "humaneval",
        "cbench_code.benchmarks:humaneval",
        "HumanEval (openai/openai_humaneval, test): complete the function; run against its tests",
        source=HUMANEVAL,
    ),
    DatasetSpec(
        "mbpp",
        "cbench_code.benchmarks:mbpp",
        "MBPP (google-research-datasets/mbpp, sanitized, test): write the function its asserts call",
        source=MBPP,
    ),
]


@hookimpl
def cbench_register_evaluators(register: Callable[[EvaluatorSpec], None]) -> None:
    register(
        EvaluatorSpec(
            "CodeExecution",
            "cbench_code.evaluator:CodeExecution",
            fields=["pass_at_1"],
            ranges=(0, 1),
            description=(
                "Runs generated code against the row's tests (HumanEval test/entry_point or MBPP "
                "test_list) in a sandbox; pass@k over one or more samples."
            ),
        )
    )


@hookimpl
def cbench_register_autowire(register: Callable[[AutowireRule], None]) -> None:
    register(AutowireRule("CodeExecution", datasets=["humaneval", "mbpp"]))
    register(AutowireRule("CodeExecution", fields=["test", "entry_point"]))
    register(AutowireRule("CodeExecution", fields=["test_list"]))


@hookimpl
def cbench_register_datasets(register: Callable[[DatasetSpec], None]) -> None:
    for spec in _DATASETS:
        register(spec)


@hookimpl
def cbench_plugin_info() -> dict[str, str]:
    try:
        from .layers import forecast

        layers = forecast()
    except Exception as exc:  # noqa: BLE001 - a status probe must not break listing
        return {"sandbox": f"unknown: {type(exc).__name__}: {exc}"}
    active = [name for name, status in layers.items() if status.startswith("on")]
    missing = {name: status for name, status in layers.items() if not status.startswith("on")}
    info = {"sandbox layers": ", ".join(active) or "none"}
    if missing:
        info["sandbox layers missing"] = ", ".join(missing)
        info.update({f"sandbox {name}": status for name, status in missing.items()})
    return info
