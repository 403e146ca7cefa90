"""Headless Chromium for the tests of the HTML report: Debian's ``/usr/bin/chromium``, nothing else.

``dump_dom`` loads a page the way a user opens a report from disk and returns the DOM after its
scripts ran, with the script errors the browser logged.  ``Browser`` drives a page over the
DevTools protocol on a pipe (``--remote-debugging-pipe``: no port, no extra package), to click,
type and read the page's state, to save what a page downloads, and to take a screenshot; it
collects every uncaught exception and console error as it goes.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("CBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--mute-audio",
)
TIMEOUT = 20.0


def missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    return None


def dump_dom(page: Path) -> tuple[str, list[str]]:
    """The DOM of ``page`` after its scripts ran, and the script errors Chromium logged."""
    with tempfile.TemporaryDirectory(prefix="cbench-chromium-") as profile:
        done = subprocess.run(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                "--dump-dom",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    errors = [line for line in done.stderr.splitlines() if ":CONSOLE" in line and "Uncaught" in line]
    return done.stdout, errors


def _high(*fds: int) -> tuple[int, ...]:
    """The fds moved above 9, so that putting the browser's ends on 3 and 4 overwrites neither."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved


class Browser:
    """One headless Chromium with one page, driven over the DevTools protocol on a pipe."""

    def __init__(self, width: int = 1200, height: int = 900) -> None:
        self._profile = tempfile.mkdtemp(prefix="cbench-chromium-")
        ours_in, theirs_out = _high(*os.pipe())  # the browser writes replies on its fd 4
        theirs_in, ours_out = _high(*os.pipe())  # and reads commands on its fd 3
        # bash (dash has no fd above 9) puts the pipe's ends on 3 and 4, where --remote-debugging-pipe looks
        moves = f"3<&{theirs_in} 4>&{theirs_out} {theirs_in}<&- {theirs_out}>&-"
        self._proc = subprocess.Popen(
            [
                "/bin/bash",
                "-c",
                f'exec "$0" "$@" {moves}',
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            pass_fds=(theirs_in, theirs_out),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(theirs_in)
        os.close(theirs_out)
        self._out = os.fdopen(ours_out, "wb", buffering=0)
        self._in = os.fdopen(ours_in, "rb", buffering=0)
        self._next = 0
        self._replies: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self.errors: list[str] = []
        self._loaded = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        target = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self._session = self.call("Target.attachToTarget", targetId=target["targetId"], flatten=True)[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    # -- protocol ----------------------------------------------------------------------------------

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = self._in.read(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                self._dispatch(json.loads(raw))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            with self._lock:
                box = self._replies.get(message["id"])
            if box is not None:
                box.put(message)
            return
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", "?"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(params["entry"].get("text", "?"))
        elif method == "Page.loadEventFired":
            self._loaded.set()

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        with self._lock:
            self._next += 1
            number = self._next
            box = self._replies[number] = queue.Queue()
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        self._out.write(json.dumps(message).encode() + b"\0")
        try:
            reply = box.get(timeout=TIMEOUT)
        except queue.Empty:
            raise TimeoutError(f"Chromium did not answer {method} within {TIMEOUT} s") from None
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """A command to the page."""
        return self.call(method, session=True, **params)

    # -- the page ----------------------------------------------------------------------------------

    def open(self, page: Path | str) -> None:
        """Load a page: a file (as a user opens a report from disk) or a URL."""
        url = page if isinstance(page, str) else page.resolve().as_uri()
        self._loaded.clear()
        self.send("Page.navigate", url=url)
        if not self._loaded.wait(TIMEOUT):
            raise TimeoutError(f"{url} did not load within {TIMEOUT} s")

    def wait_for(self, expression: str, timeout: float = TIMEOUT) -> None:
        """Until ``expression`` is truthy on the page (an element is), asked again every 20 ms."""
        end = time.monotonic() + timeout
        while not self.run(f"!!({expression})"):
            if time.monotonic() > end:
                raise TimeoutError(f"{expression} still false after {timeout} s")
            time.sleep(0.02)

    def choose_file(self, selector: str, path: Path) -> None:
        """Pick ``path`` in the file input ``selector``, as a user does in its dialog."""
        self.send("DOM.enable")
        node = self.send("Runtime.evaluate", expression=f"document.querySelector({json.dumps(selector)})")
        self.send("DOM.setFileInputFiles", files=[str(path.resolve())], objectId=node["result"]["objectId"])

    def download(self, expression: str, folder: Path) -> Path:
        """Run ``expression`` (a click that saves a file) and return the one file Chromium saved for
        it in ``folder``, once it is whole (no ``.crdownload`` left)."""
        folder.mkdir(parents=True, exist_ok=True)
        self.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(folder.resolve()))
        before = set(folder.iterdir())
        self.run(expression)
        end = time.monotonic() + TIMEOUT
        while True:
            fresh = [p for p in set(folder.iterdir()) - before if not p.name.endswith(".crdownload")]
            if fresh and not any(p.name.endswith(".crdownload") for p in folder.iterdir()):
                (found,) = fresh
                return found
            if time.monotonic() > end:
                raise TimeoutError(f"{expression} saved no file in {folder} within {TIMEOUT} s")
            time.sleep(0.02)

    def run(self, expression: str) -> Any:
        """The value of a JavaScript expression on the page (an exception in it is an error here)."""
        found = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def screenshot(self, target: Path) -> None:
        """The viewport as a PNG file."""
        target.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (OSError, TimeoutError, RuntimeError):
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._out.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: list[str]) -> None:
    """``python tests/browser.py REPORT.html SHOT.png [WIDTH HEIGHT]``: a screenshot of a report's
    top as a reader first sees it (docs/img/report.png is taken this way)."""
    report, shot = Path(argv[0]), Path(argv[1])
    width, height = (int(argv[2]), int(argv[3])) if len(argv) > 3 else (1100, 800)
    with Browser(width, height) as driver:
        driver.open(report)
        driver.screenshot(shot)
        if driver.errors:
            raise SystemExit(f"script errors: {driver.errors}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
