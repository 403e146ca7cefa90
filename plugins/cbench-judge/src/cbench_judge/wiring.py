"""From the run's options (``--judge-url`` and friends) to judge evaluators."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from context_bench.errors import UsageError
from context_bench.secrets import check_key_variable

from .defaults import DEFAULT_CONCURRENCY, DEFAULT_MODEL
from .memory import FalseMemoryRate, MemoryJudge
from .rating import LLMJudge
from .settings import JudgeSettings
from .template_judge import JudgeEvaluator
from .templates import BUILTIN


def _common(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options' judge settings in the judge vocabulary, which every judge takes as they are."""
    settings = JudgeSettings.read(options)
    if not settings.url:
        raise UsageError("the judge evaluators need --judge-url")
    variable = settings.api_key_env
    if variable:
        try:
            check_key_variable(variable, "--judge-api-key-env")
        except ValueError as exc:  # shows the variable's name only when it reads as one
            raise UsageError(str(exc)) from None
    concurrency = settings.concurrency or DEFAULT_CONCURRENCY
    if not isinstance(concurrency, int) or concurrency < 1:
        raise UsageError(f"--judge-concurrency must be a positive integer, got {concurrency!r}")
    cache_dir = options.get("cache_dir")
    return {
        "url": settings.url,
        "model": settings.model or DEFAULT_MODEL,
        "api_key_env": variable or None,
        "concurrency": concurrency,
        "cache_dir": None if not cache_dir or settings.no_cache else Path(cache_dir) / "judge",
        "strict": settings.strict,
    }


def check_options(options: Mapping[str, Any]) -> None:
    """Raise the UsageError a judge built from ``options`` would raise (an unset or key-shaped key
    variable, a bad concurrency or template): for a command that builds its judges late."""
    _common(options)
    _template(options)


def _template(options: Mapping[str, Any]) -> str | None:
    template = JudgeSettings.read(options).template
    if template and template not in BUILTIN:
        raise UsageError(f"--judge-template {template!r}: choose one of {', '.join(sorted(BUILTIN))}")
    return template or None


def needs_reference(options: Mapping[str, Any]) -> bool:
    """Whether the judge the options ask for grades against a reference answer (``binary_qa``)."""
    template = _template(options)
    return template is not None and "reference" in BUILTIN[template].placeholders


def build_llm_judge(options: Mapping[str, Any]) -> LLMJudge | JudgeEvaluator:
    """``LLMJudge``, or the template judge ``--judge-template`` names."""
    common = _common(options)
    template = _template(options)
    if not template:
        return LLMJudge(**common)
    return JudgeEvaluator(template=template, **common)


def build_open_judge(options: Mapping[str, Any]) -> LLMJudge | JudgeEvaluator | None:
    """The judge of rows that need only a question: None when the judge asked for needs a reference
    (the rules that carry a reference build it, so a row without one is not judged at all)."""
    return None if needs_reference(options) else build_llm_judge(options)


def build_reference_judge(options: Mapping[str, Any]) -> LLMJudge | JudgeEvaluator | None:
    """The judge of rows with a question and a reference, when the judge asked for needs one."""
    return build_llm_judge(options) if needs_reference(options) else None


def build_memory_judge(options: Mapping[str, Any]) -> MemoryJudge:
    return MemoryJudge(**_common(options))


def build_false_memory_rate(options: Mapping[str, Any]) -> FalseMemoryRate:
    return FalseMemoryRate(**_common(options))
