"""The metering relay: an HTTP/1.1 pass-through on 127.0.0.1 in front of an OpenAI-compatible upstream.

    with Meter("https://api.openai.com/v1", tokenizer="o200k_base") as meter:
        client = OpenAI(base_url=meter.url)          # http://127.0.0.1:PORT/v1
        ...  # requests carrying X-Context-Bench-Row: <token>
        meter.take(token)                            # Metered(calls=1, input_tokens=..., ...)

Each request goes to the upstream as it came (its path under the upstream's base, its headers with
the upstream's ``Host``, its body), and the answer comes back as it went: status, headers and body
bytes, a server-sent-events stream chunk by chunk as each arrives, a 429 or a 500 unchanged.  What the
meter learns (the row, the model, its own count of the input, the usage and cost the upstream
states, the status and the latency) is read beside the bytes: the input once the request is on its
way, the usage once the answer is in, and the call is recorded just before the bytes that end the
answer go out, so the time to first byte is the upstream's and a client holding its answer finds its
call recorded.  No header is recorded: keys pass through and are never kept.

It is written on asyncio streams rather than an HTTP framework or httpx: a relay that re-frames
nothing forwards bytes as they arrive, and each request costs two reads and two writes (about
0.1 ms of CPU against 2 ms through LiteLLM's proxy; ``bench/meter_overhead.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import ssl
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..client import reported_cost
from ..metering import ROW_HEADER, TURN_HEADER
from ..token_count import Tokenizer, load_tokenizer
from ._ledger import TAKE_WAIT, Ledger
from ._request import RequestView, view_request
from .records import MeterCall, Metered
from .usage import read_usage

__all__ = ["ROW_HEADER", "TURN_HEADER", "Meter"]

#: Seconds the upstream may take to start and to continue an answer before the client gets a 504.
DEFAULT_TIMEOUT = 600.0
#: A request's head and a chunk-size line may be this long.
MAX_HEAD = 1 << 20
#: A request body this large is counted on a worker thread, so the relay's loop is not held.
COUNT_INLINE = 1 << 16
#: The last turn a call may say it was made for (a conversation's turns are listed up to it).
MAX_TURN = 100_000
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"te", b"upgrade", b"expect"}
)
_ROW = ROW_HEADER.lower().encode()
_TURN = TURN_HEADER.lower().encode()
_T = TypeVar("_T")
_timeout = getattr(asyncio, "timeout", None)


class _Closed(Exception):
    """A kept-alive upstream connection that ended before a byte of the answer: the upstream
    closed it while idle, so the request goes again on a new connection."""


class _Upstream:
    """Where requests go, and a pool of kept-alive connections to it."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url.strip().rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the meter's upstream must be an http(s) URL, got {url!r}")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("the meter's upstream may not carry a user, password, query or fragment")
        path = parts.path
        for suffix in ("/chat/completions", "/completions"):
            path = path.removesuffix(suffix)
        self.base = (path if path.endswith("/v1") else path + "/v1").encode()
        self.host = parts.hostname
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.netloc = parts.netloc.encode()
        self.shown = f"{parts.scheme}://{parts.netloc}{path}"
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._context = ssl.create_default_context() if self.tls else None

    def target(self, path: bytes) -> bytes:
        """The upstream's path for a request's: ``/v1/chat/completions`` under the base."""
        return self.base + (path[3:] if path.startswith(b"/v1/") or path == b"/v1" else path)

    async def connect(self, fresh: bool) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bool]:
        while self._idle and not fresh:
            reader, writer = self._idle.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer, True
            writer.close()
        reader, writer = await asyncio.open_connection(
            self.host, self.port, ssl=self._context, limit=MAX_HEAD
        )
        return reader, writer, False

    def release(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._idle.append((reader, writer))

    def close(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()


def _headers(lines: list[bytes]) -> dict[bytes, bytes]:
    found = {}
    for line in lines:
        name, _, value = line.partition(b":")
        found[name.strip().lower()] = value.strip()
    return found


async def _body(reader: asyncio.StreamReader, headers: dict[bytes, bytes]) -> bytes:
    if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass
                return b"".join(parts)
            parts.append((await reader.readexactly(size + 2))[:-2])
    length = int(headers.get(b"content-length") or 0)
    return await reader.readexactly(length) if length else b""


def _turn(value: bytes | None) -> int | None:
    """A call's turn from its ``X-Context-Bench-Turn`` header: a whole number from 1 to
    :data:`MAX_TURN` (anything else says no turn: the call still counts on its row)."""
    value = (value or b"").strip()
    if not value.isdigit() or len(value) > 6 or not 0 < int(value) <= MAX_TURN:
        return None
    return int(value)


def _decoded(body: bytes, encoding: bytes) -> bytes | None:
    """An answer's body as text for reading its usage (None: an encoding this Python cannot undo)."""
    encoding = encoding.strip().lower()
    try:
        if encoding in (b"", b"identity"):
            return body
        if encoding == b"gzip":
            return gzip.decompress(body)
        if encoding == b"deflate":
            return zlib.decompress(body)
    except (OSError, zlib.error, EOFError):
        return None
    return None


def _error(status: int, message: str) -> bytes:
    payload = json.dumps({"error": {"message": message, "type": "meter_error"}}).encode()
    reason = {502: b"Bad Gateway", 504: b"Gateway Timeout"}[status]
    return (
        b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % (status, reason, len(payload))
    ) + payload


class _Relay:
    def __init__(
        self,
        upstream: _Upstream,
        ledger: Ledger,
        tokenizer: Tokenizer | None,
        capture: bool,
        timeout: float,
    ) -> None:
        self.upstream = upstream
        self.ledger = ledger
        self.tokenizer = tokenizer
        self.capture = capture
        self.timeout = timeout

    async def _within(self, awaitable: Awaitable[_T]) -> _T:
        """``awaitable``, or a TimeoutError after the upstream's allowed silence."""
        if _timeout is None:  # Python 3.10
            return await asyncio.wait_for(awaitable, self.timeout)
        async with _timeout(self.timeout):  # no task per read, unlike wait_for
            return await awaitable

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the client went away or spoke no HTTP: nothing to answer
        except asyncio.CancelledError:
            pass  # the meter is stopping
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Relay one request; False when the client's connection is to end."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        started = time.perf_counter()
        request_line, *lines = head[:-4].split(b"\r\n")
        method, path, _version = request_line.split(b" ", 2)
        headers = _headers(lines)
        if headers.get(b"expect", b"").lower() == b"100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await _body(reader, headers)
        token = headers.get(_ROW)
        row = self.ledger.begin(token.decode("latin-1") if token else None)
        turn = _turn(headers.get(_TURN))
        kept = [line for line in lines if line.partition(b":")[0].strip().lower() not in _HOP_BY_HOP]
        out = [method + b" " + self.upstream.target(path) + b" HTTP/1.1"]
        out += [line for line in kept if not line.lower().startswith((b"host:", b"content-length:"))]
        out += [b"Host: " + self.upstream.netloc, b"Content-Length: %d" % len(body), b"", b""]
        request = b"\r\n".join(out) + body
        close = headers.get(b"connection", b"").lower() == b"close"
        outcome = _Outcome(lambda: self._record(outcome, row, turn, path, started))
        try:
            await self._exchange(request, body, method, writer, outcome)
        except BaseException as exc:
            outcome.error = outcome.error or f"the exchange failed: {exc!r}"
            raise
        finally:
            outcome.settle()
        return not (close or outcome.close)

    def _record(
        self, outcome: _Outcome, row: str | None, turn: int | None, path: bytes, started: float
    ) -> None:
        view = outcome.view or RequestView()
        self.ledger.finish(
            MeterCall(
                row=row,
                model=view.model,
                path=path.decode("latin-1"),
                status=outcome.status,
                latency=time.perf_counter() - started,
                streamed=outcome.streamed,
                counted_input_tokens=view.counted_input_tokens,
                usage=outcome.usage,
                cost=outcome.cost,
                error=outcome.error,
                prompt=view.prompt,
                turn=turn,
            )
        )

    async def _view(self, body: bytes) -> RequestView:
        if len(body) < COUNT_INLINE:
            return view_request(body, self.tokenizer, self.capture)
        return await asyncio.get_running_loop().run_in_executor(
            None, view_request, body, self.tokenizer, self.capture
        )

    async def _exchange(
        self, request: bytes, body: bytes, method: bytes, writer: asyncio.StreamWriter, outcome: _Outcome
    ) -> None:
        for fresh in (False, True):
            try:
                ureader, uwriter, reused = await self.upstream.connect(fresh)
            except OSError as exc:
                outcome.view = await self._view(body)
                self._refuse(writer, outcome, 502, f"cannot reach {self.upstream.shown}: {exc}")
                return
            try:
                uwriter.write(request)
                if outcome.view is None:
                    outcome.view = await self._view(body)
                head = await self._within(ureader.readuntil(b"\r\n\r\n"))
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                uwriter.close()
                if reused and not fresh:
                    continue
                self._refuse(writer, outcome, 502, f"{self.upstream.shown} closed the connection: {exc!r}")
                return
            except asyncio.TimeoutError:
                uwriter.close()
                self._refuse(
                    writer, outcome, 504, f"{self.upstream.shown} did not answer in {self.timeout:g} s"
                )
                return
            await self._answer(head, method, ureader, uwriter, writer, outcome)
            return

    @staticmethod
    def _refuse(writer: asyncio.StreamWriter, outcome: _Outcome, status: int, why: str) -> None:
        """Answer for an upstream that gave none, the call recorded first."""
        outcome.status, outcome.error, outcome.close = status, f"context-bench meter: {why}", True
        outcome.settle()
        writer.write(_error(status, outcome.error))

    async def _answer(
        self,
        head: bytes,
        method: bytes,
        ureader: asyncio.StreamReader,
        uwriter: asyncio.StreamWriter,
        writer: asyncio.StreamWriter,
        outcome: _Outcome,
    ) -> None:
        """Forward the answer; the call is settled (its usage read, recorded) just before the bytes
        that end the answer are written, so a client holding its answer finds its call recorded."""
        status_line, *lines = head[:-4].split(b"\r\n")
        outcome.status = int(status_line.split(b" ", 2)[1])
        headers = _headers(lines)
        chunked = b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        length = headers.get(b"content-length")
        bodiless = method == b"HEAD" or outcome.status in (204, 304) or outcome.status < 200
        to_close = not (bodiless or chunked or length is not None)
        upstream_closes = to_close or headers.get(b"connection", b"").lower() == b"close"
        kept = [
            line
            for line in lines
            if line.partition(b":")[0].strip().lower() not in (b"connection", b"keep-alive")
        ]
        if to_close:
            kept.append(b"Connection: close")
            outcome.close = True
        answer_head = b"\r\n".join([status_line, *kept, b"", b""])
        outcome.streamed = b"text/event-stream" in headers.get(b"content-type", b"")
        parts: list[bytes] = []

        def settled(last: bytes) -> bytes:
            body = _decoded(b"".join(parts), headers.get(b"content-encoding", b""))
            usage, raw = read_usage(body, streamed=outcome.streamed) if body else (None, None)
            outcome.usage = usage
            outcome.cost = reported_cost(
                {k.decode("latin-1"): v.decode("latin-1") for k, v in headers.items()}, raw
            )
            outcome.settle()
            return last

        complete = False
        try:
            if bodiless:
                writer.write(settled(answer_head))
            elif chunked:
                writer.write(answer_head)
                await self._chunks(ureader, writer, parts, settled)
            elif length is not None and not outcome.streamed:
                parts.append(await self._within(ureader.readexactly(int(length))))
                writer.write(settled(answer_head + parts[0]))
            else:
                writer.write(answer_head)
                await self._until(ureader, writer, parts, None if length is None else int(length), settled)
            await writer.drain()
            complete = True
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as exc:
            outcome.error = outcome.error or f"the answer was cut off: {exc!r}"
            outcome.close = True
        finally:
            if complete and not upstream_closes:
                self.upstream.release(ureader, uwriter)
            else:
                uwriter.close()

    async def _chunks(
        self,
        ureader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        parts: list[bytes],
        settled: Callable[[bytes], bytes],
    ) -> None:
        """Forward a chunked body chunk by chunk, framing unchanged, as each arrives."""
        while True:
            line = await self._within(ureader.readuntil(b"\r\n"))
            size = int(line.split(b";")[0], 16)
            if size == 0:
                trailer = line
                while True:
                    more = await self._within(ureader.readuntil(b"\r\n"))
                    trailer += more
                    if more == b"\r\n":
                        writer.write(settled(trailer))
                        return
            data = await self._within(ureader.readexactly(size + 2))
            parts.append(data[:-2])
            writer.write(line + data)
            await writer.drain()

    async def _until(
        self,
        ureader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        parts: list[bytes],
        length: int | None,
        settled: Callable[[bytes], bytes],
    ) -> None:
        """Forward a body of ``length`` bytes, or up to the upstream's end, as it arrives."""
        left = length
        while left is None or left > 0:
            data = await self._within(ureader.read(1 << 16 if left is None else min(left, 1 << 16)))
            if not data:
                if left is None:
                    settled(b"")  # the client sees the end when this connection closes, after
                    return
                raise asyncio.IncompleteReadError(b"", left)
            parts.append(data)
            if left is not None:
                left -= len(data)
                if left <= 0:
                    data = settled(data)
            writer.write(data)
            await writer.drain()


class _Outcome:
    """What one exchange came to, filled in as it goes; ``settle`` records the call, once,
    whatever happens."""

    __slots__ = ("status", "error", "close", "streamed", "usage", "cost", "view", "_record")

    def __init__(self, record: Callable[[], None]) -> None:
        self.status = 0
        self.error: str | None = None
        self.close = False
        self.streamed = False
        self.usage: Any = None
        self.cost: float | None = None
        self.view: RequestView | None = None
        self._record: Callable[[], None] | None = record

    def settle(self) -> None:
        if self._record is not None:
            record, self._record = self._record, None
            record()


class Meter:
    """The relay, run on a thread of its own (``with Meter(upstream) as meter``, or start/stop).

    ``upstream`` is the model endpoint (``http://host:8000``, ``.../v1`` or ``.../v1/chat/completions``
    name the same base); ``tokenizer`` (a :class:`~context_bench.token_count.Tokenizer` or a
    ``--tokenizer`` spec) counts each request's input; ``host`` and ``port`` are where it listens
    (127.0.0.1 and a free port by default); ``capture_prompts`` keeps each request's text, in memory
    only, for the evidence check; ``timeout`` bounds the upstream's silence before a 504.
    """

    def __init__(
        self,
        upstream: str,
        *,
        tokenizer: Tokenizer | str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        capture_prompts: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.upstream = upstream
        self.tokenizer = load_tokenizer(tokenizer) if isinstance(tokenizer, str) else tokenizer
        self.host, self.port = host, port
        self._ledger = Ledger()
        self._relay = _Relay(_Upstream(upstream), self._ledger, self.tokenizer, capture_prompts, timeout)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL clients are given, ending in ``/v1`` as OpenAI clients take it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def totals(self) -> Metered:
        """Every call relayed so far, attributed or not."""
        return self._ledger.total

    @property
    def unattributed(self) -> Metered:
        """The calls no row could be given (and those that ended after their row was taken)."""
        return self._ledger.unattributed

    def take(self, row: str, wait: float = TAKE_WAIT) -> Metered:
        """The figures of the calls made for ``row``, handed over once (a second take is empty)."""
        return self._ledger.take(row, wait)

    @contextlib.contextmanager
    def sole_row(self, row: str) -> Iterator[None]:
        """While this block runs, calls without the row header are ``row``'s, provided no other
        row's block is open (with two at once, such calls are unattributed)."""
        self._ledger.enter_sole(row)
        try:
            yield
        finally:
            self._ledger.leave_sole(row)

    def start(self) -> Meter:
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()

        async def serve() -> asyncio.base_events.Server:
            server = await asyncio.start_server(
                self._relay.connection, self.host, self.port, limit=MAX_HEAD, backlog=1024
            )
            self.port = server.sockets[0].getsockname()[1]
            return server

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                server = loop.run_until_complete(serve())
            except BaseException as exc:  # an address in use: said to the caller of start()
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            server.close()
            self._relay.upstream.close()
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="context-bench-meter", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> Meter:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
