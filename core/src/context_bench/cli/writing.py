"""Writing a finished run's report where ``--output`` and ``--out`` say: whole, or from the stream
that took its rows as the run went, repaired where no file can store a character (U+FFFD, said)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from ..config import Output
    from ..records import EvalResult
    from ..reports import View


def check_out(out: str, output: str) -> None:
    """Refuse an ``--out`` nothing can be written to before the run, not after its rows were paid
    for (:func:`~context_bench.files.check_target`); for HTML, the rows file beside it too."""
    from ..files import check_target, written_through

    check_target(out)
    if output == "html" and not written_through(out):
        from ..reports.html import rows_file

        check_target(rows_file(os.path.realpath(out)), "--out (its rows file)")


def write_report(result: EvalResult, output: Output, written: Any = None) -> None:
    """Write the report of a finished result as ``output`` asks (``--output``, ``--out``): rendered
    whole, or, from ``written``, the stream that took its rows as the run went (see
    :func:`~context_bench.cli.emit`); then the summary's warnings on stderr where the report does not
    show them, and how many characters no file can store were written as U+FFFD."""
    from ..encodable import repair_text
    from ..reports import render
    from ..reports.sections import printable

    if written is not None and output.format == "jsonl":
        replaced = written.replaced
        if output.out:
            print(f"context-bench: wrote {output.format} report to {output.out}", file=sys.stderr)
    elif written is not None and output.format == "json":
        replaced = written.replaced + _write_json(result, written, output)
    elif written is not None and output.format == "html":
        replaced = written.replaced + _write_html(result, written, output)
    else:
        replaced = _write(render(result, output.format, _view(result, output)), output)
    warnings = list(result.summary.warnings) if result.summary else []
    if output.out or output.format in ("json", "jsonl", "csv"):  # the table and Markdown show them
        for warning in warnings:
            print(f"context-bench: warning: {printable(repair_text(warning))}", file=sys.stderr)
    if replaced:
        print(
            f"context-bench: warning: {replaced} character{'s' * (replaced != 1)} no file can store "
            "(lone surrogates, from the rows or the replies) written as U+FFFD",
            file=sys.stderr,
        )


def _view(result: EvalResult, output: Output) -> View:
    """The table at the terminal's width, its run's counts said on stderr (the verdict leads)."""
    from ..reports import View, summary_of, table
    from ..reports.sections import overview

    if output.format == "table":
        print(table.fitted(f"context-bench: {overview(result, summary_of(result))}"), file=sys.stderr)
    return View(detail=output.detail, width=table.terminal_width())


def _write(report: str, output: Output) -> int:
    """Write the report to ``--out`` or stdout; return how many characters were repaired."""
    from ..encodable import repair_counted
    from ..files import atomic_write_text

    text, replaced = repair_counted(report)
    if output.out:
        try:
            atomic_write_text(output.out, text)
        except OSError as exc:
            raise UsageError(f"cannot write {output.out}: {exc.strerror or exc}") from None
        print(f"context-bench: wrote {output.format} report to {output.out}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return replaced


def _write_json(result: EvalResult, spool: Any, output: Output) -> int:
    """Write the JSON report of a streamed run: the summary, then the rows from ``spool`` (a
    JSONL ``Writer.spool``, its lines repaired already); return how many characters of the
    summary and metadata were repaired."""
    import contextlib

    from ..files import atomic_writer
    from ..reports import json as json_report

    target = atomic_writer(output.out) if output.out else contextlib.nullcontext(sys.stdout)
    try:
        with target as handle:
            repaired = _Repaired(handle)
            json_report.write(result, spool.lines(), repaired)
    except OSError as exc:
        raise UsageError(f"cannot write {output.out}: {exc.strerror or exc}") from None
    if output.out:
        print(f"context-bench: wrote {output.format} report to {output.out}", file=sys.stderr)
    return repaired.replaced


def _write_html(result: EvalResult, spool: Any, output: Output) -> int:
    """Write the HTML report of a streamed run from ``spool`` (a JSONL ``Writer`` of the page's
    row lines, :class:`~context_bench.reports.html_rows.RowEncoder`): the rows inline, or, past
    ``--html-inline-rows`` with ``--out``, moved to ``rows_file(out)`` beside the page, which
    reads them from there; return how many characters of the page were repaired."""
    import contextlib

    from ..files import atomic_writer, written_through
    from ..reports import html

    encoder = spool.encode
    # a device or pipe has no "beside": its page holds every row
    paged = bool(output.out) and encoder.count > output.html_inline_rows and not written_through(output.out)
    target = atomic_writer(output.out) if output.out else contextlib.nullcontext(sys.stdout)
    # beside the page where it lands (through a symlink, as atomic_writer writes it)
    rows_file = html.rows_file(os.path.realpath(output.out)) if paged else ""
    try:
        with target as handle:
            repaired = _Repaired(handle)
            if paged:
                html.write(
                    result, repaired, encoder, rows_file=os.path.basename(rows_file), detail=output.detail
                )
                spool.keep(rows_file)  # once the page is written: a failed page leaves both as they were
            else:
                html.write(result, repaired, encoder, spool.lines(), detail=output.detail)
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


class _Repaired:
    """A text file that writes lone surrogates as U+FFFD and counts them."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.replaced = 0

    def write(self, text: str) -> None:
        from ..encodable import repair_counted

        text, replaced = repair_counted(text)
        self.replaced += replaced
        self.handle.write(text)
