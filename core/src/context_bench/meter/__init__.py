"""Measured savings: a relay that meters every call a system makes to its model (:class:`Meter`),
the usage forms upstreams answer in (:func:`usage_of`), and what a row's calls came to
(:class:`Metered`).  docs/savings.md explains them; :mod:`context_bench.token_count` counts tokens
and :mod:`context_bench.evidence` checks what of the evidence reached the model."""

from __future__ import annotations

from ._relay import ROW_HEADER, TURN_HEADER, Meter
from .records import MeterCall, Metered
from .usage import Usage, read_usage, usage_of

__all__ = ["ROW_HEADER", "TURN_HEADER", "Meter", "MeterCall", "Metered", "Usage", "read_usage", "usage_of"]
