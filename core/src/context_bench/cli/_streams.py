"""The core's streaming report formats (``FormatSpec.stream``): the JSONL, JSON and HTML reports,
whose rows are spooled beside ``--out`` as they finish (JSON and HTML on stdout: held as text, a few
hundred bytes a row; JSONL on stdout or a pipe: written at once) until the summary is known, which
gives each lost row its ``loss_cause`` as it is copied out; none holds a row."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..evidence import loss_cause, lost_rows
from ..files import atomic_writer, written_through
from ..records import encode_compact
from ..reports import _jsonl as jsonl
from ._writing import Repaired

if TYPE_CHECKING:
    from ..config import Output
    from ..records import EvalResult


class _Stream:
    """A :class:`~context_bench.reports.RowStream` whose rows go to the writer :meth:`open` gives."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self.rows: Any = None
        self._files = contextlib.ExitStack()

    def open(self) -> contextlib.AbstractContextManager[jsonl.Writer]:
        raise NotImplementedError

    def __enter__(self) -> jsonl.Writer:
        self.rows = self._files.enter_context(self.open())
        return self.rows

    def __exit__(self, *exc: Any) -> None:
        self._files.__exit__(*exc)


class JsonlStream(_Stream):
    """The JSONL report, each row written as it finishes to a file beside ``--out`` that replaces it
    once the run is done (so a failed run leaves an earlier report whole), its lost rows' causes
    given then (a copy only when some row was lost with evidence); to stdout, a pipe or a device,
    each row goes out as it finishes, before any row's ``loss_cause`` is known."""

    def open(self) -> contextlib.AbstractContextManager[jsonl.Writer]:
        out = self.output.out
        if out is None or written_through(out):
            return jsonl.Writer.to(out)
        return jsonl.Writer.spool(out, None, named=True)

    def finish(self, result: EvalResult) -> int:
        out, rows = self.output.out, self.rows
        if rows.path is not None:
            lost = lost_rows(result.summary)
            try:
                if any(lost.values()):
                    with atomic_writer(out) as handle:
                        handle.writelines(f"{text}\n" for text in _with_causes(rows.lines(), lost))
                else:
                    rows.keep(os.path.realpath(out))  # through a symlink, as atomic_writer writes
            except OSError as exc:
                raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
        self._files.close()  # the report in place before the gates are judged
        if out:
            print(f"context-bench: wrote {self.output.format} report to {out}", file=sys.stderr)
        return rows.replaced


class JsonStream(_Stream):
    """The JSON report: the rows' JSON spooled beside ``--out`` (on stdout: held), written below the
    summary once the run is done."""

    def open(self) -> contextlib.AbstractContextManager[jsonl.Writer]:
        out = self.output.out
        return jsonl.Writer.spool(out) if out else jsonl.Writer.held()

    def finish(self, result: EvalResult) -> int:
        return self.rows.replaced + _write_json(result, self.rows, self.output)


class HtmlStream(_Stream):
    """The HTML report: the page's row lines spooled or held as the JSON report's are, inlined in
    the page once the run is done or, past ``--html-inline-rows``, kept in a file beside it."""

    def open(self) -> contextlib.AbstractContextManager[jsonl.Writer]:
        from ..reports._html_rows import RowEncoder

        out, encoder = self.output.out, RowEncoder()
        return jsonl.Writer.spool(out, encoder, named=True) if out else jsonl.Writer.held(encoder)

    def finish(self, result: EvalResult) -> int:
        return self.rows.replaced + _write_html(result, self.rows, self.output)


def _write_json(result: EvalResult, spool: Any, output: Output) -> int:
    """Write the JSON report of a streamed run: the summary, then the rows from ``spool`` (a
    JSONL ``Writer.spool``, its lines repaired already); return how many characters of the
    summary and metadata were repaired."""
    from ..reports import _json as json_report

    target = atomic_writer(output.out) if output.out else contextlib.nullcontext(sys.stdout)
    try:
        with target as handle:
            repaired = Repaired(handle)
            lost = lost_rows(result.summary)
            # rows a block at a time (joined as the report joins them), unless a row's cause is due
            rows = _with_causes(spool.lines(), lost) if lost else spool.blocks(json_report.ROW_SEPARATOR)
            json_report.write(result, rows, repaired)
    except OSError as exc:
        raise UsageError(f"cannot write {output.out}: {exc.strerror or exc}") from None
    if output.out:
        print(f"context-bench: wrote {output.format} report to {output.out}", file=sys.stderr)
    return repaired.replaced


def _with_causes(lines: Iterable[str], lost: Mapping[tuple[str, str], set[str]]) -> Iterator[str]:
    """Spooled rows (``encode_row`` or JSONL report lines), each lost row's ``loss_cause`` given: it
    is known only once the summary is (:func:`~context_bench.evidence.lost_rows`), after the row
    was spooled."""
    for text in lines:
        if lost and '"loss_cause": null' in text:
            row = json.loads(text)
            if row["example_id"] in lost.get((row["system"], row["dataset"]), ()):
                row["loss_cause"] = loss_cause(row["evidence_kept"])
                text = encode_compact(row)
        yield text


def _write_html(result: EvalResult, spool: Any, output: Output) -> int:
    """Write the HTML report of a streamed run from ``spool`` (a JSONL ``Writer`` of the page's
    row lines, :class:`~context_bench.reports._html_rows.RowEncoder`): the rows inline, or, past
    ``--html-inline-rows`` with ``--out``, moved to ``rows_file(out)`` beside the page, which
    reads them from there; return how many characters of the page were repaired."""
    from ..reports import _html as html

    encoder = spool.encode
    # a device or pipe has no "beside": its page holds every row
    paged = bool(output.out) and encoder.count > output.html_inline_rows and not written_through(output.out)
    target = atomic_writer(output.out) if output.out else contextlib.nullcontext(sys.stdout)
    # beside the page where it lands (through a symlink, as atomic_writer writes it)
    rows_file = html.rows_file(os.path.realpath(output.out)) if paged else ""
    lost = lost_rows(result.summary)
    lines = encoder.with_causes(spool.lines(), lost, loss_cause)  # before the page's head names its columns
    try:
        with target as handle:
            repaired = Repaired(handle)
            if paged:
                html.write(
                    result, repaired, encoder, rows_file=os.path.basename(rows_file), detail=output.detail
                )
                # once the page is written: a failed page leaves both as they were
                if any(lost.values()):
                    with atomic_writer(rows_file) as rows:
                        rows.writelines(f"{text}\n" for text in lines)
                else:
                    spool.keep(rows_file)
            else:
                html.write(result, repaired, encoder, lines, detail=output.detail)
    except OSError as exc:
        raise UsageError(f"cannot write {output.out}: {exc.strerror or exc}") from None
    if output.out:
        also = f" and its {encoder.count:,} rows to {rows_file}" if paged else ""
        print(f"context-bench: wrote html report to {output.out}{also}", file=sys.stderr)
    elif encoder.count > output.html_inline_rows:
        print(
            f"context-bench: warning: the HTML report on stdout holds all {encoder.count:,} rows; "
            "with --out it holds none and reads them from a file beside it",
            file=sys.stderr,
        )
    return repaired.replaced
