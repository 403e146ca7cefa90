"""What the metering relay costs a call, against a direct call and against LiteLLM's proxy doing the
same pass-through, and how fast it counts tokens.

Side by side in one run on loopback, each server a process of its own: the upstream (a
``context_bench.fake_server`` answering at once), the meter in front of it (counting every request
with ``--tokenizer``), and a LiteLLM proxy in front of it (``openai/`` pointed at the upstream).  The
client is a lean asyncio one (kept-alive connections, one write a request) so that it is not what
is measured:

* added median latency of a non-streamed call (sequential, interleaved; goal at most 1 ms);
* time to the first byte of a streamed answer (goal unchanged within 1 ms);
* throughput at concurrency 64 (goal at least 3x LiteLLM's);
* tokens counted per CPU-second, rows of 2,000 characters of prose (goal at least 2 million).

The meter captures each call's prompt, as a run's does for the evidence check (a run takes them
with each finished row; here the one row is never taken).

    python bench/meter_overhead.py [--calls 300] [--seconds 5] [--tokenizer o200k_base] [--no-litellm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from context_bench.testing import free_port, loopback_environment

PROMPT = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text()[:2000]
BODY = {"model": "tiny", "messages": [{"role": "user", "content": PROMPT}]}
LITELLM_CONFIG = """
model_list:
  - model_name: tiny
    litellm_params: {{model: openai/tiny, api_base: "{upstream}/v1", api_key: none}}
litellm_settings: {{num_retries: 0, request_timeout: 30}}
general_settings: {{master_key: sk-bench-master-0123456789}}
"""
METER = """
import sys, threading
from context_bench.meter import Meter
meter = Meter(sys.argv[1], tokenizer=sys.argv[2] or None, capture_prompts=True).start()
print(meter.url, flush=True)
threading.Event().wait()
"""


def _start(argv: list[str], **options) -> subprocess.Popen:
    env = loopback_environment(
        LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_TELEMETRY="False", LITELLM_LOG="ERROR"
    )
    return subprocess.Popen(argv, env=env, start_new_session=True, **options)


def _first_line(process: subprocess.Popen) -> str:
    return process.stdout.readline().decode().strip()


def _litellm(upstream: str, home: Path) -> tuple[subprocess.Popen, str]:
    (home / "config.yaml").write_text(LITELLM_CONFIG.format(upstream=upstream))
    port = free_port()
    launch = "from litellm.proxy.proxy_cli import run_server; run_server()"
    argv = [
        sys.executable,
        "-c",
        launch,
        "--config",
        "config.yaml",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    process = _start(
        [*argv, "--num_workers", "1"], cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{url}/health/liveliness", timeout=2):
                return process, f"{url}/v1"
        except OSError:
            time.sleep(0.25)
    raise SystemExit("LiteLLM's proxy did not start")


class Client:
    """One kept-alive HTTP/1.1 connection sending one prepared POST again and again."""

    def __init__(self, url: str, body: dict, headers: dict[str, str]) -> None:
        host_port = url.split("//", 1)[1].split("/", 1)[0]
        self.host, port = host_port.split(":")
        self.port = int(port)
        path = "/" + url.split("//", 1)[1].split("/", 1)[1] + "/chat/completions"
        data = json.dumps(body).encode()
        lines = [f"POST {path} HTTP/1.1", f"Host: {host_port}", "Content-Type: application/json"]
        lines += [f"{k}: {v}" for k, v in headers.items()] + [f"Content-Length: {len(data)}", "", ""]
        self.request = "\r\n".join(lines).encode() + data
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def call(self) -> tuple[float, float]:
        """Seconds to the answer's first byte and to its last."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        started = time.perf_counter()
        self.writer.write(self.request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        first = time.perf_counter() - started
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
        lowered = head.lower()
        if b"transfer-encoding: chunked" in lowered:
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:
            length = int(lowered.split(b"content-length:")[1].split(b"\r\n")[0])
            await self.reader.readexactly(length)
        return first, time.perf_counter() - started

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _sequential(targets: dict[str, str], body: dict, calls: int, headers: dict) -> dict[str, list]:
    clients = {name: Client(url, body, headers) for name, url in targets.items()}
    times: dict[str, list] = {name: [] for name in targets}
    for client in clients.values():  # warm each path up
        for _ in range(20):
            await client.call()
    for _ in range(calls):
        for name, client in clients.items():
            times[name].append(await client.call())
    for client in clients.values():
        await client.close()
    return times


def _cpu_seconds(pid: int) -> float:
    """A process's user and system CPU time so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _throughput(url: str, seconds: float, concurrency: int, headers: dict) -> float:
    clients = [Client(url, BODY, headers) for _ in range(concurrency)]
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker(client: Client) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await client.call()
            done += 1

    await asyncio.gather(*(client.call() for client in clients))  # connections opened, paths warm
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(*(worker(client) for client in clients))
    elapsed = time.perf_counter() - started
    for client in clients:
        await client.close()
    return done / elapsed


def _counting(spec: str) -> tuple[float, int]:
    from context_bench.token_count import load_tokenizer

    tokenizer = load_tokenizer(spec)
    docs = Path(__file__).resolve().parent.parent / "docs"
    text = "\n".join(path.read_text() for path in sorted(docs.glob("*.md")))
    rows = [text[i : i + 2000] for i in range(0, len(text) - 2000, 997)]  # distinct, overlapping slices
    started = time.process_time()
    tokens = sum(tokenizer.count_chat([{"role": "user", "content": row}]) for row in rows)
    return tokens / (time.process_time() - started), len(rows)


def _ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def _run(args: argparse.Namespace, targets: dict[str, str], pids: dict[str, int]) -> None:
    headers = {"Authorization": "Bearer sk-bench-master-0123456789", "X-Context-Bench-Row": "bench"}
    times = await _sequential(targets, BODY, args.calls, headers)
    print(f"non-streamed call, median of {args.calls} (prompt {len(PROMPT)} characters):")
    for name in targets:
        print(f"  {name:8} {_ms([t[1] for t in times[name]]):7.3f} ms")
    for name in targets:
        if name != "direct":
            added = _ms([t[1] for t in times[name]]) - _ms([t[1] for t in times["direct"]])
            print(f"  added by {name}: {added:.3f} ms")
    streamed = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
    times = await _sequential(targets, streamed, args.calls, headers)
    print("streamed call, median time to first byte:")
    for name in targets:
        print(f"  {name:8} {_ms([t[0] for t in times[name]]):7.3f} ms")
    ttfb = _ms([t[0] for t in times["meter"]]) - _ms([t[0] for t in times["direct"]])
    print(f"  added by meter: {ttfb:.3f} ms")
    rates, cpu = {}, {}
    for name, url in targets.items():
        before = _cpu_seconds(pids[name])
        rates[name] = await _throughput(url, args.seconds, 64, headers)
        cpu[name] = (_cpu_seconds(pids[name]) - before) / (rates[name] * args.seconds)
    print(f"throughput at concurrency 64 over {args.seconds:g} s (CPU of the serving process a call):")
    for name, rate in rates.items():
        print(f"  {name:8} {rate:8.0f} calls/s  {cpu[name] * 1000:6.2f} ms CPU a call")
    if "litellm" in rates:
        print(f"  meter / litellm: {rates['meter'] / rates['litellm']:.1f}x")
    print(f"  meter / direct: {rates['meter'] / rates['direct']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--tokenizer", default="o200k_base")
    parser.add_argument("--no-litellm", action="store_true")
    args = parser.parse_args()
    for spec in dict.fromkeys([args.tokenizer, "o200k_base", "cl100k_base"]):
        rate, rows = _counting(spec)
        print(
            f"counting {spec}: {rate / 1e6:.2f} million tokens per CPU-second "
            f"({rows} rows of 2,000 characters)"
        )
    processes = []
    try:
        upstream = _start(
            [sys.executable, "-m", "context_bench.fake_server"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        processes.append(upstream)
        upstream_url = _first_line(upstream)
        meter = _start([sys.executable, "-c", METER, upstream_url, args.tokenizer], stdout=subprocess.PIPE)
        processes.append(meter)
        targets = {"direct": f"{upstream_url}/v1", "meter": _first_line(meter)}
        pids = {"direct": upstream.pid, "meter": meter.pid}
        if not args.no_litellm:
            litellm, url = _litellm(upstream_url, Path(tempfile.mkdtemp()))
            processes.append(litellm)
            targets["litellm"], pids["litellm"] = url, litellm.pid
        asyncio.run(_run(args, targets, pids))
    finally:
        for process in processes:
            os.killpg(process.pid, 15)
            process.wait(10)


if __name__ == "__main__":
    main()
