"""cbench-judge: LLM-as-judge evaluators for context-bench, fast and honest under load.

Public names resolve lazily so importing the package (or listing evaluators) stays cheap.
"""

from __future__ import annotations

from context_bench.lazy import lazy_getattr

_LAZY = {
    "MemoryJudge": ".memory",
    "FalseMemoryRate": ".memory",
    "LLMJudge": ".rating",
    "JudgeEvaluator": ".template_judge",
    "JudgePanel": ".template_judge",
    "judge_score": ".template_judge",
    "ajudge_score": ".template_judge",
    "JudgeConfigError": ".errors",
    "JudgeInputError": ".errors",
    "JudgeError": ".errors",
    "JudgeCallError": ".errors",
    "JudgeParseError": ".errors",
}

__all__ = sorted(_LAZY)

__getattr__ = lazy_getattr(__name__, _LAZY)
