"""The worker side: one Ray task works one batch of rows with the core's local executor.

What the rows of a run share (a system and an evaluator list, a *context*) travels once, pickled,
through Ray's object store, keyed by a digest of its bytes; each worker process keeps the objects
it rebuilt from it for this run and the next ones that ship the same bytes: a system's HTTP client
is built once per worker (systems pickle without their live client), and CodeExecution starts one
sandbox server per worker process, on that worker's node, which stays warm from run to run.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

import attrs
import ray
from ray import cloudpickle

from context_bench.execution import EvalRow, LocalExecutor, RowTask
from context_bench.runner import fewer_collections

#: Contexts a worker process keeps (a run has one per system and evaluator list, and runs that ship
#: the same bytes share one); the least recently used go.
KEPT_CONTEXTS = 32

_contexts: OrderedDict[str, tuple[Any, list[Any]]] = OrderedDict()
_lock = threading.Lock()


def _context(key: str, refs: dict[str, Any]) -> tuple[Any, list[Any]]:
    with _lock:
        found = _contexts.get(key)
        if found is not None:
            _contexts.move_to_end(key)
            return found
    # refs holds the ObjectRef inside a dict, so Ray passes it unresolved: fetched only on a miss
    found = cloudpickle.loads(ray.get(refs[key]))
    with _lock:
        _contexts[key] = found
        while len(_contexts) > KEPT_CONTEXTS:
            _contexts.popitem(last=False)
    return found


@ray.remote(max_retries=0)
def run_batch(
    batch: list[tuple[str, RowTask]],
    refs: dict[str, Any],
    concurrency: int,
    call_timeout: float | None,
) -> tuple[list[EvalRow], float]:
    """Work ``batch`` (context key, task without its system and evaluators) here; return the rows
    and the seconds it took.  The driver retries a batch whose worker died (``max_retries=0``: it
    splits the batch to find a row that kills workers, which Ray's own retry would not)."""
    start = time.perf_counter()
    tasks = []
    for key, task in batch:
        system, evaluators = _context(key, refs)
        tasks.append(attrs.evolve(task, system=system, evaluators=evaluators))
    rows: list[EvalRow] = []
    with fewer_collections():  # as in the driver: a batch makes many objects and no cycles
        LocalExecutor(concurrency, call_timeout).run(tasks, rows.append)
    return rows, time.perf_counter() - start
