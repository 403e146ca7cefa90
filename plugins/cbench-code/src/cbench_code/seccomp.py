"""A seccomp-BPF filter: the kernel refuses a sample the system calls it has no business making.

It blocks creating sockets (the network fallback when no network namespace is available), new
programs (``execve``) and new processes (``fork``/``vfork``/``clone`` without ``CLONE_THREAD``),
acting on any process but itself (signals, resource limits, scheduling, memory placement: other
processes of the same uid include the server, the harness and concurrent samples), tracing and
reading other processes, System V IPC (it would outlive the sample), and the administrative calls
(mounts, namespaces, modules, keyrings, BPF, io_uring).  Refused calls fail with ``EPERM``;
a call through another ABI (x32, i386) is refused outright.  Only x86-64 has a syscall table here;
elsewhere the layer reports itself unavailable.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import platform
import struct

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000
_CLONE_THREAD = 0x00010000

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

_OFF_NR, _OFF_ARCH = 0, 4


def _arg_low(i: int) -> int:
    return 16 + 8 * i  # low 32 bits of args[i] on a little-endian machine


#: x86-64 numbers of the refused calls (arch/x86/entry/syscalls/syscall_64.tbl).
_X86_64 = {
    "socket": 41,
    "fork": 57,
    "vfork": 58,
    "execve": 59,
    "execveat": 322,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "pidfd_open": 434,
    "pidfd_send_signal": 424,
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "kcmp": 312,
    "unshare": 272,
    "setns": 308,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "reboot": 169,
    "swapon": 167,
    "swapoff": 168,
    "acct": 163,
    "settimeofday": 164,
    "clock_settime": 227,
    "adjtimex": 159,
    "quotactl": 179,
    "ioperm": 173,
    "iopl": 172,
    "syslog": 103,
    "personality": 135,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "setpgid": 109,
    "setsid": 112,
    "mknod": 133,
    "mknodat": 259,
    "shmget": 29,
    "shmat": 30,
    "shmctl": 31,
    "shmdt": 67,
    "semget": 64,
    "semop": 65,
    "semctl": 66,
    "semtimedop": 220,
    "msgget": 68,
    "msgsnd": 69,
    "msgrcv": 70,
    "msgctl": 71,
    # Memory no RLIMIT_AS counts (a sample held 1.8 GB with a 1 GB cap), and locks a host process
    # waiting on a library file would block behind until the deadline.
    "memfd_create": 319,
    "memfd_secret": 447,
    "flock": 73,
    "quotactl_fd": 443,
    "open_tree_attr": 467,
}
_CLONE, _CLONE3 = 56, 435

# Calls refused for some values of one argument: (number, argument, refused values).  Asking the
# kernel to signal a process on I/O (F_SETOWN and kin) reaches any process of the same uid, so
# the sandbox's signal rules would not hold; a lease blocks other processes opening the file.
_F_SETOWN, _F_SETSIG, _F_SETOWN_EX, _F_SETLEASE = 8, 10, 15, 1024
_FIOSETOWN, _SIOCSPGRP = 0x8901, 0x8902
_ARG_RULES = (
    (72, 1, (_F_SETOWN, _F_SETSIG, _F_SETOWN_EX, _F_SETLEASE)),  # fcntl(fd, cmd, ...)
    (16, 1, (_FIOSETOWN, _SIOCSPGRP)),  # ioctl(fd, request, ...)
)

# Calls that name a process, allowed only on the caller itself.  Each group of calls has the checks
# that must all hold: (argument, the values it may have), where _OWN stands for the caller's pid
# and _OWN_GROUP for its negation (its process group: each sample leads its own); pid 0 means the
# caller too.  Every such argument is a C int, so its low 32 bits are all the kernel reads.
_OWN, _OWN_GROUP = "own pid", "own process group"
_SELF = (0, _OWN)
_PRIO_PROCESS, _PRIO_PGRP, _IOPRIO_WHO_PROCESS, _IOPRIO_WHO_PGRP = 0, 1, 1, 2
_PID_CALLS = {
    "kill": 62,
    "tkill": 200,
    "tgkill": 234,
    "rt_sigqueueinfo": 129,
    "rt_tgsigqueueinfo": 297,
    "prlimit64": 302,
    "sched_setparam": 142,
    "sched_setscheduler": 144,
    "sched_setaffinity": 203,
    "sched_setattr": 314,
    "migrate_pages": 256,
    "move_pages": 279,
    "get_robust_list": 274,
    "setpriority": 141,
    "ioprio_set": 251,
}
_PID_RULES: dict[tuple[str, ...], tuple[tuple[int, tuple[object, ...]], ...]] = {
    ("kill", "tkill"): ((0, (*_SELF, _OWN_GROUP)),),
    (
        "tgkill",
        "rt_sigqueueinfo",
        "rt_tgsigqueueinfo",
        "prlimit64",
        "sched_setparam",
        "sched_setscheduler",
        "sched_setaffinity",
        "sched_setattr",
        "migrate_pages",
        "move_pages",
        "get_robust_list",
    ): ((0, _SELF),),
    # (which, who): a process or a process group, never a user (who = 0: every process of its uid).
    ("setpriority",): ((0, (_PRIO_PROCESS, _PRIO_PGRP)), (1, _SELF)),
    ("ioprio_set",): ((0, (_IOPRIO_WHO_PROCESS, _IOPRIO_WHO_PGRP)), (1, _SELF)),
}


def unavailable_reason() -> str | None:
    """Why this layer cannot run here, or None when it can."""
    if platform.system() != "Linux":
        return "seccomp needs Linux"
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"no syscall table for {platform.machine()}"
    try:
        with open("/proc/self/status") as status:
            if "Seccomp:" not in status.read():
                return "kernel built without seccomp"
    except OSError as exc:
        return f"cannot read /proc/self/status: {exc}"
    return None


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k & 0xFFFFFFFF)


_DENY = _RET_ERRNO | errno.EPERM


@functools.lru_cache(maxsize=1)
def _fixed_part() -> bytes:
    """Everything but the rules that name the caller's pid (built once, in the server)."""
    deny = _DENY
    prog = [
        _insn(_LD_W_ABS, _OFF_ARCH),
        _insn(_JEQ_K, _AUDIT_ARCH_X86_64, jt=1),
        _insn(_RET_K, _RET_KILL_PROCESS),
        _insn(_LD_W_ABS, _OFF_NR),
        _insn(_JGE_K, _X32_SYSCALL_BIT, jf=1),
        _insn(_RET_K, deny),
    ]
    for nr in sorted(set(_X86_64.values())):
        prog += [_insn(_JEQ_K, nr, jf=1), _insn(_RET_K, deny)]
    for nr, arg, refused in _ARG_RULES:  # each block ends in a return: nr stays loaded past it
        prog += [_insn(_JEQ_K, nr, jf=len(refused) + 3), _insn(_LD_W_ABS, _arg_low(arg))]
        prog += [_insn(_JEQ_K, value, jt=len(refused) - i) for i, value in enumerate(refused)]
        prog += [_insn(_RET_K, _RET_ALLOW), _insn(_RET_K, deny)]
    # clone3 hides its flags behind a pointer: ENOSYS makes the C library fall back to clone.
    prog += [_insn(_JEQ_K, _CLONE3, jf=1), _insn(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    # clone: only threads.  The nr stays loaded until a branch below reloads the accumulator.
    prog += [
        _insn(_JEQ_K, _CLONE, jf=4),
        _insn(_LD_W_ABS, _arg_low(0)),
        _insn(_JSET_K, _CLONE_THREAD, jt=0, jf=1),
        _insn(_RET_K, _RET_ALLOW),
        _insn(_RET_K, deny),
    ]
    return b"".join(prog)


@functools.lru_cache(maxsize=1)
def _pid_checks() -> tuple[bytes | tuple[int, str, int], ...]:
    """The rules of :data:`_PID_RULES` as instructions: a dispatch on the call number (still in the
    accumulator), then one block per group.  Packed here, but for the comparisons with the caller's
    pid, left as (code, symbol, jt) for :func:`build_filter`, which runs in every child."""
    dispatch_size = sum(len(names) for names in _PID_RULES) + 1
    dispatch: list[tuple[int, object, int]] = []
    blocks: list[tuple[int, object, int]] = []
    for names, checks in _PID_RULES.items():
        for name in names:
            dispatch.append((_JEQ_K, _PID_CALLS[name], dispatch_size + len(blocks) - len(dispatch) - 1))
        for offset, allowed in checks:
            blocks.append((_LD_W_ABS, _arg_low(offset), 0))
            # A match jumps past the remaining values and the refusal, to the next check.
            blocks += [(_JEQ_K, value, len(allowed) - i) for i, value in enumerate(allowed)]
            blocks.append((_RET_K, _DENY, 0))
        blocks.append((_RET_K, _RET_ALLOW, 0))
    dispatch.append((_RET_K, _RET_ALLOW, 0))  # any other call
    return tuple(
        _insn(code, k, jt) if isinstance(k, int) else (code, k, jt) for code, k, jt in dispatch + blocks
    )


def build_filter(own_pid: int) -> bytes:
    """The BPF program for a process whose pid is ``own_pid`` (it may still act on itself)."""
    own = {_OWN: own_pid, _OWN_GROUP: -own_pid}
    checks = (i if isinstance(i, bytes) else _insn(i[0], own[i[1]], i[2]) for i in _pid_checks())
    return _fixed_part() + b"".join(checks)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True)
_prctl = getattr(_libc, "prctl", None)  # Linux only
if _prctl is not None:
    _prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]


def no_new_privs() -> None:
    """Forbid gaining privileges (set-uid programs, file capabilities); a no-op off Linux."""
    if _prctl is None:
        return
    if _prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


def install(program: bytes) -> None:
    """Load ``program`` for the calling process and all it may ever start (irreversible)."""
    no_new_privs()
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
