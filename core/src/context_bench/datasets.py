"""Reading data sets: local files (JSONL, JSON, CSV) and data sets that plugins register by name."""

from __future__ import annotations

import csv
import inspect
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from ._encodable import repair
from .defaults import DEFAULT_MAX_ROW_BYTES as MAX_ROW_BYTES
from .errors import DatasetUnavailable, UsageError
from .specs import resolve


@attrs.frozen
class MalformedRow:
    """A row that could not be read; the runner reports it as an input error and goes on."""

    location: str
    message: str


class RepairedRow(dict):
    """A row whose text held lone surrogates, now U+FFFD; ``repaired`` says so on its result row."""

    __slots__ = ("repaired",)

    def __init__(self, row: dict[str, Any], repaired: str) -> None:
        super().__init__(row)
        self.repaired = repaired


#: What a repaired row's result notes (``EvalRow.meta["repaired"]``).
REPAIRED_NOTE = "text with lone surrogates (not encodable as UTF-8): replaced with U+FFFD"


def _repaired(row: Any) -> Any:
    """A row whose text held lone surrogates (only ever from ``\\udXXX`` escapes), repaired and noted."""
    if not isinstance(row, dict):
        return row
    fixed = repair(row)
    return row if fixed == row else RepairedRow(fixed, REPAIRED_NOTE)


@attrs.define
class Dataset:
    """Named rows: what the runner iterates over.  Rows may override the name with a ``dataset`` key."""

    name: str
    rows: list[Any]
    kind: str = "rows"


def read_file(
    path: str | Path, *, max_row_bytes: int = MAX_ROW_BYTES
) -> Iterator[dict[str, Any] | MalformedRow]:
    """Yield the rows of a JSONL, JSON (a list, or {"rows": [...]}) or CSV file, read as UTF-8.

    A JSONL line that is not UTF-8, not valid JSON, nested too deeply or longer than
    ``max_row_bytes``, a CSV row with the wrong number of fields or bytes that are not UTF-8, or a
    row that is not an object, becomes a :class:`MalformedRow` naming the file and line; the rows
    after it are still read.  A byte-order mark is ignored.  Text with lone surrogates (a
    ``\\ud800`` escape) is repaired to U+FFFD and the row says so (:class:`RepairedRow`).
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        suffix = path.suffix.lower()
        if suffix == ".csv":
            yield from _csv_rows(path, handle, max_row_bytes)
        elif suffix == ".json":
            yield from _json_rows(path, handle.read())
        else:
            yield from _jsonl_rows(path, handle, max_row_bytes)


def _lines(handle: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """The file's lines; None for a line longer than ``limit`` bytes, which is skipped unread."""
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        if len(raw) <= limit or raw.endswith(b"\n") and len(raw) == limit + 1:
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):  # skip the rest of the line, a chunk at a time
            raw = handle.readline(1 << 20)
        yield None


def _jsonl_rows(path: Path, handle: BinaryIO, limit: int) -> Iterator[dict[str, Any] | MalformedRow]:
    # Decoded line by line, so that one bad byte costs one row, not the file.
    for number, raw in enumerate(_lines(handle, limit), start=1):
        if raw is None:
            yield MalformedRow(
                f"{path}:{number}", f"the line is longer than {limit:,} bytes (the row size limit)"
            )
            continue
        try:
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            yield MalformedRow(f"{path}:{number}", f"not UTF-8 text (byte {exc.object[exc.start]:#04x})")
            continue
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            yield MalformedRow(f"{path}:{number}", f"invalid JSON: {exc.msg}")
            continue
        except RecursionError:
            yield MalformedRow(f"{path}:{number}", "JSON nested too deeply to read")
            continue
        if not isinstance(row, dict):
            yield MalformedRow(f"{path}:{number}", "not a JSON object")
        else:
            yield _repaired(row) if "\\u" in line else row


def _json_rows(path: Path, content: bytes) -> Iterator[dict[str, Any] | MalformedRow]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = content.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{path}: line {line} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except RecursionError:
        raise UsageError(f"{path}: JSON nested too deeply to read") from None
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        data = data["rows"]
    if not isinstance(data, list):
        raise UsageError(f"{path}: expected a JSON list of rows (or an object with 'rows')")
    escaped = "\\u" in text
    for number, row in enumerate(data):
        if not isinstance(row, dict):
            yield MalformedRow(f"{path} item {number}", "not an object")
        else:
            yield _repaired(row) if escaped else row


#: What ``surrogateescape`` turns bytes that are not UTF-8 into.
_UNDECODED = re.compile("[\udc80-\udcff]")


def _csv_rows(path: Path, handle: BinaryIO, limit: int) -> Iterator[dict[str, Any] | MalformedRow]:
    # The csv module's own cap (128 KB a field) is below the row size limit: long contexts fit.
    # The cap is the process's: set for this read, restored after it.
    previous = csv.field_size_limit(limit)
    try:
        yield from _csv_records(path, handle, limit)
    finally:
        csv.field_size_limit(previous)


def _csv_records(path: Path, handle: BinaryIO, limit: int) -> Iterator[dict[str, Any] | MalformedRow]:
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.reader(text)
    header = next(reader, None)
    if header is None:
        return
    if any(_UNDECODED.search(name) for name in header):
        raise UsageError(f"{path}: the header line is not UTF-8 text")
    end = reader.line_num
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a field over the limit: that row only, and the reader goes on
            where, end = f"{path}:{end + 1}", reader.line_num
            yield MalformedRow(where, f"unreadable CSV row ({exc}; the row size limit is {limit:,} bytes)")
            continue
        where, end = f"{path}:{end + 1}", reader.line_num  # a quoted field may span lines
        if not values:
            continue
        if len(values) != len(header):
            yield MalformedRow(where, f"{len(values)} fields where the header has {len(header)}")
        elif any(_UNDECODED.search(value) for value in values):
            yield MalformedRow(where, "not UTF-8 text")
        else:
            yield dict(zip(header, values, strict=True))


def load(
    spec: str,
    *,
    max_examples: int | None = None,
    host: Any = None,
    kind: str | None = None,
    max_row_bytes: int = MAX_ROW_BYTES,
    split: str | None = None,
    hub_mirror: str | Path | None = None,
    options: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Dataset:
    """Resolve ``--dataset NAME|NAME:CONFIG|PATH``: an existing file, else a registered data set name.

    ``max_row_bytes`` caps one row of a file, or of a registered rows data set as JSON
    (:data:`MAX_ROW_BYTES` by default): a longer one is a :class:`MalformedRow`.
    ``kind`` (one of ``specs.RUN_KINDS``) refuses a registered data set of another kind before
    loading it, naming the command that runs it (``context-bench <kind>``, or ``run`` for rows).
    ``CONFIG`` and ``split`` go to the data set's loader (a hub data set's config and split);
    ``hub_mirror`` (``--hub-mirror``) is the directory hub data sets are read from, instead of the
    hub.  ``options`` are the run's plugin options: a loader that names an ``options`` parameter
    gets its plugin's share of them (a flag that picks the prompts its rows carry).  Every row is
    read here, so a data set that cannot be read fails before any row runs.
    """
    path = Path(spec)
    if path.is_file():
        rows = _take(read_file(path, max_row_bytes=max_row_bytes), max_examples)
        return Dataset(name=path.stem, rows=rows)
    if path.suffix.lower() in (".jsonl", ".json", ".csv") or "/" in spec:
        raise UsageError(f"data set file not found: {spec}")
    if host is None:
        from .plugins import get_host

        host = get_host()
    known = host.datasets()
    name, _, config = spec.partition(":")
    found = known.get(name.lower())
    if found is None:
        names = ", ".join(sorted(known)) or "none registered"
        unknown = f"unknown data set {spec!r}: not a file and not a registered data set ({names})"
        raise UsageError(host.not_found("data set", name, unknown))
    plugin, dspec = found
    if kind is not None and dspec.kind != kind:
        command = "context-bench run" if dspec.kind == "rows" else f"context-bench {dspec.kind}"
        raise UsageError(f"{dspec.name} is a {dspec.kind} data set: use `{command} --dataset {spec}`")
    choices = {"config": config or None, "split": split}
    from .hub import mirrored, naming

    try:
        loader = resolve(dspec.loader)
        for option, value in choices.items():
            if value is not None and not _takes(loader, option):
                flag = f"{dspec.name}:CONFIG" if option == "config" else "--split"
                raise UsageError(f"{dspec.name} has no {option}s to choose ({flag} given)")
        with mirrored(hub_mirror), naming(dspec.name):
            if options is not None and _takes(loader, "options"):
                kwargs = {**kwargs, "options": host.options_for(plugin, options)}
            loaded = loader(**{k: v for k, v in choices.items() if v is not None}, **kwargs)
            if dspec.kind == "rows":
                loaded = _capped(loaded, max_row_bytes, dspec.name)
            rows = _take(loaded, max_examples)
    except (DatasetUnavailable, UsageError):
        raise
    except Exception as exc:  # noqa: BLE001 - a loader's failure is the user's to see, in one line
        raise DatasetUnavailable(
            f"data set {dspec.name!r} could not be loaded: {type(exc).__name__}: {exc}"
        ) from exc
    return Dataset(name=dspec.name, rows=rows, kind=dspec.kind)


def _capped(rows: Iterable[Any], limit: int, name: str) -> Iterator[Any]:
    """A registered data set's rows (a hub set's, from a mirror or the hub's cache), each whose JSON
    is longer than ``limit`` bytes a :class:`MalformedRow`, as a file's longer line is: not sent."""
    for number, row in enumerate(rows, start=1):
        if isinstance(row, dict) and _longer(row, limit):
            where = f"data set {name!r} row {number}"
            yield MalformedRow(where, f"the row is longer than {limit:,} bytes (the row size limit)")
        else:
            yield row


def _longer(row: dict[str, Any], limit: int) -> bool:
    """Whether ``row`` as JSON is longer than ``limit`` bytes of UTF-8.  Most rows are far below
    it: a bound on their size, summed without writing them, settles it in about a third of the
    time writing takes (3.5 against 9.5 µs for a 1 KB row, which ``datasets`` takes 43 µs to read)."""
    if _most_bytes(row) <= limit:
        return False
    return len(json.dumps(row, default=str).encode("utf-8", "surrogatepass")) > limit


def _most_bytes(value: Any) -> float:
    """At most how many bytes ``value`` takes as ASCII JSON (a character escaped takes 6)."""
    kind = type(value)
    if kind is str:
        return 6 * len(value) + 2
    if kind is dict:
        return 2 + sum(_most_bytes(str(k)) + _most_bytes(v) + 2 for k, v in value.items())
    if kind is list or kind is tuple:
        return 2 + sum(_most_bytes(v) + 1 for v in value)
    if value is None or kind is bool or kind is int or kind is float:
        return 24 if kind is not int else len(str(value))
    return math.inf  # a date, bytes...: written out to know


def _takes(function: Any, keyword: str) -> bool:
    """Whether ``function`` names the keyword argument ``keyword``.  A ``**kwargs`` does not count:
    a loader that would drop a config silently would load everything for ``NAME:typo``."""
    try:
        parameter = inspect.signature(function).parameters.get(keyword)
    except (TypeError, ValueError):  # a callable without a signature: it is its own to refuse
        return True
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def _take(rows: Iterable[Any], limit: int | None) -> list[Any]:
    if limit is None:
        return list(rows)
    taken = []
    for row in rows:
        if len(taken) >= limit:
            break
        taken.append(row)
    return taken
