"""The ``context-bench`` command line.

User mistakes (unknown data set, unreadable file, bad flag, refused endpoint, nothing to score)
end in one line on stderr and exit status 2, never a traceback.  A run that completes exits 0, or 1
when it had rows and not one of them could be scored (every row errored), so CI notices a dead
endpoint or a broken data set.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import socket
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import __version__
from .errors import ContextBenchError, UsageError
from .plugins import PluginHost, PluginWarning, set_host

FORMATS = ("table", "markdown", "json", "jsonl", "html")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other user mistake
        raise UsageError(f"{self.prog}: {message}")


def _common_run_options(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.add_argument(
        "--evaluator",
        action="append",
        default=[],
        metavar="NAME",
        help="add an evaluator to every data set (repeatable)",
    )
    parser.add_argument(
        "--no-evaluator",
        action="append",
        default=[],
        metavar="NAME",
        help="remove an auto-wired evaluator (repeatable)",
    )
    parser.add_argument(
        "--no-autowire", action="store_true", help="use only the evaluators named with --evaluator"
    )
    parser.add_argument("-n", "--max-examples", type=int, metavar="N", help="at most N rows per data set")
    parser.add_argument(
        "--max-concurrency", type=int, default=8, metavar="N", help="rows in flight (default 8)"
    )
    parser.add_argument("--cache-dir", metavar="DIR", help="store finished rows here; a re-run resumes")
    parser.add_argument("--output", choices=FORMATS, default="table", help="report format (default table)")
    parser.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    host.add_options(parser.add_argument_group("plugin options"))


def build_parser(host: PluginHost) -> argparse.ArgumentParser:
    parser = _Parser(prog="context-bench", description="Evaluate systems that touch an LLM's context.")
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
        "run", help="run systems (OpenAI-compatible endpoints) over data sets and score them"
    )
    run.add_argument(
        "--proxy",
        action="append",
        default=[],
        metavar="URL",
        required=True,
        help="OpenAI-compatible endpoint of a system under test (repeatable)",
    )
    run.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="NAME",
        help="name of the matching --proxy (repeatable, in the same order)",
    )
    run.add_argument(
        "--dataset",
        action="append",
        default=[],
        required=True,
        metavar="NAME|PATH",
        help="registered data set name or a JSONL/JSON/CSV file (repeatable)",
    )
    run.add_argument("--model", default="gpt-4o-mini", help="model name sent to the endpoints")
    _common_run_options(run, host)
    run.set_defaults(handler=cmd_run)

    score = sub.add_parser("score", help="score responses already in a file (default: the bundled sample)")
    score.add_argument("files", nargs="*", metavar="FILE", help="JSONL/JSON/CSV rows carrying 'response'")
    score.add_argument(
        "--dataset-name",
        metavar="NAME",
        help="data set name for auto-wiring rows that carry no 'dataset' field",
    )
    _common_run_options(score, host)
    score.set_defaults(handler=cmd_score)

    from .memory_cli import add_memory_command

    add_memory_command(sub, host, _common_run_options)

    for name, text, handler in (
        ("plugins", "list discovered plugins", cmd_plugins),
        ("evaluators", "list available evaluators", cmd_evaluators),
        ("datasets", "list registered data sets", cmd_datasets),
    ):
        listing = sub.add_parser(name, help=text)
        listing.add_argument("--json", action="store_true", help="machine-readable output")
        listing.set_defaults(handler=handler)
    return parser


def _with_default_command(argv: list[str]) -> list[str]:
    """``context-bench --proxy URL --dataset X`` means ``context-bench run ...``."""
    position = 0
    while position < len(argv) and argv[position] == "-p":
        position += 2
    rest = argv[position:]
    if rest and rest[0].startswith("-") and rest[0] not in ("-h", "--help", "--version"):
        return argv[:position] + ["run"] + rest
    return argv


def _host_for(argv: list[str]) -> PluginHost:
    deny = []
    for flag, value in zip(argv, argv[1:], strict=False):
        if flag == "-p":
            if not value.startswith("no:"):
                raise UsageError(f"-p takes no:NAME (got {value!r})")
            deny.append(value[3:])
    return PluginHost(deny=deny)


def _one_line(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
    print(message, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = _with_default_command(list(sys.argv[1:] if argv is None else argv))
    with warnings.catch_warnings():  # plugin warnings as plain lines, for this command only
        warnings.simplefilter("default", PluginWarning)
        warnings.showwarning = _one_line
        try:
            return _command(argv)
        except BrokenPipeError:  # `context-bench plugins | head`: the reader left, nothing is wrong
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except ContextBenchError as exc:
            print(f"context-bench: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(
                "context-bench: interrupted (finished rows are kept in --cache-dir, if given)",
                file=sys.stderr,
            )
            return 130


def _command(argv: list[str]) -> int:
    host = _host_for(argv)
    previous = set_host(host)  # for this command only: in-process callers get theirs back
    try:
        host.ensure_loaded()
        parser = build_parser(host)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return args.handler(args, host)
    finally:
        set_host(previous)


# -- commands ---------------------------------------------------------------------------------


def _evaluator_args(args: argparse.Namespace) -> dict[str, Any]:
    explicit = list(args.evaluator) if args.no_autowire else None
    if args.no_autowire and not explicit:
        raise UsageError("--no-autowire needs at least one --evaluator")
    return {
        "evaluators": explicit,
        "add_evaluators": [] if args.no_autowire else list(args.evaluator),
        "exclude_evaluators": list(args.no_evaluator),
    }


def _check_out(path: str | None) -> None:
    """Refuse an unwritable ``--out`` before the run, not after its rows were paid for."""
    if not path:
        return
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"--out {path}: is a directory")
    if not parent.is_dir():
        raise UsageError(f"--out {path}: no directory {parent}")
    if not os.access(target if target.exists() else parent, os.W_OK):
        raise UsageError(f"--out {path}: not writable")


def _emit(result: Any, args: argparse.Namespace) -> int:
    from .reports import render

    text = render(result, args.output)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
        print(f"context-bench: wrote {args.output} report to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if args.out or args.output in ("json", "jsonl"):  # the table and Markdown show warnings themselves
        for warning in result.summary.warnings if result.summary else ():
            print(f"context-bench: warning: {warning}", file=sys.stderr)
    if result.rows and all(row.errors for row in result.rows):
        print(f"context-bench: error: none of the {len(result.rows)} rows could be scored", file=sys.stderr)
        return 1
    return 0


def _check_run_options(args: argparse.Namespace) -> None:
    if args.max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError("-n/--max-examples must be at least 1")
    _check_out(args.out)


def _run_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        **_evaluator_args(args),
        "max_concurrency": args.max_concurrency,
        "cache_dir": args.cache_dir,
        "progress": not args.no_progress,
        "options": vars(args),
    }


def check_reachable(url: str, flag: str = "--proxy") -> None:
    """Fail fast, in one line, when nothing listens at an endpoint (rather than one error per row)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{flag} {url}: not an http(s) URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as exc:
        raise UsageError(f"{flag} {url}: endpoint unreachable: {exc.strerror or exc}") from None


def cmd_run(args: argparse.Namespace, host: PluginHost) -> int:
    from .datasets import load
    from .runner import evaluate
    from .systems import OpenAIProxy

    _check_run_options(args)
    if len(args.name) > len(args.proxy):
        raise UsageError("more --name than --proxy flags")
    datasets = {}
    for spec in args.dataset:
        loaded = load(spec, max_examples=args.max_examples, host=host, kind="rows")
        datasets[loaded.name] = loaded.rows
    systems = []
    for position, url in enumerate(args.proxy):
        check_reachable(url)
        default = f"proxy{position + 1}" if len(args.proxy) > 1 else "proxy"
        name = args.name[position] if position < len(args.name) else default
        systems.append(OpenAIProxy(url, model=args.model, name=name))
    return _emit(evaluate(systems, datasets, host=host, **_run_kwargs(args)), args)


def sample_path() -> Path:
    return Path(__file__).with_name("data") / "sample.jsonl"


def cmd_score(args: argparse.Namespace, host: PluginHost) -> int:
    from .datasets import read_file
    from .runner import Precomputed, evaluate, fewer_collections

    _check_run_options(args)
    files = args.files or [str(sample_path())]
    if not args.files:
        print(f"context-bench: scoring the bundled sample ({files[0]})", file=sys.stderr)
    datasets: dict[str, list[Any]] = {}
    for file in files:
        name = args.dataset_name or Path(file).stem
        with fewer_collections():
            rows = list(read_file(file))
        datasets.setdefault(name, []).extend(rows[: args.max_examples] if args.max_examples else rows)
    by_system: dict[str, dict[str, list[Any]]] = {}
    for name, rows in datasets.items():
        for row in rows:
            system = str(row.get("system", "responses")) if isinstance(row, dict) else "responses"
            by_system.setdefault(system, {}).setdefault(name, []).append(row)
    if not by_system:
        raise UsageError(f"no rows to score in {', '.join(files)}")
    results = [
        evaluate(Precomputed(system), parts, host=host, **_run_kwargs(args))
        for system, parts in by_system.items()
    ]
    return _emit(_merge_results(results), args)


def _merge_results(results: list[Any]) -> Any:
    """One result from the per-system runs: rows numbered afresh, every run's notices kept."""
    if len(results) == 1:
        return results[0]
    from .records import EvalResult

    rows = [row for result in results for row in result.rows]
    for index, row in enumerate(rows):
        row.index = index
    summarize = copy.copy(results[0].summarize)
    summarize.notices = list(dict.fromkeys(n for result in results for n in result.summarize.notices))
    return EvalResult(rows=rows, summary=summarize(rows), summarize=summarize)


def cmd_plugins(args: argparse.Namespace, host: PluginHost) -> int:
    plugins = [info.to_dict() for info in host.plugins.values()]
    if args.json:
        print(json.dumps(plugins, indent=2))
        return 0
    for info in plugins:
        version = f" {info['version']}" if info["version"] else ""
        reason = f" ({info['reason']})" if info["reason"] else ""
        print(f"{info['name']}{version}: {info['status']}{reason}")
        for ev in info["evaluators"]:
            print(f"  evaluator {ev['name']} -> {', '.join(ev['fields'])}")
        for rule in info["autowire"]:
            when = " or ".join(
                filter(
                    None,
                    [
                        f"data sets {', '.join(rule['datasets'])}" if rule["datasets"] else "",
                        f"rows with {' + '.join(rule['fields'])}" if rule["fields"] else "",
                    ],
                )
            )
            needs = f" when {', '.join(rule['requires'])} is set" if rule["requires"] else ""
            print(f"  auto-wire {rule['evaluator']}: {when}{needs}")
        for dataset in info["datasets"]:
            print(f"  data set {dataset['name']} ({dataset['kind']})")
        for key, value in info["info"].items():
            print(f"  {key}: {value}")
    return 0


def cmd_evaluators(args: argparse.Namespace, host: PluginHost) -> int:
    specs = host.evaluator_specs()
    counts: dict[str, int] = {}
    for _, spec in specs:
        counts[spec.name] = counts.get(spec.name, 0) + 1
    listing = [
        {
            "name": spec.name if counts[spec.name] == 1 else f"{plugin}/{spec.name}",
            "plugin": plugin,
            "fields": list(spec.fields),
            "description": spec.description,
        }
        for plugin, spec in specs
    ]
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    width = max((len(e["name"]) for e in listing), default=10)
    for e in listing:
        print(f"{e['name']:<{width}}  [{e['plugin']}]  {', '.join(e['fields'])}")
        if e["description"]:
            print(f"{'':<{width}}  {e['description']}")
    return 0


def cmd_datasets(args: argparse.Namespace, host: PluginHost) -> int:
    listing = [
        {"name": spec.name, "plugin": plugin, "kind": spec.kind, "description": spec.description}
        for plugin, spec in host.datasets().values()
    ]
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    if not listing:
        print("no registered data sets (any JSONL/JSON/CSV file can be passed as --dataset PATH)")
    width = max((len(d["name"]) for d in listing), default=0)
    for d in listing:
        print(f"{d['name']:<{width}}  [{d['plugin']}, {d['kind']}]  {d['description']}")
    return 0
