"""Data sets fetched from the Hugging Face hub, only when a run names them.

Nothing here runs at import or registration: :func:`load_rows` imports the optional ``datasets``
package (``pip install 'context-bench[hub]'``) and reads the records when called, from a mirror
(``--hub-mirror DIR`` / ``CBENCH_HUB_MIRROR``: ``DIR/<owner>/<name>/`` per repository) or else the
hub through ``datasets``' own cache, so a fetched set loads again offline.  Every way it can fail
(the package missing, offline and not cached, gated without a token, an unknown config or split, a
mirror without the set) is one line naming the fix, raised before any row runs.

The family modules (``hub._qa``, ``hub._choice``, ...) map records to the layout the evaluators read;
a plugin's hub data set does the same with :class:`HubSource` and :func:`load_rows`.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..specs import PARQUET_REVISION, HubSource

__all__ = [
    "LETTERS",
    "MIRROR_VARIABLE",
    "PARQUET_REVISION",
    "HubSource",
    "load_rows",
    "mirror",
    "mirrored",
    "naming",
]

LETTERS = "ABCDEFGHIJ"

#: The environment variable naming a hub mirror: ``DIR/<owner>/<name>/`` per repository.
MIRROR_VARIABLE = "CBENCH_HUB_MIRROR"


def mirror() -> Path | None:
    """The hub mirror in use (``CBENCH_HUB_MIRROR``), or None to use the hub and its cache."""
    value = os.environ.get(MIRROR_VARIABLE)
    return Path(value).expanduser() if value else None


@contextlib.contextmanager
def mirrored(root: str | os.PathLike[str] | None) -> Iterator[None]:
    """Load from the mirror ``root`` inside the block (``--hub-mirror``); None leaves things as they are."""
    if root is None:
        yield
        return
    previous = os.environ.get(MIRROR_VARIABLE)
    os.environ[MIRROR_VARIABLE] = str(root)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(MIRROR_VARIABLE, None)
        else:
            os.environ[MIRROR_VARIABLE] = previous


#: The catalog name a load was asked for by (``context_bench.datasets.load`` sets it), so that an
#: error can name the command that fixes it (``context-bench datasets download NAME``).
_NAME: contextvars.ContextVar[str | None] = contextvars.ContextVar("cbench_hub_name", default=None)


@contextlib.contextmanager
def naming(name: str) -> Iterator[None]:
    """Loads inside the block are for the data set ``name`` (what their errors call it)."""
    token = _NAME.set(name)
    try:
        yield
    finally:
        _NAME.reset(token)


def load_rows(
    source: HubSource, *, config: str | None = None, split: str | None = None
) -> Iterable[dict[str, Any]]:
    """The source's records, from the mirror when one is set, else through ``datasets``' cache.

    Raises :class:`~context_bench.DatasetUnavailable` or :class:`~context_bench.UsageError` with one
    line when they cannot be read; never reaches the network when a mirror is set.
    """
    from ._fetch import fetch

    return fetch(source, source.pick(config), split or source.split)
