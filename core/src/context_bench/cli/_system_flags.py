"""``run``'s systems from its command line: every per-system flag binds to the ``--proxy`` it follows.

A ``--command CMD`` is a system too (a local program, :class:`~context_bench.command_system.
CommandSystem`): it opens a system like ``--proxy`` does, and of the per-system flags takes
``--name``, ``--system-prompt``, ``--timeout`` and its own ``--max-output-bytes`` (the others name
an endpoint's settings and are refused after it, as ``--max-output-bytes`` is after a
``--proxy``).  Below, "``--proxy``" reads "``--proxy`` or ``--command``".

Comparing two models through one proxy is the main use of a proxy, so a setting that silently
applied to the wrong system (the last ``--model`` winning for all) would give identical, wrong
scores.  The rules, each checked before any row runs:

- a per-system flag after a ``--proxy`` is that system's; one before the first ``--proxy`` is the
  default of every system that does not set its own;
- a flag given twice for one system (or twice before the first ``--proxy``) is refused;
- with several systems, a setting given for some of them must be given for all, or once before
  the first ``--proxy`` (otherwise the rest would quietly fall back to a built-in default); only
  ``--api-key-env`` may be partial: a system without one then sends no key;
- a command line that also reads as "each flag precedes its ``--proxy``" with another outcome
  (``--model a --proxy A --model b --proxy B``) is refused as ambiguous;
- ``--name`` has one more reading, the one earlier releases documented: with every ``--name``
  after the last ``--proxy`` and as many names as proxies, they name the proxies in order.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs

from .._command_run import DEFAULT_MAX_OUTPUT_BYTES
from ..bounds import flag_type
from ..defaults import DEFAULT_FAIL_FAST
from ..errors import UsageError
from ..secrets import check_key_variable, redact, redact_command_line

DEFAULT_MODEL = "gpt-4o-mini"
#: The namespace attribute the flags below append to, in command-line order.
DEST = "system_flags"
#: The two flags that open a system, as the fields they record.
OPENERS = ("url", "program")  # not "command": the subcommand's name
#: The per-system settings a ``--command`` system takes, and those only it takes.
COMMAND_ONLY = frozenset({"max_output_bytes"})
COMMAND_FIELDS = frozenset({"name", "system_prompt", "timeout"}) | COMMAND_ONLY
#: What a refusal says a command takes.
_COMMAND_TAKES = "a command takes --name, --system-prompt, --timeout and --max-output-bytes"


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise argparse.ArgumentTypeError("not valid JSON") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object ({...})")
    reserved = sorted({"model", "messages"} & set(value))
    if reserved:
        raise argparse.ArgumentTypeError(f"may not set {', '.join(reserved)} (use --model, the data set)")
    return value


@attrs.frozen
class Flag:
    """One per-system flag: its option string, the ``SystemSettings`` field it sets, how it reads."""

    option: str
    field: str
    metavar: str
    help: str
    type: Callable[[str], Any] = str


PER_SYSTEM: tuple[Flag, ...] = (
    Flag("--name", "name", "NAME", "the system's name in reports (default proxy, proxy1, proxy2, ...)"),
    Flag("--model", "model", "MODEL", f"model name sent to the endpoint (default {DEFAULT_MODEL})"),
    Flag(
        "--api-key-env",
        "api_key_env",
        "VAR",
        "send the key held in the environment variable VAR (its name, never the key itself); "
        "without any --api-key-env every system sends $OPENAI_API_KEY when it is set",
    ),
    Flag("--system-prompt", "system_prompt", "TEXT", "a system message sent before each row's messages"),
    Flag(
        "--extra-body",
        "extra_body",
        "JSON",
        "more fields for the request body, a JSON object ('{\"top_p\": 0.9}')",
        _json_object,
    ),
    Flag(
        "--timeout",
        "timeout",
        "SECONDS",
        "seconds one request may take (default 60)",
        flag_type("--timeout"),
    ),
    Flag(
        "--max-retries",
        "max_retries",
        "N",
        "retries after a failed request (default 2; rate limits get three times as many)",
        flag_type("--max-retries"),
    ),
    Flag(
        "--max-tokens",
        "max_tokens",
        "N",
        "max_tokens of each request (default: not sent, the endpoint decides)",
        flag_type("--max-tokens"),
    ),
    Flag(
        "--temperature",
        "temperature",
        "T",
        "temperature of each request (default: not sent, the endpoint decides; 0 for repeatable answers)",
        flag_type("--temperature"),
    ),
    Flag(
        "--max-output-bytes",
        "max_output_bytes",
        "BYTES",
        f"a --command's bound on what one run prints (default {DEFAULT_MAX_OUTPUT_BYTES}, 10 MiB): past it "
        "the row's error, the program killed",
        flag_type("--max-output-bytes"),
    ),
)
_BY_FIELD = {flag.field: flag for flag in PER_SYSTEM}


@attrs.frozen
class SystemSettings:
    """One ``--proxy`` (or ``--command``) and the settings bound to it; None leaves a setting to
    ``OpenAIProxy`` (or ``CommandSystem``)."""

    url: str | None
    name: str
    model: str = DEFAULT_MODEL
    api_key_env: str | None = None
    system_prompt: str | None = None
    extra_body: Mapping[str, Any] | None = None
    timeout: float | None = None
    max_retries: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    max_output_bytes: int | None = None
    #: Where ``api_key_env`` was given (the flag, or the run file's setting), for its error.
    key_option: str = attrs.field(default="--api-key-env", eq=False, repr=False)
    #: The program of a ``--command`` system (then ``url`` is None).
    command: str | None = None

    @property
    def label(self) -> str:
        """The flag that opened this system, as messages name it (secrets removed)."""
        return (
            f"--proxy {redact(self.url)}"
            if self.url is not None
            else f"--command {redact_command_line(self.command or '')}"
        )

    def command_kwargs(self) -> dict[str, Any]:
        """``CommandSystem`` keyword arguments."""
        kwargs: dict[str, Any] = {"name": self.name}
        for field in ("system_prompt", "timeout", "max_output_bytes"):
            value = getattr(self, field)
            if value is not None:
                kwargs[field] = value
        return kwargs

    def proxy_kwargs(self, *, keys_named: bool) -> dict[str, Any]:
        """``OpenAIProxy`` keyword arguments.  ``keys_named``: some system named its key variable,
        so one that named none sends no key (never ``$OPENAI_API_KEY`` by surprise).  A key
        variable named but unset (or a key given in its place) is a UsageError, its value unshown."""
        kwargs: dict[str, Any] = {"model": self.model, "name": self.name}
        if self.api_key_env is not None:
            try:
                check_key_variable(self.api_key_env, self.key_option)
            except ValueError as exc:
                raise UsageError(f"{self.label}: {exc}") from None
        if self.api_key_env is not None or keys_named:
            kwargs["api_key_env"] = self.api_key_env
        for field in ("system_prompt", "extra_body", "timeout", "max_retries", "max_tokens", "temperature"):
            value = getattr(self, field)
            if value is not None:
                kwargs[field] = value
        return kwargs


class _Record(argparse.Action):
    """Appends ``(field, value)`` to the namespace's ordered list; ``--proxy`` opens a new system."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        flags = list(getattr(namespace, DEST, None) or [])
        flags.append((self.dest, values))
        setattr(namespace, DEST, flags)


def add_system_flags(parser: argparse.ArgumentParser) -> None:
    """``--proxy`` (repeatable, required) and the per-system flags that bind to it."""
    group = parser.add_argument_group(
        "systems",
        "Each --proxy (or --command) is one system.  A setting after a --proxy is that system's; one "
        "before the first --proxy is every system's default.  A flag given twice for one system, a setting "
        "given for some systems but not all, or a command line that reads two ways is refused.",
    )
    parser.set_defaults(**{DEST: []})
    group.add_argument(
        "--proxy",
        dest="url",
        action=_Record,
        metavar="URL",
        help="OpenAI-compatible endpoint of a system under test (repeatable: one per system)",
    )
    group.add_argument(
        "--command",
        dest="program",
        action=_Record,
        metavar="CMD",
        help="a local program as a system under test (repeatable), run once per row with the prompt "
        "on standard input, its standard output the response; split like a shell would, but run "
        "without one (write sh -c '...' for pipes); takes --name, --system-prompt, --timeout "
        "(default 60 s) and --max-output-bytes; a non-zero exit status, a timeout or output past "
        "the bound is the row's error; what the program started ends with its row",
    )
    group.add_argument(
        "--config",
        metavar="FILE",
        help="a run file (TOML or JSON) with [[systems]], [[datasets]], [evaluators], [options], "
        "[output] and [gates] (see docs/ci.md); a flag on the command line overrides the file's "
        "setting",
    )
    # a report is someone's data, not the user's orders: its run is shown and run only when told
    group.add_argument(
        "--rerun",
        metavar="REPORT",
        help="repeat the run a JSON report records (as --config REPORT.json does): its plan (programs, "
        "endpoints and the key variables sent to them, files, options) is printed and run only with "
        "--yes, or a 'y' typed at a terminal; the report goes to stdout unless --out is given here",
    )
    group.add_argument(
        "--yes", action="store_true", help="run the plan of a report given to --rerun or --config"
    )
    group.add_argument(
        "--fail-fast",
        type=flag_type("--fail-fast"),
        default=DEFAULT_FAIL_FAST,
        metavar="K",
        help="stop a system whose first K rows all fail with the same error (a wrong key, model or "
        f"URL): its other rows are not run (default {DEFAULT_FAIL_FAST}; 0 never stops)",
    )
    for flag in PER_SYSTEM:
        group.add_argument(
            flag.option, dest=flag.field, action=_Record, type=flag.type, metavar=flag.metavar, help=flag.help
        )


def _check_url(url: str) -> None:
    from ..client import chat_completions_url

    try:
        chat_completions_url(url)
        urlsplit(url.strip()).port  # noqa: B018 - raises on a port out of range
    except ValueError as exc:
        raise UsageError(f"--proxy {redact(url)}: not a usable http(s) URL ({exc})") from None


def bind_systems(flags: Sequence[tuple[str, Any]]) -> list[SystemSettings]:
    """The systems a command line names, ``flags`` in command-line order (``("url", URL)`` opens one)."""
    opened = [(field, value) for field, value in flags if field in OPENERS]
    if not opened:
        raise UsageError(
            "give at least one --proxy URL (or a run file with --config FILE), or a --command CMD"
        )
    for field, value in opened:
        if field == "url":
            _check_url(value)
        elif not value.strip():
            raise UsageError("--command may not be empty")
    labels = [
        f"--proxy {redact(v)}" if f == "url" else f"--command {redact_command_line(v)}" for f, v in opened
    ]
    urls = [value for _, value in opened]  # one per system, in order
    follow: list[dict[str, Any]] = [{} for _ in urls]  # each flag bound to the --proxy before it
    defaults: dict[str, Any] = {}
    # Where each occurrence stands: (index of the --proxy before it or -1, value).
    occurrences: dict[str, list[tuple[int, Any]]] = {}
    current = -1
    for field, value in flags:
        if field in OPENERS:
            current += 1
        else:
            occurrences.setdefault(field, []).append((current, value))
    last = len(urls) - 1
    for field, seen in occurrences.items():
        option = _BY_FIELD[field].option
        if field == "name" and last > 0 and all(at == last for at, _ in seen) and len(seen) > 1:
            if len(seen) != len(urls):
                raise UsageError(
                    f"{len(seen)} --name flags after the last of {len(urls)} --proxy flags: "
                    "put each --name right after its --proxy"
                )
            for slot, (_, value) in zip(follow, seen, strict=True):  # the names, in --proxy order
                slot[field] = value
            continue
        _check_ambiguous(option, seen, len(urls))
        for at, value in seen:
            target = follow[at] if at >= 0 else defaults
            if field in target:
                where = labels[at] if at >= 0 else "the first --proxy (the default for all)"
                raise UsageError(f"{option} is given twice for {where}: give it once per system")
            target[field] = value
        if field == "name" and "name" in defaults and last > 0:
            raise UsageError(
                f"--name {defaults['name']} comes before the first of several --proxy flags: "
                "put each --name right after its --proxy"
            )
        if field in defaults and field not in COMMAND_FIELDS and all(kind == "program" for kind, _ in opened):
            raise UsageError(f"{option} does not apply to --command: {_COMMAND_TAKES}")
        if field in defaults and field in COMMAND_ONLY and all(kind == "url" for kind, _ in opened):
            raise UsageError(f"{option} does not apply to --proxy: it bounds a --command's output")
        for (kind, _), label, own in zip(opened, labels, follow, strict=True):
            if kind == "program" and field in own and field not in COMMAND_FIELDS:
                raise UsageError(f"{option} does not apply to {label}: {_COMMAND_TAKES}")
            if kind == "url" and field in own and field in COMMAND_ONLY:
                raise UsageError(f"{option} does not apply to {label}: it bounds a --command's output")
        if field not in defaults and field not in ("name", "api_key_env") and last > 0:
            takes = [
                field in COMMAND_FIELDS if kind == "program" else field not in COMMAND_ONLY
                for kind, _ in opened
            ]
            missing = [
                label for label, slot, t in zip(labels, follow, takes, strict=True) if t and field not in slot
            ]
            if missing:
                raise UsageError(
                    f"{option} is given for some systems but not after {missing[0]}: give it "
                    "after every --proxy, or once before the first --proxy for all"
                )
    systems = []
    for position, ((kind, value), own) in enumerate(zip(opened, follow, strict=True)):
        label = "proxy" if kind == "url" else "command"
        settings = {**defaults, **own}
        if kind == "program":
            settings = {k: v for k, v in settings.items() if k in COMMAND_FIELDS}
        else:
            settings = {k: v for k, v in settings.items() if k not in COMMAND_ONLY}
        settings.setdefault("name", f"{label}{position + 1}" if last > 0 else label)
        if kind == "url":
            systems.append(SystemSettings(url=value, **settings))
        else:
            systems.append(SystemSettings(url=None, command=value, **settings))
    _check_names(systems)
    return systems


def _check_ambiguous(option: str, seen: list[tuple[int, Any]], proxies: int) -> None:
    """Refuse flags that also read as each preceding its ``--proxy``, when that reading differs."""
    targets = [at + 1 for at, _ in seen]  # the --proxy after each occurrence
    if len(seen) != proxies or sorted(targets) != list(range(proxies)):
        return  # not a complete "precedes" reading: the "follows" reading is the only one
    precede = {target: value for target, (_, value) in zip(targets, seen, strict=True)}
    default = [value for at, value in seen if at < 0]
    own = {at: value for at, value in seen if at >= 0}
    follow = {position: own.get(position, default[0] if default else None) for position in range(proxies)}
    if precede != follow:
        raise UsageError(
            f"{option} reads two ways here (after its --proxy, or before it): write each system as "
            f"--proxy URL {option} VALUE, or give {option} once before the first --proxy for all"
        )


def _check_names(systems: list[SystemSettings]) -> None:
    seen: dict[str, str] = {}
    for system in systems:
        if not system.name.strip():
            raise UsageError(f"{system.label}: --name may not be empty")
        if system.name in seen:
            raise UsageError(
                f"two systems are named {system.name!r} ({seen[system.name]} and {system.label}): "
                "give each its own --name"
            )
        seen[system.name] = system.label


def refuse_mixing(path: str, flags: Sequence[tuple[str, Any]]) -> None:
    """A run file that lists systems states each in full: a system flag beside it is refused."""
    if not flags:
        return
    opener = next((field for field, _ in flags if field in OPENERS), None)
    if opener == "program":
        raise UsageError(f"--config {path} lists the systems: --command does not mix with it")
    option = {"url": "--proxy", "program": "--command"}[opener] if opener else _BY_FIELD[flags[0][0]].option
    raise UsageError(f"--config {path} lists the systems: give {option} in the run file, not here")


def systems_from_entries(listed: Any, path: str) -> list[SystemSettings]:
    """A run file's ``[[systems]]``, each stated in full: nothing is bound by position or shared by
    default.  An endpoint names its ``url`` (``proxy``, as earlier run files wrote it), a local
    program its ``command``; the other keys are the per-system flags' names with underscores."""
    if not isinstance(listed, list) or not listed or not all(isinstance(s, dict) for s in listed):
        raise UsageError(f'{path}: expected {{"systems": [{{"url": URL, ...}}, ...]}}')
    systems = []
    several = len(listed) > 1
    for number, entry in enumerate(listed, start=1):
        where = f"{path}: system {number}"
        entry = dict(entry)
        if "url" in entry and "proxy" in entry:
            raise UsageError(f"{where}: give url or proxy (its earlier name), not both")
        url = entry.pop("url", entry.pop("proxy", None))
        command = entry.pop("command", None)
        if (url is None) == (command is None):
            raise UsageError(f'{where}: needs "url": URL (an endpoint) or "command": CMD (a local program)')
        if url is not None:
            if not isinstance(url, str):
                raise UsageError(f'{where}: needs "url": URL')
            _check_url(url)
        elif not isinstance(command, str) or not command.strip():
            raise UsageError(f"{where}: command must be a program and its arguments, as one string")
        label = "proxy" if url is not None else "command"
        settings: dict[str, Any] = {"name": f"{label}{number}" if several else label}
        for key, value in entry.items():
            flag = _BY_FIELD.get(key)
            if flag is None:  # the value is never shown: a key may have been put there by mistake
                hint = " (name the key's variable with api_key_env)" if "key" in key.lower() else ""
                raise UsageError(f"{where}: unknown setting {key!r}{hint}")
            if command is not None and key not in COMMAND_FIELDS:
                raise UsageError(
                    f"{where}: {key} does not apply to a command "
                    "(it takes name, system_prompt, timeout, max_output_bytes)"
                )
            if command is None and key in COMMAND_ONLY:
                raise UsageError(
                    f"{where}: {key} does not apply to an endpoint (it bounds a command's output)"
                )
            if flag.type is str and not isinstance(value, str):
                raise UsageError(f"{where}: {key} must be a string")
            text = json.dumps(value) if key == "extra_body" or not isinstance(value, str) else value
            try:
                settings[key] = flag.type(text)
            except argparse.ArgumentTypeError as exc:
                raise UsageError(f"{where}: {key} {exc}") from None
        systems.append(SystemSettings(url=url, command=command, key_option="api_key_env", **settings))
    _check_names(systems)
    return systems


def settings_entry(system: SystemSettings) -> dict[str, Any]:
    """One system as a run file states it (what :func:`systems_from_entries` reads back); its URL
    and command lose any password or key they carry."""
    entry: dict[str, Any] = (
        {"url": redact(system.url)}
        if system.url is not None
        else {"command": redact_command_line(system.command or "")}
    )
    entry["name"] = system.name
    fields = COMMAND_FIELDS if system.url is None else [flag.field for flag in PER_SYSTEM]
    for flag in PER_SYSTEM:
        value = getattr(system, flag.field)
        if flag.field in fields and flag.field != "name" and value is not None:
            entry[flag.field] = dict(value) if flag.field == "extra_body" else value
    return entry
