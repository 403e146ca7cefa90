"""The verdict record, how the server judges a child by its output, its wire form; workdir removal."""

from __future__ import annotations

import dataclasses
import errno
import os

import pytest

from cbench_code import SampleResult, workdir
from cbench_code.verdict import judge

TOKEN = b"0123456789abcdef0123456789abcdef"


def verdict(output: bytes, token: bytes = TOKEN, **facts: bool) -> SampleResult:
    return judge(
        output,
        token,
        facts.get("timed_out", False),
        facts.get("program_started", True),
        facts.get("disk_full", False),
    )


def test_a_pass_needs_the_drawn_token():
    assert verdict(b"RUNNING\nTESTS-RAN\nPASS " + TOKEN + b" 0.250000\n") == SampleResult("passed", "", 0.25)
    assert verdict(b"PASS " + TOKEN + b" 0.1\n", token=b"").status == "failed"  # no token was drawn
    assert verdict(b"PASS " + b"0" * 32 + b" 0.1\n").status == "failed"  # a guessed one
    assert verdict(b"PASS  0.1\n").detail == "exited without a verdict"


def test_a_timeout_wins_over_a_pass():
    assert verdict(b"PASS " + TOKEN + b" 0.1\n", timed_out=True) == SampleResult("timeout", "timed out")


def test_sandbox_errors_count_only_before_the_program_started():
    line = b"ERROR sandbox setup: OSError: boom\n"
    assert verdict(line, program_started=False) == SampleResult("error", "sandbox setup: OSError: boom")
    assert verdict(b"RUNNING\n" + line).status == "failed"


def test_failures_and_a_full_file_system():
    assert verdict(b"RUNNING\nFAIL AssertionError: no\n") == SampleResult("failed", "AssertionError: no")
    assert verdict(b"RUNNING\n").detail == "exited without a verdict"
    full = f"FAIL OSError: [Errno {errno.ENOSPC}] No space left on device\n".encode()
    assert verdict(full).status == "failed"  # the sample's own 16 MB file limit
    result = verdict(full, disk_full=True)
    assert result.status == "error" and result.detail.startswith("the samples' file system is full: ")


def test_the_record_round_trips_through_the_wire():
    result = SampleResult("passed", "", 0.5)
    wire = result.to_wire(7, 0.75)
    assert wire == {"id": 7, "status": "passed", "detail": "", "elapsed": 0.5, "wall": 0.75}
    assert SampleResult.from_wire(wire) == result
    assert SampleResult.from_wire({"id": 1, "status": "error"}) == SampleResult("error")
    assert result.passed and not SampleResult("failed").passed
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.status = "failed"  # type: ignore[misc]


def test_workdir_removal_survives_deep_locked_trees(tmp_path):
    path = workdir.make(str(tmp_path), "1", None)
    assert os.stat(path).st_mode & 0o777 == 0o700
    deep = path
    for _ in range(300):
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    open(os.path.join(deep, "f"), "w").close()  # noqa: SIM115
    os.symlink("/", os.path.join(path, "escape"))  # removed as a link, never followed
    os.chmod(os.path.join(path, "d"), 0)
    workdir.remove(path)
    assert not os.path.exists(path) and os.path.isdir("/usr")
    workdir.remove(path)  # already gone: nothing to do
