"""``context-bench runs`` (the stored runs, filtered), ``export RUN`` (a stored run as its JSON or
JSONL report) and ``import FILE...`` (existing reports into the store)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..bounds import flag_type
from ..errors import UsageError
from ..plugins import PluginHost

if TYPE_CHECKING:
    from ..store import Store

#: Longest text a cell of the run list shows (the verdict is shown whole).
MAX_CELL = 30


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """``--store URL``: which store a command reads or records into."""
    parser.add_argument(
        "--store",
        metavar="URL",
        help="the store: sqlite:///PATH, postgresql://USER@HOST/DB or none "
        "(default: $CBENCH_STORE, else .context-bench/runs.sqlite here)",
    )


def add_tag_option(parser: argparse.ArgumentParser) -> None:
    """``--tag LABEL`` (repeatable): labels the recorded runs carry."""
    parser.add_argument(
        "--tag", action="append", default=[], metavar="LABEL", help="label the recorded run (repeatable)"
    )


def run_id(text: str) -> int:
    """A run id as the command line gives it (what ``runs`` lists)."""
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1 or str(number) != text.strip():
        raise UsageError(f"{text!r} is not a run id (a number, as `context-bench runs` lists them)")
    return number


def stored_or_file(url: str | None) -> Callable[[str], Any]:
    """What ``compare`` and ``show`` read for each name they are given: a JSON report file, or, when
    no file has that name and it is a run id, the stored run as its JSON report (an unknown id: one
    line)."""
    from ..compare_runs import report_data

    def read(name: str) -> Any:
        if Path(name).exists() or not name.strip().isdigit():
            return report_data(name)
        with opened(url) as store:
            return store.report(run_id(name))

    return read


def opened(url: str | None, create: bool = False) -> Store:
    """The store ``--store`` names, for reading (a missing SQLite file is not made)."""
    from ..store import open_store

    store = open_store(url, create=create)
    if store is None:
        raise UsageError("--store none: there is no store to read")
    return store


def configure_runs(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.description = (
        "List the stored runs, newest first (id, date, status, tags, systems, data sets, verdict)."
    )
    add_store_option(parser)
    parser.add_argument("--tag", metavar="TAG", help="only runs with this tag")
    parser.add_argument("--system", metavar="NAME", help="only runs of this system")
    parser.add_argument("--dataset", metavar="NAME", help="only runs over this data set")
    parser.add_argument(
        "--since", metavar="WHEN", help="only runs started since: 2026-11-01, 2026-11-01T09:30, 3d, 12h, 2w"
    )
    parser.add_argument(
        "--limit",
        type=flag_type("--limit"),
        default=50,
        metavar="N",
        help="at most N runs (default 50; 0: all)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def cmd_runs(args: argparse.Namespace, host: PluginHost) -> int:
    from ..reports._sections import printable
    from ..store import parse_since, store_url

    since = parse_since(args.since) if args.since else None
    url = store_url(args.store)
    if url.kind == "sqlite" and url.path is not None and not url.path.exists():
        print("[]" if args.json else f"no runs recorded yet in {url.shown}")
        return 0
    with opened(args.store) as store:
        infos = store.runs(args.tag, args.system, args.dataset, since, args.limit or None)
    if args.json:
        print(json.dumps([attrs.asdict(info) for info in infos], indent=2, ensure_ascii=False))
        return 0
    if not infos:
        print(f"no runs in {url.shown} match")
        return 0
    header = ("id", "started (UTC)", "status", "tags", "systems", "data sets", "rows", "verdict")
    lines = [
        (
            str(info.id),
            info.started[:16].replace("T", " "),
            info.status,
            ", ".join(info.tags),
            ", ".join(info.systems),
            ", ".join(info.datasets),
            f"{info.rows} ({info.errors} errored)" if info.errors else str(info.rows),
            info.verdict or ("-" if info.status == "finished" else f"{info.status}: no summary"),
        )
        for info in infos
    ]
    lines = [tuple(printable(_cut(cell, n < 7)) for n, cell in enumerate(line)) for line in lines]
    widths = [max(len(line[n]) for line in [header, *lines]) for n in range(len(header) - 1)]
    for line in [header, *lines]:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)) + "  " + line[-1]
        )
    return 0


def _cut(text: str, cut: bool) -> str:
    return text if not cut or len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def configure_export(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.description = "Write a stored run as its JSON or JSONL report."
    parser.add_argument("run", metavar="RUN", help="the run's id (`context-bench runs` lists them)")
    add_store_option(parser)
    parser.add_argument(
        "--output", choices=("json", "jsonl"), default="json", help="report format (default json)"
    )
    parser.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout")


def cmd_export(args: argparse.Namespace, host: PluginHost) -> int:
    from ..files import atomic_writer, check_target
    from ..store._transfer import export

    number = run_id(args.run)
    if args.out:
        check_target(args.out)
    with opened(args.store) as store:
        store.run(number)  # an unknown id is said before --out is touched
        if not args.out:
            export(store, number, args.output, sys.stdout)
            return 0
        try:
            with atomic_writer(args.out) as handle:
                count = export(store, number, args.output, handle)
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"context-bench: run {number} ({count} rows) written to {args.out}", file=sys.stderr)
    return 0


def configure_import(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.description = "Record existing JSON or JSONL reports (of run, score or memory) in the store."
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON or JSONL reports")
    add_store_option(parser)
    add_tag_option(parser)


def cmd_import(args: argparse.Namespace, host: PluginHost) -> int:
    from ..reports._sections import printable
    from ..store._transfer import import_report

    with opened(args.store, create=True) as store:
        for file in args.files:
            done = import_report(store, file, args.tag)
            said = "already in the store as" if done.again else "imported as"
            print(f"{printable(file)}: {said} run {done.run_id} ({done.rows} rows)")
    return 0
