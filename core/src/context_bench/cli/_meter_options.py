"""``run``'s flags of measured savings (docs/savings.md): the meter every call to the model passes
through, read back as the run's :class:`~context_bench.config.Metering`."""

from __future__ import annotations

import argparse

from ..bounds import flag_type
from ..config import Metering


def add_meter_options(parser: argparse.ArgumentParser) -> None:
    meter = parser.add_argument_group("measured savings (docs/savings.md)")
    meter.add_argument(
        "--meter",
        metavar="URL",
        help="start a relay in front of the model endpoint URL for the run and count every call "
        "through it on its row (row.metered): a --proxy system whose URL is URL is sent through it; "
        "point a proxy under test at the address it prints; a --command program gets it in "
        "$CBENCH_METER_URL and its row's token in $CBENCH_ROW",
    )
    meter.add_argument(
        "--meter-port",
        type=flag_type("--meter-port"),
        default=0,
        metavar="PORT",
        help="the meter's port (default: a free one, printed at start)",
    )
    meter.add_argument(
        "--meter-host",
        default="127.0.0.1",
        metavar="HOST",
        help="where the meter listens: an address the systems can reach (default 127.0.0.1; with "
        "--executor ray on several machines, the driver's)",
    )
    meter.add_argument(
        "--tokenizer",
        metavar="NAME|PATH",
        help="count the prompt each system is given (row.counted_input_tokens) and, with --meter, each "
        "call's input: a tiktoken encoding (o200k_base, cl100k_base), a .tiktoken file or a "
        "tokenizer.json; never downloaded (default: the usage the upstream states)",
    )
    meter.add_argument(
        "--keep-prompts",
        action="store_true",
        help="write what each metered call sent into the rows (row.metered.prompts; default: never kept)",
    )


def metering_from_args(args: argparse.Namespace) -> Metering:
    """The meter the flags ask for (none without ``--meter``; ``score`` has no such flags), its
    tokenizer loaded: one that is not on this machine is one line and exit 2 before any row runs."""
    from ..errors import UsageError

    upstream = getattr(args, "meter", None)
    spec = getattr(args, "tokenizer", None)
    keep = getattr(args, "keep_prompts", False)
    if upstream is None and keep:
        raise UsageError("--keep-prompts keeps what the calls through the meter sent: give --meter URL too")
    tokenizer = None
    if spec is not None:
        from ..token_count import load_tokenizer

        tokenizer = load_tokenizer(spec)
    return Metering(
        upstream=upstream,
        host=getattr(args, "meter_host", "127.0.0.1"),
        port=getattr(args, "meter_port", 0),
        tokenizer=tokenizer,
        keep_prompts=keep,
    )
