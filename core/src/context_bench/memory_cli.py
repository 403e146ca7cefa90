"""The ``context-bench memory`` command: benchmark a memory system on LoCoMo, LongMemEval or a file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from .errors import UsageError

SYSTEM_HELP = "full-context, bm25, or MODULE:CLASS (a class or zero-argument factory; repeatable)"


def add_memory_command(
    sub: Any, host: Any, common_options: Callable[[argparse.ArgumentParser, Any], None]
) -> None:
    """Add the ``memory`` subcommand; ``common_options(parser, host)`` adds the shared run flags."""
    parser = sub.add_parser(
        "memory", help="benchmark memory systems on long-conversation QA (LoCoMo, LongMemEval)"
    )
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
        "--top-k", type=int, default=10, metavar="K", help="turns the bm25 baseline retrieves (default 10)"
    )
    parser.add_argument("--qa-types", metavar="A,B", help="only these QA types (e.g. temporal,multi-hop)")
    common_options(parser, host)
    parser.set_defaults(handler=cmd_memory)


def _systems(args: argparse.Namespace) -> list[Any]:
    from functools import partial

    from .memory_systems import BASELINES
    from .specs import resolve
    from .systems import OpenAIProxy

    systems: list[Any] = []
    client = None
    for spec in args.system or ["full-context"]:
        if spec in BASELINES:
            if not args.relay:
                raise UsageError(f"--system {spec} asks an OpenAI-compatible endpoint: give --relay URL")
            if client is None:
                from .cli import check_reachable

                check_reachable(args.relay, "--relay")
                client = OpenAIProxy(
                    args.relay, model=args.model, max_connections=max(64, args.max_concurrency)
                )
            extra = {"top_k": args.top_k} if spec == "bm25" else {}
            systems.append(partial(BASELINES[spec], client, **extra))
        elif ":" in spec:
            try:
                systems.append(resolve(spec))
            except (ImportError, AttributeError, ValueError) as exc:
                raise UsageError(f"--system {spec}: cannot load it: {type(exc).__name__}: {exc}") from None
        else:
            raise UsageError(f"--system {spec}: not one of {', '.join(BASELINES)} nor MODULE:CLASS")
    return systems


def cmd_memory(args: argparse.Namespace, host: Any) -> int:
    from .cli import _check_run_options, _emit, _run_kwargs
    from .memory import evaluate_memory
    from .memory_data import load_memory, select_qa_types

    _check_run_options(args)
    if args.top_k < 1:
        raise UsageError("--top-k must be at least 1")
    if not getattr(args, "judge_url", None) and args.relay:
        args.judge_url = args.relay  # the relay judges too, unless told otherwise
    if not getattr(args, "judge_url", None):
        print(
            "context-bench: no judge configured (--judge-url or --relay): scoring by token overlap only",
            file=sys.stderr,
        )
    elif not host.has_evaluator("MemoryJudge"):
        print(
            "context-bench: install cbench-judge to judge the answers (MemoryJudge, FalseMemoryRate): "
            "scoring by token overlap only",
            file=sys.stderr,
        )
    dataset = load_memory(args.dataset, path=args.data_file, download=args.download, host=host)
    conversations = dataset.rows
    if args.qa_types:
        conversations = select_qa_types(conversations, args.qa_types.split(","))
    result = evaluate_memory(
        _systems(args),
        {dataset.name: conversations},
        max_examples=args.max_examples,
        host=host,
        **_run_kwargs(args),
    )
    return _emit(result, args)
