"""The ``context-bench`` command line, and the public API a plugin's command builds on.

User mistakes (unknown data set, unreadable file, bad flag, refused endpoint, nothing to score)
end in one line on stderr and exit status 2, never a traceback.  A run that completes exits 0, or 1
when it had rows and not one of them could be scored (every row errored), so CI notices a dead
endpoint or a broken data set.

A plugin adds a command through the ``cbench_register_commands`` hook and reuses the run flags
with :func:`add_run_options`, :class:`RunOptions`, :func:`emit` and :func:`check_reachable`, and
the store's ``--store URL`` with :func:`add_store_option`; :class:`Recording` records its run in
the store as ``run`` and ``score`` do (``--store``, ``--tag``, which :func:`add_run_options` adds).
"""

from __future__ import annotations

from ._app import build_parser, main, with_default_command
from ._commands import sample_path
from ._gating import emit
from ._history import add_store_option
from ._recording import Recording
from ._run_options import RunOptions, add_run_options, check_reachable

__all__ = [
    "Recording",
    "RunOptions",
    "add_run_options",
    "add_store_option",
    "build_parser",
    "check_reachable",
    "emit",
    "main",
    "sample_path",
    "with_default_command",
]
