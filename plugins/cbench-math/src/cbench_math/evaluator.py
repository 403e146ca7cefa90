"""MathEquivalence: is the response's final answer mathematically equal to the gold answer?"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

from context_bench import Scores, UsageError

from .pool import CaseTimeout, WorkerError, shared_pool

FIELD = "math_equiv"
#: Default hard deadline of one case, in seconds.
DEFAULT_TIMEOUT = 5.0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


class MathEquivalence:
    """Scores ``math_equiv`` 1.0 when the response's final answer equals ``original["answer"]``.

    Each case is judged in a worker process under a hard deadline of ``timeout`` seconds (it
    works from any thread); a case that overruns scores 0.0 with ``failure="timeout: ..."`` and
    is counted in :attr:`timeouts`.  ``workers`` judge processes are shared by every evaluator
    with the same setting.  Rows without an ``answer`` get no score; a list of answers is
    matched by any of them.
    """

    name = "math_equivalence"

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, workers: int = 1) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise ValueError(f"MathEquivalence(timeout=...) must be positive seconds, not {timeout!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"MathEquivalence(workers=...) must be a positive integer, not {workers!r}")
        self.timeout = float(timeout)
        self.workers = int(workers)
        self.timeouts = 0
        self._lock = threading.Lock()

    @property
    def config(self) -> dict[str, Any]:
        return {"timeout": self.timeout, "workers": self.workers}

    def __reduce__(self) -> tuple[Any, ...]:
        return (MathEquivalence, (self.timeout, self.workers))

    def __repr__(self) -> str:
        return f"MathEquivalence(timeout={self.timeout:g}, workers={self.workers})"

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        answer = original.get("answer")
        if answer is None:
            return {}
        golds = [_text(a) for a in answer] if isinstance(answer, (list, tuple)) else [_text(answer)]
        response = _text(processed.get("response"))
        failure = None
        for gold in golds:
            verdict, failure = self._judge(gold, response)
            if verdict:
                return {FIELD: 1.0}
        return Scores({FIELD: 0.0}, failure=failure) if failure else {FIELD: 0.0}

    def _judge(self, gold: str, response: str) -> tuple[bool, str | None]:
        """The worker's verdict, or False and why there is none."""
        try:
            reply = shared_pool(self.workers).judge(gold, response, self.timeout)
        except CaseTimeout:
            with self._lock:
                self.timeouts += 1
            return False, f"timeout: no verdict within {self.timeout:g}s"
        except (WorkerError, OSError) as exc:
            return False, f"worker_error: {exc}"
        if "error" in reply:
            return False, f"error: {reply['error']}"
        return bool(reply["equivalent"]), None


def from_options(options: Mapping[str, Any]) -> MathEquivalence:
    """The auto-wired evaluator, configured by ``--math-timeout`` / ``--math-workers``."""
    timeout = options.get("math_timeout")
    workers = options.get("math_workers")
    try:
        return MathEquivalence(
            timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
            workers=1 if workers is None else workers,
        )
    except ValueError as exc:  # a bad option is the user's to fix: one line, exit 2, not a skipped evaluator
        raise UsageError(f"math options (--math-timeout, --math-workers): {exc}") from None
