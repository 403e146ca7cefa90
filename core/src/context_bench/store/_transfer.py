"""Reports in and out of the store: a stored run written as its JSON or JSONL report (``export``),
and existing reports recorded as runs (``import``)."""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import attrs

from ..errors import UsageError
from ..records import EvalResult, EvalRow, encode_row
from ._reading import Store
from ._rows import from_line


@attrs.frozen
class _SavedSummary:
    """A stored summary where the JSON report's writer takes a :class:`~context_bench.records.Summary`:
    it only asks for ``to_dict``, so the stored run is written by the report's own code."""

    data: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)


def export(store: Store, run_id: int, fmt: str, handle: TextIO) -> int:
    """Write the run as its ``json`` or ``jsonl`` report to ``handle``, its rows read as they are
    written; the number of rows."""
    from ..reports import _json as json_report
    from ..reports import _jsonl as jsonl

    info = store.run(run_id)
    if fmt == "jsonl":
        writer = jsonl.Writer(handle)
        for row in store.iter_rows(run_id):
            writer(row)
        return writer.count
    count = 0

    def lines() -> Iterator[str]:
        nonlocal count
        for row in store.iter_rows(run_id):
            count += 1
            yield encode_row(row)

    saved: Any = _SavedSummary(info.summary or {})
    json_report.write(EvalResult([], saved, metadata=info.metadata or {}), lines(), handle)
    return count


@attrs.frozen
class Imported:
    """What ``import`` did with a file: the run it became (or already was: ``again``) and its rows."""

    run_id: int
    rows: int
    again: bool = False


def import_report(store: Store, file: str, tags: Iterable[str] = ()) -> Imported:
    """Record the JSON or JSONL report ``file`` as a finished run of kind ``import`` (a JSONL
    report, which has no summary, is summarized here); a file imported before is not again.  A file
    that is no report, or a row that is no row, is one line and leaves nothing in the store."""
    path = Path(file)
    digest = _digest(path)
    found = store.db.one("SELECT id, row_count FROM runs WHERE source = ?", (digest,))
    if found is not None:
        return Imported(int(found[0]), int(found[1] or 0), again=True)
    rows, summary, metadata = _read(path)
    recorder = store.recorder("import")
    run_id = recorder.begin(metadata.get("config"), metadata, tags, git=False)
    try:
        store.db.execute("UPDATE runs SET source = ? WHERE id = ?", (digest, run_id))
        summarize = None
        if summary is None:  # a JSONL report: summarized as a run is
            from .._summary import Summarizer

            summarize = Summarizer()
        for row in rows:
            recorder.add(row)
            if summarize is not None:
                summarize.add(row)
        recorder.finish(summarize.finish() if summarize is not None else summary)
    except BaseException:
        store.delete(run_id)
        raise
    if recorder.warning is not None:
        store.delete(run_id)
        raise UsageError(f"{file}: {recorder.warning}")
    return Imported(run_id, recorder.added)


def _digest(path: Path) -> str:
    found = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                found.update(block)
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    return found.hexdigest()


def _read(path: Path) -> tuple[Iterator[EvalRow], Mapping[str, Any] | None, dict[str, Any]]:
    """The report's rows (read as they are recorded), its summary (None for JSONL) and metadata."""
    with path.open(encoding="utf-8", errors="surrogateescape") as handle:
        first = handle.readline()
    try:
        line = json.loads(first)
    except ValueError:
        line = None
    if isinstance(line, dict) and "example_id" in line:
        mtime = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
        metadata = {"date": mtime.isoformat(timespec="seconds"), "imported": path.name}
        return _jsonl_rows(path), None, metadata
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not a JSON or JSONL report of context-bench ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise UsageError(f"{path}: not a JSON report of context-bench (no 'rows')")
    summary, metadata = data.get("summary"), data.get("metadata")
    if not isinstance(summary, dict) or not isinstance(metadata, dict):
        raise UsageError(f"{path}: not a JSON report of context-bench (no 'summary' or 'metadata')")
    return _rows(path, enumerate(data["rows"], 1)), summary, {**metadata, "imported": path.name}


def _jsonl_rows(path: Path) -> Iterator[EvalRow]:
    with path.open(encoding="utf-8") as handle:
        numbered = ((n, _line(path, n, text)) for n, text in enumerate(handle, 1) if text.strip())
        yield from _rows(path, numbered, split=True)


def _line(path: Path, number: int, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path} line {number}: not JSON ({exc})") from None


def _rows(path: Path, numbered: Iterable[tuple[int, Any]], split: bool = False) -> Iterator[EvalRow]:
    """Each row read back; a JSONL line's input fields become the row's input row again."""
    for number, data in numbered:
        try:
            if not isinstance(data, dict):
                raise TypeError(f"a {type(data).__name__}, not an object")
            row = from_line(data) if split else EvalRow.from_dict(data)
        except (TypeError, KeyError, ValueError) as exc:
            where = "line" if split else "row"
            raise UsageError(
                f"{path} {where} {number}: not a row of a context-bench report ({exc})"
            ) from None
        yield row
