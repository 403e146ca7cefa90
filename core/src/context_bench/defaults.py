"""Every run setting's default, each named once: :class:`~context_bench.config.RunConfig`, the
flags' defaults and help, and the executors read them from here, so the API and the command line
cannot drift apart (``call_timeout`` was 600 s on the command line and none in the API)."""

from __future__ import annotations

#: Rows in flight at once (``--max-concurrency``).
DEFAULT_MAX_CONCURRENCY = 8
#: The deadline of one system or evaluator call, in seconds (``--call-timeout``): long enough for a
#: slow model's long answer, short enough that a hung call does not hold a run for good.
DEFAULT_CALL_TIMEOUT = 600.0
#: ``run --fail-fast``: a system whose first 10 finished rows all fail alike is stopped.
DEFAULT_FAIL_FAST = 10
#: ``RunConfig``'s ``fail_fast``: a Python caller's run stops no system unless it asks, so rows that
#: fail on purpose (a test of a failing endpoint) are all there.
API_FAIL_FAST = 0
#: The largest row (one JSONL line) of a file read, in bytes (``--max-row-bytes``): a bigger one
#: is a row error, not gigabytes of memory (``datasets.MAX_ROW_BYTES``).
DEFAULT_MAX_ROW_BYTES = 10 * 2**20
#: The report format (``--output``).
DEFAULT_FORMAT = "table"
#: The most rows an HTML report written to a file holds itself (``--html-inline-rows``): a page of
#: 100,000 rows opens in about a second; a bigger run's page reads them from a file beside it.
DEFAULT_HTML_INLINE_ROWS = 100_000
#: A row passes when its primary score reaches this (``--threshold``).
DEFAULT_THRESHOLD = 0.7
#: The comparisons' significance level (``--alpha``); their intervals are at ``1 - alpha``.
DEFAULT_ALPHA = 0.05
#: The loss a sweep's safe operating point may show in its paired interval (``--margin``).
DEFAULT_MARGIN = 0.02
#: How many times each row goes to each system (``--repeats``).
DEFAULT_REPEATS = 1
