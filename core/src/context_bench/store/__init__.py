"""Every run remembered: a store of runs (SQLite by default, PostgreSQL for a team), which a run
records into as its rows finish and ``runs``, ``export``, ``import`` and the viewer read.

``open_store(url)`` opens the store a URL names (:func:`store_url`: ``sqlite:///PATH``,
``postgresql://...``, ``none``; by default ``$CBENCH_STORE``, else ``.context-bench/runs.sqlite``
in the working directory) and brings its schema up to date; ``store.recorder(kind)`` records a
run (``begin``, ``add``, ``finish``); the store's other methods read it back; ``export`` writes a
stored run as its JSON or JSONL report and ``import_report`` records one.  A URL's password
is masked in every message.  PostgreSQL needs ``pip install 'context-bench[postgres]'`` (psycopg 3).
"""

from __future__ import annotations

from ._reading import RunInfo, Store, TrendPoint, UnknownRun, parse_since
from ._recorder import Recorder
from ._schema import SCHEMA
from ._transfer import Imported, export, import_report
from ._urls import DEFAULT_PATH, STORE_VARIABLE, StoreURL, store_url

__all__ = [
    "DEFAULT_PATH",
    "SCHEMA",
    "STORE_VARIABLE",
    "Imported",
    "Recorder",
    "RunInfo",
    "Store",
    "StoreURL",
    "TrendPoint",
    "UnknownRun",
    "export",
    "import_report",
    "open_store",
    "parse_since",
    "store_url",
]


def open_store(url: str | StoreURL | None = None, create: bool = True) -> Store | None:
    """The store ``url`` names, its schema migrated to this release's (None for ``none``: record
    nothing).  ``create=False`` (reading) refuses a SQLite file that does not exist rather than
    making one.  Every failure (unreachable, not a store, a newer schema) is one line."""
    from ._database import connect
    from ._schema import migrate

    parsed = url if isinstance(url, StoreURL) else store_url(url)
    if parsed.kind == "none":
        return None
    db = connect(parsed, create)
    try:
        migrate(db)
    except BaseException:
        db.close()
        raise
    return Store(db)
