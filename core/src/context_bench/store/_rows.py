"""A row as the store keeps it, and back.

A row is kept as its line of the JSONL report (its input row's fields, then its results): the
JSONL report of a stored run is what it stored, and recording costs one encoding of the row, as
writing that report does.

A row is keyed in its run by (system, data set, example id), so a resumed run that hands on a row
again replaces it, never doubles it.  A row with an input error (no id, an id seen twice, an
unreadable line) is keyed by its place in the run instead (``slot``), since its id names
another row or none: it never replaces the row whose id it repeats.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._encodable import repair_text
from ..records import EvalRow, encode_compact
from ..reports._jsonl import line

#: Control characters, which a search text has no use for (and PostgreSQL's text cannot hold NUL).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+")

#: The columns :func:`stored` fills, in its order.
COLUMNS = ("seq", "system", "dataset", "example_id", "slot", "failed", "data", "search")

#: The fields of a JSONL line that are the row's (the rest are its input row's).
ROW_FIELDS = frozenset(EvalRow("", "", "").to_dict())


def stored(row: EvalRow, text: str | None = None) -> tuple[Any, ...]:
    """The values of :data:`COLUMNS` for ``row``: its JSONL line (``text``, when the JSONL report's
    writer made it already), and the text searched (id, response, error messages)."""
    # Every recorded row comes here: ASCII text (the usual) is checked in C, not through a call.
    system, dataset, example_id = row.system, row.dataset, row.example_id
    if not (system.isascii() and dataset.isascii() and example_id.isascii()):
        system, dataset, example_id = repair_text(system), repair_text(dataset), repair_text(example_id)
    if text is None:
        text = encode_compact(line(row))
    search = f"{example_id} {row.response or ''}"
    slot = failed = 0
    if row.errors:
        failed = 1
        if any(error.stage == "input" for error in row.errors):
            slot = row.index + 1
        search += " " + " ".join(f"{e.type}: {e.message}" for e in row.errors)
    if not search.isascii():
        search = repair_text(search)
    if not search.isprintable():  # printable text has no control character
        search = _CONTROL.sub(" ", search)
    return (
        row.index,
        system,
        dataset,
        example_id,
        slot,
        failed,
        text if text.isascii() else repair_text(text),
        search,
    )


def loaded(data: str) -> EvalRow:
    """The row :func:`stored` kept, with its input row."""
    return from_line(json.loads(data))


def from_line(data: dict[str, Any]) -> EvalRow:
    """A JSONL report's line read back as its row, with its input row: the line's fields that are
    not the row's, and those before ``example_id``, which the input row put first, so the line
    written again is this one, key for key.  A row without an input row has no ``id`` field."""
    row = EvalRow.from_dict(data)
    if "id" in data:
        keys = list(data)
        before = set(keys[: keys.index("example_id")])
        row.example = {key: value for key, value in data.items() if key in before or key not in ROW_FIELDS}
    return row
