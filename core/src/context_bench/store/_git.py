"""The git commit and branch of the working directory, which a recorded run keeps so a trend can
say which code produced each point."""

from __future__ import annotations

import subprocess
from pathlib import Path

#: Seconds a git command may take before the run goes on without it.
TIMEOUT = 5


def git_state(directory: str | Path = ".") -> dict[str, object] | None:
    """``{"commit", "branch", "dirty"}`` of the repository holding ``directory`` (branch None when
    detached; dirty: tracked files changed), or None when there is none or git is missing."""
    commit = _git(directory, "rev-parse", "HEAD")
    if commit is None:
        return None
    branch = _git(directory, "symbolic-ref", "--short", "-q", "HEAD")
    changed = _git(directory, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "branch": branch or None, "dirty": bool(changed)}


def _git(directory: str | Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
