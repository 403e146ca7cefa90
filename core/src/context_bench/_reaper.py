"""The reaper of one ``--command`` row: the process that starts the row's program and ends its tree.

``context_bench._command_run`` starts it as ``python -I -S _reaper.py FD PROGRAM ARGV...`` in a
session of its own, once per row.  It is a script, not a module of the package: stdlib only, so it
starts in a few milliseconds and sees nothing of the harness.  A subreaper is a property of one
process, so each row gets its own: the harness runs many rows in threads, and a reaper shared by
them could not tell one row's orphans from another's.

The reaper marks itself a child subreaper (Linux), so every process the program starts, with
``setsid`` or a double fork too, stays its descendant, and forks the program with the row's pipes
as its standard streams (keeping none itself: the harness sees end of file when the program's
tree has closed them).  On ``FD``, a socket the harness holds the other end of, it writes
``exit STATUS`` when the program exits.  When the harness closes or shuts down its end (the row is
over: answered, timed out, past its output bound, or the harness died), it kills every process
left in the tree, reaps them all, writes ``killed N`` (how many were still running besides the
program) and exits.  Where there is no subreaper and no ``/proc`` (not Linux), it kills the
program's process group instead: children that left it survive there.
"""

from __future__ import annotations

import os
import select
import sys

_SIGKILL = 9  # signal.SIGKILL on Linux and macOS; the signal module costs an import
_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    if sys.platform != "linux":
        return
    import ctypes

    ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _start(program: str, argv: list[str]) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)  # a group of its own: where no subreaper exists, the group is still killed
            os.execv(program, argv)
        except OSError as exc:
            os.write(2, f"{argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    os.close(null)
    return pid


def _descendants() -> list[int]:
    """The live processes below this one (zombies are left to be reaped), from ``/proc``."""
    if not os.path.isdir("/proc/self"):
        return []
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                state, parent = file.read().rsplit(b")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue  # gone meanwhile
        if state != b"Z":
            children.setdefault(int(parent), []).append(int(name))
    found, below = [], [os.getpid()]
    while below:
        for child in children.get(below.pop(), ()):
            found.append(child)
            below.append(child)
    return found


def _end_tree(program: int) -> int:
    """Kill and reap every process of the row; how many besides the program were still running.

    Each round kills the whole tree it sees; a process forked meanwhile is orphaned to this reaper
    when its parent dies, and seen by the next round.  Every live descendant keeps a live child of
    the reaper, so the tree is gone when no child is left to reap."""
    left = sum(pid != program for pid in _descendants())
    try:
        os.killpg(program, _SIGKILL)
    except OSError:
        pass
    while True:
        for pid in _descendants():
            try:
                os.kill(pid, _SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return left


def main(argv: list[str]) -> None:
    control, program, command = int(argv[1]), argv[2], argv[3:]
    os.set_inheritable(control, False)
    _become_subreaper()
    pid = _start(program, command)
    poller = select.poll()
    poller.register(control, select.POLLIN)
    try:
        exited: int | None = os.pidfd_open(pid)
        poller.register(exited, select.POLLIN)
    except (AttributeError, OSError):  # no pidfd (not Linux, or before 5.3): look every 50 ms
        exited = None
    running = True
    while True:
        events = poller.poll(None if exited is not None or not running else 50)
        if running:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                running = False
                if exited is not None:
                    poller.unregister(exited)
                _say(control, f"exit {os.waitstatus_to_exitcode(status)}")
        if any(fd == control for fd, _ in events) and not _heard(control):
            break
    _say(control, f"killed {_end_tree(pid)}")


def _heard(control: int) -> bytes:
    """What the harness sent; empty once it closed or shut down its end (the row is over)."""
    try:
        return os.read(control, 64)
    except OSError:  # reset: the harness closed its end with our last line unread
        return b""


def _say(control: int, line: str) -> None:
    try:
        os.write(control, f"{line}\n".encode())
    except OSError:  # the harness is gone; the tree is ended all the same
        pass


if __name__ == "__main__":
    main(sys.argv)
