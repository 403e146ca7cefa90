"""Where the store is: ``--store URL``, else ``$CBENCH_STORE``, else ``.context-bench/runs.sqlite``
in the working directory; ``none`` records nothing.  A URL is shown only with its password masked."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from ..errors import UsageError
from ..secrets import redact, url_password

#: The environment variable naming the store when ``--store`` is not given.
STORE_VARIABLE = "CBENCH_STORE"
#: The store of a working directory, as inspect_ai writes ``./logs``.
DEFAULT_PATH = Path(".context-bench") / "runs.sqlite"

_POSTGRES = ("postgresql://", "postgres://")


@attrs.frozen
class StoreURL:
    """A parsed store URL: ``kind`` is ``sqlite`` (``path`` the file), ``postgresql`` (``given`` is
    what psycopg connects to) or ``none``."""

    kind: str
    given: str = attrs.field(repr=False)
    path: Path | None = None

    @property
    def shown(self) -> str:
        """The URL as every message prints it: a password masked (``user:***@host``)."""
        return redact(self.given, self.password)

    @property
    def password(self) -> str | None:
        return url_password(self.given) if self.kind == "postgresql" else None

    def __str__(self) -> str:
        return self.shown


def store_url(given: str | None = None, environ: Mapping[str, str] | None = None) -> StoreURL:
    """The store ``given`` names (a URL, a file path or ``none``); without one ``$CBENCH_STORE``, else
    the working directory's ``.context-bench/runs.sqlite``.  A scheme it does not know is one line."""
    environ = os.environ if environ is None else environ
    text = given if given is not None else environ.get(STORE_VARIABLE) or ""
    if not text.strip():
        return StoreURL("sqlite", f"sqlite:///{DEFAULT_PATH}", DEFAULT_PATH)
    if text.strip().lower() == "none":
        return StoreURL("none", "none")
    if text.startswith(_POSTGRES):
        return StoreURL("postgresql", text)
    if text.startswith("sqlite://"):
        rest = text[len("sqlite://") :]
        if not rest.startswith("/") or not rest[1:]:
            raise UsageError(
                f"store {redact(text)}: expected sqlite:///RELATIVE/PATH or sqlite:////ABSOLUTE/PATH"
            )
        return StoreURL("sqlite", text, Path(rest[1:]))
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise UsageError(
            f"store {redact(text)}: unknown scheme {scheme!r} (expected sqlite:///PATH, "
            "postgresql://... or none)"
        )
    return StoreURL("sqlite", text, Path(text))
