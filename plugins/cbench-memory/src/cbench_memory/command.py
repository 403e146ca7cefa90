"""``context-bench memory``: benchmark memory systems on LoCoMo, LongMemEval or a file.

Added through ``cbench_register_commands``; the shared run flags come from
:func:`context_bench.cli.add_run_options` like any plugin command's.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import attrs

from cbench_judge.settings import JudgeSettings
from context_bench.bounds import flag_type
from context_bench.cli import Recording, RunOptions, add_run_options, check_reachable, emit
from context_bench.errors import UsageError
from context_bench.plugins import PluginHost

SYSTEM_HELP = "full-context, bm25, or MODULE:CLASS (a class or zero-argument factory; repeatable)"


def configure(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    """The ``memory`` command's own arguments, then the shared run flags."""
    parser.add_argument(
        "--dataset",
        required=True,
        metavar="locomo|longmemeval|PATH",
        help="a registered memory data set, or a LoCoMo/LongMemEval/conversations JSON(L) file",
    )
    parser.add_argument(
        "--data-file",
        metavar="PATH",
        help="local copy of the named data set (locomo10.json, longmemeval_s_cleaned.json, ...)",
    )
    parser.add_argument(
        "--download",
        action="store_true",
        help="fetch the named data set from the Hugging Face hub (needs context-bench[hub])",
    )
    parser.add_argument("--system", action="append", default=[], metavar="NAME", help=SYSTEM_HELP)
    parser.add_argument(
        "--relay",
        metavar="URL",
        help="OpenAI-compatible endpoint the baselines call; the judge's too unless --judge-url",
    )
    parser.add_argument(
        "--model", default="gpt-4o-mini", help="model the baselines ask (default gpt-4o-mini)"
    )
    parser.add_argument(
        "--top-k",
        type=flag_type("--top-k"),
        default=10,
        metavar="K",
        help="turns the bm25 baseline retrieves (default 10)",
    )
    parser.add_argument("--qa-types", metavar="A,B", help="only these QA types (e.g. temporal,multi-hop)")
    add_run_options(parser, host)


def _systems(args: argparse.Namespace, max_concurrency: int) -> tuple[list[Any], list[dict[str, Any]]]:
    """The memory systems ``--system`` names, and how the report describes each (a baseline with the
    relay's model and URL, secrets removed)."""
    from functools import partial

    from context_bench.metadata import describe_system
    from context_bench.specs import resolve
    from context_bench.systems import OpenAIProxy

    from .baselines import BASELINES

    systems: list[Any] = []
    described: list[dict[str, Any]] = []
    client = None
    for spec in args.system or ["full-context"]:
        if spec in BASELINES:
            if not args.relay:
                raise UsageError(f"--system {spec} asks an OpenAI-compatible endpoint: give --relay URL")
            if client is None:
                check_reachable(args.relay, "--relay")
                client = OpenAIProxy(args.relay, model=args.model, max_connections=max(64, max_concurrency))
            extra = {"top_k": args.top_k} if spec == "bm25" else {}
            systems.append(partial(BASELINES[spec], client, **extra))
            described.append(describe_system(BASELINES[spec](client, **extra)))
        elif ":" in spec:
            try:
                with _cwd_importable():
                    systems.append(resolve(spec))
            except (ImportError, AttributeError, ValueError) as exc:
                raise UsageError(f"--system {spec}: cannot load it: {type(exc).__name__}: {exc}") from None
            given = systems[-1]
            name = getattr(given, "name", None)
            described.append({"name": name if isinstance(name, str) else spec, "type": spec})
        else:
            raise UsageError(f"--system {spec}: not one of {', '.join(BASELINES)} nor MODULE:CLASS")
    return systems, described


@contextmanager
def _cwd_importable() -> Iterator[None]:
    """``--system my_memory:NotesMemory`` finds ``my_memory.py`` in the current folder, as
    ``python -m`` would, whether the command runs as ``context-bench`` or ``python -m context_bench``."""
    cwd = os.getcwd()
    if cwd in sys.path or "" in sys.path:
        yield
        return
    sys.path.insert(0, cwd)
    try:
        yield
    finally:
        with suppress(ValueError):
            sys.path.remove(cwd)


def _same_endpoint(a: str, b: str) -> bool:
    from context_bench.client import chat_completions_url

    try:
        return chat_completions_url(a) == chat_completions_url(b)
    except ValueError:
        return False


def _judge_setup(args: argparse.Namespace, judge: JudgeSettings) -> JudgeSettings:
    """The judge's endpoint and model: ``--relay`` and ``--model`` unless given (a relay serves the
    model it was asked for, not the judge's default), and refused up front when nothing listens
    there (the judges score after every answer is in: too late to find out)."""
    if not judge.url and args.relay:
        judge = attrs.evolve(judge, url=args.relay)  # the relay judges too, unless told otherwise
        check_reachable(args.relay, "--relay")
    if judge.url and args.relay and not judge.model and _same_endpoint(judge.url, args.relay):
        judge = attrs.evolve(judge, model=args.model)
    return judge


def run(args: argparse.Namespace, host: PluginHost) -> int:
    from context_bench.metadata import run_metadata

    from .layout import select_qa_types
    from .loaders import load_memory
    from .run import evaluate_memory

    options = RunOptions.from_args(args, host)
    if args.top_k < 1:
        raise UsageError("--top-k must be at least 1")
    config = options.config
    judge = _judge_setup(args, config.plugins.get(JudgeSettings))
    config = attrs.evolve(config, plugins=config.plugins.with_(judge))
    if not judge.url:
        print(
            "context-bench: no judge configured (--judge-url or --relay): scoring by token overlap only",
            file=sys.stderr,
        )
    elif host.has_evaluator("MemoryJudge"):
        # the judges are built after every answer is in: a setup mistake must stop the run before
        from cbench_judge.wiring import check_options

        check_options(config.plugins.options)
    else:
        print(
            "context-bench: install cbench-judge to judge the answers (MemoryJudge, FalseMemoryRate): "
            "scoring by token overlap only",
            file=sys.stderr,
        )
    dataset = load_memory(
        args.dataset,
        path=args.data_file,
        download=args.download,
        host=host,
        max_row_bytes=config.limits.max_row_bytes,
    )
    conversations = dataset.rows
    if args.qa_types:
        conversations = select_qa_types(conversations, args.qa_types.split(","))
    systems, described = _systems(args, config.limits.max_concurrency)
    config = attrs.evolve(config, analysis=config.analysis.with_models(described))  # priced as it runs
    with Recording(options, "memory") as recording:  # an unreachable --store said before any row
        metadata = {**run_metadata(argv=options.argv), "systems": described}
        recording.begin(None, metadata)
        result = evaluate_memory(
            systems, {dataset.name: conversations}, config, host=host, executor=options.build_executor()
        )
        result.metadata = metadata
        return emit(result, options, record=recording.finish)
