"""One sample's life, inside a child freshly forked from the sandbox server.

The child confines itself (the kernel layers the server found working) and then waits for its
sample on a pipe: children are forked ahead, so one confines itself while others run.  It runs the
generated code, then the hardened tests; only then does it say :data:`TESTS_RAN`, and the server
answers with a verdict token drawn at that moment, which the child writes back.  A sample that
exits, crashes, raises or runs out of time never asks for the token, so it fails whatever its exit
status; code that reads the token pipe early finds nothing there.  These functions never return.
"""

from __future__ import annotations

import builtins
import ctypes
import dataclasses
import fcntl
import functools
import marshal
import math
import os
import platform
import resource
import struct
import sys
import tempfile
import time
import types
from collections.abc import Callable
from types import CodeType

from . import landlock, seccomp
from .integrity import HELPER, checker, existing_classes, unframe

RESULT_FD, TOKEN_FD, JOB_FD = 3, 4, 5
#: All a sample sees of an environment (the server sets it once, before forking any child).
ENVIRONMENT = {"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}
#: How the server frames a sample on the job pipe: timeout, memory cap (0: default), program size;
#: then the program's UTF-8 text and the marshalled, hardened tests.
JOB_HEADER = struct.Struct("<dqI")
#: What a child writes on its result pipe once its tests returned, to be sent its verdict token.
TESTS_RAN = b"TESTS-RAN\n"
#: What a child writes on its result pipe right before the untrusted program starts: from there on,
#: the program could write anything there itself.
PROGRAM_STARTED = b"RUNNING\n"
NOBODY = 65534
_PR_CAPBSET_DROP, _CAP_VERSION_3, _SYS_CAPSET = 24, 0x20080522, 126  # capset is 126 on x86-64
_libc = ctypes.CDLL(None, use_errno=True)
# Looked up here, in the server: a lookup in each child would build them (and fault pages) again.
_libc_prctl, _libc_syscall = _libc.prctl, _libc.syscall
_DETAIL_CHARS = 300


@dataclasses.dataclass(frozen=True)
class Confinement:
    """The layers a child applies, decided once by the server (stdlib only, like the whole server)."""

    landlock: landlock.Policy | None = None
    seccomp: bool = False
    drop_uid: bool = False
    drop_caps: bool = False  # root that cannot become nobody keeps uid 0 but loses every capability
    nproc: bool = False
    memory_mb: int = 1024
    file_mb: int = 16
    open_files: int = 64


def _place_fds(devnull: int, result_w: int, token_r: int, job_r: int) -> None:
    """Leave only stdin/stdout/stderr on /dev/null and the result, token and job pipes on 3, 4, 5."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in (devnull, result_w, token_r, job_r)]
    targets = (0, 1, 2, RESULT_FD, TOKEN_FD, JOB_FD)
    for target, fd in zip(targets, (high[0], high[0], high[0], high[1], high[2], high[3]), strict=True):
        os.dup2(fd, target, inheritable=False)
    os.closerange(JOB_FD + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _limit(kind: int, soft: int, hard: int | None = None) -> None:
    resource.setrlimit(kind, (soft, soft if hard is None else hard))


def _enter(conf: Confinement, workdir: str) -> int:
    """The layers that still need the server's descriptors; returns /dev/null opened for later."""
    devnull = os.open("/dev/null", os.O_RDWR)
    os.setsid()  # its own process group and session: the server kills the group at the deadline
    os.chdir(workdir)
    seccomp.no_new_privs()  # Landlock needs it without CAP_SYS_ADMIN; nothing later gains privileges
    if conf.landlock is not None:
        conf.landlock.apply(workdir)
    return devnull


def _lock_down(conf: Confinement, workdir: str) -> None:
    """The rest, once only fds 0-5 are left (limits that depend on the sample come with it).

    The environment needs nothing here: the server's own is already the minimal one (see
    :data:`ENVIRONMENT`), and ``tempfile`` is pointed at the sample's directory.
    """
    tempfile.tempdir = workdir
    _limit(resource.RLIMIT_FSIZE, conf.file_mb << 20)
    _limit(resource.RLIMIT_NOFILE, conf.open_files)
    _limit(resource.RLIMIT_CORE, 0)
    if conf.nproc:
        _limit(resource.RLIMIT_NPROC, 0)
    if conf.drop_uid:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    if conf.drop_caps:
        drop_capabilities(bounding=not conf.seccomp)  # the bounding set only matters to execve
    if conf.seccomp:
        seccomp.install(seccomp.build_filter(os.getpid()))
    else:
        _guard_sockets()


#: What :func:`run` needs that costs a child its own pages to make (a copy of the builtins touches
#: every built-in object; the checks are ~40 pages of closures, and their snapshot of the known
#: classes is a walk of every class): made by the server before it forks, taken by the one sample a
#: child runs.  (trusted code's builtins, the tests' builtins, checks, the trusted code's classes)
_Spares = tuple[dict[str, object], dict[str, object], tuple[Callable, Callable], dict[int, type]]
_spares: list[_Spares] = []


def _make() -> _Spares:
    trusted: dict[int, type] = {}  # the checks' only way in: reachable from no module
    return builtins.__dict__.copy(), builtins.__dict__.copy(), checker(known_classes(), trusted), trusted


def make_spares() -> None:
    """Called by the server before it forks (each child then gets them without making them)."""
    _spares[:] = [_make()]


def _take_spares() -> _Spares:
    """The server's spares, unreachable from this module afterwards; made here when there are none."""
    return _spares.pop() if _spares else _make()


@functools.lru_cache(maxsize=1)
def known_classes() -> dict[int, type]:
    """The classes that exist before any sample (:func:`integrity.existing_classes`).

    Walking them in a child touches every class and so copies its memory page: ~3 ms.  Called in
    the server before it forks, it is done once, and children share the result.  The checks read
    their own snapshot of it, made with the spares: a sample may add to this dict, to no effect.
    """
    return existing_classes()


@functools.lru_cache(maxsize=1)
def last_capability() -> int:
    """The kernel's highest capability number (read once, in the server, before any fork)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 40


def drop_capabilities(bounding: bool = True) -> None:
    """Empty the effective, permitted and inheritable capability sets (and the bounding set)."""
    if platform.machine() != "x86_64":
        raise OSError(f"no capset syscall number for {platform.machine()}")
    for cap in range(last_capability() + 1) if bounding else ():
        if _libc_prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap}) failed")
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable} words, all zero
    if _libc_syscall(_SYS_CAPSET, header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def _guard_sockets() -> None:
    """Python-level socket block, for when no kernel layer refuses sockets."""
    import _socket
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError("network access is disabled in the code sandbox")

    for module in (socket, _socket):
        for name in ("socket", "create_connection", "socketpair", "fromfd"):
            if hasattr(module, name):
                setattr(module, name, refuse)


def _describe(exc: BaseException, kind_of: type = type) -> bytes:
    try:
        text = f"{kind_of(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - a hostile __str__
        text = kind_of(exc).__name__
    return text[:_DETAIL_CHARS].encode("utf-8", "replace").replace(b"\n", b" ")


def _run_trusted(
    code: str, name: str, own: frozenset[str], trusted: dict[int, type], own_builtins: dict[str, object]
) -> dict[str, object]:
    """What trusted code defines, run alone in a module of its own (its names the candidate provides
    aside); nothing when it does not run alone, and the program then runs as it would without it.

    The classes its ``class`` statements make while it runs join ``trusted``.  Its functions reach
    ``own_builtins`` (a snapshot of the builtins, not the ones the candidate will see), and the
    candidate reaches them: so the original ``__build_class__`` goes back in once it ran, and
    classes its functions make later count as the candidate's.
    """
    if not code:
        return {}
    module = types.ModuleType(name)  # classes it defines name the candidate's module, where they will be
    module.__builtins__ = own_builtins
    build_class = own_builtins["__build_class__"]

    def build_known_class(*args: object, **kwargs: object) -> type:
        cls = build_class(*args, **kwargs)
        trusted[id(cls)] = cls
        return cls

    own_builtins["__build_class__"] = build_known_class
    sys.modules[name] = module
    try:
        exec(compile(code, "<cbench-trusted>", "exec"), module.__dict__)  # noqa: S102 - trusted
    except BaseException:  # noqa: BLE001
        return {}
    finally:
        own_builtins["__build_class__"] = build_class
    return {key: value for key, value in module.__dict__.items() if key not in own and key[:2] != "__"}


def run(text: str, tests: CodeType, spares: _Spares) -> None:
    """Run the trusted code, the program and its tests in the confined process; report through fd 3.

    ``spares`` are :func:`_take_spares`'s.  Everything used once the candidate's code has run is
    bound here first, as locals: the candidate may rebind builtins (``builtins.exec``) or this
    package's module attributes, not these.
    """
    write, read, exit_now, clock = os.write, os.read, os._exit, time.perf_counter
    run_code, is_class, helper = exec, isinstance, HELPER
    started = clock()
    try:
        trusted_code, own, program = unframe(text)
        # Builtins as they were before the candidate, and the checks.
        trusted_builtins, test_builtins, (honest, guard), trusted_classes = spares
        module = types.ModuleType("__cbench_candidate__")  # a real module: dataclasses, pickle look it up
        trusted = _run_trusted(trusted_code, module.__name__, own, trusted_classes, trusted_builtins)
        classes = {key: value for key, value in trusted.items() if is_class(value, type)}
        code = compile(program, "<candidate>", "exec")
        sys.modules[module.__name__] = module
        namespace = module.__dict__
        write(RESULT_FD, PROGRAM_STARTED)
        run_code(code, namespace)
        namespace.update(classes)  # the candidate's values and the tests' are of the trusted classes
        test_namespace = namespace.copy()  # rebinding the check in the candidate's globals changes nothing
        for name in (namespace.keys() & test_builtins.keys()) - own:
            if name[:2] != "__":
                del test_namespace[name]  # the candidate's own ``abs`` or ``set`` is not the tests'
        for name in own & test_namespace.keys():
            test_namespace[name] = guard(test_namespace[name])
        test_namespace.update(trusted)
        test_namespace["__builtins__"] = test_builtins
        test_namespace[helper] = honest
        run_code(tests, test_namespace)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt fail too
        write(RESULT_FD, b"FAIL " + _describe(exc) + b"\n")
        exit_now(1)
    elapsed = clock() - started
    write(RESULT_FD, TESTS_RAN)
    token = read(TOKEN_FD, 64)
    write(RESULT_FD, b"PASS " + token + b" %.6f\n" % elapsed)
    exit_now(0)


def _receive(conf: Confinement) -> tuple[str, CodeType]:
    """Wait for the sample, then set the limits that depend on it (lowering limits needs no privilege)."""
    chunks = []
    while chunk := os.read(JOB_FD, 1 << 20):
        chunks.append(chunk)
    os.close(JOB_FD)
    data = b"".join(chunks)
    timeout, memory_mb, size = JOB_HEADER.unpack_from(data)
    start = JOB_HEADER.size
    cpu = math.ceil(timeout) + 1
    _limit(resource.RLIMIT_CPU, cpu, cpu + 1)  # SIGXCPU, then SIGKILL for code that ignores it
    _limit(resource.RLIMIT_AS, (memory_mb or conf.memory_mb) << 20)
    return data[start : start + size].decode("utf-8", "surrogatepass"), marshal.loads(data[start + size :])


def sample(conf: Confinement, workdir: str, result_w: int, token_r: int, job_r: int) -> None:
    """Entry point of a forked child: confine, wait for the sample, run it, report."""
    try:
        devnull = _enter(conf, workdir)
    except BaseException as exc:  # noqa: BLE001
        os.write(result_w, b"ERROR sandbox setup: " + _describe(exc) + b"\n")
        os._exit(2)
    _place_fds(devnull, result_w, token_r, job_r)
    try:
        _lock_down(conf, workdir)
        spares = _take_spares()  # before the sample arrives: its clock has not started
        program, tests = _receive(conf)
    except BaseException as exc:  # noqa: BLE001
        os.write(RESULT_FD, b"ERROR sandbox setup: " + _describe(exc) + b"\n")
        os._exit(2)
    run(program, tests, spares)
