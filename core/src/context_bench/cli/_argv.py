"""The command line's words before they are parsed: ``-p no:NAME`` wherever it stands, and the
default command (``context-bench --proxy URL ...`` means ``context-bench run ...``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UsageError


def plugin_flags(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The plugins ``-p no:NAME`` disables and the other words, in order.

    ``-p`` is the core's flag on every command, so it is taken before or after the subcommand
    (``-p no:X``, ``-pno:X``, ``-p=no:X``), up to a ``--`` that ends the options.
    """
    denied: list[str] = []
    rest: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            rest += [word, *words]
            break
        if not word.startswith("-p") or word.startswith("--"):
            rest.append(word)
            continue
        value = word[2:].removeprefix("=") or next(words, "")
        if not value.startswith("no:") or not value[3:]:
            raise UsageError(f"-p takes no:NAME (got {value!r})")
        denied.append(value[3:])
    return denied, rest


def with_default_command(argv: list[str]) -> list[str]:
    """``context-bench --proxy URL --dataset X`` means ``context-bench run ...``."""
    position = 0
    while position < len(argv) and argv[position] == "-p":
        position += 2
    rest = argv[position:]
    if rest and rest[0].startswith("-") and rest[0] not in ("-h", "--help", "--version"):
        return argv[:position] + ["run"] + rest
    return argv
