"""Writing a finished run's report where ``--output`` and ``--out`` say: whole, or from the stream
that took its rows as the run went, repaired where no file can store a character (U+FFFD, said)."""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from .._encodable import repair_counted
from ..errors import UsageError

if TYPE_CHECKING:
    from ..config import Output
    from ..records import EvalResult
    from ..reports import RowStream
    from ..specs import FormatSpec


#: The summary's warnings the running command's report said (in the report or on standard error),
#: which :func:`~context_bench.cli._app.main` then does not say again as Python warnings.
SAID: ContextVar[set[str]] = ContextVar("SAID")


def check_out(out: str, output: str) -> None:
    """Refuse an ``--out`` nothing can be written to before the run, not after its rows were paid
    for (:func:`~context_bench.files.check_target`), and the file its format writes beside it
    (``FormatSpec.side_file``: a big run's HTML rows) too."""
    from ..files import check_target, written_through
    from ..plugins import get_host
    from ..specs import resolve

    check_target(out)
    side_file = get_host().find_format(output).side_file
    if side_file is not None and not written_through(out):  # a device or pipe has no "beside"
        check_target(resolve(side_file)(os.path.realpath(out)), "--out (its rows file)")


def write_report(result: EvalResult, output: Output, written: RowStream | None = None) -> None:
    """Write the report of a finished result as ``output`` asks (``--output``, ``--out``): through
    ``written``, the :func:`report_stream` its rows went to as the run went (see
    :func:`~context_bench.cli.emit`), else rendered whole; then the summary's warnings on stderr
    where the report does not show them, and how many characters no file can store were written
    as U+FFFD."""
    from .._encodable import repair_text
    from ..plugins import get_host
    from ..reports._sections import printable

    spec = get_host().find_format(output.format)
    replaced = (written or Whole(spec, output)).finish(result)
    warnings = list(result.summary.warnings) if result.summary else []
    SAID.get(set()).update(warnings)
    if output.out or not spec.shows_warnings:  # on a terminal, the table and Markdown show them
        for warning in warnings:
            print(f"context-bench: warning: {printable(repair_text(warning))}", file=sys.stderr)
    if replaced:
        print(
            f"context-bench: warning: {replaced} character{'s' * (replaced != 1)} no file can store "
            "(lone surrogates, from the rows or the replies) written as U+FFFD",
            file=sys.stderr,
        )


def report_stream(output: Output) -> RowStream:
    """Where a run's rows go as they finish, for the report ``output`` asks for: its format's own
    stream (``FormatSpec.stream``: the JSONL report written as the run goes, the JSON and HTML
    reports' rows spooled beside ``--out``), else nowhere for a report of the summary alone (the
    table, Markdown) and the run itself for any other (every row held: CSV)."""
    from ..plugins import get_host
    from ..specs import resolve

    spec = get_host().find_format(output.format)
    return resolve(spec.stream)(output) if spec.stream is not None else Whole(spec, output)


class Whole:
    """The report of a format that does not stream, rendered whole from the finished result (its
    ``note`` said on stderr first); as a :class:`~context_bench.reports.RowStream`, it lets each row
    go as it finishes when the format reads the summary alone, and has the run hold them otherwise."""

    def __init__(self, spec: FormatSpec, output: Output) -> None:
        self.spec = spec
        self.output = output

    def __enter__(self) -> Any:
        from ..reports._jsonl import Discard

        return Discard() if self.spec.summary_only else None

    def __exit__(self, *exc: object) -> None:
        pass

    def finish(self, result: EvalResult) -> int:
        from ..reports import View
        from ..reports import _table as table
        from ..specs import resolve

        if self.spec.note is not None:
            print(table.fitted(f"context-bench: {resolve(self.spec.note)(result)}"), file=sys.stderr)
        view = View(detail=self.output.detail, width=table.terminal_width())
        return write_text(resolve(self.spec.writer)(result, view), self.output)


def write_text(report: str, output: Output) -> int:
    """Write the report to ``--out`` or stdout; return how many characters were repaired."""
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


class Repaired:
    """A text file that writes lone surrogates as U+FFFD and counts them."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.replaced = 0

    def write(self, text: str) -> None:
        text, replaced = repair_counted(text)
        self.replaced += replaced
        self.handle.write(text)
