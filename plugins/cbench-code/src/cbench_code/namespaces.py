"""The sandbox server's own isolation: namespaces and mounts, through the system calls Python lacks.

Stdlib only, like the whole server.  Each step returns why it could not be taken rather than
raising: a layer that is missing here is reported (by :mod:`cbench_code.layers`), not fatal.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
import tempfile
from collections.abc import Iterable

PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG = 4, 36, 1
_CLONE_NEWUSER, _CLONE_NEWNET, _CLONE_NEWNS, _CLONE_NEWIPC = 0x10000000, 0x40000000, 0x00020000, 0x08000000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
_SYS_MOUNT_SETATTR, _AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1
_TMPFS_MB = 512

_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> None:
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


def enter_network_namespace() -> tuple[str | None, bool]:
    """(why not, inside a new user namespace).  Root unshares directly; others via a user namespace.

    The IPC namespace comes with it: System V IPC objects would otherwise outlive the server on
    the host, a channel between samples and runs (seccomp refuses them too).
    """
    namespaces = _CLONE_NEWNET | _CLONE_NEWIPC
    error = _unshare(namespaces)
    if error is None:
        return None, False
    uid, gid = os.getuid(), os.getgid()
    user_error = _unshare(_CLONE_NEWUSER | namespaces)
    if user_error is not None:
        return f"unshare(CLONE_NEWNET|CLONE_NEWIPC): {error}; with a user namespace: {user_error}", False
    try:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as exc:
        return f"mapping the user namespace: {exc}", True
    return None, True


def _mount_setattr(path: bytes, flags: int, set_: int, clear: int) -> int:
    attr = ctypes.create_string_buffer(struct.pack("<QQQQ", set_, clear, 0, 0), 32)
    args = (ctypes.c_int(_AT_FDCWD), path, ctypes.c_uint(flags), attr, ctypes.c_size_t(32))
    return _libc.syscall(_SYS_MOUNT_SETATTR, *args)


def private_filesystem(scratch: str, readable: Iterable[str]) -> tuple[str | None, str | None]:
    """(why not, samples' root): a mount namespace where only that root is writable.

    A fresh tmpfs shadows the host's ``scratch`` (``/tmp``) for the server and its samples only,
    so nothing is ever created on the host; the root is a directory on it, bind-mounted onto
    itself so that it alone stays writable when everything else is made read-only.  Each step is
    checked before the next: a read-only remount outside a private namespace would hit the host's
    own mounts.  What samples may read (``readable``) that lives under ``scratch`` (a virtual
    environment in ``/tmp``, as CI makes them) is bind-mounted back through the tmpfs, or it would
    vanish.
    """
    error = _unshare(_CLONE_NEWNS)
    if error is not None:
        return f"unshare(CLONE_NEWNS): {error}", None
    if _libc.mount(None, b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None) != 0:
        return f"making / private: {os.strerror(ctypes.get_errno())}", None
    # Held open from inside the new namespace (a bind mount cannot take its source from another).
    under = os.path.realpath(scratch) + os.sep
    keep = [(path, os.open(path, os.O_PATH)) for path in readable if path.startswith(under)]
    try:
        return _shadow_scratch(scratch, keep)
    finally:
        for _, fd in keep:
            os.close(fd)


def _shadow_scratch(scratch: str, keep: list[tuple[str, int]]) -> tuple[str | None, str | None]:
    options = f"mode=0711,size={_TMPFS_MB}m".encode()
    flags = ctypes.c_ulong(_MS_NOSUID | _MS_NODEV)
    if _libc.mount(b"cbench-code", scratch.encode(), b"tmpfs", flags, options) != 0:
        return f"tmpfs at {scratch}: {os.strerror(ctypes.get_errno())}", None
    for path, fd in keep:
        os.makedirs(path, exist_ok=True)
        source = f"/proc/self/fd/{fd}".encode()
        if _libc.mount(source, path.encode(), None, ctypes.c_ulong(_MS_BIND | _MS_REC), None) != 0:
            return f"keeping {path} visible: {os.strerror(ctypes.get_errno())}", None
    root = tempfile.mkdtemp(prefix="cbench-code-", dir=scratch)
    if _libc.mount(root.encode(), root.encode(), None, ctypes.c_ulong(_MS_BIND), None) != 0:
        return f"bind mount: {os.strerror(ctypes.get_errno())}", root
    if _mount_setattr(b"/", _AT_RECURSIVE, _MOUNT_ATTR_RDONLY, 0) != 0:
        return f"mount_setattr (Linux 5.12+): {os.strerror(ctypes.get_errno())}", root
    if _mount_setattr(root.encode(), 0, 0, _MOUNT_ATTR_RDONLY) != 0:
        reason = os.strerror(ctypes.get_errno())
        _mount_setattr(b"/", _AT_RECURSIVE, 0, _MOUNT_ATTR_RDONLY)  # undo: this view must stay usable
        return f"making the samples' root writable: {reason}", root
    return None, root
