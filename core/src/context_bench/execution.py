"""What an executor plugin needs from the core: the public face of the runner's executor seam.

An executor (registered with ``cbench_register_executors``) has ``run(tasks, on_row)`` and declares
the call deadline it keeps, ``call_timeout`` (None: none), which any pass run beside it keeps too
(:func:`executor_for` is a run's executor, given or local, with its limits checked).  It takes
:class:`RowTask` objects (picklable: an example, its system and its evaluators), works each one into
an :class:`EvalRow` wherever it likes, and hands every finished row to ``on_row`` as it finishes (in
the calling thread); the runner caches and counts there.  :func:`run_row` works one task inline and
never raises (every failure is a :class:`RowError` on the row); :class:`LocalExecutor` works many in
this process (threads, an event loop for async systems and evaluators, the call deadline), which is
what a distributed executor runs on each of its workers.
"""

from __future__ import annotations

from ._executor import Executor, LocalExecutor, OnRow, executor_for
from ._rowtask import RowTask, run_row
from .records import EvalRow, RowError

__all__ = ["EvalRow", "Executor", "LocalExecutor", "OnRow", "RowError", "RowTask", "executor_for", "run_row"]
