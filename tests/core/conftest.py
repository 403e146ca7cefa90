"""What the core's tests share: the command line run in this process."""

from __future__ import annotations

import pytest

from context_bench.cli import main


@pytest.fixture
def cli(capsys):
    """``cli(*argv)``: ``context-bench ARGV`` run in this process; its exit status, stdout and stderr."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run
