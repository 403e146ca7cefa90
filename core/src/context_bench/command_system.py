"""CommandSystem: a local program as the system under test (``run --command 'CMD ...'``).

Any command-line agent can be evaluated this way: each row's prompt goes to the program's
standard input, its standard output is the response.  The program runs once per row, without a
shell (the command is split like a shell would, but ``|`` or ``>`` mean nothing unless the user
writes ``sh -c '...'``), in a session of its own whose whole tree ends with the row
(:mod:`context_bench._command_run`).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._command_run import DEFAULT_MAX_OUTPUT_BYTES, OUTPUT_GRACE, Finished, run_program
from .metering import TURN_VARIABLE, current
from .secrets import redact, redact_command
from .systems import build_messages, conversation_turns, follow_up

__all__ = ["ClaudeCLI", "CommandError", "CommandSystem", "prompt_text"]

#: How much of the program's standard error a row error quotes (its end: where programs say why).
STDERR_TAIL = 500


class CommandError(RuntimeError):
    """The program exited with a non-zero status, ran past its timeout or printed more than its
    bound (the row's error)."""


def prompt_text(example: Mapping[str, Any], system_prompt: str | None = None) -> str:
    """What the program reads: the row's one user turn as is; several turns (or a system prompt)
    as ``role: content`` paragraphs, so a conversation keeps who said what."""
    messages = build_messages(example)
    if system_prompt is not None:
        messages = [{"role": "system", "content": system_prompt}, *messages]
    return _as_text(messages)


def _as_text(messages: list[dict[str, Any]]) -> str:
    if len(messages) == 1:
        return str(messages[0].get("content", ""))
    return "\n\n".join(f"{m.get('role', 'user')}: {m.get('content', '')}" for m in messages)


def _tail(text: str) -> str:
    text = redact(text.strip())
    return text if len(text) <= STDERR_TAIL else "..." + text[-STDERR_TAIL:]


class CommandSystem:
    """Runs ``command`` once per row: the prompt on standard input, standard output the response.

    ``command`` is a string (split with :func:`shlex.split`) or an argument list.  A non-zero exit
    status, a run longer than ``timeout`` seconds, or more than ``max_output_bytes`` of output is a
    :class:`CommandError` on the row with the end of the program's standard error; trailing
    whitespace of the response is removed.  Whatever the program started is killed when its row
    ends, and a row whose program left processes running says so in ``meta["output"]["note"]``.
    The program inherits the environment (``env`` adds to it) and runs in ``cwd`` (default: the
    current directory when the system is made).  ``build_prompt`` (an example to the text the
    program reads) replaces :func:`prompt_text`.  In a metered run it also gets the meter's base
    URL in ``CBENCH_METER_URL`` and its row's token in ``CBENCH_ROW`` (the ``X-Context-Bench-Row``
    header to send; :mod:`context_bench.metering`), and answering a turn of a conversation, the
    turn in ``CBENCH_TURN`` (the ``X-Context-Bench-Turn`` header to send).

    A row with ``turns`` (a conversation) runs the program once per turn, each time
    with the conversation so far (its own earlier answers included) as ``role: content``
    paragraphs; the last answer is the response, the earlier ones ``meta["output"]["replies"]``.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        name: str | None = None,
        timeout: float = 60.0,
        system_prompt: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        build_prompt: Callable[[Mapping[str, Any]], str] | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [str(part) for part in command]
        if not argv:
            raise ValueError("the command is empty")
        if sys.platform == "win32":
            raise ValueError("a command system needs a POSIX system (Linux or macOS)")
        self.argv = argv
        self.name = name or "command"
        self.timeout = timeout
        self.system_prompt = system_prompt
        self.env = dict(env or {})
        self.cwd = os.path.abspath(cwd if cwd is not None else os.getcwd())
        self.build_prompt = build_prompt
        self.max_output_bytes = max_output_bytes
        found = shutil.which(
            os.path.join(self.cwd, argv[0]) if os.sep in argv[0] else argv[0], path=self.env.get("PATH")
        )
        if found is None:
            raise ValueError(f"program not found or not executable: {argv[0]}")
        #: The file that runs (what the cache's identity names, with its digest, and what is run).
        self.program = os.path.abspath(found)
        #: The first argument that names a file (``python3 agent.py``): its digest names the cache too.
        self.script = next(
            (path for arg in argv[1:] if os.path.isfile(path := os.path.join(self.cwd, arg))), None
        )
        #: The files in the cache's identity, each as its path and digest.
        self._files = {"program": [self.program, _fingerprint(self.program)]}
        if self.script is not None:
            self._files["script"] = [self.script, _fingerprint(self.script)]

    def config(self) -> dict[str, Any]:
        """What names this system's cache entries: the command (keys masked), the file it runs
        and a script named among its arguments (each path and digest), its working directory and
        the prompt it is given (``env`` is left out: it may hold keys).  The same words run from
        another directory, or after the program changed, are another system."""
        config: dict[str, Any] = {"command": redact_command(self.argv), **self._files, "cwd": self.cwd}
        if self.system_prompt is not None:
            config["system_prompt"] = self.system_prompt
        if self.build_prompt is not None:  # another prompt: other answers, other cache entries
            builder = self.build_prompt
            config["build_prompt"] = f"{builder.__module__}.{getattr(builder, '__qualname__', repr(builder))}"
        return config

    def process(self, example: dict) -> dict:
        notes: list[str] = []
        if self.build_prompt is not None:
            return _noted({"response": self._answer(str(self.build_prompt(example)), notes)}, notes)
        turns = conversation_turns(example)
        if turns is None:
            then = follow_up(example)
            said = self._answer(prompt_text(example, self.system_prompt), notes)
            if then is None:
                return _noted({"response": said}, notes)
            second = {"prompt": then["prompt"].replace(then["reply"], said.strip())}
            answer = self._answer(prompt_text(second, self.system_prompt), notes)
            return _noted({"response": answer, "replies": [said]}, notes)
        messages = [] if self.system_prompt is None else [{"role": "system", "content": self.system_prompt}]
        replies = []
        for number, turn in enumerate(turns, 1):
            messages.append({"role": "user", "content": turn})
            replies.append(self._answer(_as_text(messages), notes, number))
            messages.append({"role": "assistant", "content": replies[-1]})
        return _noted({"response": replies[-1], "replies": replies[:-1]}, notes)

    def _answer(self, prompt: str, notes: list[str], turn: int | None = None) -> str:
        """One run of the program: ``prompt`` in, its standard output out; what it left running
        noted in ``notes``; ``turn``, the conversation's turn it answers (``CBENCH_TURN``)."""
        run = run_program(
            self.program,
            self.argv,
            prompt.encode("utf-8"),
            timeout=self.timeout,
            max_output_bytes=self.max_output_bytes,
            env=self._environment(turn),
            cwd=self.cwd,
        )
        failure = self._failure(run)
        if failure is not None:
            stderr = _tail(run.stderr.decode("utf-8", "replace"))
            raise CommandError(failure + (f"; stderr: {stderr}" if stderr else ""))
        left = _processes(max(run.killed, 1)) if run.held_open else _processes(run.killed)
        if run.held_open:
            notes.append(
                f"it exited, but {left} it started held its standard output open past the "
                f"{OUTPUT_GRACE:g} s grace period: killed, the answer kept"
            )
        elif run.killed:
            notes.append(f"it exited leaving {left} running: killed when its row ended")
        return run.stdout.decode("utf-8", "replace").rstrip()

    def _environment(self, turn: int | None) -> dict[str, str] | None:
        """The program's environment: this process's with ``env`` and, in a metered run, the
        meter's ``CBENCH_METER_URL``, the row's ``CBENCH_ROW`` and, answering a turn of a
        conversation, ``CBENCH_TURN`` (None: this process's as it is)."""
        link = current()
        added = {**self.env, **(link.environment if link is not None else {})}
        if link is not None and turn is not None:
            added[TURN_VARIABLE] = str(turn)
        return {**os.environ, **added} if added else None

    def _failure(self, run: Finished) -> str | None:
        program = self.argv[0]
        if run.overflowed:
            return (
                f"{program} printed more than {self.max_output_bytes} bytes on standard output "
                "(--max-output-bytes): it was killed"
            )
        if run.timed_out:
            return f"{program} ran past its timeout of {self.timeout:g} s"
        if run.status is None:
            return f"{program} could not be watched to its end (its reaper stopped)"
        if run.status != 0:
            return f"{program} exited with status {run.status}"
        return None


def _noted(output: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    if notes:
        output["note"] = "; ".join(dict.fromkeys(notes))
    return output


def _processes(count: int) -> str:
    return f"{count} process" if count == 1 else f"{count} processes"


def _fingerprint(path: str) -> str:
    """The file's SHA-256, or where it cannot be read (execute-only), its size and modification time."""
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        stat = os.stat(path)
        return f"size {stat.st_size}, modified {stat.st_mtime_ns}"


class ClaudeCLI(CommandSystem):
    """Claude Code as the system under test: ``claude -p`` once per row, the prompt on its standard
    input (the system of earlier releases' ``ClaudeCLI``, now a :class:`CommandSystem`).

    ``model``, ``system_prompt``, ``allowed_tools`` (``"Bash,Read"``) and ``max_turns`` become
    ``claude``'s own flags; ``build_prompt`` (an example to its prompt) replaces the default.  A
    timeout or a failed run is the row's error (earlier releases answered ``[TIMEOUT]``, which was
    then scored as a reply).
    """

    def __init__(
        self,
        name: str = "claude",
        model: str | None = None,
        max_turns: int | None = None,
        allowed_tools: str | None = None,
        system_prompt: str | None = None,
        timeout: float = 120.0,
        build_prompt: Callable[[Mapping[str, Any]], str] | None = None,
        *,
        program: str = "claude",
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        argv = [program, "-p"]
        for flag, value in (
            ("--model", model),
            ("--system-prompt", system_prompt),
            ("--allowedTools", allowed_tools),
            ("--max-turns", max_turns),
        ):
            if value is not None:
                argv += [flag, str(value)]
        super().__init__(argv, name=name, timeout=timeout, env=env, cwd=cwd, build_prompt=build_prompt)
