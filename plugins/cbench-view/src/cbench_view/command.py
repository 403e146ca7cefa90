"""``context-bench view``: serve the viewer over the store until Ctrl-C, on 127.0.0.1 unless told."""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys

from context_bench.bounds import flag_type
from context_bench.cli import add_store_option
from context_bench.errors import UsageError
from context_bench.plugins import PluginHost

#: Where the viewer listens unless told.
DEFAULT_PORT = 8600


def configure(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.description = (
        "Serve a web page over the store of runs: the run list, each run's report and rows, two runs "
        "side by side, trends.  On 127.0.0.1 only, read-only, unless told otherwise."
    )
    add_store_option(parser)
    parser.add_argument(
        "--port",
        type=flag_type("--port"),
        default=DEFAULT_PORT,
        metavar="P",
        help=f"the port (default {DEFAULT_PORT}; 0: any free one, printed)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="the address to listen on (default 127.0.0.1; another makes the runs readable from "
        "wherever it is reachable)",
    )
    parser.add_argument(
        "--allow-write",
        action="store_true",
        help="let the pages edit tags and delete runs (default read-only)",
    )


def run(args: argparse.Namespace, host: PluginHost) -> int:
    import uvicorn

    from context_bench.records import EvalResult, Summary
    from context_bench.reports import render
    from context_bench.store import open_store

    from .app import LOOPBACK, make_app

    store = open_store(args.store, create=False)
    if store is None:
        raise UsageError("--store none: there is no store to view")
    listening = _listen(args.host, args.port)
    render(EvalResult([], Summary()), "html")  # the report's modules loaded now, not by the first page
    port = listening.getsockname()[1]
    loopback = _is_loopback(args.host)
    hosts = [*LOOPBACK, args.host] if not loopback else list(LOOPBACK)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    mode = "tags and deletions allowed" if args.allow_write else "read-only"
    print(
        f"context-bench view: {store.url.shown} at http://{shown}:{port}/ ({mode}; Ctrl-C stops)",
        file=sys.stderr,
    )
    if not loopback:
        print(
            f"context-bench view: warning: anyone who can reach {args.host} can read these runs",
            file=sys.stderr,
        )
    config = uvicorn.Config(
        make_app(store, allow_write=args.allow_write, hosts=hosts),
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
    )
    try:
        uvicorn.Server(config).run(sockets=[listening])
    finally:
        listening.close()
        store.close()
    return 0


def _listen(address: str, port: int) -> socket.socket:
    """A listening socket on ``address``:``port``; one that cannot be had is one line."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((address, port))
        listening.listen(128)
    except OSError as exc:
        listening.close()
        raise UsageError(f"cannot listen on {address}:{port}: {exc.strerror or exc}") from None
    return listening


def _is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
