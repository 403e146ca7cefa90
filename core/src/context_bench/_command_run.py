"""One run of a ``--command`` program for one row: the prompt in, its output out, its tree ended.

The program runs under a reaper of its own (:mod:`context_bench._reaper`, a session and a child
subreaper per row), so whatever it starts is killed when the row ends, however the row ends.  This
side writes the prompt, reads standard output up to ``max_output_bytes`` (never more: a program
that prints without end costs that much memory, no more) and keeps the end of standard error.  The
row is over when the program has exited and its standard output is closed; past ``timeout`` from
the start; past the output bound; or ``grace`` seconds after the program exited while something it
started still holds its standard output (the answer it printed is kept).  Then the reaper kills
what is left of the tree, reaps it and says how many processes that was.
"""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import attrs

#: The default bound on one run's standard output (``--max-output-bytes``).
DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024
#: Seconds a program's output is waited for after it exited, while a process it started holds it.
OUTPUT_GRACE = 2.0
#: How much of standard error is kept: its end, where programs say why (a row error quotes less).
STDERR_KEPT = 8192

_REAPER = str(Path(__file__).with_name("_reaper.py"))
_CHUNK = 65536
#: The longest single wait, in seconds: a selector refuses a timeout past a few weeks, and a far
#: deadline is then waited for a day at a time.
_LONGEST_WAIT = 86400.0


@attrs.frozen
class Finished:
    """How one run of a program ended."""

    #: What it printed: all of it, unless it printed more than the bound (then ``overflowed``).
    stdout: bytes
    #: The end of its standard error.
    stderr: bytes
    #: Its exit status (negative: the signal that ended it); None if it was running at the end.
    status: int | None
    #: It ran past its timeout.
    timed_out: bool
    #: It printed more than ``max_output_bytes``.
    overflowed: bool
    #: It exited, but its standard output was still open ``grace`` seconds later.
    held_open: bool
    #: How many processes it started were still running when the row ended (then killed).
    killed: int


def run_program(
    program: str,
    argv: list[str],
    prompt: bytes,
    *,
    timeout: float,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    grace: float = OUTPUT_GRACE,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> Finished:
    """Run ``program`` (its resolved path) as ``argv`` with ``prompt`` on standard input, and end
    its whole tree before returning (or raising: an interrupted run leaves nothing behind either)."""
    ours, theirs = socket.socketpair()
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", _REAPER, str(theirs.fileno()), program, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(theirs.fileno(),),
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    run = _Run(process, ours, max_output_bytes)
    try:
        timed_out, held_open = run.watch(prompt, timeout, grace)
    finally:
        killed = run.end()
    return Finished(
        stdout=bytes(run.out),
        stderr=bytes(run.err),
        status=run.status,
        timed_out=timed_out,
        overflowed=run.overflowed,
        held_open=held_open,
        killed=killed,
    )


class _Run:
    """The pipes and the reaper's socket of one run, read in the calling thread."""

    def __init__(self, process: subprocess.Popen[bytes], control: socket.socket, limit: int) -> None:
        self.process, self.control, self.limit = process, control, limit
        self.selector = selectors.DefaultSelector()
        self.out, self.err, self.said = bytearray(), bytearray(), b""
        self.status: int | None = None
        self.exited_at = 0.0
        self.killed = 0
        self.overflowed = self.reaper_gone = False

    def watch(self, prompt: bytes, timeout: float, grace: float) -> tuple[bool, bool]:
        """Until the row is over: (timed out, standard output held open past the grace period)."""
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self.selector.register(self.process.stdout, selectors.EVENT_READ, self._read_out)
        self.selector.register(self.process.stderr, selectors.EVENT_READ, self._read_err)
        self.selector.register(self.control, selectors.EVENT_READ, self._read_control)
        self._feed(self.process.stdin, memoryview(prompt))
        deadline = time.monotonic() + timeout
        while not self.overflowed and not self.reaper_gone:
            if self.status is not None and self.process.stdout.closed:
                return False, False
            until = deadline if self.status is None else self.exited_at + grace
            left = until - time.monotonic()
            if left <= 0:
                return self.status is None, self.status is not None
            for key, _ in self.selector.select(min(left, _LONGEST_WAIT)):
                key.data(key.fileobj)
        return False, False

    def _feed(self, stdin: IO[bytes], prompt: memoryview) -> None:
        if not prompt:
            stdin.close()
            return
        os.set_blocking(stdin.fileno(), False)

        def write(_: Any) -> None:
            nonlocal prompt
            try:
                prompt = prompt[os.write(stdin.fileno(), prompt[:_CHUNK]) :]
            except BlockingIOError:
                return
            except BrokenPipeError:  # it stopped reading: what it answers is still its answer
                prompt = prompt[:0]
            if not prompt:
                self.selector.unregister(stdin)
                stdin.close()

        self.selector.register(stdin, selectors.EVENT_WRITE, write)

    def _read(self, pipe: IO[bytes]) -> bytes | None:
        """A chunk of ``pipe``; None when there is nothing to read now; empty at its end (then it is
        closed)."""
        try:
            chunk = os.read(pipe.fileno(), _CHUNK)
        except BlockingIOError:
            return None
        if not chunk:
            self.selector.unregister(pipe)
            pipe.close()
        return chunk

    def _read_out(self, pipe: IO[bytes]) -> bytes | None:
        chunk = self._read(pipe)
        if chunk and not self.overflowed:
            if len(self.out) + len(chunk) > self.limit:
                self.overflowed = True
            else:
                self.out += chunk
        return chunk

    def _read_err(self, pipe: IO[bytes]) -> bytes | None:
        chunk = self._read(pipe)
        if chunk:
            self.err += chunk
            del self.err[:-STDERR_KEPT]
        return chunk

    def _read_control(self, control: socket.socket) -> None:
        try:
            chunk = control.recv(4096)
        except OSError:
            chunk = b""
        if not chunk:
            self.selector.unregister(control)
            self.reaper_gone = True
        *lines, self.said = (self.said + chunk).split(b"\n")
        for line in lines:
            word, _, number = line.partition(b" ")
            if word == b"exit":
                self.status, self.exited_at = int(number), time.monotonic()
            elif word == b"killed":
                self.killed = int(number)

    def end(self) -> int:
        """Have the reaper end the tree and wait for it, then read what the pipes still hold; how
        many processes it killed besides the program."""
        try:
            self.control.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.control.setblocking(True)
        while not self.reaper_gone:  # its last lines, until it exits
            self._read_control(self.control)
        self.process.wait()
        for key in list(self.selector.get_map().values()):
            if key.data is self._read_out and self.overflowed:
                continue
            if key.events == selectors.EVENT_READ:
                os.set_blocking(key.fileobj.fileno(), False)  # type: ignore[union-attr]
                while key.data(key.fileobj):  # the tree is dead: what is left, then its end
                    pass
        self.selector.close()
        self.control.close()
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return self.killed
