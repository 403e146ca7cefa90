"""``judge_score``: grade one sample with a template judge, and the evaluators built on it."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from context_bench import Scores
from context_bench.secrets import redact

from . import loop
from .base import as_text, spelled, verdict
from .config import JudgeConfig, client_for
from .defaults import DEFAULT_MODEL
from .errors import JudgeConfigError, JudgeError, JudgeInputError
from .rating import QUESTION_KEYS, options_of, reference_of
from .templates import Template, template_for

CALL_ERROR = "CALL_ERROR"
PARSE_ERROR = "PARSE_ERROR"


def _get(sample: Any, name: str) -> Any:
    if isinstance(sample, Mapping):
        return sample.get(name)
    return getattr(sample, name, None)


def _judge_config(sample: Any, judge_key: str) -> JudgeConfig:
    config = _get(sample, "config")
    if not isinstance(config, Mapping) or judge_key not in config:
        raise JudgeConfigError(f"no judge configured: sample.config[{judge_key!r}] is missing")
    return JudgeConfig.from_mapping(config[judge_key], f"sample.config[{judge_key!r}]")


def _values(sample: Any, criteria: str, template_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    question = _get(sample, "question")
    if question in (None, ""):
        question = _get(sample, "prompt")
    return {
        "question": question,
        "response": _get(sample, "response"),
        "reference": _get(sample, "reference"),
        "criteria": criteria,
        **template_kwargs,
    }


def _json_mode(response_format: Any) -> bool:
    return isinstance(response_format, Mapping) and str(response_format.get("type", "")).startswith("json")


async def ajudge_score(
    sample: Any,
    template: str = "binary_qa",
    criteria: str = "",
    grade_pattern: str | None = None,
    score_mapping: Mapping[str, float] | None = None,
    judge_key: str = "judge",
    response_format: Mapping[str, Any] | None = None,
    *,
    strict: bool = False,
    **template_kwargs: Any,
) -> Scores:
    """:func:`judge_score` for async callers (and the evaluators)."""
    config = _judge_config(sample, judge_key)
    chosen = template_for(template, grade_pattern, score_mapping)
    prompt = chosen.render(_values(sample, criteria, template_kwargs))
    client = client_for(config, f"sample.config[{judge_key!r}]", response_format)
    json_mode = _json_mode(response_format)

    def read(text: str) -> dict[str, Any]:
        grade, value = chosen.grade(text, json_mode)
        return {"judge_score": value, "judge_grade": grade}

    scores = await verdict(
        client,
        [{"role": "user", "content": prompt}],
        read,
        {"judge_score": 0.0, "judge_grade": CALL_ERROR},
        strict,
    )
    if scores.failure and scores.failure.startswith("parse_error"):
        scores["judge_grade"] = PARSE_ERROR
    return scores


def judge_score(
    sample: Any,
    template: str = "binary_qa",
    criteria: str = "",
    grade_pattern: str | None = None,
    score_mapping: Mapping[str, float] | None = None,
    judge_key: str = "judge",
    response_format: Mapping[str, Any] | None = None,
    **template_kwargs: Any,
) -> dict[str, Any]:
    """Grade ``sample`` with the judge in ``sample.config[judge_key]``: ``{"judge_score", "judge_grade"}``.

    A failed call scores 0.0 with grade ``CALL_ERROR``, an unreadable answer 0.0 with ``PARSE_ERROR``
    (the returned :class:`~context_bench.Scores` also says why).  A missing judge config, an unset
    key variable or a placeholder without a value raises :class:`JudgeConfigError`.
    """
    return loop.run_sync(
        ajudge_score(
            sample,
            template,
            criteria,
            grade_pattern,
            score_mapping,
            judge_key,
            response_format,
            **template_kwargs,
        )
    )


def _sample(
    original: Mapping[str, Any], processed: Mapping[str, Any], judges: Mapping[str, Any], evaluator: str
) -> dict[str, Any]:
    if not isinstance(original, Mapping) or not isinstance(processed, Mapping):
        raise JudgeInputError(f"{evaluator}: original and processed must be dicts")
    if processed.get("response") is None:
        raise JudgeInputError(f"{evaluator}: processed['response'] is missing")
    question = next((original[k] for k in QUESTION_KEYS if original.get(k) not in (None, "")), None)
    options = options_of(original)
    if question is not None and options:
        question = f"{as_text(question)}\n\nOptions:\n{options}"
    return {
        "question": None if question is None else as_text(question),
        "response": as_text(processed["response"]),
        "reference": reference_of(original),
        "config": judges,
    }


class _TemplateJudgeBase:
    """Template settings and entry points shared by the single judge and the panel."""

    name = "judge_score"

    def _setup(
        self,
        judges: Mapping[str, Any],
        template: str,
        criteria: str,
        grade_pattern: str | None,
        score_mapping: Mapping[str, float] | None,
        response_format: Mapping[str, Any] | None,
        strict: bool,
        cache_dir: str | Path | None,
        template_kwargs: Mapping[str, Any],
    ) -> None:
        self.template = template
        self.criteria = criteria
        self.grade_pattern = grade_pattern
        self.score_mapping = None if score_mapping is None else dict(score_mapping)
        self.response_format = None if response_format is None else dict(response_format)
        self.strict = strict
        self.template_kwargs = dict(template_kwargs)
        self._template: Template = template_for(template, grade_pattern, score_mapping)
        configs = {}
        for key, judge in judges.items():
            config = JudgeConfig.from_mapping(judge, f"{self.name}: judge {key!r}")
            if cache_dir is not None and config.cache_dir is None:
                config = attrs.evolve(config, cache_dir=str(cache_dir))
            client_for(config, f"{self.name}: judge {key!r}")  # an unset key variable fails here, once
            configs[key] = config
        self._judges = configs
        # public, so the runner's cache key covers the judges (the cache location is not configuration)
        self.judges = {
            key: _as_dict(attrs.evolve(c, cache_dir=None, url=redact(c.url))) for key, c in configs.items()
        }

    @property
    def model(self) -> str | None:
        """The judges' model when they share one, so ``--price MODEL`` prices their tokens; else None."""
        models = {config.model for config in self._judges.values()}
        return models.pop() if len(models) == 1 else None

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        return loop.run_sync(self._score(original, processed))

    async def ascore(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        return await loop.run_async(self._score(original, processed))

    async def _grade(self, sample: Mapping[str, Any], key: str) -> Scores:
        return await ajudge_score(
            sample,
            self.template,
            self.criteria,
            self.grade_pattern,
            self.score_mapping,
            key,
            self.response_format,
            strict=self.strict,
            **self.template_kwargs,
        )

    async def _score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> Scores:
        raise NotImplementedError


def _as_dict(config: JudgeConfig) -> dict[str, Any]:
    return {k: v for k, v in attrs.asdict(config).items() if v is not None}


def _shorthand(
    judge: Mapping[str, Any] | None,
    url: str | None,
    model: str | None,
    api_key_env: str | None,
    concurrency: int | None,
) -> Mapping[str, Any]:
    if judge is not None:
        return judge
    if url is None:
        raise JudgeConfigError("a judge needs either judge={...} or url=")
    shorthand = {"url": url, "model": model or DEFAULT_MODEL, "api_key_env": api_key_env}
    return shorthand if concurrency is None else {**shorthand, "concurrency": concurrency}


class JudgeEvaluator(_TemplateJudgeBase):
    """:func:`judge_score` as an evaluator: ``{name: score}`` (``judge_score`` by default).

    The judge is ``judge={...}`` in the ``sample.config`` layout, or ``url=``/``model=``/
    ``api_key_env=``/``concurrency=`` (``base_url=`` is the old spelling of ``url=``).  The question
    is ``original["question"]`` (or prompt/instruction/input), the reference ``original["answer"]``,
    the response ``processed["response"]``.
    """

    def __init__(
        self,
        judge: Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        concurrency: int | None = None,
        base_url: str | None = None,
        template: str = "binary_qa",
        criteria: str = "",
        grade_pattern: str | None = None,
        score_mapping: Mapping[str, float] | None = None,
        response_format: Mapping[str, Any] | None = None,
        name: str = "judge_score",
        strict: bool = False,
        cache_dir: str | Path | None = None,
        **template_kwargs: Any,
    ) -> None:
        self.name = name
        self._setup(
            {
                "judge": _shorthand(
                    judge, spelled(url, base_url, "url", "base_url", name), model, api_key_env, concurrency
                )
            },
            template,
            criteria,
            grade_pattern,
            score_mapping,
            response_format,
            strict,
            cache_dir,
            template_kwargs,
        )

    def __repr__(self) -> str:
        return f"JudgeEvaluator(name={self.name!r}, template={self.template!r})"

    async def _score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> Scores:
        sample = _sample(original, processed, self._judges, self.name)
        result = await self._grade(sample, "judge")
        return Scores({self.name: result["judge_score"]}, failure=result.failure, usage=result.usage)


class JudgePanel(_TemplateJudgeBase):
    """Several judges on one template: the aggregate under ``name`` plus ``{name}_{key}`` per judge.

    ``judges`` is a list (keys ``judge``, ``judge_1``, ``judge_2``...) or a mapping key -> config.
    Categorical grades aggregate by majority (a tie averages the tied scores), numeric grades by
    the mean.  Failed judges are left out of the aggregate and named in ``Scores.failure``.
    """

    def __init__(
        self,
        judges: Sequence[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]],
        *,
        template: str = "binary_qa",
        criteria: str = "",
        grade_pattern: str | None = None,
        score_mapping: Mapping[str, float] | None = None,
        response_format: Mapping[str, Any] | None = None,
        name: str = "judge_panel",
        strict: bool = False,
        cache_dir: str | Path | None = None,
        **template_kwargs: Any,
    ) -> None:
        if isinstance(judges, Mapping):
            keyed = dict(judges)
        else:
            keyed = {("judge" if i == 0 else f"judge_{i}"): judge for i, judge in enumerate(judges)}
        if not keyed:
            raise JudgeConfigError(f"{name}: a judge panel needs at least one judge")
        self.name = name
        self._setup(
            keyed,
            template,
            criteria,
            grade_pattern,
            score_mapping,
            response_format,
            strict,
            cache_dir,
            template_kwargs,
        )

    def __repr__(self) -> str:
        return f"JudgePanel(name={self.name!r}, judges={list(self._judges)!r}, template={self.template!r})"

    @property
    def fields(self) -> list[str]:
        return [self.name, *(f"{self.name}_{key}" for key in self._judges)]

    async def _score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> Scores:
        sample = _sample(original, processed, self._judges, self.name)
        keys = list(self._judges)
        results = await asyncio.gather(
            *(self._grade(sample, key) for key in keys), return_exceptions=self.strict
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        scored = [r for r in results if not isinstance(r, BaseException)]
        if errors:
            if not isinstance(errors[0], JudgeError):
                raise errors[0]
            raise type(errors[0])(f"{len(errors)} of {len(keys)} judges failed: {errors[0].reason}")
        graded = dict(zip(keys, scored, strict=True))
        scores: dict[str, float] = {f"{self.name}_{k}": r["judge_score"] for k, r in graded.items()}
        good = [r["judge_score"] for r in scored if not r.failure]
        scores[self.name] = self._aggregate(good) if good else 0.0
        failed = [(k, r.failure) for k, r in graded.items() if r.failure]
        failure = None
        if failed:
            kind = "call_error" if any(f.startswith("call_error") for _, f in failed) else "parse_error"
            detail = "; ".join(f"{k}: {f}" for k, f in failed)
            failure = f"{kind}: {len(failed)} of {len(keys)} judges failed ({detail})"
        usage: dict[str, float] = {}
        for result in scored:
            for field, value in (result.usage or {}).items():
                usage[field] = usage.get(field, 0.0) + value
        return Scores(scores, failure=failure, usage=usage or None)

    def _aggregate(self, values: list[float]) -> float:
        if self._template.numeric:
            return sum(values) / len(values)
        counts = Counter(values)
        top = max(counts.values())
        tied = [value for value, count in counts.items() if count == top]
        return sum(tied) / len(tied)
