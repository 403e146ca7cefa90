"""A fresh virtual environment holding the core alone, where a plugin is built and installed as its
author would: from a wheel, then listed, run and tested there.

Nothing is downloaded.  The core is built from ./core and installed by pip (``--no-index``); the
packages it and the tests need (pluggy, httpx, pytest, hatchling, pip, ...) are those of the
environment running the tests, seen through a folder of links that leaves out every distribution of
this repository (context-bench's own editable install and the first-party plugins).  Tests load this
module by its path (tests/ is not a package).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Entries of site-packages that belong to this repository (or load it: editable installs' .pth).
OURS = ("context_bench", "cbench_", "_editable_impl_", "__editable__")


def _ours(entry: Path) -> bool:
    return entry.suffix == ".pth" or entry.name.startswith(OURS)


class CoreVenv:
    def __init__(self, path: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
        self.path = path
        self.python = str(path / "bin" / "python")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("CBENCH_", "PYTHON", "PIP_"))}
        outer = path / "outer-packages"
        outer.mkdir()
        for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
            if not _ours(entry):
                (outer / entry.name).symlink_to(entry)
        own = self.run("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
        Path(own, "outer_packages.pth").write_text(f"{outer}\n", encoding="utf-8")
        self.pip("install", str(ROOT / "core"))

    def run(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [self.python, *args], capture_output=True, text=True, env=self.env, cwd=cwd, timeout=300
        )
        said = f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        assert not check or done.returncode == 0, said
        return done

    def pip(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """pip with no index and no build isolation (hatchling is among the outer packages)."""
        offline = ["--no-index", "--no-build-isolation", "--no-cache-dir", "--disable-pip-version-check"]
        return self.run("-m", "pip", args[0], "-q", *offline, *args[1:], cwd=cwd)

    def cbench(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return self.run("-m", "context_bench", *args, cwd=cwd, check=check)

    def build_and_install(self, project: Path) -> Path:
        """``pip wheel`` the project into its dist/ and install that wheel; the wheel's path."""
        self.pip("wheel", "--no-deps", "-w", "dist", ".", cwd=project)
        (wheel,) = (project / "dist").glob("*.whl")
        self.pip("install", "--find-links", str(project / "dist"), str(wheel))
        return wheel
