"""context-bench: evaluate systems that touch an LLM's context.

Importing this package is cheap: plugins are discovered, and the runner and the records of a run
imported, only when first used.
"""

from __future__ import annotations

from ._protocols import Evaluator, Metric, System
from ._scores import Scores
from .errors import (
    AmbiguousEvaluator,
    ContextBenchError,
    DatasetUnavailable,
    EvaluatorNotFound,
    PluginError,
    UsageError,
)
from .hookspecs import hookimpl
from .lazy import import_target, lazy_getattr
from .plugins import ENTRY_POINT_GROUP, PLUGIN_API_VERSION
from .specs import (
    AutowireRule,
    CommandSpec,
    DatasetSpec,
    EvaluatorSpec,
    ExecutorSpec,
    FormatSpec,
    SectionSpec,
)

__version__ = "1.0.0"

_LAZY = {
    "evaluate": ".runner",
    "SecondPass": ".runner",
    "RunConfig": ".config",
    "Scope": ".config",
    "Limits": ".config",
    "Metering": ".config",
    "Output": ".config",
    "UNSET": ".config",
    "Analysis": ".analysis",
    "PluginSettings": ".settings",
    "Settings": ".settings",
    "EvalResult": ".records",
    "EvalRow": ".records",
    "RowError": ".records",
    "OpenAIProxy": ".systems",
    "CommandSystem": ".command_system",
    "CommandError": ".command_system",
    "ClaudeCLI": ".command_system",
    "EndpointError": ".systems",
    "assert_scores": ".assertions",
}

__all__ = [
    "UNSET",
    "AmbiguousEvaluator",
    "Analysis",
    "AutowireRule",
    "ClaudeCLI",
    "CommandError",
    "CommandSpec",
    "CommandSystem",
    "ContextBenchError",
    "DatasetSpec",
    "DatasetUnavailable",
    "ENTRY_POINT_GROUP",
    "EndpointError",
    "EvalResult",
    "EvalRow",
    "Evaluator",
    "EvaluatorNotFound",
    "EvaluatorSpec",
    "ExecutorSpec",
    "FormatSpec",
    "Limits",
    "Metering",
    "Metric",
    "OpenAIProxy",
    "Output",
    "PLUGIN_API_VERSION",
    "PluginError",
    "PluginSettings",
    "RowError",
    "RunConfig",
    "Scope",
    "Scores",
    "SecondPass",
    "SectionSpec",
    "Settings",
    "System",
    "UsageError",
    "assert_scores",
    "evaluate",
    "hookimpl",
]


def _moved(name: str) -> object:
    """A public name that moved to a first-party plugin (:mod:`~context_bench.providers`), from it
    when it is installed (it stays out of ``__all__``, so ``import *`` works without it)."""
    from .providers import providers

    target = providers().names.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_target(target, name, __name__), name)


__getattr__ = lazy_getattr(__name__, _LAZY, fallback=_moved)
