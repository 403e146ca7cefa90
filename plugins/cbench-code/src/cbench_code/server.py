"""The sandbox server: a warm interpreter that forks one fresh, confined child per sample.

It is started by :mod:`cbench_code.pool` as ``python -I -m cbench_code.server CONFIG`` with an
empty environment, so nothing of the user's process (keys, descriptors, memory) is there to
inherit.  At start it enters network and IPC namespaces of its own, finds which kernel layers work
here (each one tried in a throw-away child), pre-imports the modules generated code commonly uses,
and says hello with the layer report.  Then it reads one JSON request per line on stdin (the program's
source, and its tests compiled and hardened by the harness, marshalled), runs up to
``workers`` samples at once and answers one JSON line per sample on stdout.  Children are forked
(and confine themselves) ahead of need; each is killed with its whole process group at its
deadline, and its directory is removed afterwards.  The verdict is ``passed`` only when the child
wrote back the random token the server drew and sent once the child said its tests ran.  What the
child writes after :data:`child.PROGRAM_STARTED` is the sample's own, so it cannot claim a sandbox
error there; a sample that ran out of disk space while the samples' shared file system was full is
one (another sample filled it).
"""

from __future__ import annotations

import base64
import ctypes
import errno
import gc
import importlib
import json
import os
import re
import selectors
import signal
import struct
import sys
import sysconfig
import tempfile
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from . import child, landlock, seccomp

_PRELOAD = (
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
_SYSTEM_READ = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/share/zoneinfo")
_CLONE_NEWUSER, _CLONE_NEWNET, _CLONE_NEWNS, _CLONE_NEWIPC = 0x10000000, 0x40000000, 0x00020000, 0x08000000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
_SYS_MOUNT_SETATTR, _AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1
_TMPFS_MB = 512
_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER, _PR_SET_PDEATHSIG = 4, 36, 1
_BUFFER_TAIL = 8192
_CHUNK = 65536  # read per event from a pipe: a child flooding its pipe cannot make the server hoard
_FINAL_CHUNKS = 16  # read from a dead child's pipe: pipe-max-size (1 MiB by default) in chunks
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
#: How a sample's failure reads when its disk was full (the child reports ``Type: message``).
_NO_SPACE = re.compile(rf"\w+: \[Errno ({errno.ENOSPC}|{errno.EDQUOT})\] ")
ON = "on"

_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if sys.platform == "linux":
        _libc.prctl(
            ctypes.c_int(option),
            ctypes.c_ulong(value),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )


def _unshare(flags: int) -> str | None:
    if sys.platform != "linux":
        return "namespaces need Linux"
    if _libc.unshare(ctypes.c_int(flags)) == 0:
        return None
    return os.strerror(ctypes.get_errno())


def _enter_network_namespace() -> tuple[str, bool]:
    """(status, inside a new user namespace).  Root unshares directly; others via a user namespace.

    The IPC namespace comes with it: System V IPC objects would otherwise outlive the server on
    the host, a channel between samples and runs (seccomp refuses them too).
    """
    namespaces = _CLONE_NEWNET | _CLONE_NEWIPC
    error = _unshare(namespaces)
    if error is None:
        return ON, False
    uid, gid = os.getuid(), os.getgid()
    user_error = _unshare(_CLONE_NEWUSER | namespaces)
    if user_error is not None:
        return f"off: unshare(CLONE_NEWNET|CLONE_NEWIPC): {error}; with a user namespace: {user_error}", False
    try:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as exc:
        return f"off: mapping the user namespace: {exc}", True
    return "on (unprivileged user namespace)", True


def _mount_setattr(path: bytes, flags: int, set_: int, clear: int) -> int:
    attr = ctypes.create_string_buffer(struct.pack("<QQQQ", set_, clear, 0, 0), 32)
    args = (ctypes.c_int(_AT_FDCWD), path, ctypes.c_uint(flags), attr, ctypes.c_size_t(32))
    return _libc.syscall(_SYS_MOUNT_SETATTR, *args)


def _private_filesystem(scratch: str) -> tuple[str, str | None]:
    """(status, samples' root): a mount namespace where only that root is writable.

    A fresh tmpfs shadows the host's ``scratch`` (``/tmp``) for the server and its samples only,
    so nothing is ever created on the host; the root is a directory on it, bind-mounted onto
    itself so that it alone stays writable when everything else is made read-only.  Each step is
    checked before the next: a read-only remount outside a private namespace would hit the host's
    own mounts.  What samples may read that lives under ``scratch`` (a virtual environment in
    ``/tmp``, as CI makes them) is bind-mounted back through the tmpfs, or it would vanish.
    """
    error = _unshare(_CLONE_NEWNS)
    if error is not None:
        return f"off: unshare(CLONE_NEWNS): {error}", None
    if _libc.mount(None, b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None) != 0:
        return f"off: making / private: {os.strerror(ctypes.get_errno())}", None
    # Held open from inside the new namespace (a bind mount cannot take its source from another).
    under = os.path.realpath(scratch) + os.sep
    keep = [(path, os.open(path, os.O_PATH)) for path in _read_paths() if path.startswith(under)]
    try:
        return _shadow_scratch(scratch, keep)
    finally:
        for _, fd in keep:
            os.close(fd)


def _shadow_scratch(scratch: str, keep: list[tuple[str, int]]) -> tuple[str, str | None]:
    options = f"mode=0711,size={_TMPFS_MB}m".encode()
    flags = ctypes.c_ulong(_MS_NOSUID | _MS_NODEV)
    if _libc.mount(b"cbench-code", scratch.encode(), b"tmpfs", flags, options) != 0:
        return f"off: tmpfs at {scratch}: {os.strerror(ctypes.get_errno())}", None
    for path, fd in keep:
        os.makedirs(path, exist_ok=True)
        source = f"/proc/self/fd/{fd}".encode()
        if _libc.mount(source, path.encode(), None, ctypes.c_ulong(_MS_BIND | _MS_REC), None) != 0:
            return f"off: keeping {path} visible: {os.strerror(ctypes.get_errno())}", None
    root = tempfile.mkdtemp(prefix="cbench-code-", dir=scratch)
    if _libc.mount(root.encode(), root.encode(), None, ctypes.c_ulong(_MS_BIND), None) != 0:
        return f"off: bind mount: {os.strerror(ctypes.get_errno())}", root
    if _mount_setattr(b"/", _AT_RECURSIVE, _MOUNT_ATTR_RDONLY, 0) != 0:
        return f"off: mount_setattr (Linux 5.12+): {os.strerror(ctypes.get_errno())}", root
    if _mount_setattr(root.encode(), 0, 0, _MOUNT_ATTR_RDONLY) != 0:
        reason = os.strerror(ctypes.get_errno())
        _mount_setattr(b"/", _AT_RECURSIVE, 0, _MOUNT_ATTR_RDONLY)  # undo: this view must stay usable
        return f"off: making the samples' root writable: {reason}", root
    return "on (read-only view, private tmpfs)", root


def _read_paths() -> list[str]:
    """What a sample may read: the interpreter's own library trees and the system libraries."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    libraries = sysconfig.get_paths()
    found = {libraries[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    found.update(p for p in sys.path if p and any(p.startswith(pre + os.sep) for pre in prefixes))
    found = {os.path.realpath(p) for p in found | set(_SYSTEM_READ) if os.path.exists(p)}
    # A rule covers its whole tree: keep only the outermost paths (fewer rules, cheaper per sample).
    return sorted(p for p in found if not any(p.startswith(q + os.sep) for q in found))


def _become_nobody(stdlib: str) -> None:
    """Become nobody, then prove the interpreter's library is still readable."""
    os.setgroups([])
    os.setresgid(child.NOBODY, child.NOBODY, child.NOBODY)
    os.setresuid(child.NOBODY, child.NOBODY, child.NOBODY)
    try:
        os.listdir(stdlib)
    except OSError as exc:
        raise PermissionError(f"nobody cannot read the Python library at {stdlib} ({exc.strerror})") from None


def _try(fn: Callable[[], None]) -> str:
    """Run ``fn`` in a throw-away child: "on", or "off: why"."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            fn()
            os._exit(0)
        except BaseException as exc:  # noqa: BLE001
            os.write(write_end, f"{type(exc).__name__}: {exc}".encode()[:300])
            os._exit(1)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    reason = os.read(read_end, 400).decode("utf-8", "replace")
    os.close(read_end)
    return ON if status == 0 else f"off: {reason or f'status {status}'}"


class Server:
    def __init__(self, config: dict[str, Any]) -> None:
        self.workers = max(1, int(config.get("workers") or os.cpu_count() or 1))
        disabled = set(config.get("disable", ()))
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # escaped grandchildren come back here to be killed
        os.environ.clear()  # already minimal (the harness starts the server so); made exact here
        os.environ.update(child.ENVIRONMENT)
        self.layers: dict[str, str] = {"process": ON}
        self.layers["netns"], in_userns = (
            ("off: disabled", False) if "netns" in disabled else _enter_network_namespace()
        )
        status, root = (
            ("off: disabled", None) if "mountns" in disabled else _private_filesystem(tempfile.gettempdir())
        )
        self.layers["mountns"] = status
        self.root = root or tempfile.mkdtemp(prefix="cbench-code-")
        os.chmod(self.root, 0o711)
        _prctl(_PR_SET_DUMPABLE, 0)  # after the uid maps are written: children may not ptrace it
        for name in _PRELOAD:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        conf = self._decide(disabled, in_userns)
        self.conf = conf
        self.forks_blocked = conf.seccomp or conf.nproc
        self.pending: deque[dict[str, Any]] = deque()
        self.running: dict[int, _Job] = {}
        self.ready: deque[_Job] = deque()  # children already confined, waiting for their sample
        self.selector = selectors.DefaultSelector()
        self.seq = 0

    def _decide(self, disabled: set[str], in_userns: bool) -> child.Confinement:
        layers = self.layers
        abi = landlock.abi_version()
        policy = None
        if "landlock" in disabled:
            layers["landlock"] = "off: disabled"
        elif not abi:
            layers["landlock"] = "off: the kernel has no Landlock (Linux 5.13+ with lsm=landlock)"
        else:
            policy = landlock.Policy(abi, _read_paths())
            probe_dir = tempfile.mkdtemp(dir=self.root)
            status = _try(lambda: (seccomp.no_new_privs(), policy.apply(probe_dir)))
            os.rmdir(probe_dir)
            layers["landlock"] = f"on (ABI {abi})" if status == ON else status
        use_landlock = layers["landlock"].startswith(ON)
        reason = seccomp.unavailable_reason()
        if "seccomp" in disabled:
            layers["seccomp"] = "off: disabled"
        elif reason:
            layers["seccomp"] = f"off: {reason}"
        else:
            layers["seccomp"] = _try(lambda: seccomp.install(seccomp.build_filter(os.getpid())))
        root = os.geteuid() == 0 and not in_userns
        drop_uid = drop_caps = False
        if not root:
            layers["unprivileged"] = "on (runs as the invoking user)"
        elif "unprivileged" in disabled:
            layers["unprivileged"] = "off: disabled"
        else:
            stdlib = sysconfig.get_paths()["stdlib"]
            drop = _try(lambda: _become_nobody(stdlib))
            drop_uid = drop == ON
            if drop_uid:
                layers["unprivileged"] = "on (uid nobody)"
            else:
                drop_caps = _try(child.drop_capabilities) == ON
                instead = "; root without capabilities instead" if drop_caps else ""
                layers["unprivileged"] = drop + instead
        nproc = not root or drop_uid
        layers["rlimits"] = "on (address space, cpu, file size, open files, core" + (
            ", processes)" if nproc else ")"
        )
        return child.Confinement(
            landlock=policy if use_landlock else None,
            seccomp=layers["seccomp"] == ON,
            drop_uid=drop_uid,
            drop_caps=drop_caps,
            nproc=nproc,
        )

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
                    if job.done:  # finished by an earlier event of this same batch
                        continue
                    if what == "out":
                        if not job.drain():
                            self.selector.unregister(job.result_r)
                            job.open = False
                        elif job.token_w is not None and job.id is not None and child.TESTS_RAN in job.buffer:
                            job.send_token()
                    else:
                        self._finish(job)
            now = time.monotonic()
            for job in list(self.running.values()):
                if job.pidfd is None and _exited(job.pid):
                    self._finish(job)
                elif now >= job.deadline:
                    job.timed_out = True
                    self._finish(job)

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
        workdir = os.path.join(self.root, str(self.seq))
        os.mkdir(workdir, 0o700)
        if self.conf.drop_uid:
            os.chown(workdir, child.NOBODY, child.NOBODY)
        result_r, result_w = os.pipe()
        token_r, token_w = os.pipe()
        job_r, job_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
                child.sample(self.conf, workdir, result_w, token_r, job_r)
            finally:
                os._exit(70)
        for fd in (result_w, token_r, job_r):
            os.close(fd)
        os.set_blocking(result_r, False)
        job = _Job(pid, result_r, token_w, job_w, workdir)
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
        job.id, job.deadline, job.started = request["id"], time.monotonic() + timeout, time.monotonic()
        self.running[job.pid] = job
        try:
            _write_all(job.job_w, header + program + base64.b64decode(request["tests"]))
        except OSError:
            pass  # the child is already gone: it fails with whatever it reported
        finally:
            os.close(job.job_w)

    def _finish(self, job: _Job) -> None:
        if job.done:
            return
        job.done = True
        if job.id is None:  # a waiting child died before it had a sample: just clean it up
            self.ready.remove(job)
            os.close(job.job_w)
        else:
            del self.running[job.pid]
        if job.token_w is not None:
            os.close(job.token_w)
        _kill_group(job.pid)
        try:
            os.waitpid(job.pid, 0)
        except ChildProcessError:
            pass
        if job.open:
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
            _remove_tree(job.workdir)
        except Exception:  # noqa: BLE001 - leftovers go with the server's tmpfs; serving goes on
            pass
        if job.id is not None:
            _send(job.verdict())

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
            _remove_tree(self.root)
        except Exception:  # noqa: BLE001 - the tmpfs goes with the server anyway
            pass


class _Job:
    """One child: waiting for a sample (``id`` is None), then running it."""

    __slots__ = (
        "id",
        "pid",
        "result_r",
        "token_w",
        "job_w",
        "token",
        "workdir",
        "deadline",
        "buffer",
        "timed_out",
        "pidfd",
        "started",
        "open",
        "done",
        "program_started",
        "disk_full",
    )

    def __init__(self, pid: int, result_r: int, token_w: int | None, job_w: int, workdir: str) -> None:
        self.id: Any = None
        self.pid, self.result_r, self.token_w, self.job_w, self.workdir = (
            pid,
            result_r,
            token_w,
            job_w,
            workdir,
        )
        self.token = b""  # drawn when the child says its tests ran
        self.deadline = self.started = 0.0
        self.buffer = b""
        self.timed_out = False
        self.pidfd: int | None = None
        self.open = True  # the result pipe is still registered
        self.done = False
        self.program_started = False  # from then on, what the child writes is the sample's own
        self.disk_full = False  # the samples' file system was found full while this one ran

    def send_token(self) -> None:
        """Draw the verdict token now, after the tests ran: before, the child had nothing to read."""
        self.token = os.urandom(16).hex().encode()
        try:
            os.write(self.token_w, self.token)
        except OSError:
            pass  # the child is gone: no token comes back, so the sample fails
        os.close(self.token_w)
        self.token_w = None

    def drain(self, chunks: int = 1) -> bool:
        """Keep the tail of up to ``chunks`` reads of what the child wrote; False once the pipe is closed."""
        for _ in range(chunks):
            chunk = _read_some(self.result_r)
            if not chunk:
                return chunk is not None
            data = self.buffer + chunk  # the marker may straddle two reads, or sit before a long tail
            self.program_started = self.program_started or child.PROGRAM_STARTED in data
            self.buffer = data[-_BUFFER_TAIL:]
        return True

    def verdict(self) -> dict[str, Any]:
        wall = round(time.monotonic() - self.started, 6)
        marker = b"PASS " + self.token + b" "
        at = self.buffer.rfind(marker) if self.token else -1
        if at >= 0 and not self.timed_out:
            elapsed = self.buffer[at + len(marker) :].split(b"\n", 1)[0]
            return {"id": self.id, "status": "passed", "detail": "", "elapsed": float(elapsed), "wall": wall}
        if self.timed_out:
            return {"id": self.id, "status": "timeout", "detail": "timed out", "elapsed": None, "wall": wall}
        last = self.buffer.rstrip(b"\n").rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
        if last.startswith("ERROR ") and not self.program_started:
            return {"id": self.id, "status": "error", "detail": last[6:], "elapsed": None, "wall": wall}
        detail = last[5:] if last.startswith("FAIL ") else "exited without a verdict"
        if self.disk_full and _NO_SPACE.match(detail):  # another sample may have filled it: not a verdict
            detail = f"the samples' file system is full: {detail}"
            return {"id": self.id, "status": "error", "detail": detail, "elapsed": None, "wall": wall}
        return {"id": self.id, "status": "failed", "detail": detail, "elapsed": None, "wall": wall}


def _read_some(fd: int) -> bytes | None:
    """One bounded read: what is there (maybe nothing), or None at end of file."""
    try:
        return os.read(fd, _CHUNK) or None
    except BlockingIOError:
        return b""


def _remove_tree(path: str) -> None:
    """Remove a directory tree, without recursion and without long paths.

    A sample can nest directories thousands deep (``shutil.rmtree`` recurses once per level): this
    walks down by descriptor, reading each directory once, and climbs back through ``..``.  The
    sample's processes are dead by now, so nothing moves the tree meanwhile.
    """
    try:
        os.rmdir(path)  # the common case: the sample left nothing behind
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    fd = _open_dir(path)
    names: list[str] = []  # the way down
    try:
        todo = [_clear_files(fd)]  # per level on the way down: its subdirectories still to remove
        while todo:
            if todo[-1]:
                name = todo[-1].pop()
                below = _open_dir(name, fd)
                os.close(fd)
                fd = below
                names.append(name)
                todo.append(_clear_files(fd))
                continue
            todo.pop()  # this level is empty now: climb and remove it
            if names:
                above = os.open("..", _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = above
                os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(path)


def _open_dir(name: str, dir_fd: int | None = None) -> int:
    """Open a directory, never through a symbolic link, and make it the server's to empty.

    A sample may have locked its directories (mode 0): only a server that is not root minds.
    """
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:  # a symbolic link would have failed with ELOOP: this is a directory
        os.chmod(name, 0o700, dir_fd=dir_fd)
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    os.fchmod(fd, 0o700)
    return fd


def _clear_files(fd: int) -> list[str]:
    """Unlink all but the subdirectories of the directory ``fd``; return the subdirectories."""
    subdirectories = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirectories.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    return subdirectories


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
