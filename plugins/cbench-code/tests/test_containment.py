"""Escape attempts against the sandbox, each its own test, with real processes.

Each attack is a response defining ``attack()``; the row's test asserts what a contained attack
sees, so a pass proves the code ran and was contained, and the host checks its own side too.
Where a layer has a fallback, the attack also runs with the main layer turned off.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import textwrap

import pytest

from cbench_code import CodeExecution

ALL: tuple[str, ...] = ()
NO_SECCOMP = ("seccomp",)
NO_LANDLOCK = ("landlock",)
FORKS_ALLOWED = ("seccomp", "unprivileged")  # root without seccomp: fork works, cleanup must hold


@pytest.fixture(scope="module")
def sandboxes():
    made: dict[tuple[str, ...], CodeExecution] = {}

    def get(disable: tuple[str, ...] = ALL, **kwargs) -> CodeExecution:
        key = disable + tuple(sorted(kwargs.items()))
        if key not in made:
            made[key] = CodeExecution(timeout=kwargs.pop("timeout", 5.0), disable=disable, **kwargs)
        return made[key]

    yield get
    for ev in made.values():
        ev.close()


def row(expect: str) -> dict:
    """A row whose test is ``assert attack() <expect>``."""
    return {
        "context": "",
        "test": f"def check(candidate):\n    assert candidate() {expect}\n",
        "entry_point": "attack",
    }


def attack(ev: CodeExecution, code: str, expect: str):
    """Run ``code`` (defining ``attack``) against ``assert attack() <expect>``; the one result."""
    [result] = ev.check(row(expect), {"response": textwrap.dedent(code)})
    return result


def _deny_warnings(recwarn):
    return recwarn


# -- file system -------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize("disable", [ALL, NO_LANDLOCK], ids=["all-layers", "no-landlock"])
def test_write_outside_temp_dir(sandboxes, tmp_path, disable):
    if disable == ALL:
        tmp_path.chmod(0o777)  # only the sandbox, not file permissions, may stop the write
    targets = [tmp_path / "escaped.txt", f"/tmp/cbench-escape-{os.getpid()}.txt", "/root/cbench-escape.txt"]
    code = f"""
        def attack():
            escaped = []
            for path in {[str(t) for t in targets]!r}:
                try:
                    with open(path, "w") as f:
                        f.write("escaped")
                    escaped.append(path)
                except OSError:
                    pass
            with open("inside.txt", "w") as f:  # its own directory stays writable
                f.write("fine")
            return escaped
    """
    result = attack(sandboxes(disable), code, "== []")
    assert result.passed, result
    assert not any(os.path.exists(t) for t in targets)


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize("disable", [ALL, NO_LANDLOCK], ids=["all-layers", "no-landlock"])
def test_delete_host_file(sandboxes, tmp_path, disable):
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    if disable == ALL:
        tmp_path.chmod(0o777)
        victim.chmod(0o666)
    code = f"""
        import os, shutil
        def attack():
            done = []
            victim = {str(victim)!r}
            for action in (lambda: os.remove(victim), lambda: shutil.rmtree({str(tmp_path)!r}),
                           lambda: os.truncate(victim, 0), lambda: os.rename(victim, "stolen")):
                try:
                    action()
                    done.append(action)
                except OSError:
                    pass
            return len(done)
    """
    result = attack(sandboxes(disable), code, "== 0")
    assert result.passed, result
    assert victim.read_text() == "keep me"


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
def test_private_temp_dir_is_removed(sandboxes):
    # Without the mount namespace the samples' directories live on the host, where we can look.
    code = """
        import os
        def attack():
            open("left-behind.txt", "w").write("x")
            os.mkdir("sub")
            os.chmod("sub", 0)
            assert False, "cwd=" + os.getcwd()
    """
    result = attack(sandboxes(("mountns",)), code, "is None")
    assert result.status == "failed"
    cwd = result.detail.split("cwd=", 1)[1].strip()
    assert cwd != os.getcwd() and "cbench-code-" in cwd
    assert os.path.isdir(os.path.dirname(cwd))  # the server's root is still there ...
    assert not os.path.exists(cwd)  # ... but the sample's own directory, with all it left, is gone


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize("disable", [ALL, ("mountns",)], ids=["all-layers", "no-mountns"])
def test_deep_directory_chain_is_removed(sandboxes, disable):
    # Removing 3000 nested directories recursively (shutil.rmtree) used to kill the server.  The
    # 3000 mkdir/chdir pairs take ~1 s alone but ran past the 5 s default at load 9 on 2 cores.
    ev = sandboxes(disable, timeout=60.0)
    server_pid = ev.pool.server_pid
    code = """
        import os
        def attack():
            top = os.getcwd()
            for _ in range(3000):
                os.mkdir("d")
                os.chdir("d")
            assert False, "cwd=" + top
    """
    result = attack(ev, code, "is None")
    assert result.status == "failed", result
    seen_by_server = f"/proc/{server_pid}/root" + result.detail.split("cwd=", 1)[1].strip()
    assert os.path.isdir(os.path.dirname(seen_by_server))  # the server's root, in its mount namespace
    assert not os.path.exists(seen_by_server)
    assert ev.pool.server_pid == server_pid  # the server survived the cleanup ...
    assert attack(ev, "def attack():\n    return 1\n", "== 1").passed  # ... and carries on


_FILLER = """
    import os, time
    def attack():
        inodes = os.statvfs(".").f_ffree
        size, files = 8 << 20, 0
        while size >= 4096:  # fill the samples' file system to the last block
            fd = os.open(f"fill{files}", os.O_WRONLY | os.O_CREAT)
            try:
                os.posix_fallocate(fd, 0, size)
                files += 1
            except OSError:
                size //= 2
            finally:
                os.close(fd)
        while os.statvfs(".").f_ffree > inodes - files - 1000:  # hold it until the victim's cue
            time.sleep(0.001)
        return files
"""
_VICTIM = """
    import os, time
    def attack():
        while os.statvfs(".").f_bavail:  # until the other sample has filled the file system
            time.sleep(0.001)
        try:
            with open("result.txt", "w") as f:
                f.write("x" * 100_000)
        finally:
            for i in range(2000):  # the cue: empty files take inodes, not blocks
                open(f"cue{i}", "w").close()
        return "written"
"""


def test_a_full_shared_file_system_is_a_sandbox_error(sandboxes):
    ev = sandboxes(workers=2)
    if not ev.layers["mountns"].startswith("on"):
        pytest.skip("filling the samples' file system is only safe on the server's private tmpfs")
    victim, filler = ev.check(
        row('== "written"'), {"responses": [textwrap.dedent(_VICTIM), textwrap.dedent(_FILLER)]}
    )
    assert victim.status == "error" and "No space left on device" in victim.detail, victim
    assert filler.status == "failed", filler
    assert attack(ev, "def attack():\n    open('f', 'w').write('x' * 100_000)\n    return 1\n", "== 1").passed


def test_claiming_a_full_disk_is_a_failure(sandboxes):
    code = f"def attack():\n    raise OSError({errno.ENOSPC}, 'No space left on device')\n"
    result = attack(sandboxes(), code, "is None")
    assert result.status == "failed" and "[Errno 28]" in result.detail, result


# -- secrets -----------------------------------------------------------------------------------


def test_api_key_in_parent_environment_is_unreachable(monkeypatch):
    secret = "sk-test-" + os.urandom(12).hex()
    monkeypatch.setenv("CBENCH_TEST_API_KEY", secret)
    ev = CodeExecution(timeout=5.0)  # started after the key was planted
    code = f"""
        import os
        def attack():
            found = [k for k, v in os.environ.items() if "CBENCH_TEST_API_KEY" in k or "sk-test-" in v]
            for pid in ({os.getpid()}, os.getppid(), 1):
                try:
                    with open(f"/proc/{{pid}}/environ", "rb") as f:
                        if b"CBENCH_TEST_API_KEY" in f.read():
                            found.append(pid)
                except OSError:
                    pass
            try:
                for pid in os.listdir("/proc"):
                    try:
                        if b"CBENCH_TEST_API_KEY" in open(f"/proc/{{pid}}/environ", "rb").read():
                            found.append(pid)
                    except OSError:
                        pass
            except OSError:
                pass
            return found
    """
    try:
        result = attack(ev, code, "== []")
        assert result.passed, result
        leak = attack(
            ev, "import os\ndef attack():\n    assert False, repr(sorted(os.environ.items()))\n", "is None"
        )
        assert leak.status == "failed" and secret not in leak.detail and "PATH" in leak.detail
    finally:
        ev.close()


def test_no_inherited_file_descriptors(tmp_path):
    held = open(tmp_path / "held.txt", "w")  # noqa: SIM115 - must stay open while the server starts
    ev = CodeExecution(timeout=5.0)
    code = """
        import os
        def attack():
            open_fds = []
            for fd in range(256):
                try:
                    os.fstat(fd)
                    open_fds.append(fd)
                except OSError:
                    pass
            return open_fds
    """
    try:
        result = attack(ev, code, "== [0, 1, 2, 3, 4]")  # /dev/null x3, the result and token pipes
        assert result.passed, result
    finally:
        ev.close()
        held.close()


# -- network -----------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize(
    "disable",
    [ALL, ("seccomp", "landlock"), ("netns", "landlock")],
    ids=["all-layers", "netns-only", "seccomp-only"],
)
def test_connect_to_listening_socket_on_localhost(sandboxes, disable):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        port = server.getsockname()[1]
        code = f"""
            import ctypes, socket, struct

            def through_libc():  # below Python's socket module, so a Python-level guard cannot help
                libc = ctypes.CDLL(None)
                fd = libc.socket(2, 1, 0)  # AF_INET, SOCK_STREAM
                if fd < 0:
                    return False
                address = struct.pack("<H", 2) + struct.pack(">H", {port}) + bytes([127, 0, 0, 1]) + bytes(8)
                return libc.connect(fd, address, len(address)) == 0

            def attack():
                try:
                    with socket.create_connection(("127.0.0.1", {port}), timeout=2) as s:
                        s.sendall(b"escaped")
                    return "connected"
                except OSError:
                    pass
                return "connected" if through_libc() else "blocked"
        """
        result = attack(sandboxes(disable), code, '== "blocked"')
        assert result.passed, result
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()


def test_raw_socket_syscall_is_refused_by_seccomp(sandboxes):
    code = """
        import ctypes
        def attack():
            return ctypes.CDLL(None).socket(2, 1, 0)  # AF_INET, SOCK_STREAM, below Python's socket module
    """
    result = attack(sandboxes(), code, "== -1")
    assert result.passed, result


# -- IPC ---------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize(
    ("disable", "outcome"), [(ALL, "refused"), (NO_SECCOMP, "created")], ids=["all-layers", "no-seccomp"]
)
def test_system_v_ipc_stays_in_the_sandbox(sandboxes, disable, outcome):
    # A message queue outlives its sample: without the IPC namespace it would persist on the host.
    key = int.from_bytes(os.urandom(3), "little") + 1
    code = f"""
        import ctypes
        def attack():
            libc = ctypes.CDLL(None, use_errno=True)
            return "created" if libc.msgget({key}, 0o1600) >= 0 else "refused"  # IPC_CREAT
    """
    result = attack(sandboxes(disable), code, f"== {outcome!r}")
    assert result.passed, result
    with open("/proc/sysvipc/msg") as f:  # the host's queues
        assert key not in [int(line.split()[0]) for line in f.readlines()[1:]]


@pytest.mark.parametrize(
    "call",
    [
        "os.memfd_create('x')",
        "fcntl.flock(os.open('/usr/lib', os.O_RDONLY), fcntl.LOCK_EX)",
        "fcntl.fcntl(3, fcntl.F_SETOWN, os.getppid())",
        "fcntl.fcntl(3, 10, 9)",  # F_SETSIG
        "fcntl.fcntl(os.open('/usr/lib/os-release', os.O_RDONLY), 1024, fcntl.F_RDLCK)",  # F_SETLEASE
    ],
)
def test_memory_locks_and_io_signals_beyond_the_limits_are_refused(sandboxes, call):
    code = f"""
        import fcntl, os
        def attack():
            try:
                {call}
            except OSError as exc:
                return exc.errno
            return 0
    """
    result = attack(sandboxes(), code, "== 1")  # EPERM from the seccomp filter
    assert result.passed, result


def test_the_filter_still_allows_ordinary_fcntl_and_ioctl(sandboxes):
    code = """
        import fcntl, os, termios
        def attack():
            fd = os.open("inside.txt", os.O_CREAT | os.O_RDWR)
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            try:
                fcntl.ioctl(fd, termios.FIONREAD, b"    ")
            except OSError as exc:
                return exc.errno
            return fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK != 0
    """
    result = attack(sandboxes(), code, "is True")
    assert result.passed, result


# -- new programs and processes ----------------------------------------------------------------

SPAWNS = {
    "posix_spawn": """
        import os
        def attack():
            try:
                pid = os.posix_spawn("/bin/sh", ["sh", "-c", "echo spawned > marker"], {})
                os.waitpid(pid, 0)
            except OSError:
                pass
            return os.path.exists("marker")
    """,
    "subprocess": """
        import os, subprocess
        def attack():
            try:
                subprocess.run(["/bin/sh", "-c", "echo spawned > marker"], timeout=3)
            except OSError:
                pass
            return os.path.exists("marker")
    """,
    "ctypes_system": """
        import ctypes, os
        def attack():
            ctypes.CDLL(None).system(b"echo spawned > marker")
            return os.path.exists("marker")
    """,
    "reload_os": """
        import importlib, os
        def attack():
            fresh = importlib.reload(os)
            try:
                fresh.system("echo spawned > marker")
            except OSError:
                pass
            return fresh.path.exists("marker")
    """,
}


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize("disable", [ALL, NO_SECCOMP], ids=["all-layers", "no-seccomp"])
@pytest.mark.parametrize("how", sorted(SPAWNS))
def test_spawn_a_shell(sandboxes, how, disable):
    result = attack(sandboxes(disable), SPAWNS[how], "is False")
    assert result.passed, result


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize(
    ("disable", "outcome"), [(ALL, "refused"), (FORKS_ALLOWED, "forked")], ids=["all-layers", "forks-allowed"]
)
def test_no_orphan_process_outlives_its_sample(sandboxes, disable, outcome, stray_processes):
    code = """
        import os, time
        def attack():
            try:
                pid = os.fork()
            except OSError:
                return "refused"
            if pid == 0:  # double fork into a new session: the classic daemon escape
                os.setsid()
                if os.fork() == 0:
                    time.sleep(60)
                os._exit(0)
            os.waitpid(pid, 0)
            return "forked"
    """
    ev = sandboxes(disable)
    result = attack(ev, code, f"== {outcome!r}")
    assert result.passed, result
    assert stray_processes(ev.pool.server_pid) == []


# -- signals and other processes ---------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize("disable", [ALL, NO_SECCOMP], ids=["all-layers", "no-seccomp"])
def test_signal_the_parent(sandboxes, disable):
    received = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: received.append(True))
    ev = sandboxes(disable)
    server_pid = ev.pool.server_pid
    code = f"""
        import os, signal
        def attack():
            refused = 0
            for send in (lambda: os.kill(os.getppid(), signal.SIGKILL),
                         lambda: os.kill({os.getpid()}, signal.SIGUSR1),
                         lambda: os.killpg(os.getpgid({os.getpid()}), signal.SIGUSR1)):
                try:
                    send()
                except OSError:
                    refused += 1
            return refused
    """
    try:
        result = attack(ev, code, "== 3")
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert result.passed, result
    assert received == []
    assert ev.pool.server_pid == server_pid  # the server survived and was not restarted


def test_prlimit_on_the_server_is_refused(sandboxes):
    ev = sandboxes()
    server_pid = ev.pool.server_pid
    with open(f"/proc/{server_pid}/limits") as f:
        limits = f.read()
    code = """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        class Limit(ctypes.Structure):
            _fields_ = [("soft", ctypes.c_uint64), ("hard", ctypes.c_uint64)]
        def prlimit(pid, new=None):  # prlimit64(pid, RLIMIT_NOFILE, new, old): 0 or the errno
            old = Limit()
            done = libc.syscall(302, pid, 7, ctypes.byref(new) if new else None, ctypes.byref(old)) == 0
            return 0 if done else ctypes.get_errno()
        def attack():
            return [prlimit(os.getppid(), Limit(4, 4)), prlimit(0), prlimit(os.getpid(), Limit(32, 64))]
    """
    result = attack(ev, code, f"== [{errno.EPERM}, 0, 0]")  # the server's refused, its own still fine
    assert result.passed, result
    with open(f"/proc/{server_pid}/limits") as f:
        assert f.read() == limits
    assert attack(ev, "def attack():\n    return 1\n", "== 1").passed


def test_act_on_another_process(sandboxes):
    victim = subprocess.Popen(["sleep", "30"])  # a host process of the same uid when samples run as root
    unused_uid = 3_999_999  # a `who` naming every process of a user: the kernel would say ESRCH here
    code = f"""
        import ctypes, os, signal, struct
        libc = ctypes.CDLL(None, use_errno=True)
        V = {victim.pid}
        word = ctypes.create_string_buffer(128)  # a zeroed argument: a mask, a sched_param, a siginfo ...
        info = ctypes.create_string_buffer(struct.pack("<iii", signal.SIGTERM, 0, -1), 128)  # SI_QUEUE
        attr = ctypes.create_string_buffer(bytes([48]), 48)  # struct sched_attr of 48 bytes
        CALLS = {{
            "prlimit64": (302, V, 7, word, None),
            "rt_sigqueueinfo": (129, V, signal.SIGTERM, info),
            "rt_tgsigqueueinfo": (297, V, V, signal.SIGTERM, info),
            "tgkill": (234, V, V, 0),
            "sched_setaffinity": (203, V, 8, word),
            "sched_setscheduler": (144, V, 0, word),
            "sched_setparam": (142, V, word),
            "sched_setattr": (314, V, attr, 0),
            "setpriority": (141, 0, V, 19),
            "setpriority(PRIO_USER)": (141, 2, {unused_uid}, 19),
            "ioprio_set": (251, 1, V, 3 << 13),
            "ioprio_set(IOPRIO_WHO_USER)": (251, 3, {unused_uid}, 3 << 13),
            "migrate_pages": (256, V, 64, word, word),
            "move_pages": (279, V, 0, None, None, None, 0),
            "get_robust_list": (274, V, word, word),
            "kcmp": (312, os.getpid(), V, 0, 0, 0),
            "process_madvise": (440, -1, None, 0, 0, 0),
        }}
        def refused(nr, *args):
            return libc.syscall(nr, *args) == -1 and ctypes.get_errno() == 1  # EPERM
        def attack():
            allowed = [name for name, call in CALLS.items() if not refused(*call)]
            os.sched_setaffinity(0, os.sched_getaffinity(0))  # on itself, all still work
            os.setpriority(os.PRIO_PROCESS, 0, 1)
            return allowed
    """
    try:
        with open(f"/proc/{victim.pid}/stat") as f:
            before = f.read().rsplit(")", 1)[1].split()[16:18]  # nice, threads
        result = attack(sandboxes(), code, "== []")
        assert result.passed, result
        assert victim.poll() is None
        with open(f"/proc/{victim.pid}/stat") as f:
            assert f.read().rsplit(")", 1)[1].split()[16:18] == before
    finally:
        victim.kill()
        victim.wait(timeout=10)


# -- time and memory ---------------------------------------------------------------------------

LOOPS = {
    "python_loop": "def attack():\n    while True:\n        pass\n",
    "c_level_loop": "import itertools\ndef attack():\n    return sum(itertools.repeat(1))\n",
    "swallows_signals": (
        "import signal\n"
        "def attack():\n"
        "    for sig in (signal.SIGXCPU, signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
        "        signal.signal(sig, signal.SIG_IGN)\n"
        "    while True:\n"
        "        try:\n"
        "            while True:\n"
        "                pass\n"
        "        except BaseException:\n"
        "            pass\n"
    ),
    "sleeps": "import time\ndef attack():\n    time.sleep(3600)\n",
}


@pytest.mark.parametrize("how", sorted(LOOPS))
def test_timeouts(sandboxes, how, stray_processes):
    ev = sandboxes(timeout=1.0)
    result = attack(ev, LOOPS[how], "is None")
    assert result.status == "timeout", result
    assert stray_processes(ev.pool.server_pid) == []
    assert attack(ev, "def attack():\n    return 1\n", "== 1").passed  # the server carries on


@pytest.mark.parametrize(
    "code",
    [
        "def attack():\n    return bytearray(1 << 34)\n",
        "def attack():\n    hoard = []\n    while True:\n        hoard.append(bytearray(1 << 24))\n",
    ],
    ids=["one-allocation", "gradual"],
)
def test_memory_bomb(sandboxes, code):
    ev = sandboxes(memory_mb=256)
    result = attack(ev, code, "is None")
    assert result.status == "failed" and "MemoryError" in result.detail, result
    assert attack(ev, "def attack():\n    return 1\n", "== 1").passed


@pytest.mark.filterwarnings("ignore::cbench_code.SandboxWarning")
@pytest.mark.parametrize("disable", [ALL, ("mountns",)], ids=["all-layers", "no-mountns"])
def test_nothing_is_left_on_the_host_after_close(disable):
    import glob
    import tempfile

    pattern = os.path.join(tempfile.gettempdir(), "cbench-code-*")
    before = set(glob.glob(pattern))
    ev = CodeExecution(timeout=5.0, disable=disable)
    try:
        assert attack(
            ev, "def attack():\n    open('file.txt', 'w').write('x')\n    return 1\n", "== 1"
        ).passed
    finally:
        ev.close()
    assert set(glob.glob(pattern)) <= before


# -- the result pipe ---------------------------------------------------------------------------


def _peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def test_flooding_the_result_pipe_does_not_grow_the_server(sandboxes):
    ev = sandboxes(timeout=1.0)
    server_pid = ev.pool.server_pid
    peak = _peak_rss_kb(server_pid)
    code = """
        import os, threading
        def attack():
            chunk = b"x" * (1 << 16)
            def flood():
                while True:
                    os.write(3, chunk)
            for _ in range(3):
                threading.Thread(target=flood, daemon=True).start()
            flood()
    """
    result = attack(ev, code, "is None")
    assert result.status == "timeout", result
    assert _peak_rss_kb(server_pid) - peak < 16 << 10  # KiB: a few chunks, not the flood
    assert attack(ev, "def attack():\n    return 1\n", "== 1").passed


def test_a_sample_cannot_claim_a_sandbox_error(sandboxes):
    code = """
        import os
        def attack():
            return 1
        os.write(3, b"ERROR sandbox setup: the server ran out of memory\\n")
        os._exit(1)
    """
    result = attack(sandboxes(), code, "== 1")
    assert result.status == "failed", result
