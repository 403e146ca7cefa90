"""A run's meter (docs/savings.md): the relay started for the run by ``evaluate``, each task's
:class:`~context_bench.metering.MeterLink` made as it is drawn, each finished row's calls taken onto
``row.metered``, and the calls no row could be given said once."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from .errors import DeadlineExceeded
from .evidence import evidence_kept, passages
from .metering import MeterLink

if TYPE_CHECKING:
    from ._rowtask import RowTask
    from .config import Metering
    from .meter import Metered
    from .records import EvalRow
    from .token_count import Tokenizer

__all__ = ["METERED_FIELDS", "RunMeter", "counted_input", "metered_figures"]

#: The figures of ``row.metered`` (docs/reports.md), in order.
METERED_FIELDS = (
    "calls",
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "cost",
)


def metered_figures(metered: Metered, keep_prompts: bool = False) -> dict[str, Any]:
    """A row's ``metered`` in its report: :data:`METERED_FIELDS`, ``turns`` (the same figures per
    turn of a conversation, ``turn`` first) where its calls said their turn, and ``prompts`` too
    with ``keep_prompts``.  The input is None when an answered call had no input figure (no usage
    stated, no tokenizer): a partial sum would read as savings."""
    figures = {field: getattr(metered, field) for field in METERED_FIELDS}
    if metered.unmeasured_calls:
        figures["input_tokens"] = None
    if metered.turns:
        figures["turns"] = [
            {"turn": turn, **metered_figures(metered.turns[turn])} for turn in sorted(metered.turns)
        ]
    if keep_prompts:
        figures["prompts"] = list(metered.prompts)
    return figures


def counted_input(tokenizer: Tokenizer, example: Any) -> int | None:
    """The tokens of the prompt a row gives its system, as the harness frames it (the row's
    ``messages``, else its context, question and choices as one user turn) and the tokenizer
    counts a chat; None for a row that has no prompt."""
    from .systems import build_messages

    try:
        return tokenizer.count_chat(build_messages(example))
    except (TypeError, ValueError, AttributeError):
        return None


class RunMeter:
    """The meter of one run: started from the run's :class:`~context_bench.config.Metering`, each
    task's link made as it is drawn, each finished row's calls taken onto it.

    Calls without the row header are a row's only while it is the only one in flight and the run
    runs one row at a time (``sole``); otherwise they are counted in the totals alone and
    :meth:`notices` says so once.
    """

    def __init__(self, metering: Metering, sole: bool) -> None:
        from .client import chat_completions_url
        from .errors import UsageError
        from .meter import Meter

        if metering.upstream is None:
            raise ValueError("a RunMeter needs Metering(upstream=...)")
        try:
            upstream = chat_completions_url(metering.upstream)
            self.meter = Meter(
                metering.upstream,
                tokenizer=metering.tokenizer,
                host=metering.host,
                port=metering.port,
                capture_prompts=True,  # for the evidence check; written out with keep_prompts alone
            )
        except ValueError as exc:
            raise UsageError(f"--meter: {exc}") from None
        try:
            self.meter.start()
        except OSError as exc:
            raise UsageError(
                f"--meter: cannot listen on {metering.host}:{metering.port}: {exc.strerror or exc}"
            ) from None
        self.upstream = upstream
        self.keep_prompts = metering.keep_prompts
        self.sole = sole
        self._open: dict[str, contextlib.ExitStack] = {}
        print(f"context-bench: meter on {self.meter.url}, relaying to {self.meter.upstream}", file=sys.stderr)

    def link(self, task: RowTask) -> MeterLink:
        """The task's link, as the executor draws it: from here on it is in flight."""
        token = f"row-{task.index}"
        if self.sole:
            stack = self._open[token] = contextlib.ExitStack()
            stack.enter_context(self.meter.sole_row(token))
        return MeterLink(self.meter.url, token, self.upstream)

    def finish(self, task: RowTask, row: EvalRow) -> None:
        """The row's calls onto ``row.metered``, and the share of its evidence they carried onto
        ``row.evidence_kept`` (both into what the cache keeps of its output); a row from the cache
        keeps the figures of the run that made it."""
        link = task.meter
        if link is None:
            return
        stack = self._open.pop(link.row, None)
        if stack is not None:
            stack.close()
        # a row given up at the call deadline may have a call still in the meter: not waited for
        # (it is counted as unattributed when it ends)
        given_up = any(error.type == DeadlineExceeded.__name__ for error in row.errors)
        taken = self.meter.take(link.row, wait=0.0) if given_up else self.meter.take(link.row)
        cached = task.cached.output if task.cached is not None else None
        if cached is not None:
            row.metered = cached.get("metered")
            row.evidence_kept = cached.get("evidence_kept")
            return
        row.metered = metered_figures(taken, self.keep_prompts)
        if taken.prompts:
            row.evidence_kept = evidence_kept(passages(task.original), "\n".join(taken.prompts))
        if row.fresh is not None and row.fresh.get("output") is not None:
            row.fresh["output"] = {
                **row.fresh["output"],
                "metered": row.metered,
                "evidence_kept": row.evidence_kept,
            }

    def notices(self) -> list[str]:
        """What the run must say about calls it could not give to a row."""
        stray = self.meter.unattributed.calls
        if not stray:
            return []
        return [
            f"{stray} call{'s' * (stray != 1)} could not be attributed to rows; run with "
            "--max-concurrency 1 or forward X-Context-Bench-Row"
        ]

    def totals(self) -> dict[str, Any]:
        """Every call of the run, attributed or not, and those that were not."""
        return {
            **metered_figures(self.meter.totals),
            "unattributed": metered_figures(self.meter.unattributed),
        }

    def close(self) -> None:
        for stack in self._open.values():
            stack.close()
        self.meter.stop()
