"""Which sandbox layers apply here, each reported as "on ..." or "off: why".

Two answers.  :func:`forecast` is cheap and side-effect free: ``context-bench plugins`` shows it
without starting a sandbox server (a few system calls and ``/proc`` reads, cached per process).
:func:`isolate` and :func:`choose` are the server's, and the authority at run time
(``CodeExecution().layers``): the server enters its namespaces, then tries each remaining layer in
a throw-away child and keeps those that work.  They import the server's modules only when called
(the listing imports no more of this package than the forecast needs).
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import landlock, seccomp

if TYPE_CHECKING:
    from .child import Confinement

_ON = "on"
_CAP_SYS_ADMIN = 21
_SYSTEM_READ = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/share/zoneinfo")
_USER_NAMESPACE = "on (unprivileged user namespace)"
_NO_LANDLOCK = "off: the kernel has no Landlock (Linux 5.13+ with lsm=landlock)"
_INVOKING_USER = "on (runs as the invoking user)"
_NOBODY = "on (uid nobody)"
_NO_CAPABILITIES = "; root without capabilities instead"


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _netns() -> str:
    if os.geteuid() == 0:
        status = _read("/proc/self/status") or ""
        caps = next((line.split()[1] for line in status.splitlines() if line.startswith("CapEff:")), "0")
        if int(caps, 16) >> _CAP_SYS_ADMIN & 1:
            return _ON
    if (_read("/proc/sys/user/max_user_namespaces") or "1") == "0":
        return "off: user namespaces are disabled (user.max_user_namespaces = 0)"
    if (_read("/proc/sys/kernel/unprivileged_userns_clone") or "1") == "0":
        return "off: unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)"
    if (_read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") or "0") == "1":
        return "off: AppArmor restricts unprivileged user namespaces"
    return _USER_NAMESPACE


def _unprivileged() -> str:
    if os.geteuid() != 0:
        return _INVOKING_USER
    stdlib = sysconfig.get_paths()["stdlib"]
    path = stdlib
    while path != os.path.dirname(path):  # every ancestor must be searchable by others
        try:
            if not os.stat(path).st_mode & stat.S_IXOTH:
                reason = f"nobody cannot read the Python library at {stdlib}"
                return f"off: {reason}{_NO_CAPABILITIES}"
        except OSError:
            break
        path = os.path.dirname(path)
    return _NOBODY


@functools.lru_cache(maxsize=1)
def forecast() -> dict[str, str]:
    abi = landlock.abi_version()
    reason = seccomp.unavailable_reason()
    return {
        "process": _ON,
        "netns": _netns(),
        "mountns": _netns().replace(_USER_NAMESPACE, _ON),
        "landlock": f"on (ABI {abi})" if abi else _NO_LANDLOCK,
        "seccomp": f"off: {reason}" if reason else _ON,
        "unprivileged": _unprivileged(),
        "rlimits": _ON,
    }


def read_paths() -> list[str]:
    """What a sample may read: the interpreter's own library trees and the system libraries."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    libraries = sysconfig.get_paths()
    found = {libraries[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    found.update(p for p in sys.path if p and any(p.startswith(pre + os.sep) for pre in prefixes))
    found = {os.path.realpath(p) for p in found | set(_SYSTEM_READ) if os.path.exists(p)}
    # A rule covers its whole tree: keep only the outermost paths (fewer rules, cheaper per sample).
    return sorted(p for p in found if not any(p.startswith(q + os.sep) for q in found))


def isolate(disabled: set[str]) -> tuple[dict[str, str], bool, str | None]:
    """Enter the server's namespaces: (layers so far, inside a new user namespace, samples' root).

    The root is None when the private file system is off (the server then makes one in ``/tmp``).
    """
    from . import namespaces

    layers = {"process": _ON}
    if "netns" in disabled:
        layers["netns"], in_userns = "off: disabled", False
    else:
        why_not, in_userns = namespaces.enter_network_namespace()
        layers["netns"] = f"off: {why_not}" if why_not else _USER_NAMESPACE if in_userns else _ON
    if "mountns" in disabled:
        layers["mountns"], root = "off: disabled", None
    else:
        why_not, root = namespaces.private_filesystem(tempfile.gettempdir(), read_paths())
        layers["mountns"] = f"off: {why_not}" if why_not else "on (read-only view, private tmpfs)"
    return layers, in_userns, root


def choose(layers: dict[str, str], disabled: set[str], in_userns: bool, root: str) -> Confinement:
    """The layers each child applies, each tried first in a throw-away child; reports into ``layers``.

    ``root`` is the samples' root, where Landlock's probe gets a directory of its own.
    """
    from . import child

    abi = landlock.abi_version()
    policy = None
    if "landlock" in disabled:
        layers["landlock"] = "off: disabled"
    elif not abi:
        layers["landlock"] = _NO_LANDLOCK
    else:
        policy = landlock.Policy(abi, read_paths())
        probe_dir = tempfile.mkdtemp(dir=root)
        status = _try(lambda: (seccomp.no_new_privs(), policy.apply(probe_dir)))
        os.rmdir(probe_dir)
        layers["landlock"] = f"on (ABI {abi})" if status == _ON else status
    use_landlock = layers["landlock"].startswith(_ON)
    reason = seccomp.unavailable_reason()
    if "seccomp" in disabled:
        layers["seccomp"] = "off: disabled"
    elif reason:
        layers["seccomp"] = f"off: {reason}"
    else:
        layers["seccomp"] = _try(lambda: seccomp.install(seccomp.build_filter(os.getpid())))
    as_root = os.geteuid() == 0 and not in_userns
    drop_uid = drop_caps = False
    if not as_root:
        layers["unprivileged"] = _INVOKING_USER
    elif "unprivileged" in disabled:
        layers["unprivileged"] = "off: disabled"
    else:
        stdlib = sysconfig.get_paths()["stdlib"]
        drop = _try(lambda: _become_nobody(stdlib, child.NOBODY))
        drop_uid = drop == _ON
        if drop_uid:
            layers["unprivileged"] = _NOBODY
        else:
            drop_caps = _try(child.drop_capabilities) == _ON
            layers["unprivileged"] = drop + (_NO_CAPABILITIES if drop_caps else "")
    nproc = not as_root or drop_uid
    layers["rlimits"] = "on (address space, cpu, file size, open files, core" + (
        ", processes)" if nproc else ")"
    )
    return child.Confinement(
        landlock=policy if use_landlock else None,
        seccomp=layers["seccomp"] == _ON,
        drop_uid=drop_uid,
        drop_caps=drop_caps,
        nproc=nproc,
    )


def _become_nobody(stdlib: str, nobody: int) -> None:
    """Become nobody, then prove the interpreter's library is still readable."""
    os.setgroups([])
    os.setresgid(nobody, nobody, nobody)
    os.setresuid(nobody, nobody, nobody)
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
    return _ON if status == 0 else f"off: {reason or f'status {status}'}"
