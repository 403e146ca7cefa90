"""The entry point: the parser (the core's commands and the plugins'), the default command, errors."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..errors import ContextBenchError, PluginError, UsageError
from ..gates import INTERRUPTED, USAGE
from ..plugins import PluginHost, PluginWarning, set_host
from ..reports import FORMATS
from ..specs import resolve
from . import commands, listings
from .argv import plugin_flags, with_default_command
from .run_options import add_figure_options, add_run_options
from .system_flags import add_system_flags


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other user mistake
        command = self.prog.removeprefix(PROG).strip()  # main() prints the program's name once
        raise UsageError(f"{command}: {message}" if command else message)


PROG = "context-bench"


def build_parser(host: PluginHost) -> argparse.ArgumentParser:
    """The whole command line: ``run``, ``score``, the listings, and every plugin's commands."""
    parser = _Parser(prog=PROG, description="Evaluate systems that touch an LLM's context.")
    parser.add_argument("--version", action="version", version=f"context-bench {__version__}")
    parser.add_argument(
        "-p",
        dest="plugin_flags",
        action="append",
        default=[],
        metavar="no:NAME",
        help="disable the plugin NAME (as `context-bench plugins` prints it)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser(
        "run",
        help="run systems (OpenAI-compatible endpoints) over data sets and score them",
        description="Run systems (OpenAI-compatible endpoints) over data sets and score them.  "
        "See docs/endpoints.md for LiteLLM, vLLM and OpenAI, and how keys are passed.",
    )
    add_system_flags(run)
    run.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="registered data set name or a JSONL/JSON/CSV file (repeatable; required unless a "
        "--config run file lists [[datasets]])",
    )
    run.add_argument(
        "--dataset-name",
        metavar="NAME",
        help="data set name of the files given with --dataset, for auto-wiring (rows with a "
        "'dataset' field keep theirs)",
    )
    add_run_options(run, host)
    run.set_defaults(handler=commands.cmd_run, run_parser=run)  # run_parser: --config reads flags with it

    score = sub.add_parser("score", help="score responses already in a file (default: the bundled sample)")
    score.add_argument("files", nargs="*", metavar="FILE", help="JSONL/JSON/CSV rows carrying 'response'")
    score.add_argument(
        "--dataset-name",
        metavar="NAME",
        help="data set name for auto-wiring rows that carry no 'dataset' field",
    )
    add_run_options(score, host)
    score.set_defaults(handler=commands.cmd_score)

    compare = sub.add_parser(
        "compare",
        help="compare saved JSON results (of run, score or memory) on the rows they share",
        description="Compare saved JSON results on their shared row ids (by data set and id): "
        "every other system against the baseline, with the report's figures.",
    )
    compare.add_argument("files", nargs="+", metavar="FILE", help="JSON reports (--output json)")
    compare.add_argument("--output", choices=FORMATS, default="table", help="report format (default table)")
    compare.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout")
    compare.add_argument(
        "--baseline", metavar="NAME", help="the system the others are compared with (default: the first)"
    )
    add_figure_options(compare)
    compare.set_defaults(handler=commands.cmd_compare)

    for plugin, command in host.commands():
        added = sub.add_parser(command.name, help=command.help)
        try:
            resolve(command.configure)(added, host)
        except Exception as exc:  # noqa: BLE001 - a broken plugin command: one line naming it
            raise PluginError(
                f"plugin {plugin}: command {command.name!r} could not be set up: {type(exc).__name__}: {exc}"
            ) from exc
        added.set_defaults(handler=command.run)

    for name, text, handler in (
        ("plugins", "list discovered plugins", listings.cmd_plugins),
        ("evaluators", "list available evaluators", listings.cmd_evaluators),
        ("datasets", "list registered data sets", listings.cmd_datasets),
    ):
        listing = sub.add_parser(name, help=text)
        listing.add_argument("--json", action="store_true", help="machine-readable output")
        listing.set_defaults(handler=handler)
        if name == "datasets":
            listings.configure_datasets(listing)
    return parser


def _one_line(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
    print(message, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    with warnings.catch_warnings():  # plugin warnings as plain lines, for this command only
        warnings.simplefilter("default", PluginWarning)
        warnings.showwarning = _one_line
        try:
            return _command(given)
        except BrokenPipeError:  # `context-bench plugins | head`: the reader left, nothing is wrong
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except ContextBenchError as exc:  # a file or data set name may hold terminal escapes
            from ..reports.sections import printable

            print(f"{PROG}: error: {printable(_without_prefix(str(exc)))}", file=sys.stderr)
            return USAGE
        except KeyboardInterrupt:
            print(
                "context-bench: interrupted (finished rows are kept in --cache-dir, if given)",
                file=sys.stderr,
            )
            return INTERRUPTED


def _without_prefix(message: str) -> str:
    """A message that already starts with the program's name (a plugin's, say) does not repeat it."""
    for prefix in (f"{PROG}: error: ", f"{PROG}: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def _host_for(argv: list[str]) -> PluginHost:
    return PluginHost(deny=plugin_flags(argv)[0])


def _command(given: list[str]) -> int:
    """Parse and run; a command reads the command line as given (for its report) as ``args.argv``."""
    host = _host_for(given)
    previous = set_host(host)  # for this command only: in-process callers get theirs back
    try:
        host.ensure_loaded()
        parser = build_parser(host)
        args = parser.parse_args(with_default_command(plugin_flags(given)[1]))
        if args.command is None:
            parser.print_help()
            return USAGE
        args.argv = given
        return resolve(args.handler)(args, host)
    finally:
        set_host(previous)
