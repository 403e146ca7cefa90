"""Exception types: each says what went wrong and what to do about it."""

from __future__ import annotations


class ContextBenchError(Exception):
    """Base class for errors context-bench raises on purpose (the CLI prints them as one line)."""


class UsageError(ContextBenchError):
    """A user mistake: an unknown data set, an unreadable file, a bad option."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; the message says how many finished rows are kept, and where."""


class PluginError(ContextBenchError):
    """A plugin failed to load or register (raised only with ``CBENCH_STRICT_PLUGINS=1``)."""


class EvaluatorNotFound(ContextBenchError, ImportError):
    """No installed plugin registers that evaluator; the message names the distribution to install."""


class AmbiguousEvaluator(ContextBenchError, LookupError):
    """Several plugins register the short name; use ``plugin/Name``."""


class DatasetUnavailable(ContextBenchError):
    """A data set could not be loaded (missing file, hub unreachable, extra not installed)."""


class DeadlineExceeded(ContextBenchError, TimeoutError):
    """A system or evaluator call did not return within the call deadline (``call_timeout``)."""

    @classmethod
    def of_call(cls, method: str, timeout: float) -> DeadlineExceeded:
        return cls(f"{method}() did not return within {timeout:g} s (the call deadline, call_timeout)")
