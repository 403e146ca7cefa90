"""What a system learns of a run's meter (docs/savings.md).

``evaluate`` starts a :class:`~context_bench.meter.Meter` when ``config.metering`` names an
upstream (:class:`~context_bench._run_meter.RunMeter`).  Each row gets a token; while the row's
system runs, :func:`current` gives it the meter's URL and the token (a :class:`MeterLink`):
``OpenAIProxy`` sends every request with the row header (through the meter when its endpoint is the
meter's upstream), ``CommandSystem`` exports ``CBENCH_METER_URL`` and ``CBENCH_ROW`` to its
program, and a Python system reads them the same way.  A conversation's calls also say their turn
(``X-Context-Bench-Turn``, from 1; ``CBENCH_TURN`` for a program run once per turn), so the meter
gives a row's figures per turn.  When the row finishes, its calls are taken
from the meter onto ``row.metered``.

This module imports nothing of the package: the row's link travels with its task (to a Ray worker
too), and the relay and its tokenizers are imported only when a run is metered.
"""

from __future__ import annotations

from contextvars import ContextVar

import attrs

__all__ = [
    "METER_URL_VARIABLE",
    "ROW_HEADER",
    "ROW_VARIABLE",
    "TURN_HEADER",
    "TURN_VARIABLE",
    "MeterLink",
    "current",
]

#: The header that says which row a call belongs to.
ROW_HEADER = "X-Context-Bench-Row"
#: The header that says which turn of a conversation (from 1) a call was made for.
TURN_HEADER = "X-Context-Bench-Turn"
#: The variables a ``--command`` program finds the meter's base URL and its row's token in.
METER_URL_VARIABLE = "CBENCH_METER_URL"
ROW_VARIABLE = "CBENCH_ROW"
#: The variable a program run once per turn of a conversation finds its turn in (from 1).
TURN_VARIABLE = "CBENCH_TURN"


@attrs.frozen
class MeterLink:
    """The meter as one row's system sees it: ``url``, the relay's base URL (ending in ``/v1``, as
    OpenAI clients take it), ``row``, the token to send as the ``X-Context-Bench-Row`` header, and
    ``upstream``, the endpoint the relay forwards to (its ``/chat/completions`` URL)."""

    url: str
    row: str
    upstream: str

    @property
    def headers(self) -> dict[str, str]:
        """The header every request of the row carries."""
        return {ROW_HEADER: self.row}

    def turn_headers(self, turn: int) -> dict[str, str]:
        """The headers of a request made for turn ``turn`` (from 1) of the row's conversation."""
        return {ROW_HEADER: self.row, TURN_HEADER: str(turn)}

    @property
    def environment(self) -> dict[str, str]:
        """What a ``--command`` program is given: ``CBENCH_METER_URL`` and ``CBENCH_ROW``."""
        return {METER_URL_VARIABLE: self.url, ROW_VARIABLE: self.row}


#: The link of the row whose system is running: ``row_steps`` sets it around the ``process`` call
#: (``LINK.set``, then ``LINK.reset``: two calls in C a row, where a context manager took six).
LINK: ContextVar[MeterLink | None] = ContextVar("context_bench_meter", default=None)


def current() -> MeterLink | None:
    """The meter of the row being processed, for a system's ``process`` (None: the run is not
    metered).  Send the row's calls to ``current().url`` with ``current().headers``."""
    return LINK.get()
