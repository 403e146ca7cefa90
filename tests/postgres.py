"""A throwaway PostgreSQL server for the store's tests: Debian's ``postgresql`` binaries, a cluster
made with initdb in a temporary directory, listening on 127.0.0.1 at a free port, with a password
(so a URL carries one, as a team's does), stopped and deleted at the end.

initdb refuses to run as root, so as root the cluster belongs to the ``postgres`` user the package
creates.  ``missing()`` says why the tests cannot run here (no binaries, no such user) so they skip
with the reason; ``.ci/run`` installs the package.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

#: The password of the test cluster's user: a URL's password the store must never print.
PASSWORD = "pg-Secret-7cd1e0"
USER = "cbench"


def _bindir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(Path(candidate) / "initdb", os.X_OK):
            return Path(candidate)
    found = shutil.which("pg_ctl")
    return Path(found).resolve().parent if found else None


def _owner() -> str | None:
    """The user the cluster runs as: this one, or ``postgres`` when this one is root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "<none>"
    return "postgres"


def missing() -> str | None:
    """Why no PostgreSQL server can be started here, or None."""
    if _bindir() is None:
        return "no PostgreSQL binaries (apt-get install postgresql; .ci/run does)"
    if _owner() == "<none>":
        return "running as root without a 'postgres' user for initdb (apt-get install postgresql makes one)"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """One PostgreSQL cluster; :meth:`database` makes a fresh database and returns its URL."""

    def __init__(self) -> None:
        bindir = _bindir()
        assert bindir is not None, missing()
        self._bin = bindir
        self._user = _owner()
        self.root = Path(tempfile.mkdtemp(prefix="cbench-pg-"))
        self.port = _free_port()
        self._made = 0
        (self.root / "password").write_text(PASSWORD + "\n")
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            for path in (self.root, self.root / "password"):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        data = self.root / "data"
        self._run(
            "initdb",
            "-D",
            str(data),
            "-U",
            USER,
            f"--pwfile={self.root / 'password'}",
            "--auth-host=scram-sha-256",
            "--auth-local=trust",
            "-E",
            "UTF8",
            "--locale=C",
        )
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(data), "-o", options, "-l", str(self.root / "log"), "-w", "start")

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [str(self._bin / program), *args],
            capture_output=True,
            text=True,
            timeout=120,
            user=self._user,
            cwd=self.root,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed: {done.stdout}{done.stderr}")

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new, empty database's URL."""
        import psycopg

        self._made += 1
        name = f"store_{self._made}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server():
    """One throwaway PostgreSQL server for the session, or a skip saying why; a conftest takes it
    as ``postgres_server = postgres.postgres_server``."""
    why = missing()
    if why is not None:
        pytest.skip(why)
    server = Server()
    yield server
    server.stop()
