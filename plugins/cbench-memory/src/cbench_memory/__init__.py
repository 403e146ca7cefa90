"""cbench-memory: benchmark memory systems on long-conversation QA (LoCoMo, LongMemEval, your own).

``evaluate_memory`` runs memory systems over conversations and scores their answers like any
context-bench run; ``context-bench memory`` is its command.  Public names resolve lazily, so that
importing the package (or discovering the plugin) imports nothing heavy.
"""

from __future__ import annotations

from context_bench.lazy import lazy_getattr

_LAZY = {
    "evaluate_memory": ".run",
    "MemoryFigures": ".figures",
    "IngestFailed": ".answers",
    "QueryFailed": ".answers",
    "MemorySystem": ".protocol",
    "Conversation": ".layout",
    "memory_rows": ".layout",
    "parse_conversation": ".layout",
    "select_qa_types": ".layout",
    "load_memory": ".loaders",
    "load_locomo": ".loaders",
    "load_longmemeval": ".loaders",
    "read_memory_file": ".loaders",
    "FullContextMemory": ".baselines",
    "BM25Memory": ".baselines",
}

__all__ = sorted(_LAZY)

__getattr__ = lazy_getattr(__name__, _LAZY)
