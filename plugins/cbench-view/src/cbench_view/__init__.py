"""cbench-view: ``context-bench view``, a local web page over the store of runs (the run list, a
run's page, two runs side by side, trends).  Importing it imports no web framework."""

from __future__ import annotations

from context_bench.lazy import lazy_getattr

__all__ = ["make_app"]

__getattr__ = lazy_getattr(__name__, {"make_app": ".app"})
