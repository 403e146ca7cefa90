"""A compressor proxy under test, as a reader would write one: it keeps the first ``keep`` words of
each message, sends the request on to the meter with the row header it was given, and answers
with the model's reply, its usage replaced by ``usage`` when given (a compressor that lies about
what it sent).  The metered-run tests load it by path, as they load browser.py."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

import httpx

from context_bench.metering import ROW_HEADER


class TruncatingProxy:
    def __init__(self, meter_url: str, keep: int, usage: dict[str, Any] | None = None) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                for message in body["messages"]:
                    message["content"] = " ".join(message["content"].split()[:keep])
                row = self.headers.get(ROW_HEADER)
                answer = httpx.post(
                    f"{meter_url}/chat/completions", json=body, headers={ROW_HEADER: row} if row else {}
                ).json()
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

    def __enter__(self) -> TruncatingProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
