"""The judge's run settings, typed: one field per ``--judge-*`` flag (:mod:`cbench_judge.options`).

A run's configuration holds them in its plugins' part (``config.plugins.get(JudgeSettings)``);
the rules' builds read them from the options they are given (:meth:`JudgeSettings.read`), and the
``memory`` command sets its relay as the judge with ``config.plugins.with_(...)``.  Importing it
imports nothing heavy.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from context_bench.settings import Settings


def _names(value: object) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)  # type: ignore[arg-type]


@attrs.frozen
class JudgeSettings(Settings):
    """``--judge-url`` is ``url``, ``--judge-model`` is ``model``, and so on; None (or an empty
    ``dataset``) leaves the judges' own default."""

    namespace: ClassVar[str] = "judge"

    #: The root of an OpenAI-compatible judge endpoint: the judge evaluators need one.
    url: str | None = None
    model: str | None = None
    #: The NAME of the variable holding the judge's key.
    api_key_env: str | None = None
    #: The data sets the judges are limited to (empty: every one they can judge).
    dataset: tuple[str, ...] = attrs.field(default=(), converter=_names)
    concurrency: int | None = None
    template: str | None = None
    strict: bool = False
    no_cache: bool = False
    #: ``--pairwise``: judge every system against ``--baseline``, answers in both orders
    #: (the summary's ``pairwise`` section), with ``--pairwise-template`` (None: ``mt_bench``).
    pairwise: bool = False
    pairwise_template: str | None = None
    #: ``--judge-agreement FILE``: ``judge-check --out``'s agreement with people, carried beside the
    #: judge's scores (the summary's ``judge_agreement`` section).
    agreement: str | None = None
