"""A ``--command`` program leaves nothing behind: its whole process tree ends with its row.

Each program here records the pids of the processes it starts in files; after the run every one of
them must be gone from ``/proc`` (killed and reaped: a zombie would still be listed).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from context_bench.cli import main
from context_bench.command_system import CommandSystem

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")

PY = shlex.quote(sys.executable)
#: A child that outlives its parent unless it is killed.
SLEEPER = f'[{sys.executable!r}, "-c", "import time; time.sleep(300)"]'


def _alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


@pytest.fixture
def pids(tmp_path):
    """The folder the programs write their children's pids to; whatever survives is killed afterwards."""
    folder = tmp_path / "pids"
    folder.mkdir()
    yield folder
    for pid in _recorded(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _recorded(folder: Path) -> list[int]:
    return [int(line) for path in folder.iterdir() for line in path.read_text().split()]


def _program(tmp_path: Path, body: str) -> str:
    """A Python program in a file of its own, as the command that runs it."""
    path = tmp_path / "agent.py"
    path.write_text("import os, subprocess, sys, time\n" + body, encoding="utf-8")
    return f"{PY} {shlex.quote(str(path))}"


def _run(capsys, tmp_path, *flags, rows=("capital of France",)):
    data = tmp_path / "qa.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(n), "question": q, "answer": "Paris"}) + "\n" for n, q in enumerate(rows)
        )
    )
    code = main(["run", *flags, "--dataset", str(data), "--output", "json", "--no-progress"])
    out, err = capsys.readouterr()
    return code, (json.loads(out)["rows"] if out else []), err


def _spawn(pids: Path, **popen: str) -> str:
    """Program lines that start a sleeping child (Popen keyword arguments given as source) and
    record its pid."""
    arguments = "".join(f", {key}={value}" for key, value in popen.items())
    return (
        f"child = subprocess.Popen({SLEEPER}{arguments})\n"
        f"open(os.path.join({str(pids)!r}, str(os.getpid())), 'w').write(str(child.pid))\n"
    )


def test_a_setsid_child_is_killed_with_a_program_past_its_timeout(capsys, tmp_path, pids):
    body = _spawn(pids, start_new_session="True", stdout="subprocess.DEVNULL") + "time.sleep(300)\n"
    code, rows, _ = _run(capsys, tmp_path, "--command", _program(tmp_path, body), "--timeout", "3")
    assert code == 1 and "ran past its timeout of 3 s" in rows[0]["errors"][0]["message"]
    (child,) = _recorded(pids)
    assert not _alive(child)


@pytest.mark.parametrize("popen", [{}, {"start_new_session": "True"}], ids=["background", "setsid"])
def test_children_left_running_are_killed_when_the_program_exits_and_the_row_says_so(
    capsys, tmp_path, pids, popen
):
    body = _spawn(pids, stdout="subprocess.DEVNULL", **popen) + "print('Paris')\n"
    code, rows, _ = _run(capsys, tmp_path, "--command", _program(tmp_path, body))
    assert code == 0 and rows[0]["response"] == "Paris"
    assert (
        rows[0]["meta"]["output"]["note"] == "it exited leaving 1 process running: killed when its row ended"
    )
    (child,) = _recorded(pids)
    assert not _alive(child)


def test_a_child_holding_stdout_costs_the_grace_period_not_the_answer(capsys, tmp_path, pids):
    """The child prints a late line 20 s on: a row that waited for its output (rather than the 2 s
    grace) would read it, or wait out the timeout and drop the answer."""
    late_line = "import time; time.sleep(20); print('late', flush=True); time.sleep(300)"
    late = f"[{sys.executable!r}, '-c', {late_line!r}]"
    body = (
        "print('Paris', flush=True)\n"
        f"child = subprocess.Popen({late})\n"  # it inherits standard output
        f"open(os.path.join({str(pids)!r}, str(os.getpid())), 'w').write(str(child.pid))\n"
    )
    code, rows, _ = _run(capsys, tmp_path, "--command", _program(tmp_path, body), "--timeout", "60")
    assert code == 0 and rows[0]["response"] == "Paris" and not rows[0]["errors"]
    assert rows[0]["meta"]["output"]["note"] == (
        "it exited, but 1 process it started held its standard output open past the 2 s grace "
        "period: killed, the answer kept"
    )
    (child,) = _recorded(pids)
    assert not _alive(child)


def test_output_past_the_bound_is_the_rows_error_and_ends_the_program(capsys, tmp_path, pids):
    flood = _program(tmp_path, "sys.stdout.buffer.write(b'x' * 50_000_000)\n")
    code, rows, _ = _run(capsys, tmp_path, "--command", flood)
    assert code == 1 and rows[0]["response"] is None
    assert rows[0]["errors"][0]["message"] == (
        f"{sys.executable} printed more than 10485760 bytes on standard output "
        "(--max-output-bytes): it was killed"
    )
    endless = _program(tmp_path, _spawn(pids, stdout="subprocess.DEVNULL") + "while True: print('y' * 999)\n")
    code, rows, _ = _run(capsys, tmp_path, "--command", endless, "--max-output-bytes", "5000")
    assert code == 1 and "printed more than 5000 bytes" in rows[0]["errors"][0]["message"]
    (child,) = _recorded(pids)
    assert not _alive(child)


def test_one_rows_end_kills_its_own_tree_and_not_another_rows(capsys, tmp_path, pids):
    """Rows run at once in threads: "fast" ends (its child killed) while "slow" still runs, and
    "slow" sees its own child alive after that.  "first" and "second" wait, the two waiting rows
    in a row on which the executor starts its other workers, so "slow" and "fast" run at once."""
    body = _spawn(pids, stdout="subprocess.DEVNULL") + (
        "prompt = sys.stdin.read()\n"
        "if 'first' in prompt or 'second' in prompt:\n"
        "    time.sleep(0.3); print('first' if 'first' in prompt else 'second')\n"
        "elif 'fast' in prompt:\n"
        f"    open(os.path.join({str(tmp_path)!r}, 'fast'), 'w').write(str(child.pid)); print('fast')\n"
        "else:\n"
        "    marker = os.path.join(" + repr(str(tmp_path)) + ", 'fast')\n"
        "    for _ in range(600):\n"
        "        if os.path.exists(marker) and open(marker).read():\n"
        "            if not os.path.exists('/proc/' + open(marker).read()):\n"
        "                break\n"
        "        time.sleep(0.05)\n"
        "    else:\n"
        "        print('the fast row never ended'); sys.exit(0)\n"
        "    print('kept' if os.path.exists(f'/proc/{child.pid}') else 'lost')\n"
    )
    code, rows, err = _run(
        capsys, tmp_path, "--command", _program(tmp_path, body), rows=("first", "second", "slow", "fast")
    )
    assert code == 0, err
    assert [row["response"] for row in rows] == ["first", "second", "kept", "fast"]
    assert len(_recorded(pids)) == 4 and not any(_alive(pid) for pid in _recorded(pids))


def test_the_tree_does_not_outlive_a_killed_context_bench(tmp_path, pids):
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    program = _program(tmp_path, _spawn(pids, stdout="subprocess.DEVNULL") + "time.sleep(300)\n")
    harness = subprocess.Popen(
        [sys.executable, "-m", "context_bench", "run", "--command", program, "--dataset", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):  # until the program has started its child
            if any(pids.iterdir()):
                break
            time.sleep(0.05)
        program_pid = int(next(pids.iterdir()).name)
    finally:
        harness.kill()
        harness.wait()
    (pids / "program").write_text(str(program_pid))  # killed after the test if it survived
    watched = _recorded(pids)
    for _ in range(600):  # the row's reaper sees context-bench gone and ends the tree
        if not any(_alive(pid) for pid in watched):
            break
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in watched)


def test_a_command_row_leaves_no_zombie_and_no_open_descriptor():
    """The row's reaper is reaped (no new child of this process is left, not even a zombie) and its
    pipes and socket are closed."""
    fds, children = set(os.listdir("/proc/self/fd")), _children()
    system = CommandSystem(f"{PY} -c 'import sys; print(sys.stdin.read())'")
    assert system.process({"question": "q"}) == {"response": "q"}
    assert set(os.listdir("/proc/self/fd")) == fds
    assert _children() - children == set()


def _children() -> set[str]:
    """This process's children, zombies included (other tests' servers among them)."""
    me = str(os.getpid())
    return {name for name in os.listdir("/proc") if name.isdigit() and _parent(name) == me}


def _parent(pid: str) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[1].decode()
    except OSError:
        return None
