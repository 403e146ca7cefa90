"""Run files: ``context-bench run --config run.toml`` states a whole run, and a JSON report repeats one.

A run file has seven parts, each optional::

    [[systems]]   url (or command), name, model, api_key_env, system_prompt, extra_body, ...
    [[datasets]]  name or path (a file; name then names its data set), config, split, max_examples
    [evaluators]  add = [...], remove = [...], autowire = false
    [options]     any other run flag by its name with underscores: max_concurrency, judge_url, ...
    [output]      format, out
    [gates]       fail_under, fail_over, fail_if_worse, baseline, max_failure_rate
    [[sweeps]]    name, and values or start, stop, step (docs/sweeps.md)

Every setting but the systems and data sets is turned into the words of its flag and read by the
``run`` parser itself, so it is checked and routed (a plugin's share of the options to that plugin)
exactly as the flag is.  A flag given on the command line overrides the file's setting (a
repeatable one replaces the file's whole list); a run file that lists systems takes no system flag
beside it.  A key the shape does not know is one line naming it and the file, its value unshown.

:func:`resolved_config` is the other direction: the run as a run file states it, secrets removed,
which the JSON report records in ``metadata.config`` so that ``--rerun report.json`` (or
``--config report.json``) repeats the run, once its plan is confirmed (a report is someone else's:
:mod:`~context_bench.cli._report_plan`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..bounds import BOUNDS
from ..errors import UsageError
from ._argv import plugin_flags, with_default_command
from ._sweeps import sweep_words
from ._system_flags import (
    DEST,
    SystemSettings,
    _Record,
    bind_systems,
    refuse_mixing,
    settings_entry,
    systems_from_entries,
)

#: The parts of a run file.
SECTIONS = ("systems", "datasets", "evaluators", "options", "output", "gates", "sweeps")
#: The keys of ``[[datasets]]``.
DATASET_KEYS = ("name", "path", "config", "split", "max_examples")
#: ``[evaluators]`` and ``[output]``: a key and the flag destination it stands for.
EVALUATOR_KEYS = {"add": "evaluator", "remove": "no_evaluator", "autowire": "no_autowire"}
OUTPUT_KEYS = {"format": "output", "out": "out"}
GATE_KEYS = ("fail_under", "fail_over", "fail_if_worse", "baseline", "max_failure_rate")
#: Run flags that are no setting of the run (the systems, data sets and this file have their parts;
#: the store and tags say where it is recorded, which its configuration there must not hold).
_NOT_OPTIONS = frozenset({"config", "rerun", "yes", "dataset", "no_progress", "help", "store", "tag", DEST})


@attrs.frozen
class DatasetEntry:
    """One data set of a run: a file (``path``, its data set named ``name`` when given) or a
    registered name, with the loader's ``config`` and ``split`` and its own row limit."""

    name: str | None = None
    path: str | None = None
    config: str | None = None
    split: str | None = None
    max_examples: int | None = None

    @property
    def spec(self) -> str:
        """What ``--dataset`` would say: the file, or ``NAME`` or ``NAME:CONFIG``."""
        if self.path is not None:
            return self.path
        return f"{self.name}:{self.config}" if self.config is not None else str(self.name)

    def loader_kwargs(self) -> dict[str, Any]:
        """What ``datasets.load`` takes beside the spec: this data set's split (``--split``'s)."""
        return {} if self.split is None else {"split": self.split}

    def entry(self) -> dict[str, Any]:
        return {key: value for key in DATASET_KEYS if (value := getattr(self, key)) is not None}


@attrs.frozen
class Run:
    """What ``run`` runs once the file and the command line are merged."""

    systems: list[SystemSettings]
    datasets: list[DatasetEntry]


def read_run_file(path: str) -> dict[str, Any]:
    """A run file's table: TOML (``.toml``) or JSON; a JSON report gives the configuration it recorded."""
    return _read_run_file(path)[0]


def _read_run_file(path: str) -> tuple[dict[str, Any], bool]:
    """A run file's table, and whether it is a report's recorded configuration (someone else's)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"cannot read the run file {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if path.lower().endswith(".toml"):
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"{path}: invalid TOML: {exc}") from None
    else:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"{path}: invalid JSON: {getattr(exc, 'msg', exc)}") from None
    report = isinstance(data, dict) and isinstance(data.get("metadata"), dict) and "summary" in data
    if report:
        data = data["metadata"].get("config")  # a report: the run it records
        if not isinstance(data, dict):
            raise UsageError(f"{path}: this report records no run configuration to repeat")
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a run file is a table of {', '.join(SECTIONS)}")
    unknown = [key for key in data if key not in SECTIONS]
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r} (a run file holds {', '.join(SECTIONS)})")
    return data, report


def systems_from_file(path: str) -> list[SystemSettings]:
    """A run file's systems."""
    return systems_from_entries(read_run_file(path).get("systems"), path)


def resolve_run(args: argparse.Namespace) -> Run:
    """Merge ``--config FILE`` into ``args`` (the command line winning) and name the systems and data
    sets to run; without a run file, those of the command line."""
    if args.config and args.rerun:
        raise UsageError("give --config FILE or --rerun REPORT, not both")
    path = args.config or args.rerun
    if not path:
        return Run(bind_systems(getattr(args, DEST)), _command_line_datasets(args))
    data, report = _read_run_file(path)
    if report or args.rerun:  # someone else's run: shown, and run only when the user says so
        from ._report_plan import confirmed

        data = confirmed(data, path, args)
    parser = args.run_parser
    given = _given(parser, args)
    for dest, value in _settings(data, path, parser).items():
        if dest not in given:
            setattr(args, dest, value)
    if "systems" in data:  # stated in full: no system flag beside them
        systems = systems_from_entries(data["systems"], path)
        refuse_mixing(path, getattr(args, DEST))
    else:
        systems = bind_systems(getattr(args, DEST))
    listed = _datasets(data["datasets"], path) if "datasets" in data else None
    if "dataset" in given or listed is None:
        datasets = _command_line_datasets(args)
    else:
        datasets = listed
        if "max_examples" in given:  # -n on the command line is every data set's limit
            datasets = [attrs.evolve(entry, max_examples=None) for entry in datasets]
    return Run(systems, datasets)


def _command_line_datasets(args: argparse.Namespace) -> list[DatasetEntry]:
    if not args.dataset:
        raise UsageError("give at least one --dataset NAME|PATH (or [[datasets]] in a --config run file)")
    entries = []
    for spec in args.dataset:
        if Path(spec).is_file():
            entries.append(DatasetEntry(path=spec, name=args.dataset_name))
        else:
            name, _, config = spec.partition(":")
            entries.append(DatasetEntry(name=name, config=config or None))
    return entries


def _datasets(listed: Any, path: str) -> list[DatasetEntry]:
    if not isinstance(listed, list) or not listed or not all(isinstance(entry, dict) for entry in listed):
        raise UsageError(f'{path}: expected [[datasets]] tables, each with name = "..." or path = "..."')
    found = []
    for number, entry in enumerate(listed, start=1):
        where = f"{path}: data set {number}"
        unknown = [key for key in entry if key not in DATASET_KEYS]
        if unknown:
            raise UsageError(
                f"{where}: unknown key {unknown[0]!r} (a data set takes {', '.join(DATASET_KEYS)})"
            )
        for key in ("name", "path", "config", "split"):
            if key in entry and (not isinstance(entry[key], str) or not entry[key].strip()):
                raise UsageError(f"{where}: {key} must be a non-empty string")
        if "name" not in entry and "path" not in entry:
            raise UsageError(f"{where}: needs name (a registered data set) or path (a file)")
        limit = entry.get("max_examples")
        if limit is not None and (type(limit) is not int or not BOUNDS["--max-examples"].holds(limit)):
            raise UsageError(f"{where}: max_examples must be {BOUNDS['--max-examples'].describe()}")
        if "path" in entry and not Path(entry["path"]).is_file():
            raise UsageError(f"{where}: data set file not found: {entry['path']}")
        if "path" in entry and ("config" in entry or "split" in entry):
            raise UsageError(
                f"{where}: config and split choose among a registered data set's parts, not a file's"
            )
        found.append(DatasetEntry(**entry))
    return found


def _settings(data: Mapping[str, Any], path: str, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """Every flag setting of the file, by destination, each read by the ``run`` parser from its flag."""
    actions = _options(parser)
    found: dict[str, Any] = {}

    def table(section: str) -> Mapping[str, Any]:
        value = data.get(section, {})
        if not isinstance(value, dict):
            raise UsageError(f"{path}: [{section}] must be a table")
        return value

    for key, value in table("evaluators").items():
        if key not in EVALUATOR_KEYS:
            raise UsageError(f"{path}: unknown key 'evaluators.{key}' (it takes add, remove, autowire)")
        if key == "autowire":
            if not isinstance(value, bool):
                raise UsageError(f"{path}: evaluators.autowire must be true or false")
            value = not value
        found.update(_read(parser, actions, EVALUATOR_KEYS[key], value, f"evaluators.{key}", path))
    for key, value in table("output").items():
        if key not in OUTPUT_KEYS:
            raise UsageError(f"{path}: unknown key 'output.{key}' (it takes {', '.join(OUTPUT_KEYS)})")
        found.update(_read(parser, actions, OUTPUT_KEYS[key], value, f"output.{key}", path))
    for key, value in table("gates").items():
        if key not in GATE_KEYS:
            raise UsageError(f"{path}: unknown key 'gates.{key}' (it takes {', '.join(GATE_KEYS)})")
        if isinstance(value, dict) and key in ("fail_under", "fail_over", "fail_if_worse"):  # {f1 = 0.7}
            value = [f"{field}={bound}" for field, bound in value.items()]
        found.update(_read(parser, actions, key, value, f"gates.{key}", path))
    if "sweeps" in data:
        found.update(_read(parser, actions, "sweep", sweep_words(data["sweeps"], path), "sweeps", path))
    taken = {*EVALUATOR_KEYS.values(), *OUTPUT_KEYS.values(), *GATE_KEYS}
    for key, value in table("options").items():
        dest = key.replace("-", "_")
        if dest not in actions or dest in _NOT_OPTIONS or dest in taken:
            raise UsageError(
                f"{path}: unknown key 'options.{key}' (not a run option; see context-bench run --help)"
            )
        found.update(_read(parser, actions, dest, value, f"options.{key}", path))
    return found


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The parser's flags by destination (the per-system ones excepted: systems have their part)."""
    return {
        action.dest: action
        for action in parser._actions  # argparse lists its flags nowhere public
        if action.option_strings
        and action.dest not in (argparse.SUPPRESS, DEST)
        and not isinstance(action, _Record)
    }


def _read(
    parser: argparse.ArgumentParser,
    actions: Mapping[str, argparse.Action],
    dest: str,
    value: Any,
    key: str,
    path: str,
) -> dict[str, Any]:
    """``value`` as the flag of ``dest`` reads it: the flag's words parsed by the ``run`` parser."""
    action = actions[dest]
    option = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
    if action.nargs == 0:  # a switch
        if not isinstance(value, bool):
            raise UsageError(f"{path}: {key} must be true or false")
        words = [option] if value else []
    else:
        repeatable = isinstance(action, argparse._AppendAction)
        if isinstance(value, list) and not repeatable:
            raise UsageError(f"{path}: {key} takes one value, not a list")
        values = value if isinstance(value, list) else [value]
        words = [f"{option}={_text(item, key, path)}" for item in values]
    namespace = argparse.Namespace()
    try:
        parser.parse_args(words, namespace)
    except UsageError as exc:  # "run: argument --out: ..." as "run.toml: output.out: ..."
        reason = re.sub(r"^(?:run: )?(?:argument [^:]+: )?", "", str(exc))
        raise UsageError(f"{path}: {key}: {reason}") from None
    return {dest: getattr(namespace, dest)}


def _text(value: Any, key: str, path: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{path}: {key} must be a string or a number")
    return repr(value)


class _Unset(list):  # a list, so that an append action copies it and appends to the copy
    """Stands for "not on the command line" while it is parsed again."""


def _given(parser: argparse.ArgumentParser, args: argparse.Namespace) -> set[str]:
    """The destinations the command line set: its ``run`` words parsed again onto markers."""
    words = _run_words(getattr(args, "argv", None))
    dests = {action.dest for action in parser._actions if action.dest not in (argparse.SUPPRESS, DEST)}
    if words is None:  # called without its command line: a value other than the default was given
        return {dest for dest in dests if getattr(args, dest, None) != parser.get_default(dest)}
    markers = {dest: _Unset() for dest in dests}
    namespace = argparse.Namespace(**markers)
    parser.parse_args(words, namespace)
    return {dest for dest, marker in markers.items() if getattr(namespace, dest) is not marker}


def _run_words(argv: Sequence[str] | None) -> list[str] | None:
    """The words after ``run`` of the command line as given (``-p no:X`` and the default command too)."""
    if argv is None:
        return None
    words = with_default_command(plugin_flags(argv)[1])
    return words[1:] if words[:1] == ["run"] else None


def resolved_config(run: Run, args: argparse.Namespace) -> dict[str, Any]:
    """The run as a run file states it: what ``--config report.json`` repeats.  Secrets are removed by
    :func:`context_bench.metadata.scrub_config` when the report records it."""
    parser = getattr(args, "run_parser", None)
    config: dict[str, Any] = {
        "systems": [settings_entry(system) for system in run.systems],
        "datasets": [entry.entry() for entry in run.datasets],
    }
    evaluators: dict[str, Any] = {}
    if args.evaluator:
        evaluators["add"] = list(args.evaluator)
    if args.no_evaluator:
        evaluators["remove"] = list(args.no_evaluator)
    if args.no_autowire:
        evaluators["autowire"] = False
    output = {"format": args.output, **({"out": args.out} if args.out else {})}
    gates = {
        key: list(value) if isinstance(value, list) else value
        for key in GATE_KEYS
        if (value := getattr(args, key, None)) not in (None, [])
        and (parser is None or value != parser.get_default(key))
    }
    taken = {*EVALUATOR_KEYS.values(), *OUTPUT_KEYS.values(), *GATE_KEYS, "dataset_name"}
    options = {
        dest: getattr(args, dest)
        for dest in (_options(parser) if parser is not None else ())
        if dest not in _NOT_OPTIONS
        and dest not in taken
        and hasattr(args, dest)
        and getattr(args, dest) != parser.get_default(dest)
    }
    for part, value in (
        ("evaluators", evaluators),
        ("options", options),
        ("output", output),
        ("gates", gates),
    ):
        if value:
            config[part] = value
    return config
