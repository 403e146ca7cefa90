"""cbench-judge: LLM-as-judge evaluators for context-bench, fast and honest under load.

Public names resolve lazily so importing the package (or listing evaluators) stays cheap.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "MemoryJudge": "memory",
    "FalseMemoryRate": "memory",
    "LLMJudge": "rating",
    "JudgeEvaluator": "template_judge",
    "JudgePanel": "template_judge",
    "judge_score": "template_judge",
    "ajudge_score": "template_judge",
    "JudgeConfigError": "errors",
    "JudgeInputError": "errors",
    "JudgeError": "errors",
    "JudgeCallError": "errors",
    "JudgeParseError": "errors",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cbench_judge' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
