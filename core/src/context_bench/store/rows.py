"""A row as the store keeps it, and back.

A row is keyed in its run by (system, data set, example id), so a resumed run that hands on a row
again replaces it, never doubles it.  A row with an input error (no id, an id seen twice, an
unreadable line) is keyed by its place in the run instead (``slot``), since its id names
another row or none: it never replaces the row whose id it repeats.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..encodable import repair_text
from ..records import EvalRow, encode_compact

#: Control characters, which a search text has no use for (and PostgreSQL's text cannot hold NUL).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+")

#: The columns :func:`stored` fills, in its order.
COLUMNS = ("seq", "system", "dataset", "example_id", "slot", "failed", "data", "example", "search")


def stored(row: EvalRow) -> tuple[Any, ...]:
    """The values of :data:`COLUMNS` for ``row``: its JSON (``to_dict``), its input row's JSON, and
    the text searched (id, response, error messages)."""
    slot = row.index + 1 if any(error.stage == "input" for error in row.errors) else 0
    example = row.example
    search = " ".join([row.example_id, row.response or "", *(f"{e.type}: {e.message}" for e in row.errors)])
    return (
        row.index,
        repair_text(row.system),
        repair_text(row.dataset),
        repair_text(row.example_id),
        slot,
        1 if row.errors else 0,
        repair_text(encode_compact(row.to_dict())),
        repair_text(encode_compact(dict(example))) if example else None,
        _CONTROL.sub(" ", repair_text(search)),
    )


def loaded(data: str, example: str | None) -> EvalRow:
    """The row :func:`stored` kept, with its input row (what the JSONL report writes beside it)."""
    row = EvalRow.from_dict(json.loads(data))
    if example is not None:
        row.example = json.loads(example)
    return row
