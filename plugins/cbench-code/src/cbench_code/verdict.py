"""How a sample ended: the one record the server makes and the harness receives.

The server reads it off what the child wrote (:func:`judge`) and sends it as one JSON line
(:meth:`SampleResult.to_wire`); the pool reads it back (:meth:`SampleResult.from_wire`).  A
dataclass, not attrs: the server imports this module, and attrs brings ``threading``, whose at-fork
hook every child would then run.
"""

from __future__ import annotations

import dataclasses
import errno
import re
from typing import Any

#: How a sample's failure reads when its disk was full (the child reports ``Type: message``).
_NO_SPACE = re.compile(rf"\w+: \[Errno ({errno.ENOSPC}|{errno.EDQUOT})\] ")


@dataclasses.dataclass(frozen=True)
class SampleResult:
    """How one sample ended: ``passed``, ``failed``, ``timeout`` or ``error`` (the sandbox failed)."""

    status: str
    detail: str = ""
    elapsed: float | None = None  # seconds the program and its tests ran, when they passed

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_wire(self, sample_id: Any, wall: float) -> dict[str, Any]:
        """The server's reply for sample ``sample_id``; ``wall``: seconds since it was handed over."""
        return {
            "id": sample_id,
            "status": self.status,
            "detail": self.detail,
            "elapsed": self.elapsed,
            "wall": wall,
        }

    @classmethod
    def from_wire(cls, reply: dict[str, Any]) -> SampleResult:
        return cls(reply["status"], reply.get("detail", ""), reply.get("elapsed"))


def judge(
    output: bytes, token: bytes, timed_out: bool, program_started: bool, disk_full: bool
) -> SampleResult:
    """The verdict on a finished child, from the tail of what it wrote on its result pipe.

    ``passed`` needs the line ``PASS <token> <elapsed>`` with the token the server drew once the
    child said its tests ran (``token`` is empty when it never did), and no timeout.  An ``ERROR``
    line is the sandbox's only before the program started (``program_started``): after, the program
    could have written it.  A failure for want of disk space while the samples' file system was full
    (``disk_full``) is the sandbox's too: another sample may have filled it.
    """
    marker = b"PASS " + token + b" "
    at = output.rfind(marker) if token else -1
    if at >= 0 and not timed_out:
        return SampleResult("passed", "", float(output[at + len(marker) :].split(b"\n", 1)[0]))
    if timed_out:
        return SampleResult("timeout", "timed out")
    last = output.rstrip(b"\n").rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
    if last.startswith("ERROR ") and not program_started:
        return SampleResult("error", last[6:])
    detail = last[5:] if last.startswith("FAIL ") else "exited without a verdict"
    if disk_full and _NO_SPACE.match(detail):
        return SampleResult("error", f"the samples' file system is full: {detail}")
    return SampleResult("failed", detail)
