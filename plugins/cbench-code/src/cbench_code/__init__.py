"""context-bench plugin: run generated code against tests in a sandbox (HumanEval, MBPP).

Importing the package is cheap; the evaluator and its helpers load on first use.  The sandbox
server (``python -I -m cbench_code.server``) runs this file too, so it imports the standard library
only: ``context_bench`` (and so its lazy-attribute helper) would bring ``threading`` and ~90 modules
into the server, whose children inherit them, and whose classes the integrity checks count as known.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "CodeExecution": "evaluator",
    "SampleResult": "verdict",
    "SandboxError": "evaluator",
    "SandboxPool": "pool",
    "SandboxWarning": "pool",
    "extract_code": "extract",
    "mean_pass_at_k": "passk",
    "pass_at_k": "passk",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cbench_code' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
