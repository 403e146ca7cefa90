"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks of systems and judges.

Every answer comes from ``reply(body) -> str | Reply`` (the request's JSON body in), optionally after
a fixed ``latency``, and a seeded share of requests can be answered with faults instead
(:class:`Faults`: 429 with ``Retry-After``, 500, a connection reset, a hang past any sensible
timeout, malformed JSON, ``content: null``).  A request with ``"stream": true`` is answered as
OpenAI streams: server-sent events in HTTP chunks, one per word, then ``[DONE]``, with a usage
chunk when ``stream_options.include_usage`` asks for one.  Real sockets, real HTTP/1.1 with keep-alive: what a
client does against it, it does against a real endpoint.  The server records every request
(:attr:`FakeServer.seen`) and the most it had in flight at once.  It runs on a thread of its own
(``with FakeServer(reply) as server: server.url``) or as a process::

    python -m context_bench.fake_server --latency 0.1 --rate-429 0.2

which prints its URL on the first line of stdout and serves ``GET /stats`` (request counts).
Import it through :mod:`context_bench.testing`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import attrs

#: The usage a reply states unless it says otherwise.
USAGE = {"prompt_tokens": 10, "completion_tokens": 2}
#: Seconds between the bytes of a ``drip`` reply: each read is quick, the whole never ends in time.
DRIP_SECONDS = 0.05


@attrs.define
class Seen:
    """One request: when it arrived, its headers (lower-case names), its JSON body and what it got."""

    time: float
    headers: dict[str, str]
    body: Any
    outcome: str = ""


#: The longest a ``Reply(hold_until=...)`` waits for the concurrency it asks for.
HOLD_SECONDS = 30.0


@attrs.frozen
class Reply:
    """One scripted answer, after ``delay`` seconds: the assistant's ``text`` (None sends
    ``content: null``) with ``status``, or a raw JSON ``body``, or a ``fault``.

    A status of 300 or more without a ``body`` sends ``{"error": {"message": text}}`` (an empty
    body when ``text`` is empty).  ``fault`` is
    one of ``reset``, ``hang``, ``drip`` (the answer's body one byte every :data:`DRIP_SECONDS`),
    ``malformed``, ``empty_choices`` or ``error_body``.  ``usage`` (None:
    the server's) is the token count the reply states.  ``chunk_delay`` is the pause before each
    event after the first of a streamed answer.  ``hold_until`` holds the answer until that
    many requests have been in flight at once (at most :data:`HOLD_SECONDS`): a test then proves a
    level of concurrency by design, not by the scheduler's timing.
    """

    text: str | None = ""
    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = attrs.Factory(dict)
    delay: float = 0.0
    fault: str | None = None
    usage: Mapping[str, Any] | None = None
    chunk_delay: float = 0.0
    hold_until: int = 0


@attrs.frozen
class Faults:
    """Shares of requests answered with each fault instead of the scripted reply (seeded)."""

    rate_429: float = 0.0
    retry_after: str = "1"
    rate_500: float = 0.0
    rate_reset: float = 0.0
    rate_hang: float = 0.0
    rate_malformed: float = 0.0
    rate_null: float = 0.0
    seed: int = 0

    def pick(self, rng: random.Random) -> Reply | None:
        roll = rng.random()
        for rate, reply in (
            (self.rate_429, Reply(status=429, headers={"Retry-After": self.retry_after})),
            (self.rate_500, Reply(status=500)),
            (self.rate_reset, Reply(fault="reset")),
            (self.rate_hang, Reply(fault="hang")),
            (self.rate_malformed, Reply(fault="malformed")),
            (self.rate_null, Reply(text=None)),
        ):
            if roll < rate:
                return reply
            roll -= rate
        return None


Responder = Callable[[Any], "Reply | str"]


def last_user_message(body: Any) -> str:
    """The text of the last user message of a request body (what a stand-in model answers)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class FakeServer:
    """The server; ``start()``/``stop()`` or a ``with`` block run it on a thread of its own."""

    def __init__(
        self,
        reply: Responder,
        *,
        latency: float = 0.0,
        faults: Faults | None = None,
        usage: Mapping[str, Any] = USAGE,
        hang_seconds: float = 3600.0,
        host: str = "127.0.0.1",
        port: int = 0,
        record: bool = True,
    ) -> None:
        self.reply = reply
        self.latency = latency
        self.faults = faults or Faults()
        self.usage = dict(usage)
        self.hang_seconds = hang_seconds
        self.host, self.port = host, port
        self.record = record
        self.seen: list[Seen] = []
        self.statuses: Counter[str] = Counter()
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        #: Replies whose ``hold_until`` was never reached (answered after HOLD_SECONDS instead).
        self.expired_holds = 0
        self._rng = random.Random(self.faults.seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def requests(self) -> list[Any]:
        """The JSON bodies of the chat requests recorded so far, in order of arrival."""
        return [seen.body for seen in self.seen]

    # -- lifecycle ---------------------------------------------------------------------------

    async def serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._connection, self.host, self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        # every task on the server's loop, connections accepted but not yet started included
        pending = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def start(self) -> FakeServer:
        ready = threading.Event()
        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.serve())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.close())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- HTTP --------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                    return
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                headers = {}
                for line in header_lines:
                    if ":" in line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(length) if length else b""
                keep = await self._answer(request_line, headers, raw, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # the server is closing: end quietly (asyncio reports a cancelled handler as an error)
        finally:
            if not writer.transport.is_closing():
                writer.close()

    async def _answer(
        self, request_line: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        method, _, rest = request_line.partition(" ")
        path = rest.split(" ")[0]
        if method == "GET" and path == "/stats":
            await self._send(writer, 200, {"requests": self.count, "statuses": dict(self.statuses)})
            return True
        if method != "POST" or not path.endswith("/v1/chat/completions"):
            await self._send(writer, 404, {"error": {"message": f"no route {method} {path}"}})
            return True
        self.count += 1
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            await self._send(writer, 400, {"error": {"message": "request body is not JSON"}})
            return True
        seen = Seen(time.monotonic(), headers, body)
        if self.record:
            self.seen.append(seen)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = self.faults.pick(self._rng)
            if reply is None:
                scripted = self.reply(body)
                reply = scripted if isinstance(scripted, Reply) else Reply(text=scripted)
            held = time.monotonic() + HOLD_SECONDS
            while self.max_in_flight < reply.hold_until and time.monotonic() < held:
                await asyncio.sleep(0.005)
            self.expired_holds += self.max_in_flight < reply.hold_until
            if self.latency or reply.delay:
                await asyncio.sleep(self.latency + reply.delay)
            seen.outcome = reply.fault or ("null" if reply.text is None else str(reply.status))
            self.statuses[seen.outcome] += 1
            return await self._deliver(reply, body, writer)
        finally:
            self.in_flight -= 1

    async def _deliver(self, reply: Reply, body: Any, writer: asyncio.StreamWriter) -> bool:
        if reply.fault == "reset":
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if reply.fault == "hang":
            await asyncio.sleep(self.hang_seconds)
            return False
        if reply.fault == "malformed":
            await self._send(writer, 200, b'{"choices": [{"message": {"content": "VERDICT: YE')
            return True
        if reply.fault == "empty_choices":
            await self._send(writer, 200, {"id": "x", "object": "chat.completion", "choices": []})
            return True
        if reply.fault == "error_body":
            await self._send(
                writer, 200, {"error": {"message": "upstream overloaded", "type": "server_error"}}
            )
            return True
        if (
            reply.body is None
            and reply.status < 300
            and isinstance(body, dict)
            and body.get("stream") is True
        ):
            await self._stream(reply, body, writer)
            return True
        payload = reply.body
        if payload is None and reply.status >= 300:
            payload = {"error": {"message": reply.text}} if reply.text else b""
        if payload is None:
            payload = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": body.get("model", "") if isinstance(body, dict) else "",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": dict(self.usage if reply.usage is None else reply.usage),
            }
        await self._send(writer, reply.status, payload, reply.headers, drip=reply.fault == "drip")
        return True

    async def _stream(self, reply: Reply, body: dict, writer: asyncio.StreamWriter) -> None:
        """The answer as OpenAI streams it: one event per word, each in an HTTP chunk of its own."""
        base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": body.get("model", "")}
        words = (reply.text or "").split(" ")
        deltas = [{"role": "assistant", "content": ""}] + [
            {"content": word if i == 0 else " " + word} for i, word in enumerate(words)
        ]
        events = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            usage = dict(self.usage if reply.usage is None else reply.usage)
            events.append({**base, "choices": [], "usage": usage})
        lines = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
        lines += ["Content-Type: text/event-stream", "Transfer-Encoding: chunked"]
        lines += [f"{k}: {v}" for k, v in reply.headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        for i, data in enumerate([json.dumps(e) for e in events] + ["[DONE]"]):
            if i and reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            event = f"data: {data}\n\n".encode()
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    @staticmethod
    async def _send(
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any,
        headers: Mapping[str, str] | None = None,
        *,
        drip: bool = False,
    ) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        lines = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "Content-Type: application/json",
            f"Content-Length: {len(data)}",
        ]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if not drip:
            writer.write(head + data)
            await writer.drain()
            return
        writer.write(head)
        for i in range(len(data)):
            await writer.drain()
            await asyncio.sleep(DRIP_SECONDS)
            writer.write(data[i : i + 1])
        await writer.drain()


def main(argv: list[str] | None = None, reply: Responder = last_user_message) -> int:
    """Serve until interrupted (``reply`` answers; by default it echoes the last user message)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--retry-after", default="1")
    parser.add_argument("--rate-500", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    server = FakeServer(
        reply,
        latency=args.latency,
        port=args.port,
        record=False,
        faults=Faults(
            rate_429=args.rate_429, retry_after=args.retry_after, rate_500=args.rate_500, seed=args.seed
        ),
    )

    async def run() -> None:
        await server.serve()
        print(server.url, flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
