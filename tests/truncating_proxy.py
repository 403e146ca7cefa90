"""A compressor proxy under test, as a reader would write one: it rewrites each request
(:class:`RewritingProxy`), sends it on to the meter with the row and turn headers it was given, and
answers with the model's reply, its usage replaced by ``usage`` when given (a compressor that lies
about what it sent).  :class:`TruncatingProxy` keeps the first ``keep`` words of each message.  The
metered-run tests load it by path, as they load browser.py."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable
from typing import Any

import httpx

from context_bench.metering import ROW_HEADER, TURN_HEADER

#: Rewrites a request's body in place, given the row and turn headers it came with.
Rewrite = Callable[[dict[str, Any], dict[str, str]], None]


class RewritingProxy:
    def __init__(self, meter_url: str, rewrite: Rewrite, usage: dict[str, Any] | None = None) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                given = ((name, self.headers[name]) for name in (ROW_HEADER, TURN_HEADER))
                headers = {name: value for name, value in given if value}
                rewrite(body, headers)
                answer = httpx.post(f"{meter_url}/chat/completions", json=body, headers=headers).json()
                if usage is not None:
                    answer["usage"] = usage
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> RewritingProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class TruncatingProxy(RewritingProxy):
    def __init__(self, meter_url: str, keep: int, usage: dict[str, Any] | None = None) -> None:
        def truncate(body: dict[str, Any], headers: dict[str, str]) -> None:
            for message in body["messages"]:
                message["content"] = " ".join(message["content"].split()[:keep])

        super().__init__(meter_url, truncate, usage)
