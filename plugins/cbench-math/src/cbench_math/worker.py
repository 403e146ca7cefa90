"""The judge process: ``python -m cbench_math.worker`` answers one JSON line per case.

It imports sympy once, says ``{"ready": true}``, then reads ``{"gold": .., "response": ..}``
lines and writes ``{"equivalent": bool}`` or ``{"error": "..."}``.  The parent kills it when a
case overruns its deadline, so nothing here needs to be interruptible.  Its address space is
capped (:data:`MAX_MEMORY`) so a runaway computation fails with MemoryError instead of
swapping the machine.
"""

from __future__ import annotations

import json
import sys

#: Address-space cap of a worker, in bytes.
MAX_MEMORY = 3 * 1024**3


def _limit_memory() -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the deadline alone bounds a case
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > MAX_MEMORY:
        resource.setrlimit(resource.RLIMIT_AS, (MAX_MEMORY, hard))


def main() -> None:
    _limit_memory()
    from . import compare  # noqa: F401 - sympy and the comparers, imported before any deadline
    from .judge import verdict

    verdict(r"x \geq \frac{1}{2}", r"x \in [0.5, \infty)")  # warm sympy's caches too
    out = sys.stdout
    out.write('{"ready": true}\n')
    out.flush()
    for line in sys.stdin:
        try:
            case = json.loads(line)
            reply = {"equivalent": bool(verdict(case["gold"], case["response"]))}
        except Exception as exc:  # noqa: BLE001 - reported to the parent, the worker lives on
            reply = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
