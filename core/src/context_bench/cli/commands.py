"""``context-bench run`` (endpoints over data sets) and ``context-bench score`` (responses in files)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..plugins import PluginHost
from ..records import EvalResult
from .run_options import RunOptions, check_reachable, emit


def cmd_run(args: argparse.Namespace, host: PluginHost) -> int:
    from ..datasets import load
    from ..runner import evaluate
    from ..systems import OpenAIProxy

    options = RunOptions.from_args(args, host)
    if len(args.name) > len(args.proxy):
        raise UsageError("more --name than --proxy flags")
    datasets = {}
    for spec in args.dataset:
        loaded = load(spec, max_examples=options.max_examples, host=host, kind="rows")
        datasets[loaded.name] = loaded.rows
    systems = []
    for position, url in enumerate(args.proxy):
        check_reachable(url)
        default = f"proxy{position + 1}" if len(args.proxy) > 1 else "proxy"
        name = args.name[position] if position < len(args.name) else default
        systems.append(OpenAIProxy(url, model=args.model, name=name))
    return emit(evaluate(systems, datasets, host=host, **options.evaluate_kwargs()), options)


def sample_path() -> Path:
    return Path(__file__).parent.parent / "data" / "sample.jsonl"


def cmd_score(args: argparse.Namespace, host: PluginHost) -> int:
    from ..datasets import read_file
    from ..runner import Precomputed, evaluate, fewer_collections

    options = RunOptions.from_args(args, host)
    files = args.files or [str(sample_path())]
    if not args.files:
        print(f"context-bench: scoring the bundled sample ({files[0]})", file=sys.stderr)
    datasets: dict[str, list[Any]] = {}
    limit = options.max_examples
    for file in files:
        name = args.dataset_name or Path(file).stem
        with fewer_collections():
            rows = list(read_file(file))
        datasets.setdefault(name, []).extend(rows[:limit] if limit else rows)
    by_system: dict[str, dict[str, list[Any]]] = {}
    for name, rows in datasets.items():
        for row in rows:
            system = str(row.get("system", "responses")) if isinstance(row, dict) else "responses"
            by_system.setdefault(system, {}).setdefault(name, []).append(row)
    if not by_system:
        raise UsageError(f"no rows to score in {', '.join(files)}")
    results = [
        evaluate(Precomputed(system), parts, host=host, **options.evaluate_kwargs())
        for system, parts in by_system.items()
    ]
    return emit(EvalResult.merge(results), options)
