"""The sandbox server: a warm interpreter that forks one fresh, confined child per sample.

It is started by :mod:`cbench_code.pool` as ``python -I -m cbench_code.server CONFIG`` with an
empty environment, so nothing of the user's process (keys, descriptors, memory) is there to
inherit.  At start it enters network and IPC namespaces of its own and a private file system
(:mod:`cbench_code.namespaces`), finds which other kernel layers work here, each one tried in a
throw-away child (:mod:`cbench_code.layers`), pre-imports the modules generated code commonly uses,
and says hello with the layer report.  Then it reads one JSON request per line on stdin (the
program's source, and its tests compiled and hardened by the harness, marshalled), runs up to
``workers`` samples at once and answers one JSON line per sample on stdout
(:class:`cbench_code.verdict.SampleResult`).  Children are forked (and confine themselves) ahead of
need; each is killed with its whole process group at its deadline, and its directory is removed
afterwards (:mod:`cbench_code.workdir`).  The verdict is ``passed`` only when the child wrote back
the random token the server drew and sent once the child said its tests ran.  What the child writes
after :data:`child.PROGRAM_STARTED` is the sample's own, so it cannot claim a sandbox error there; a
sample that ran out of disk space while the samples' shared file system was full is one (another
sample filled it).  Stdlib only, and no ``threading``: children inherit all of it.
"""

from __future__ import annotations

import base64
import enum
import gc
import importlib
import json
import os
import selectors
import signal
import sys
import tempfile
import time
from collections import deque
from typing import Any

from . import child, layers, seccomp, workdir
from .namespaces import PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, PR_SET_PDEATHSIG, prctl
from .verdict import judge

#: What the server imports before it forks: what generated code commonly uses, so that no child
#: pays for importing it (and its classes are the standard library's, not the sample's).
PRELOAD = (
    "array",
    "bisect",
    "calendar",
    "cmath",
    "collections",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "json",
    "math",
    "numbers",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "struct",
    "textwrap",
    "typing",
    "unicodedata",
    "socket",
)
_BUFFER_TAIL = 8192
_CHUNK = 65536  # read per event from a pipe: a child flooding its pipe cannot make the server hoard
_FINAL_CHUNKS = 16  # read from a dead child's pipe: pipe-max-size (1 MiB by default) in chunks


class Server:
    def __init__(self, config: dict[str, Any]) -> None:
        self.workers = max(1, int(config.get("workers") or os.cpu_count() or 1))
        disabled = set(config.get("disable", ()))
        prctl(PR_SET_CHILD_SUBREAPER, 1)  # escaped grandchildren come back here to be killed
        os.environ.clear()  # already minimal (the harness starts the server so); made exact here
        os.environ.update(child.ENVIRONMENT)
        self.layers, in_userns, root = layers.isolate(disabled)
        self.root = root or tempfile.mkdtemp(prefix="cbench-code-")
        os.chmod(self.root, 0o711)
        prctl(PR_SET_DUMPABLE, 0)  # after the uid maps are written: children may not ptrace it
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        self.conf = layers.choose(self.layers, disabled, in_userns, self.root)
        self.forks_blocked = self.conf.seccomp or self.conf.nproc
        self.pending: deque[dict[str, Any]] = deque()
        self.running: dict[int, _Job] = {}
        self.ready: deque[_Job] = deque()  # children already confined, waiting for their sample
        self.selector = selectors.DefaultSelector()
        self.seq = 0

    # -- the loop ----------------------------------------------------------------------------

    def serve(self) -> None:
        seccomp.build_filter(0)  # warm the caches children would otherwise each fill
        child.last_capability()
        child.known_classes()  # every class the server holds: a walk each child would pay ~3 ms for
        child.make_spares()  # and the builtin snapshots, each a copy that would fault ~70 pages
        gc.freeze()  # children's collections then leave the server's objects (and their pages) alone
        _send({"hello": {"pid": os.getpid(), "workers": self.workers, "layers": self.layers}})
        stdin = sys.stdin.fileno()
        os.set_blocking(stdin, False)
        self.selector.register(stdin, selectors.EVENT_READ, None)
        inbox = b""
        while True:
            while self.pending and len(self.running) < self.workers:
                self._start(self.pending.popleft())
            while len(self.ready) < self.workers:  # the next samples' children confine meanwhile
                self.ready.append(self._spawn())
            for key, _ in self.selector.select(self._wait()):
                if key.data is None:
                    chunk = _read_some(stdin)
                    if chunk is None:
                        return
                    inbox += chunk
                    *lines, inbox = inbox.split(b"\n")
                    self.pending.extend(json.loads(line) for line in lines if line.strip())
                else:
                    job, what = key.data
                    if job.stage is Stage.DONE:  # finished by an earlier event of this same batch
                        continue
                    if what == "out":
                        if not job.drain():
                            self.selector.unregister(job.result_r)
                            os.close(job.result_r)
                            job.result_r = None
                        elif job.stage is Stage.RUNNING and child.TESTS_RAN in job.output:
                            job.send_token()
                    else:
                        self._finish(job)
            now = time.monotonic()
            for job in list(self.running.values()):
                if job.pidfd is None and _exited(job.pid):
                    self._finish(job)
                elif now >= job.deadline:
                    self._finish(job, timed_out=True)

    def _wait(self) -> float | None:
        if not self.running:
            return None
        wait = min(job.deadline for job in self.running.values()) - time.monotonic()
        if any(job.pidfd is None for job in self.running.values()):
            wait = min(wait, 0.005)
        return max(wait, 0.0)

    def _spawn(self) -> _Job:
        """Fork a child that confines itself, then waits for a sample on its job pipe."""
        self.seq += 1
        path = workdir.make(self.root, str(self.seq), child.NOBODY if self.conf.drop_uid else None)
        result_r, result_w = os.pipe()
        token_r, token_w = os.pipe()
        job_r, job_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                child.sample(self.conf, path, result_w, token_r, job_r)
            finally:
                os._exit(70)
        for fd in (result_w, token_r, job_r):
            os.close(fd)
        os.set_blocking(result_r, False)
        job = _Job(pid, result_r, token_w, job_w, path)
        self.selector.register(result_r, selectors.EVENT_READ, (job, "out"))
        try:
            job.pidfd = os.pidfd_open(pid)
            self.selector.register(job.pidfd, selectors.EVENT_READ, (job, "exit"))
        except (AttributeError, OSError):
            job.pidfd = None  # no pidfd: the loop polls instead
        return job

    def _start(self, request: dict[str, Any]) -> None:
        """Hand a sample to a waiting child; its deadline starts now."""
        job = self.ready.popleft() if self.ready else self._spawn()
        timeout = float(request["timeout"])
        program = request["program"].encode("utf-8", "surrogatepass")
        header = child.JOB_HEADER.pack(timeout, int(request.get("memory_mb") or 0), len(program))
        job.stage, job.id = Stage.RUNNING, request["id"]
        job.deadline, job.started = time.monotonic() + timeout, time.monotonic()
        self.running[job.pid] = job
        try:
            _write_all(job.job_w, header + program + base64.b64decode(request["tests"]))
        except OSError:
            pass  # the child is already gone: it fails with whatever it reported
        finally:
            os.close(job.job_w)

    def _finish(self, job: _Job, timed_out: bool = False) -> None:
        """Kill and reap a child and its group, remove its directory, and send its verdict."""
        stage, job.stage = job.stage, Stage.DONE
        if stage is Stage.DONE:
            return
        if stage is Stage.SPARE:  # a waiting child died before it had a sample: just clean it up
            self.ready.remove(job)
            os.close(job.job_w)
        else:
            del self.running[job.pid]
        if stage is not Stage.VOUCHED:
            os.close(job.token_w)
        _kill_group(job.pid)
        try:
            os.waitpid(job.pid, 0)
        except ChildProcessError:
            pass
        if job.result_r is not None:
            job.drain(_FINAL_CHUNKS)
            self.selector.unregister(job.result_r)
            os.close(job.result_r)
        if job.pidfd is not None:
            self.selector.unregister(job.pidfd)
            os.close(job.pidfd)
        if not self.forks_blocked:
            self._kill_strays()
        if self._short_of_space():  # seen before this sample's files go: it may be the one that filled it
            for other in (job, *self.running.values()):
                other.disk_full = True
        try:
            workdir.remove(job.workdir)
        except Exception:  # noqa: BLE001 - leftovers go with the server's tmpfs; serving goes on
            pass
        if stage is not Stage.SPARE:
            wall = round(time.monotonic() - job.started, 6)
            result = judge(job.output, job.token, timed_out, job.program_started, job.disk_full)
            _send(result.to_wire(job.id, wall))

    def _short_of_space(self) -> bool:
        """Whether the samples' file system has less room than one sample's largest file."""
        try:
            fs = os.statvfs(self.root)
        except OSError:
            return False
        return fs.f_bavail * fs.f_frsize < self.conf.file_mb << 20

    def _kill_strays(self) -> None:
        """Kill and reap whatever escaped a finished sample's process group."""
        mine = set(self.running) | {job.pid for job in self.ready}
        try:
            with open(f"/proc/self/task/{os.getpid()}/children") as f:
                stray = [int(p) for p in f.read().split() if int(p) not in mine]
        except OSError:
            stray = []
        for pid in stray:
            _kill_group(pid)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break

    def shutdown(self) -> None:
        for job in [*self.running.values(), *self.ready]:
            _kill_group(job.pid)
        try:
            workdir.remove(self.root)
        except Exception:  # noqa: BLE001 - the tmpfs goes with the server anyway
            pass


class Stage(enum.Enum):
    """Where a child is in its life.  Its descriptors follow: the job pipe's write end is open only
    while it is ``SPARE``, the token pipe's until it is ``VOUCHED`` (or ``DONE``)."""

    SPARE = "forked ahead: confining itself, then waiting for its sample"
    RUNNING = "running its sample; it has not said its tests ran"
    VOUCHED = "said its tests ran, and was sent its verdict token"
    DONE = "killed, reaped and its directory removed; its verdict sent"


class _Job:
    """One child, and what it wrote on its result pipe (the tail, and whether the program started)."""

    __slots__ = (
        "stage",
        "id",
        "pid",
        "pidfd",
        "result_r",
        "token_w",
        "job_w",
        "workdir",
        "started",
        "deadline",
        "token",
        "output",
        "program_started",
        "disk_full",
    )

    def __init__(self, pid: int, result_r: int, token_w: int, job_w: int, workdir: str) -> None:
        self.stage = Stage.SPARE
        self.id: Any = None  # the sample's, from RUNNING on
        self.pid, self.workdir = pid, workdir
        self.pidfd: int | None = None  # None: the kernel has no pidfd, the loop polls
        self.result_r: int | None = result_r  # None once read to its end
        self.token_w, self.job_w = token_w, job_w
        self.started = self.deadline = 0.0
        self.token = b""  # drawn when the child says its tests ran
        self.output = b""
        self.program_started = False  # from then on, what the child writes is the sample's own
        self.disk_full = False  # the samples' file system was found full while this one ran

    def send_token(self) -> None:
        """Draw the verdict token now, after the tests ran: before, the child had nothing to read."""
        self.stage = Stage.VOUCHED
        self.token = os.urandom(16).hex().encode()
        try:
            os.write(self.token_w, self.token)
        except OSError:
            pass  # the child is gone: no token comes back, so the sample fails
        os.close(self.token_w)

    def drain(self, chunks: int = 1) -> bool:
        """Keep the tail of up to ``chunks`` reads of what the child wrote; False once the pipe is closed."""
        for _ in range(chunks):
            chunk = _read_some(self.result_r)
            if not chunk:
                return chunk is not None
            data = self.output + chunk  # the marker may straddle two reads, or sit before a long tail
            self.program_started = self.program_started or child.PROGRAM_STARTED in data
            self.output = data[-_BUFFER_TAIL:]
        return True


def _read_some(fd: int) -> bytes | None:
    """One bounded read: what is there (maybe nothing), or None at end of file."""
    try:
        return os.read(fd, _CHUNK) or None
    except BlockingIOError:
        return b""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _exited(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _send(message: dict[str, Any]) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(1, data) :]


def main(argv: list[str]) -> int:
    config = json.loads(argv[1]) if len(argv) > 1 else {}
    server = Server(config)
    try:
        server.serve()
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
