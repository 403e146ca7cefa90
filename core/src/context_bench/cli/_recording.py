"""Every ``run``, ``score`` and ``memory`` records itself in the store (docs/history.md): its
configuration, metadata, tags, rows as they finish and summary.

Recording never fails a run: a store that cannot be opened or written is one warning on stderr,
the report written and the exit status unchanged.  The one exception is a PostgreSQL store named
with ``--store`` that cannot be reached: a user's mistake, said in one line before any row runs.
A run with ``--cache-dir`` continues the latest unfinished record of the same configuration, so a
run killed and resumed is one record.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..evidence import lost_rows

if TYPE_CHECKING:
    from ..records import EvalResult, EvalRow
    from ..store import Recorder, Store
    from ._run_options import RunOptions


class Recording:
    """One command's record in the store its options name (``--store``, ``$CBENCH_STORE``, the
    working directory's): :meth:`tee` records each row as it finishes, :meth:`finish` (given to
    :func:`~context_bench.cli.emit` as ``record``) the summary and metadata of the report; leaving
    the block unfinished marks the run unfinished.  With ``--store none`` it does nothing."""

    def __init__(self, options: RunOptions, kind: str) -> None:
        from ..store import open_store, store_url

        output = options.config.output
        self.kind = kind
        self.tags = tuple(output.tags)
        self.resume = bool(output.cache_dir)
        self.recorder: Recorder | None = None
        self.store: Store | None = None
        self._warned = False
        url = store_url(output.store)  # a scheme it does not know: one line, exit 2
        try:
            self.store = open_store(url)
        except UsageError as exc:
            if output.store is not None and url.kind == "postgresql":
                raise
            self._warn(f"{exc}: this run is not recorded")

    def begin(self, config: Mapping[str, Any] | None, metadata: Mapping[str, Any]) -> None:
        """Start (or, resumed, continue) the record: ``config`` is the run's resolved configuration
        (None: its command line stands for it), ``metadata`` what its report will say of it."""
        if self.store is None:
            return
        from ..store import Recorder

        config = dict(config) if config is not None else {"command": metadata.get("command")}
        recorder = Recorder(self.store, self.kind)
        try:
            recorder.begin(config, metadata, self.tags, resume=self.resume)
        except UsageError as exc:
            self._warn(f"{exc}: this run is not recorded")
            return
        self.recorder = recorder

    def tee(self, stream: Callable[[EvalRow], None] | None) -> Callable[[EvalRow], None] | None:
        """``stream`` (where the run hands each finished row) recording the row too; None (every
        row held, for a CSV report) stays None: :meth:`finish` records them.  The JSONL report's
        writer hands the recorder the line it writes, which the store keeps as it is."""
        from ..reports import _jsonl as jsonl

        recorder = self.recorder
        if stream is None or recorder is None:
            return stream
        if isinstance(stream, jsonl.Writer) and stream.report_lines:  # each row encoded once
            encode = stream.encode

            def shared(row: EvalRow) -> str:
                text = encode(row)
                recorder.add(row, text)
                return text

            stream.encode = shared
            return stream

        def recorded(row: EvalRow) -> None:
            stream(row)
            recorder.add(row)

        return recorded

    def finish(self, result: EvalResult) -> None:
        """Record the report's summary and metadata (and its rows, when none streamed)."""
        recorder = self.recorder
        if recorder is None:
            return
        try:
            if recorder.added == 0:
                for row in result.rows:
                    recorder.add(row)
            recorder.mark_losses(lost_rows(result.summary))
            recorder.finish(result.summary, metadata=result.metadata)
        except UsageError as exc:
            recorder.warning = recorder.warning or str(exc)
        self._said(recorder)

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
            self._said(self.recorder)
        if self.store is not None:
            self.store.close()

    def _said(self, recorder: Recorder) -> None:
        if recorder.warning is not None:
            self._warn(recorder.warning)

    def _warn(self, text: str) -> None:
        from ..reports._sections import printable

        if not self._warned:
            print(f"context-bench: warning: {printable(text)}", file=sys.stderr)
        self._warned = True

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
