"""Entry point of cbench-view: the ``view`` command.  Registering it imports no web framework."""

from __future__ import annotations

from collections.abc import Callable

from context_bench import CommandSpec, hookimpl

CBENCH_PLUGIN_API = 1


@hookimpl
def cbench_register_commands(register: Callable[[CommandSpec], None]) -> None:
    register(
        CommandSpec(
            "view",
            "serve a web page over the store of runs (on 127.0.0.1; read-only unless --allow-write)",
            "cbench_view.command:configure",
            "cbench_view.command:run",
        )
    )
