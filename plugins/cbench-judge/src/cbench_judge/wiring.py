"""From the run's options (``--judge-url`` and friends) to judge evaluators."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from context_bench.errors import UsageError

from .defaults import DEFAULT_CONCURRENCY, DEFAULT_MODEL
from .memory import FalseMemoryRate, MemoryJudge
from .rating import LLMJudge
from .template_judge import JudgeEvaluator
from .templates import BUILTIN


def _common(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options' judge settings in the judge vocabulary, which every judge takes as they are."""
    url = options.get("judge_url")
    if not url:
        raise UsageError("the judge evaluators need --judge-url")
    variable = options.get("judge_api_key_env")
    if variable and not os.environ.get(variable):
        raise UsageError(f"--judge-api-key-env names {variable!r}, which is not set in the environment")
    concurrency = options.get("judge_concurrency") or DEFAULT_CONCURRENCY
    if not isinstance(concurrency, int) or concurrency < 1:
        raise UsageError(f"--judge-concurrency must be a positive integer, got {concurrency!r}")
    cache_dir = options.get("cache_dir")
    return {
        "url": url,
        "model": options.get("judge_model") or DEFAULT_MODEL,
        "api_key_env": variable or None,
        "concurrency": concurrency,
        "cache_dir": None if not cache_dir or options.get("judge_no_cache") else Path(cache_dir) / "judge",
        "strict": bool(options.get("judge_strict")),
    }


def build_llm_judge(options: Mapping[str, Any]) -> Any:
    """``LLMJudge``, or the template judge ``--judge-template`` names."""
    common = _common(options)
    template = options.get("judge_template")
    if not template:
        return LLMJudge(**common)
    if template not in BUILTIN:
        raise UsageError(f"--judge-template {template!r}: choose one of {', '.join(sorted(BUILTIN))}")
    return JudgeEvaluator(template=template, **common)


def build_memory_judge(options: Mapping[str, Any]) -> MemoryJudge:
    return MemoryJudge(**_common(options))


def build_false_memory_rate(options: Mapping[str, Any]) -> FalseMemoryRate:
    return FalseMemoryRate(**_common(options))
