"""The entry point: the parser (the core's commands and the plugins'), the default command, errors."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..errors import ContextBenchError, Interrupted, UsageError
from ..gates import INTERRUPTED, USAGE
from ..plugins import PluginHost, PluginWarning, set_host
from ..specs import resolve
from ._argv import plugin_flags, with_default_command
from ._writing import SAID


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other user mistake
        command = self.prog.removeprefix(PROG).strip()  # main() prints the program's name once
        raise UsageError(f"{command}: {message}" if command else message)


PROG = "context-bench"


def build_parser(host: PluginHost) -> argparse.ArgumentParser:
    """The whole command line: every registered command, the core's (``run``, ``score``, ``compare``,
    the listings) and the plugins'."""
    parser = _Parser(prog=PROG, description="Evaluate systems that touch an LLM's context.")
    parser.add_argument("--version", action="version", version=f"context-bench {__version__}")
    parser.add_argument(
        "-p",
        dest="plugin_flags",
        action="append",
        default=[],
        metavar="no:NAME",
        help="disable the plugin NAME (as `context-bench plugins` prints it; before or after the command)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for plugin, command in host.commands():  # the core's own first: they register through the hook
        added = sub.add_parser(command.name, help=command.help)
        try:
            resolve(command.configure)(added, host)
        except Exception as exc:  # noqa: BLE001 - a broken command costs itself, in one line
            del sub.choices[command.name]
            sub._choices_actions.pop()  # its line in --help
            reason = f"could not be set up: {type(exc).__name__}: {exc}"
            host.mark_failed(plugin, "cbench_register_commands", command.name, reason)
            continue
        added.set_defaults(handler=command.run)
    return parser


class _Warnings:
    """The warnings a command raises: a plugin's failure at once and whole (its reason); any other
    (a plugin's environment warning, say) held until the command ends, after the progress line, on
    one line at the terminal's width, and not at all when the report said it already (a code plugin's
    sandbox warning is in the summary's warnings too; ``context-bench plugins`` shows it whole)."""

    def __init__(self) -> None:
        self.held: list[str] = []

    def show(self, message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if issubclass(category, PluginWarning):
            print(str(message), file=sys.stderr)
        elif str(message) not in self.held:
            self.held.append(str(message))

    def say(self, said: set[str]) -> None:
        from ..reports._table import fitted

        for message in self.held:
            if message not in said:
                print(fitted(message), file=sys.stderr)


def main(argv: Sequence[str] | None = None, *, host: PluginHost | None = None) -> int:
    """``context-bench ARGV``; the exit status.  ``host`` replaces the installed plugins (a plugin's
    tests run its command with ``main([...], host=isolated_host(plugin))``, installed or not)."""
    given = list(sys.argv[1:] if argv is None else argv)
    raised, said = _Warnings(), set[str]()
    reported = SAID.set(said)
    with warnings.catch_warnings():  # plugin warnings as plain lines, for this command only
        warnings.simplefilter("default", PluginWarning)
        warnings.showwarning = raised.show
        try:
            return _command(given, host or _host_for(given))
        except BrokenPipeError:  # `context-bench plugins | head`: the reader left, nothing is wrong
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except ContextBenchError as exc:  # a file or data set name may hold terminal escapes
            from ..reports._sections import printable

            print(f"{PROG}: error: {printable(_without_prefix(str(exc)))}", file=sys.stderr)
            return USAGE
        except Interrupted as exc:  # a run: how many rows it kept, and where
            from ..reports._sections import printable

            print(f"{PROG}: interrupted: {printable(str(exc))}", file=sys.stderr)
            return INTERRUPTED
        except KeyboardInterrupt:
            print(
                f"{PROG}: interrupted (a run given --cache-dir keeps its finished rows there)",
                file=sys.stderr,
            )
            return INTERRUPTED
        finally:
            raised.say(said)
            SAID.reset(reported)


def _without_prefix(message: str) -> str:
    """A message that already starts with the program's name (a plugin's, say) does not repeat it."""
    for prefix in (f"{PROG}: error: ", f"{PROG}: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def _host_for(argv: list[str]) -> PluginHost:
    return PluginHost(deny=plugin_flags(argv)[0])


def _command(given: list[str], host: PluginHost) -> int:
    """Parse and run; a command reads the command line as given (for its report) as ``args.argv``."""
    previous = set_host(host)  # for this command only: in-process callers get theirs back
    try:
        host.ensure_loaded()
        parser = build_parser(host)
        words = with_default_command(plugin_flags(given)[1])
        _refuse_missing_command(words, host)
        args = parser.parse_args(words)
        if args.command is None:
            parser.print_help()
            return USAGE
        args.argv = given
        return resolve(args.handler)(args, host)
    finally:
        set_host(previous)


def _refuse_missing_command(words: list[str], host: PluginHost) -> None:
    """A command that a failed or disabled plugin adds (or may add) is said so, not "invalid choice"."""
    if not words or words[0].startswith("-") or any(c.name == words[0] for _, c in host.commands()):
        return
    unknown = f"no loaded plugin adds a command named {words[0]!r}"
    said = host.not_found("command", words[0], unknown)
    if said != unknown:
        raise UsageError(said)
